"""Named guards: ``define guard NAME($P...): GUARD``, called in rules, inverse and within
blocks, shared through ``use "FILE"``; a call stands for its body, so a rule loads (and
judges) exactly as if the body were written in its place. Every misuse is refused at its
file:line:col by ``klc check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc import api
from klc.cli import main
from klc.errors import KlcError
from klc.rule import guard_text, load_rules, load_rules_text, rule_to_text

KERNEL = """\
__global__ void scale_rows(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c) {
        acc += x[r * cols + c];
    }
    y[r] = acc;
}
"""

# a pass spelled out, and the same pass with named guards (one of them in a within block)
SPELLED_GUARD = ("not mentions($$$BODY, atomicAdd) and not mentions($$$BODY, __syncthreads) "
                 "and is_identifier($K) and (not mentions($$$BODY, warp) or "
                 "not mentions($$$BODY, lane))")
SPELLED = """\
rule drop_restrict_rows {
  kind: simplification
  description: "d"
  context: any
  anchor: ```
    __global__ void $K($$$PARAMS) { $$$BODY; }
  ```
  guard: GUARD
  rewrite within $$$BODY {
    anchor: ```acc += $E;```
    guard: not mentions($E, acc) and not mentions($E, rows)
    replace: ```acc = acc + $E;```
  }
}
""".replace("GUARD", SPELLED_GUARD)

NAMED = """\
define guard no_sync($B): not mentions($B, atomicAdd) and not mentions($B, __syncthreads)
define guard no_warp($B): not mentions($B, warp) or not mentions($B, lane)
define guard clean($X, $A, $N): not mentions($X, $A) and not mentions($X, $N)

rule drop_restrict_rows {
  kind: simplification
  description: "d"
  context: any
  anchor: ```
    __global__ void $K($$$PARAMS) { $$$BODY; }
  ```
  guard: no_sync($$$BODY) and is_identifier($K) and (no_warp($$$BODY))
  rewrite within $$$BODY {
    anchor: ```acc += $E;```
    guard: clean($E, acc, rows)
    replace: ```acc = acc + $E;```
  }
}
"""


def test_a_named_guard_loads_as_its_body_written_in_place() -> None:
    (spelled,) = load_rules_text(SPELLED, "a.rule")
    (named,) = load_rules_text(NAMED, "b.rule")
    assert named.guard == spelled.guard
    assert guard_text(named.guard) == guard_text(spelled.guard)
    assert rule_to_text(named) == rule_to_text(spelled)  # the within block's guard too


def test_a_named_guard_judges_as_its_body(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    for name, text in (("a", SPELLED), ("b", NAMED)):
        (tmp_path / f"{name}.rule").write_text(text)

    def sites(rule: str) -> list[tuple[str, int, bool, str]]:
        return [(s.rule, s.line, s.applicable, s.why_not)
                for s in api.list_sites(kernel, tmp_path / rule, all=True)]

    assert sites("a.rule") == sites("b.rule") and sites("a.rule")


def test_use_shares_a_library_and_calls_may_nest(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "common.rule").write_text(
        "define guard quiet($B): not mentions($B, atomicAdd)\n"
        "define guard quiet($B, $W): quiet($B) and not mentions($B, $W)\n")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.rule").write_text(SPELLED.replace(
        "not mentions($$$BODY, atomicAdd) and not mentions($$$BODY, __syncthreads)",
        "quiet($$$BODY, __syncthreads)") + '\nuse "../lib/common.rule"\n')
    (spelled,) = load_rules_text(SPELLED, "a.rule")
    (used,) = load_rules(rules / "r.rule")
    assert used.guard == spelled.guard


def test_the_shipped_library_is_found_from_any_folder(tmp_path: Path) -> None:
    (tmp_path / "r.rule").write_text(SPELLED.replace(
        "not mentions($$$BODY, atomicAdd) and not mentions($$$BODY, __syncthreads)",
        "free_of($$$BODY, atomicAdd, __syncthreads)") + 'use "guards.rule"\n')
    (spelled,) = load_rules_text(SPELLED, "a.rule")
    (used,) = load_rules(tmp_path / "r.rule")
    assert used.guard == spelled.guard


BAD = """\
define guard a($X): b($X)
define guard b($Y): a($Y)
define guard c($X, $X): is_identifier($X)
define guard is_const($X): is_identifier($X)
define guard d($X): is_identifier($X) and mentions($Z, x)
define guard e($X): mentoins($X, x)
define guard f($X): mentions($X, ?h)
define guard g($X): is_identifier($X)
define guard g($Y): is_const($Y)
use "nowhere.rule"
rule r {
  kind: skill
  description: "d"
  context: any
  anchor: ```
    __global__ void $K($$$P) { $$$B; }
  ```
  guard: a($K) and g($K, $K) and is_identifier($K)
  rewrite remove_attribute: "x"
}
"""


def test_klc_check_names_every_misuse_at_its_place(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.rule"
    path.write_text(BAD)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    where = f"{path}:"
    for expected in (
        "1:1: guard a calls itself: a -> b -> a",
        "2:1: guard b calls itself: b -> a -> b",
        "3:20: guard c: parameter $X is given twice",
        "4:1: is_const is a guard predicate: a named guard needs a name of its own",
        "5:52: guard d: $Z is not one of its parameters ($X)",
        "6:21: guard e: unknown guard predicate or named guard 'mentoins'; did you mean "
        "mentions?",
        "7:34: guard f: a hole is passed as an argument, not named in a definition (?h)",
        "9:1: guard g with 1 parameters is defined twice (first at",
        '10:1: use "nowhere.rule": no such file beside this one or in klc\'s libraries',
        "18:10: guard a is refused where it is defined",
        "18:20: g takes 1 argument (g($X)), got 2",
    ):
        assert where + expected in err, expected
    assert "Traceback" not in err


def test_a_use_that_leads_back_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.rule").write_text('use "b.rule"\ndefine guard x($A): is_identifier($A)\n')
    (tmp_path / "b.rule").write_text('use "a.rule"\n')
    with pytest.raises(KlcError, match=r'b\.rule:1:1: use "a\.rule": it leads back'):
        load_rules(tmp_path / "a.rule")


def test_a_file_of_definitions_alone_checks(tmp_path: Path, capsys) -> None:
    """``klc check`` says what it checked: the definitions of a file of named guards, and
    the rules and definitions of files that hold both (not those a file uses)."""
    lib = tmp_path / "lib.rule"
    lib.write_text("define guard quiet($B): not mentions($B, atomicAdd)\n")
    assert main(["check", str(lib)]) == 0
    assert capsys.readouterr().out.strip() == "1 guard definition ok"
    shipped = Path(__file__).parents[2] / "grammar" / "guards.rule"
    assert main(["check", str(shipped)]) == 0
    defined = shipped.read_text().count("\ndefine guard ")
    assert defined > 10
    assert capsys.readouterr().out.strip() == f"{defined} guard definitions ok"
    (tmp_path / "both.rule").write_text(NAMED)
    (tmp_path / "user.rule").write_text(SPELLED.replace("drop_restrict_rows", "spelled")
                                        + 'use "lib.rule"\n')
    assert main(["check", str(tmp_path / "both.rule"), str(tmp_path / "user.rule")]) == 0
    assert capsys.readouterr().out.strip() == "2 rules and 3 guard definitions ok"
    lib.write_text("define guard loud($B): mentoins($B, atomicAdd)\n")
    assert main(["check", str(lib)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "1 error; 0 rules ok"


def _library_guard(text: str):  # type: ignore[no-untyped-def]
    """A guard as it loads from a rule file that uses klc's library (expanded)."""
    anchor = "for (int $I = $E; $I < $N; $I++) { $X = $I; $$$B; }"
    rules = load_rules_text(f'rule r {{\n  kind: skill\n  anchor: ```{anchor}```\n'
                            f'  guard: {text}\n  rewrite replace: ```{anchor}```\n}}\n\n'
                            'use "guards.rule"\n', "r.rule")
    return rules[0].guard


