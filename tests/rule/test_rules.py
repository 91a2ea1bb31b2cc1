"""The rule loader: the model a rule file compiles to, every load-time error with its exact
file:line:col, the printer's round trip, hole validation, and ``klc check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.errors import KlcError
from klc.rule import (
    Card,
    GuardAnd,
    GuardArg,
    GuardCall,
    GuardNot,
    GuardOr,
    HoleDecl,
    RuleError,
    code_refs,
    grammar,
    load_rule_dir,
    load_rules,
    load_rules_text,
    make_edit,
    rule_to_text,
)

FULL = '''\
// a full rule: every field, every edit kind, every hole type
rule devectorize_float4 {
  kind: simplification
  description: "Replace a 128-bit float4 load by four scalar loads"
  context: global, loop
  anchor: ```
    float4 $V = reinterpret_cast<const float4*>($X)[$I];
  ```
  guard: is_pointer($X) and elem_type($X, "float") and not (no_write($X, kernel) or in_loop)
         and divisible($I, ?factor)
  rewrite replace: ```
    float4 $V;
    $V.x = $X[4 * ($I) + 0];
    int m = ?mode;
    if (?init) { ?body }
  ```
  rewrite insert_body_start: ```
    __shared__ float ?name[?tile];
  ```
  rewrite add_qualifier $X: "__restrict__"
  rewrite remove_qualifier $X: "const"
  rewrite add_attribute: "__launch_bounds__(?threads)"
  rewrite remove_attribute: "__launch_bounds__"
  rewrite launch grid.x /= ?factor
  rewrite launch block.y *= 2
  hole factor: int in {2, 4, 8} default 4
  hole threads: int in 32..1024 default 256
  hole tile: int in {16, 32}
  hole mode: enum {warp, block} default warp
  hole name: ident default "tile"
  hole init: expr default "i < n"
  hole body: stmts
  card {
    intent: "Undo a vector load"
    where: """
      A float4 local initialised from
      a reinterpreted float pointer
    """
    conditions: "Always sound"
    effect: "1.3x on H100"
    effect: "1.1x on H200"
    pitfalls: "more instructions"
    provenance: "lineage saxpy step 2"
  }
}
'''


def errors_of(text: str, path: str = "r.rule") -> list[str]:
    with pytest.raises(KlcError) as info:
        load_rules_text(text, path)
    e = info.value
    return list(e.errors) if isinstance(e, RuleError) else [str(e)]


def one_error(text: str) -> str:
    errors = errors_of(text)
    assert len(errors) == 1, errors
    return errors[0]


def rule(body: str, name: str = "r") -> str:
    """A minimal valid rule around extra fields; line 1 is `rule r {`."""
    return f"rule {name} {{\n  kind: skill\n{body}}}\n"


BASE = "  anchor: ```\n    expf($X)\n  ```\n  rewrite replace: ```\n    __expf($X)\n  ```\n"


# --------------------------------------------------------------------------------------
# The model


def test_full_rule_loads_into_the_model() -> None:
    [r] = load_rules_text(FULL, "passes/x.rule")
    assert (r.name, r.kind, r.path, r.line, r.col) == ("devectorize_float4", "simplification",
                                                       "passes/x.rule", 2, 1)
    assert r.location == "passes/x.rule:2"
    assert r.description == "Replace a 128-bit float4 load by four scalar loads"
    assert r.context == ("global", "loop")
    assert r.anchor == "float4 $V = reinterpret_cast<const float4*>($X)[$I];"
    assert (r.anchor_line, r.anchor_col) == (7, 5)
    assert r.metavars == frozenset({"V", "X", "I"})
    assert r.sequence_metavars == frozenset()
    assert r.guard == GuardAnd((
        GuardCall("is_pointer", (GuardArg("metavar", "X"),)),
        GuardCall("elem_type", (GuardArg("metavar", "X"), GuardArg("string", "float"))),
        GuardNot(GuardOr((GuardCall("no_write", (GuardArg("metavar", "X"),
                                                 GuardArg("name", "kernel"))),
                          GuardCall("in_loop")))),
        GuardCall("divisible", (GuardArg("metavar", "I"), GuardArg("hole", "factor"))),
    ))
    assert r.edits == (
        make_edit("replace", template="float4 $V;\n$V.x = $X[4 * ($I) + 0];\nint m = ?mode;\n"
                          "if (?init) { ?body }"),
        make_edit("insert_body_start", template="__shared__ float ?name[?tile];"),
        make_edit("add_qualifier", target="X", value="__restrict__"),
        make_edit("remove_qualifier", target="X", value="const"),
        make_edit("add_attribute", value="__launch_bounds__(?threads)"),
        make_edit("remove_attribute", value="__launch_bounds__"),
        make_edit("launch", dim="grid", axis="x", op="/", factor="?factor"),
        make_edit("launch", dim="block", axis="y", op="*", factor=2),
    )
    assert [(e.line, e.col) for e in r.edits][:2] == [(11, 3), (17, 3)]
    assert list(r.holes) == ["factor", "threads", "tile", "mode", "name", "init", "body"]
    assert r.holes["factor"] == HoleDecl("factor", "int", (2, 4, 8), None, None, 4)
    assert r.holes["threads"] == HoleDecl("threads", "int", None, 32, 1024, 256)
    assert r.holes["tile"].default is None
    assert r.holes["mode"] == HoleDecl("mode", "enum", ("warp", "block"), default="warp")
    assert r.holes["name"] == HoleDecl("name", "ident", default="tile")
    assert r.holes["init"] == HoleDecl("init", "expr", default="i < n")
    assert (r.holes["body"].line, r.holes["body"].col) == (32, 3)
    assert r.card == Card("Undo a vector load",
                          "A float4 local initialised from\na reinterpreted float pointer",
                          "Always sound", ("1.3x on H100", "1.1x on H200"),
                          ("more instructions",), ("lineage saxpy step 2",))


def test_hole_domains_enumerate() -> None:
    [r] = load_rules_text(FULL, "x.rule")
    assert r.holes["factor"].domain() == (2, 4, 8)
    threads = r.holes["threads"].domain()
    assert threads is not None and threads[0] == 32 and threads[-1] == 1024
    assert len(threads) == 993
    assert r.holes["mode"].domain() == ("warp", "block")
    assert r.holes["name"].domain() is None


def test_defaults_context_and_sequence_metavariables() -> None:
    [r] = load_rules_text(rule("  anchor: ```\n    foo($A, $$$REST);\n  ```\n"
                               "  rewrite replace: ```\n    bar($$$REST, $A);\n  ```\n"),
                          "x.rule")
    assert r.context == ("any",)
    assert r.guard is None and r.description == "" and r.card == Card()
    assert r.metavars == frozenset({"A", "REST"})
    assert r.sequence_metavars == frozenset({"REST"})


def test_inline_code_block_and_statement_metavariable() -> None:
    text = rule("  anchor: ```for ($I; $C; $U) $BODY```\n"
                "  rewrite replace: ```\n    #pragma unroll\n    for ($I; $C; $U) $BODY\n  ```\n")
    [r] = load_rules_text(text, "x.rule")
    assert r.anchor == "for ($I; $C; $U) $BODY"
    assert (r.anchor_line, r.anchor_col) == (3, 14)
    assert r.edits[0].template == "#pragma unroll\nfor ($I; $C; $U) $BODY"


def test_comments_are_ignored_outside_code_but_kept_inside() -> None:
    text = ("// header\nrule r { // trailing\n  kind: skill // why\n  anchor: ```\n"
            "    expf($X) // kept\n  ```\n  rewrite replace: ```\n    __expf($X)\n  ```\n}\n")
    [r] = load_rules_text(text, "x.rule")
    assert r.anchor == "expf($X) // kept"


def test_code_refs_skip_strings_and_comments() -> None:
    refs = [(c.kind, c.name) for c in code_refs('f($A, "$B", ?h) /* $C */ // ?d\n$$$E')]
    assert refs == [("metavar", "A"), ("hole", "h"), ("sequence", "E")]


def test_grammar_is_package_data() -> None:
    assert "rewrite" in {t.pattern.value for t in grammar().terminals
                         if t.pattern.type == "str"}


# --------------------------------------------------------------------------------------
# Syntax errors: lark's position, what was expected, in words


def test_unknown_field_lists_the_known_ones() -> None:
    msg = one_error(rule("  anchr: ```x```\n"))
    assert msg.startswith("r.rule:3:3: unknown field \"anchr\" (did you mean anchor?)")
    assert "kind, description, context, anchor, metavar, guard, rewrite, hole, card" in msg


def test_syntax_error_says_what_was_expected() -> None:
    msg = one_error("rule r {\n  kind skill\n}\n")
    assert msg == 'r.rule:2:8: expected one of: ":" but found "skill"'


def test_unknown_rewrite_kind() -> None:
    msg = one_error(rule("  rewrite swap: ```x```\n"))
    assert msg.startswith('r.rule:3:11: expected one of: "add_attribute", "add_qualifier"')
    assert msg.endswith('but found "swap"')


def test_unknown_card_field() -> None:
    msg = one_error(rule(BASE + "  card {\n    intnt: \"x\"\n  }\n"))
    assert msg.startswith('r.rule:10:5: unknown card field "intnt"; the card fields are: '
                          "intent, where")


def test_unterminated_code_block_and_end_of_file() -> None:
    assert one_error("rule r {\n  kind: skill\n").startswith(
        "r.rule:2:14: expected one of:")
    msg = one_error("rule r {\n  anchor: ``x``\n}\n")
    assert msg.startswith('r.rule:2:11: unexpected character "`" (a code block is delimited')


# --------------------------------------------------------------------------------------
# Validation errors


def test_duplicate_rule_names_in_a_file() -> None:
    text = rule(BASE) + rule(BASE)
    assert one_error(text) == "r.rule:10:1: duplicate rule name 'r' (first defined at line 1:1)"


def test_missing_kind_anchor_rewrite() -> None:
    errors = errors_of("rule r {\n  description: \"d\"\n}\n")
    assert errors == ["r.rule:1:1: rule r: missing `anchor`",
                      "r.rule:1:1: rule r: missing `kind`",
                      "r.rule:1:1: rule r: missing `rewrite` (at least one edit)"]


def test_duplicate_field_unknown_kind_and_context() -> None:
    text = "rule r {\n  kind: skil\n  context: global, lop\n  kind: skill\n" + BASE + "}\n"
    assert errors_of(text) == [
        "r.rule:2:9: unknown kind 'skil'; a rule is one of: simplification, skill",
        "r.rule:3:20: unknown context 'lop' (did you mean loop?); contexts are: "
        "global, device, any, loop, kernel_scope",
        "r.rule:4:3: rule r: duplicate field `kind` (first at line 2:3)",
    ]


def test_unknown_predicate_lists_close_matches_first() -> None:
    msg = one_error(rule(BASE + "  guard: is_ptr($X)\n"))
    assert msg.startswith("r.rule:9:10: unknown guard predicate 'is_ptr'; did you mean "
                          "is_pointer")
    known = msg.split("(known: ")[1]
    assert known.startswith("is_pointer")
    assert "trip_count_known" in known


def test_wrong_arity_and_argument_kind() -> None:
    assert one_error(rule(BASE + "  guard: is_pointer($X, $X)\n")) == \
        "r.rule:9:10: is_pointer takes 1 argument (is_pointer($X)), got 2"
    assert one_error(rule(BASE + "  guard: aligned($X, \"16\")\n")) == \
        'r.rule:9:22: argument 2 of aligned (N) must be a hole (?h) or an integer, got "16"'
    msg = one_error(rule(BASE + "  guard: no_write($X, kernal)\n"))
    assert msg == ("r.rule:9:23: argument 2 of no_write (region) must be one of anchor, "
                   "kernel, loop, got kernal")


def test_unbound_metavariable_in_rewrite_and_guard() -> None:
    text = rule("  anchor: ```\n    expf($X)\n  ```\n  guard: is_const($Y)\n"
                "  rewrite replace: ```\n    __expf($X) +\n      $Z\n  ```\n")
    assert errors_of(text) == [
        "r.rule:6:19: $Y is used in the guard but the anchor never binds it (the anchor "
        "binds: $X)",
        "r.rule:9:7: $Z is used in rewrite replace but the anchor never binds it (the anchor "
        "binds: $X)",
    ]


def test_wildcard_and_sequence_mismatch() -> None:
    text = rule("  anchor: ```\n    foo($_, $$$A)\n  ```\n"
                "  rewrite replace: ```\n    bar($A, $_)\n  ```\n")
    assert errors_of(text) == [
        "r.rule:7:9: $A is used in rewrite replace but the anchor binds $$$A",
        "r.rule:7:13: $_ in rewrite replace: the wildcard binds nothing, so it cannot be "
        "used here",
    ]


def test_hole_errors() -> None:
    text = rule("  anchor: ```\n    expf($X)\n  ```\n"
                "  rewrite replace: ```\n    __expf($X * ?k)\n  ```\n"
                "  hole unused: enum {a, b}\n"
                "  hole n: int\n"
                "  hole m: enum\n"
                "  hole f: int in {2, 4} default 3\n"
                "  hole g: int in 8..1\n"
                "  hole t: flaot\n"
                "  guard: divisible($X, ?n) and divisible($X, ?m) and divisible($X, ?f) "
                "and divisible($X, ?g) and divisible($X, ?t)\n")
    assert errors_of(text) == [
        "r.rule:7:17: hole ?k is used in rewrite replace but not declared (declare it: "
        "`hole k: ...`) (a conditional needs a space after `?`: `c ? a : b`)",
        "r.rule:9:3: hole ?unused is declared but never used in a rewrite or the guard",
        "r.rule:10:11: hole ?n: an int hole needs a domain: `int in {2, 4, 8}` or `int in 1..8`",
        "r.rule:11:11: hole ?m: an enum hole needs its values: `enum {warp, block}`",
        "r.rule:12:33: hole ?f: the default 3 is not in {2, 4}",
        "r.rule:13:18: hole ?g: the range 8..1 is empty",
        "r.rule:14:11: hole ?t: unknown type 'flaot'; hole types are: int, enum, ident, expr, "
        "stmts",
        "r.rule:15:112: hole ?t is used in the guard but not declared (declare it: "
        "`hole t: ...`)",
    ]


def test_hole_in_anchor_and_launch_factor_type() -> None:
    text = rule("  anchor: ```\n    expf(?h)\n  ```\n"
                "  rewrite launch grid.x /= ?h\n  hole h: enum {a, b}\n")
    assert errors_of(text) == [
        "r.rule:4:10: hole ?h cannot be used in the anchor (holes belong to rewrites and "
        "guards)",
        "r.rule:6:28: the launch factor ?h must be an int hole, not enum",
    ]


def test_anchor_that_does_not_parse_maps_into_the_file() -> None:
    text = rule("  anchor: ```\n    float4 $V =\n      reinterpret_cast<(($X)[$I];\n  ```\n"
                "  rewrite replace: ```\n    float4 $V;\n  ```\n")
    msg = one_error(text)
    assert msg.startswith("r.rule:5:")
    assert "the anchor does not parse as CUDA" in msg


def test_template_that_does_not_parse_maps_into_the_file() -> None:
    text = rule("  anchor: ```\n    expf($X)\n  ```\n"
                "  rewrite replace: ```\n    __expf($X)\n    + * ) ?k\n  ```\n"
                "  hole k: int in 1..2\n")
    msg = one_error(text)
    assert msg.startswith("r.rule:8:9: rewrite replace: the template does not parse as CUDA")


def test_bad_qualifier_attribute_and_launch_axis() -> None:
    text = rule("  anchor: ```\n    expf($X)\n  ```\n"
                "  rewrite add_qualifier $X: \"__restrct__\"\n"
                "  rewrite add_attribute: \"__launch_bounds__(\"\n"
                "  rewrite launch grid.w *= 0\n")
    errors = errors_of(text)
    assert errors[0] == ("r.rule:6:29: rewrite add_qualifier: unknown qualifier "
                         '"__restrct__"; qualifiers are: const, volatile, __restrict__, '
                         "__restrict, restrict")
    assert errors[1].startswith('r.rule:7:27: rewrite add_attribute: "__launch_bounds__(" is '
                                "not a function attribute")
    assert errors[2:] == [
        "r.rule:8:18: rewrite launch: 'grid.w' is not one of grid.x, grid.y, grid.z, "
        "block.x, block.y, block.z",
        "r.rule:8:28: rewrite launch: the factor must be a positive integer, not 0",
    ]


def test_only_one_replace_and_card_duplicates() -> None:
    text = rule(BASE + "  rewrite replace: ```\n    f($X)\n  ```\n"
                "  card {\n    intent: \"a\"\n    intent: \"b\"\n    effect: \"1\"\n"
                "    effect: \"2\"\n  }\n")
    assert errors_of(text) == [
        "r.rule:9:3: only one `rewrite replace` per rule (the anchor is replaced once)",
        "r.rule:14:5: card: duplicate `intent` (first at line 13:5); only effect, pitfalls "
        "and provenance may repeat",
    ]


def test_lowercase_metavariable_is_refused() -> None:
    text = rule("  anchor: ```\n    expf($x)\n  ```\n  rewrite replace: ```\n    f()\n  ```\n")
    assert one_error(text) == ("r.rule:4:10: metavariable $x: metavariable names are upper "
                               "case ($X)")


# --------------------------------------------------------------------------------------
# Printing round trip


def test_print_and_reload_gives_an_equal_rule() -> None:
    [r] = load_rules_text(FULL, "passes/x.rule")
    text = rule_to_text(r)
    [again] = load_rules_text(text, "elsewhere.rule")
    assert again == r
    assert rule_to_text(again) == text
    assert again.path == "elsewhere.rule"  # locations are not part of equality


@pytest.mark.parametrize("text", [
    rule(BASE + '  guard: (in_loop or not_in_error) and not (is_const($X) and '
         'const_value($X, <=, -3) or equals($X, 1.5))\n'),
    rule('  description: "quotes \\" and \\\\ and\\nnewlines"\n' + BASE
         + '  card {\n    effect: "a"\n    effect: "b"\n    pitfalls: "p"\n  }\n'),
    rule("  anchor: ```\n    foo($$$ARGS);\n  ```\n  rewrite replace: ```\n"
         "    if (x) {\n        foo($$$ARGS);\n    }\n\n    ?s\n  ```\n"
         '  hole s: stmts default "x = 1;"\n  hole e: enum {"a b", c, 3} default "a b"\n'
         "  guard: same_text($$$ARGS, $$$ARGS) or equals($X, ?e)\n"
         "  rewrite add_qualifier $X: \"const\"\n").replace("foo($$$ARGS);\n  ```",
                                                        "foo($$$ARGS, $X);\n  ```"),
])
def test_round_trip_of_guards_strings_and_odd_values(text: str) -> None:
    [r] = load_rules_text(text, "x.rule")
    [again] = load_rules_text(rule_to_text(r), "y.rule")
    assert again == r


def test_shipped_rule_files_round_trip() -> None:
    root = Path(__file__).resolve().parents[2]
    checked = 0
    for path in sorted((root / "passes").glob("*.rule")) + sorted(
            (root / "skills").glob("*.rule")):
        try:
            rules = load_rules(path)
        except RuleError:
            continue  # a library file under repair is reported by `klc check`, not here
        for r in rules:
            assert load_rules_text(rule_to_text(r), "p.rule") == [r]
            checked += 1
    assert checked > 0


# --------------------------------------------------------------------------------------
# Hole values


def hole(decl: str) -> HoleDecl:
    text = rule("  anchor: ```\n    expf($X)\n  ```\n  rewrite replace: ```\n"
                "    __expf(?h)\n  ```\n" + f"  hole h: {decl}\n")
    return load_rules_text(text, "x.rule")[0].holes["h"]


def test_int_hole_values() -> None:
    h = hole("int in {2, 4, 8}")
    assert h.validate(" 4 ") == "4"
    with pytest.raises(KlcError, match=r"^hole \?h: 3 is not in \{2, 4, 8\}$"):
        h.validate("3")
    with pytest.raises(KlcError, match=r'"four" is not an integer'):
        h.validate("four")
    r = hole("int in 32..1024")
    assert r.validate("32") == "32" and r.validate("1024") == "1024"
    with pytest.raises(KlcError, match=r"2000 is not in 32\.\.1024"):
        r.validate("2000")


def test_enum_and_ident_hole_values() -> None:
    e = hole("enum {warp, block}")
    assert e.validate("warp") == "warp"
    with pytest.raises(KlcError, match='"grid" is not one of'):
        e.validate("grid")
    i = hole("ident")
    assert i.validate("tile_a") == "tile_a"
    with pytest.raises(KlcError, match="is a keyword"):
        i.validate("while")
    with pytest.raises(KlcError, match="not a C identifier"):
        i.validate("a-b")


def test_expr_and_stmts_hole_values_refuse_injection() -> None:
    e = hole("expr")
    assert e.validate("a[i] * (b + 1)") == "a[i] * (b + 1)"
    for bad, why in [("1); evil(); (0", "does not parse as one CUDA expression"),
                     ('asm("trap;")', "inline asm"),
                     ("x\n#include <stdio.h>\n", "preprocessor"),
                     ("a +", "does not parse"), ("", "empty")]:
        with pytest.raises(KlcError, match=why):
            e.validate(bad)
    s = hole("stmts")
    assert s.validate("a = 1;\nb += a;") == "a = 1;\nb += a;"
    for bad, why in [("} void evil() {", "does not parse as CUDA statements"),
                     ("__asm__ volatile(\"exit;\");", "inline asm"),
                     ("#pragma unroll\nx = 1;", "preprocessor"), ("x = ;", "does not parse")]:
        with pytest.raises(KlcError, match=why):
            s.validate(bad)


def test_default_is_validated_like_a_value() -> None:
    errors = errors_of(rule("  anchor: ```\n    expf($X)\n  ```\n  rewrite replace: ```\n"
                            "    __expf(?h)\n  ```\n  hole h: expr default \"asm(\\\"x\\\")\"\n"))
    assert errors == ['r.rule:9:24: hole ?h: the default "asm(\\"x\\")" contains inline asm, '
                      "which a hole value may not"]


# --------------------------------------------------------------------------------------
# Files, folders and `klc check`


def test_load_rule_dir_sorted_and_duplicates_across_files(tmp_path: Path) -> None:
    (tmp_path / "b.rule").write_text(rule(BASE, "second"))
    (tmp_path / "a.rule").write_text(rule(BASE, "first"))
    (tmp_path / "notes.txt").write_text("not a rule")
    assert [r.name for r in load_rule_dir(tmp_path)] == ["first", "second"]
    (tmp_path / "c.rule").write_text(rule(BASE, "first"))
    with pytest.raises(RuleError) as info:
        load_rule_dir(tmp_path)
    assert info.value.errors == (f"{tmp_path / 'c.rule'}:1:1: duplicate rule name 'first' "
                                 f"(first defined at {tmp_path / 'a.rule'}:1)",)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(KlcError, match="no such rule file"):
        load_rules(tmp_path / "nope.rule")
    with pytest.raises(KlcError, match="no such rule folder"):
        load_rule_dir(tmp_path / "nope")
    (tmp_path / "e.rule").write_text("// nothing\n")
    with pytest.raises(RuleError, match=r"e\.rule:1:1: no rule in this file"):
        load_rules(tmp_path / "e.rule")


def test_klc_check_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.rule").write_text(rule(BASE, "a") + rule(BASE, "b"))
    (tmp_path / "c.rule").write_text(rule(BASE, "c"))
    assert main(["check", str(tmp_path / "a.rule"), str(tmp_path / "c.rule")]) == 0
    assert capsys.readouterr().out.strip() == "3 rules ok"


def test_klc_check_reports_every_error(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.rule"
    good.write_text(rule(BASE, "good"))
    bad = tmp_path / "bad.rule"
    bad.write_text(rule(BASE + "  guard: is_ptr($X) and is_const($Q)\n", "bad"))
    syntax = tmp_path / "syntax.rule"
    syntax.write_text("rule s {\n  anchr: ```x```\n}\n")
    assert main(["check", str(good), str(bad), str(syntax)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{bad}:9:10: unknown guard predicate 'is_ptr'")
    assert err[1].startswith(f"{bad}:9:34: $Q is used in the guard")
    assert err[2].startswith(f"{syntax}:2:3: unknown field \"anchr\"")
    assert err[3] == "3 errors; 1 rule ok"


def test_klc_check_folder_and_predicate_list(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.rule").write_text(rule(BASE, "a"))
    assert main(["check", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "1 rule ok"
    assert main(["check", "--predicates"]) == 0
    listing = capsys.readouterr().out
    assert "aligned($X, N)" in listing and "smem_fits([limit])" in listing
    assert main(["check"]) == 2


def test_klc_check_counts_good_files_beside_bad_ones_and_keeps_text_verbatim(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "a.rule").write_text(rule(BASE, "a"))
    (folder / "b.rule").write_text(rule(BASE, "b"))
    bad = "\n" * 99 + rule(BASE + "  guard: nope\n", "c")  # the guard is on line 108
    (folder / "c.rule").write_text(bad)
    (tmp_path / "again.rule").write_text(rule(BASE, "a"))
    assert main(["check", str(folder), str(tmp_path / "again.rule")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{folder / 'c.rule'}:108:10: unknown guard predicate 'nope'")
    assert err[1] == (f"{tmp_path / 'again.rule'}:1:1: duplicate rule name 'a' (first defined "
                      f"at {folder / 'a.rule'}:1)")
    assert err[2] == "2 errors; 2 rules ok"


# --------------------------------------------------------------------------------------
# Metavariable kinds


def test_metavar_kinds_are_checked() -> None:
    assert one_error(rule(BASE + "  metavar $X: identifer\n")) == (
        "r.rule:9:15: unknown metavariable kind 'identifer' (did you mean identifier?); "
        "the kinds are: identifier, constant, pointer, scalar, int_expr, type")
    assert one_error(rule(BASE + "  metavar $Y: identifier\n")) == (
        "r.rule:9:11: metavar $Y: the anchor binds no $Y (it binds: $X)")
    msg = one_error(rule(BASE + "  metavar $X: identifier\n  metavar $X: constant\n"))
    assert msg == ("r.rule:10:11: metavar $X: its kinds are given twice (write them on one "
                   "line: metavar $X: A, B)")
    assert one_error(rule(BASE + "  metavar $X: identifier, constant\n")) == (
        "r.rule:9:11: metavar $X: no code is both identifier and constant")
    assert one_error(rule(BASE + "  metavar $X: pointer, scalar\n")) == (
        "r.rule:9:11: metavar $X: no code is both a pointer and a scalar")
    assert one_error(rule(BASE + "  metavar $X: identifier, pointr\n")) == (
        "r.rule:9:27: unknown metavariable kind 'pointr' (did you mean pointer?); "
        "the kinds are: identifier, constant, pointer, scalar, int_expr, type")
    seq = ("  anchor: ```\n    f($$$A)\n  ```\n  metavar $$$A: identifier\n"
           "  rewrite replace: ```\n    g($$$A)\n  ```\n")
    assert "a kind constrains a metavariable that binds one node ($A), not a run" in \
        one_error(rule(seq))


def test_metavar_kinds_constrain_matches_and_round_trip() -> None:
    """A kind is part of matching (a binding of another kind is no match, not a refused
    site), of the shared-matching key, and of the printed rule; the inverse of a pass
    keeps the kinds of what its anchor still binds."""
    from klc.cuda.parse import parse_bytes
    from klc.match import pattern_of
    from klc.pipeline import find_sites
    from klc.rule import load_rules_text, rule_to_text

    text = """\
