"""Statement dots (``...`` with when clauses) and ``anchor any`` in the rule language: what
loads, what ``klc check`` refuses (each at its file:line:col, exit status 2), and the printer's
round trip (docs/rules.md, "Statement dots" and "Alternation")."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.rule import RuleError, load_rules_text, rule_to_text

DOTS = '''rule dots {
  kind: skill
  anchor: ```
    int $R = $E;
    ... when not mentions(threadIdx) when not writes($ROWS)
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    int $R = ($E) * 2;
    ...
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
}
'''

ALT = '''rule alt {
  kind: skill
  context: global
  anchor any {
    ```
    $X[$I]
    ```
    ```
    $X + $OFFSET
    ```
    ```
    atomicAdd($X, $V)
    ```
  }
  metavar $X: identifier, pointer
  guard: is_kernel_param($X) and not is_restrict($X)
  rewrite add_qualifier $X: "__restrict__"
}
'''


def test_dots_and_alternation_load_and_print_back() -> None:
    [dots] = load_rules_text(DOTS, "d.rule")
    assert "... when not mentions(threadIdx)" in dots.anchor
    assert dots.metavars == {"R", "E", "ROWS", "BODY"}  # (the clause's $ROWS is a use)
    [alt] = load_rules_text(ALT, "a.rule")
    assert len(alt.anchors) == 3 and alt.anchor == alt.anchors[0]
    assert alt.metavars == {"X"}  # only what every branch binds
    for r in (dots, alt):
        [again] = load_rules_text(rule_to_text(r), "p.rule")
        assert (again.anchor, again.anchors, again.edits) == (r.anchor, r.anchors, r.edits)


def _errors(text: str) -> list[str]:
    with pytest.raises(RuleError) as e:
        load_rules_text(text, "x.rule")
    return list(e.value.errors)


@pytest.mark.parametrize(("before", "after", "where", "message"), [
    # a clause that does not read: at its `when`
    ("... when not mentions(threadIdx) when not writes($ROWS)",
     "... when not mentoins(threadIdx)", "5:9", "after `...` only `when` clauses"),
    # a metavariable the anchor does not bind, at its `$`
    ("when not writes($ROWS)", "when not writes($COLS)", "5:54",
     "when clause: $COLS is not bound by the anchor"),
    # `when any` with another clause
    ("when not writes($ROWS)", "when any", "5:5", "`when any` lets the dots skip anything"),
    # a template without the anchor's dots: at the rewrite clause
    ("    int $R = ($E) * 2;\n    ...\n", "    int $R = ($E) * 2;\n", "10:3",
     "the template has 0 `...` line(s) and the anchor 1"),
    # dots that begin the anchor
    ("    int $R = $E;\n    ... when", "    ... when", "4:5", "cannot begin or end the anchor"),
])
def test_dots_misuse_is_reported_at_its_place(before: str, after: str, where: str,
                                              message: str) -> None:
    text = DOTS.replace(before, after, 1)
    assert text != DOTS
    errs = _errors(text)
    assert any(e.startswith(f"x.rule:{where}: ") and message in e for e in errs), errs


def test_dots_are_refused_in_a_within_block_and_outside_replace() -> None:
    within = DOTS.replace('''  rewrite replace: ```
    int $R = ($E) * 2;
    ...''', '''  rewrite within $$$BODY {
    anchor: ```
      $A = $B;
      ...
      $C = $D;
    ```
    replace: ```
      $A = $B;
    ```
  }
  rewrite replace: ```
    int $R = ($E) * 2;
    ...''')
    errs = _errors(within)
    assert any(e.startswith("x.rule:13:7: statement dots (`...`) are not supported in a "
                            "within block") for e in errs), errs
    insert = DOTS.replace("rewrite replace: ```\n    int $R = ($E) * 2;\n    ...\n",
                          "rewrite insert_body_start: ```\n    int k = 0;\n    ...\n") \
        .replace("rule dots {", "rule dots {\n  context: global")
    errs = _errors(insert)
    assert any("rewrite insert_body_start: `...` keeps what the anchor's dots skipped" in e
               for e in errs), errs


@pytest.mark.parametrize(("guard", "where", "name"), [
    ("is_kernel_param($X) and is_identifier($I)", "16:48", "$I"),
    ("is_kernel_param($X) and not mentions($OFFSET, threadIdx)", "16:47", "$OFFSET"),
])
def test_a_metavariable_some_branches_lack_is_an_error(guard: str, where: str,
                                                       name: str) -> None:
    text = ALT.replace("is_kernel_param($X) and not is_restrict($X)", guard)
    errs = _errors(text)
    assert any(e.startswith(f"x.rule:{where}: {name} is used in the guard but only some "
                            "branches of `anchor any` bind it") for e in errs), errs


def test_alternation_misuse_in_rewrites_and_kinds() -> None:
    errs = _errors(ALT.replace('rewrite add_qualifier $X: "__restrict__"',
                               'rewrite replace: ```\n    $X[$I + 1]\n  ```'))
    assert any(e.startswith("x.rule:18:8: $I is used in rewrite replace but only some "
                            "branches") for e in errs), errs
    errs = _errors(ALT.replace("    atomicAdd($X, $V)", "    atomicAdd($$$X)"))
    assert any(e.startswith("x.rule:11:5: anchor any: $X is bound as a run") for e in errs), \
        errs


def test_klc_check_exits_2_with_file_line_col(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.rule"
    bad.write_text(ALT.replace("is_kernel_param($X) and not is_restrict($X)",
                               "is_kernel_param($X) and is_identifier($V)"))
    good = tmp_path / "good.rule"
    good.write_text(DOTS)
    assert main(["check", str(good), str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{bad}:16:48: $V is used in the guard but only some branches")
    assert err[-1] == "1 error; 1 rule ok"