@pytest.mark.parametrize("named", [
    "free_of($$$B, threadIdx, blockIdx, __syncthreads) and is_identifier($X)",
    "absent_from($X, $E, $N) and absent_from(maxima, $X, $I, $E, $N, $$$B)",
    "not mentions($$$B, $X) and is_identifier($X) and not mentions($$$B, $I)",
    "is_identifier($X) and (free_of($E, threadIdx, blockIdx) or is_constant($E))",
])
def test_fold_writes_back_the_calls_expansion_takes_apart(named: str) -> None:
    """klc learn prints a learned guard (expanded when its pass loaded) in the words of
    grammar/guards.rule: folding the expansion gives the calls back, the longest definition
    at each place, and a lone ``not mentions`` stays as it is."""
    from klc.rule.defines import fold, library_definitions

    defs = library_definitions("guards.rule")
    expanded = _library_guard(named)
    assert "free_of" not in guard_text(expanded) and "absent_from" not in guard_text(expanded)
    folded = fold(expanded, defs)
    assert guard_text(folded) == named
    assert guard_text(_library_guard(guard_text(folded))) == guard_text(expanded)


def test_fold_splits_a_run_longer_than_any_definition() -> None:
    from klc.rule.defines import fold, library_definitions

    words = [f"w{i}" for i in range(14)]
    spelled = " and ".join(f"not mentions($$$B, {w})" for w in words)
    folded = guard_text(fold(_library_guard(spelled), library_definitions("guards.rule")))
    assert folded == (f"free_of($$$B, {', '.join(words[:12])}) and "
                      f"free_of($$$B, {', '.join(words[12:])})")


def test_with_named_guards_folds_guard_lines_only_and_adds_the_use_line() -> None:
    from klc.rule.defines import with_named_guards

    text = ("rule r {\n  kind: skill\n  anchor: ```\n    guard: not mentions($A, x) and "
            "not mentions($A, y);\n  ```\n  guard: not mentions($X, a) and not mentions($X, b)"
            "\n  rewrite replace: ```$X```\n}\n")
    out = with_named_guards(text)
    # the code block's line (a label, as C allows) is code, not a guard
    assert "    guard: not mentions($A, x) and not mentions($A, y);\n" in out
    assert "\n  guard: free_of($X, a, b)\n" in out and out.endswith('}\n\nuse "guards.rule"\n')
    plain = text.replace(" and not mentions($X, b)", "")
    assert with_named_guards(plain) == plain  # nothing to fold: no use line