rule typed {
  kind: skill
  anchor: ```
    $X[$I]
  ```
  metavar $X: identifier
  metavar $I: constant
  rewrite replace: ```
    at($X, $I)
  ```
}
rule untyped {
  kind: skill
  anchor: ```
    $X[$I]
  ```
  rewrite replace: ```
    at($X, $I)
  ```
}
"""
    typed, untyped = load_rules_text(text, "t.rule")
    assert typed.metavar_kinds == (("I", "constant"), ("X", "identifier"))
    assert pattern_of(typed).key != pattern_of(untyped).key
    unit = parse_bytes(b"__global__ void k(float* x, int i) {\n"
                       b"  __shared__ float s[4][4];\n"
                       b"  x[i] = x[3] + s[1][2] + x['a'];\n}\n", "k.cu")
    sites = find_sites(unit, [typed, untyped])
    shown = sorted((s.rule.name, unit.text(s.match.start, s.match.end)) for s in sites)
    assert [t for r, t in shown if r == "typed"] == ["s[1]", "x['a']", "x[3]"]
    assert [t for r, t in shown if r == "untyped"] == [
        "s[1]", "s[1][2]", "x['a']", "x[3]", "x[i]"]
    again = load_rules_text(rule_to_text(typed), "again.rule")[0]
    assert again.metavar_kinds == typed.metavar_kinds and again.anchor == typed.anchor


def test_inverse_keeps_the_kinds_of_what_the_skill_anchor_binds() -> None:
    from klc.reverse import mechanical_inverse
    from klc.rule import load_rules_text

    root = Path(__file__).resolve().parents[2]
    (qualifier,) = [r for r in load_rules_text(
        (root / "passes" / "qualifiers.rule").read_text(), "q.rule")
        if r.name == "remove_restrict"]
    skill = mechanical_inverse(qualifier).rule
    assert skill.metavar_kinds == (("X", "identifier"), ("X", "pointer"))


def test_rule_grammar_cache_is_klcs_own_and_a_broken_one_is_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lark keeps the parser tables in klc's cache folder (not a shared temporary one), and
    a cache file that is not lark's (garbage, another version) is rebuilt, not trusted."""
    from klc.rule import grammar

    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path))
    built = grammar.__wrapped__()  # (grammar() itself is built once per process)
    cache = tmp_path / "lark" / "rule-grammar.cache"
    assert cache.is_file() and cache.stat().st_size > 1000
    cache.write_bytes(b"not a lark cache\n\x80\x04garbage")
    again = grammar.__wrapped__()
    assert {t.name for t in again.terminals} == {t.name for t in built.terminals}
    assert not cache.read_bytes().startswith(b"not a lark")  # rewritten by lark
