"""An ident hole that a rewrite declares must be a fresh name (klc.rule.fresh): the site
requires ``fresh_name(?h)`` without the rule saying so, in its guard stage, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.fill import FillRequest
from klc.fill.search import SearchFiller, fresh_value, with_fresh_defaults
from klc.fill.trial import candidate_sites
from klc.pipeline import apply_rules, apply_site, find_sites, spec_of
from klc.rule import RuleError, load_rules, load_rules_text, rule_to_text
from klc.rule.fresh import declared_in, implied_fresh

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def skill(file: str, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in load_rules(ROOT / "skills" / file) if r.name == name)


def golden(rule: str, case: str, edit=None):  # type: ignore[no-untyped-def]
    path = GOLDEN / rule / case
    text = path.read_text()
    if edit is not None:
        text = edit(text)
    return parse_bytes(text.encode(), str(path))


# --------------------------------------------------------------------------------------
# What a template declares: read from its parse


@pytest.mark.parametrize("template, declared", [
    ("for (int ?o = 16; ?o > 0; ?o >>= 1) {\n    $ACC += ?o;\n}", ("o",)),
    ("__shared__ float ?ws[32];", ("ws",)),
    ("float4 ?v = reinterpret_cast<const float4*>($X)[$I];", ("v",)),
    ("float ?fa[$TM];\nfloat4 ?ald;\nconst int ?kn = $K0;", ("fa", "ald", "kn")),
    ("float *?p = $X, &?r = $Y;", ("p", "r")),
    ("for (auto ?e : $XS) {\n    $S;\n}", ("e",)),
    ("?ta $AS[2][$A1][$A2];", ()),  # a type hole declares nothing
    ("?cache[$K] = $V;", ()),  # an existing array, written
    ("?ws[threadIdx.x / 32] = $ACC;", ()),
    ("$ACC = threadIdx.x < $B / 32 ? ?ws[threadIdx.x] : 0.0f;", ()),
    ("int offset = ?o; // ?c declared in a comment: int ?c;", ()),
])
def test_declared_in_reads_the_templates_syntax(template: str, declared: tuple[str, ...]) -> None:
    assert declared_in(template) == declared


def test_which_skills_declare_which_holes() -> None:
    assert implied_fresh(skill("block_reduce.rule", "shuffle_block_reduce")) == ("o",)  # not ws
    assert implied_fresh(skill("gemm_tiles.rule", "split_k_loop")) == ("k0",)
    assert set(implied_fresh(skill("gemm_tiles.rule", "smem_tiles"))) == {"as", "bs", "la", "lb"}
    assert implied_fresh(skill("buffering.rule", "double_buffer_tiles")) == ()  # names buf
    # names an existing variable, guarded `not fresh_name`: unaffected
    assert implied_fresh(skill("row_kernels.rule", "row_cache_in_registers")) == ()
    assert implied_fresh(skill("smem_tile.rule", "tile_transpose")) == ()  # guard says it
    # a guard that says fresh_name(?h) itself is not judged twice
    assert implied_fresh(skill("row_kernels.rule", "thread_per_row_to_warp_per_row")) == ()
    assert set(implied_fresh(skill("privatize.rule", "privatize_atomic_histogram"))) == {"j", "cnt"}


def test_printed_rules_do_not_carry_the_implied_guard() -> None:
    rule = skill("block_reduce.rule", "shuffle_block_reduce")
    text = rule_to_text(rule)
    assert "fresh_name" not in text
    again = load_rules_text(text, "again.rule")[0]
    assert again == rule and implied_fresh(again) == ("o",)


# --------------------------------------------------------------------------------------
# shuffle_block_reduce: a parameter named `offset`


def _offset_param(text: str) -> str:
    text = text.replace("int n) {", "int n, int offset) {", 1)
    return text.replace("acc += x[i];", "acc += x[offset + i];", 1)


def test_shuffle_block_reduce_takes_a_fresh_variant_where_offset_is_a_parameter() -> None:
    rule = skill("block_reduce.rule", "shuffle_block_reduce")
    unit = golden("shuffle_block_reduce", "reduce_sum_v04.cu", _offset_param)
    # no value given: the default `offset` is the kernel's parameter, so the site takes its
    # first fresh variant (Coccinelle's fresh identifiers), shown among the site's holes
    sites = find_sites(unit, [rule], spec=spec_of(unit))
    assert len(sites) == 1 and sites[0].ok and sites[0].holes == {"o": "offset_1"}
    out = apply_rules(unit, [rule], spec=spec_of(unit))
    assert out.changed and not out.refused
    new = out.source.decode()
    assert "for (int offset_1 = 16; offset_1 > 0; offset_1 >>= 1)" in new
    assert "acc += x[offset + i];" in new
    # a value the user gives is judged as given: the clash is refused, saying why
    given = find_sites(unit, [rule], {"o": "offset"}, spec_of(unit))
    assert len(given) == 1 and not given[0].ok and given[0].stage == "guard"
    assert given[0].reason.startswith("?o names a variable the rewrite declares: `offset` is "
                                      "already used in `reduce_sum` (")
    assert not apply_rules(unit, [rule], {"o": "offset"}, spec_of(unit)).changed
    again = apply_site(unit, sites[0], {"o": "offset"}, spec_of(unit))
    assert not again.changed and "`offset` is already used" in again.refused[0].reason
    # a taken variant is skipped too
    both = golden("shuffle_block_reduce", "reduce_sum_v04.cu",
                  lambda t: _offset_param(t).replace("int offset)", "int offset, int offset_1)")
                  .replace("x[offset + i]", "x[offset + offset_1 + i]"))
    assert find_sites(both, [rule], spec=spec_of(both))[0].holes == {"o": "offset_2"}


def test_shuffle_block_reduce_applies_where_nothing_clashes() -> None:
    rule = skill("block_reduce.rule", "shuffle_block_reduce")
    unit = golden("shuffle_block_reduce", "reduce_sum_v04.cu")
    assert "warp_sums" in unit.source.decode()  # ?ws names the existing array: no clash
    out = apply_rules(unit, [rule], {"mask": "0xffffffffu", "o": "offset", "ws": "warp_sums"},
                      spec_of(unit))
    expected = (GOLDEN / "shuffle_block_reduce" / "reduce_sum_v04.expected.cu").read_bytes()
    assert out.source == expected


def test_klc_list_shows_the_fresh_variant_and_apply_says_why_a_given_name_clashes(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = _offset_param((GOLDEN / "shuffle_block_reduce" / "reduce_sum_v04.cu").read_text())
    path = tmp_path / "reduce.cu"
    path.write_text(src)
    skills = ["--skills", str(ROOT / "skills" / "block_reduce.rule")]
    assert main(["list", "--all", *skills, str(path)]) == 0
    out = capsys.readouterr().out
    assert "shuffle_block_reduce" in out and "?o=offset_1" in out and "why not" not in out
    assert main(["apply", *skills[1:], str(path), "--hole", "o=offset"]) == 1
    err = capsys.readouterr().err
    assert "?o names a variable the rewrite declares: `offset` is already used in " \
        "`reduce_sum` (" in err


def test_search_filler_picks_a_fresh_variant() -> None:
    rule = skill("block_reduce.rule", "shuffle_block_reduce")
    unit = golden("shuffle_block_reduce", "reduce_sum_v04.cu", _offset_param)
    spec = spec_of(unit)
    sites = candidate_sites(unit, [rule], spec)  # refused at the default, still a candidate
    assert len(sites) == 1
    site = sites[0]
    assert fresh_value(site, "offset") == "offset_1"
    assert fresh_value(site, "acc") == "acc_1" and fresh_value(site, "lane") == "lane"
    assert with_fresh_defaults(rule, site).holes["o"].default == "offset_1"
    filler = SearchFiller(static=False)
    values = filler.propose(FillRequest(rule, site, unit, spec, budget=4), 1)
    assert values and values[0]["o"] == "offset_1"
    out = apply_site(unit, site, values[0], spec)
    assert out.changed and "int offset_1 = 16" in out.source.decode()
    # no clash: the default is kept
    plain = golden("shuffle_block_reduce", "reduce_sum_v04.cu")
    psite = find_sites(plain, [rule], spec=spec_of(plain))[0]
    assert with_fresh_defaults(rule, psite) is rule


# --------------------------------------------------------------------------------------
# gemm tiles and buffering


def test_pack_output_fragment_refuses_a_given_o_that_is_a_local() -> None:
    rule = skill("gemm_tiles.rule", "pack_output_fragment")
    unit = golden("pack_output_fragment", "output_offset_o_given.cu")
    assert find_sites(unit, [rule], spec=spec_of(unit))[0].holes == {"o": "o_1"}  # no value
    sites = find_sites(unit, [rule], {"o": "o"}, spec=spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok
    assert "?o names a variable the rewrite declares: `o` is already used in `sgemm`" \
        in sites[0].reason
    out = apply_site(unit, sites[0], {"o": "o_1"}, spec_of(unit))
    assert out.changed
    assert "float4 o_1 = make_float4(acc[i][j]" in out.source.decode()


def test_tile_buffer_dimension_refuses_a_given_buf_that_is_a_parameter() -> None:
    rule = skill("gemm_tiles.rule", "tile_buffer_dimension")

    def with_buf(text: str) -> str:  # a real spelling: the output buffer named `buf`
        return text.replace("float* C,", "float* buf,", 1).replace("C[", "buf[")

    unit = golden("tile_buffer_dimension", "sgemm_v27.cu", with_buf)
    assert find_sites(unit, [rule], spec=None)[0].holes == {"buf": "buf_1"}  # no value
    sites = find_sites(unit, [rule], {"buf": "buf"}, spec=None)
    assert len(sites) == 1 and not sites[0].ok
    assert "?buf names a variable the rewrite declares: `buf` is already used in `sgemm`" \
        in sites[0].reason
    plain = golden("tile_buffer_dimension", "sgemm_v27.cu")
    assert all(s.ok for s in find_sites(plain, [rule], spec=spec_of(plain)))


def test_a_loop_variable_the_match_declares_itself_is_no_clash() -> None:
    # vectorize_float4_loop's tail loop declares ?j = i, the loop variable of the loop it
    # replaces: fresh outside the matched code, as the expert wrote it
    rule = skill("vectorize.rule", "vectorize_float4_loop")
    unit = golden("vectorize_float4_loop", "reduce_sum_v02.cu")
    sites = find_sites(unit, [rule], {"j": "i"}, spec_of(unit))
    assert sites and all(s.ok for s in sites)
    # but a name the function uses elsewhere is refused
    sites = find_sites(unit, [rule], {"j": "acc"}, spec_of(unit))
    assert not sites[0].ok and "`acc` is already used in `reduce_sum`" in sites[0].reason


# --------------------------------------------------------------------------------------
# rewrite within, explicit guards, klc check

WITHIN_RULE = """
rule warp_sums_within {
  kind: skill
  context: global
  anchor: ```
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  rewrite within $$$BODY {
    anchor: ```
      for (int $C = 0; $C < $N; $C++) {
          $ACC += $E;
      }
    ```
    replace: ```
      for (int $C = threadIdx.x % 32; $C < $N; $C += 32) {
          $ACC += $E;
      }
      for (int ?o = 16; ?o > 0; ?o >>= 1) {
          $ACC += __shfl_xor_sync(0xffffffffu, $ACC, ?o);
      }
    ```
  }
  hole o: ident default offset
}
"""

ROW_SUM = """
__global__ void row_sum(const float* x, float* y, int rows, int cols, int offset) {
    int r = blockIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += x[(size_t)r * cols + c + offset];
        }
        y[r] = s;
    }
}
"""


def test_within_block_declaring_a_hole_is_judged_at_its_sub_match() -> None:
    rule = load_rules_text(WITHIN_RULE, "w.rule")[0]
    assert implied_fresh(rule) == ()  # the rule's own edits declare nothing; the block does
    unit = parse_bytes(ROW_SUM.encode(), "row_sum.cu")
    taken = find_sites(unit, [rule])  # no value: the default's fresh variant
    assert len(taken) == 1 and taken[0].ok and taken[0].holes == {"o": "offset_1"}
    sites = find_sites(unit, [rule], {"o": "offset"})
    assert len(sites) == 1 and not sites[0].ok
    assert "none of its 1 sub-rule matches inside it" in sites[0].reason
    assert "?o names a variable the rewrite declares: `offset` is already used in `row_sum`" \
        in sites[0].reason
    out = apply_site(unit, sites[0], {"o": "off"})
    assert out.changed and "for (int off = 16; off > 0; off >>= 1)" in out.source.decode()
    clean = parse_bytes(ROW_SUM.replace("offset", "base").encode(), "row_sum.cu")
    assert apply_rules(clean, [rule]).changed


NOT_FRESH_RULE = """
rule zero_existing {
  kind: skill
  context: global
  anchor: ```
    $Y[$I] = 0.0f;
  ```
  guard: not fresh_name(?buf)
  rewrite replace: ```
    ?buf[$I] = 0.0f;
  ```
  hole buf: ident default scratch
}
"""


def test_not_fresh_name_on_a_hole_the_rewrite_does_not_declare_is_unaffected() -> None:
    rule = load_rules_text(NOT_FRESH_RULE, "n.rule")[0]
    assert implied_fresh(rule) == ()
    src = ("__global__ void k(float* y, float* scratch) {\n    y[threadIdx.x] = 0.0f;\n"
           "    scratch[threadIdx.x] += 1.0f;\n}\n")
    out = apply_rules(parse_bytes(src.encode(), "k.cu"), [rule])
    assert "scratch[threadIdx.x] = 0.0f;" in out.source.decode()


def test_explicit_fresh_name_is_judged_once() -> None:
    text = NOT_FRESH_RULE.replace("not fresh_name(?buf)", "fresh_name(?buf)").replace(
        "?buf[$I] = 0.0f;", "float ?buf = 0.0f;\n$Y[$I] = ?buf;")
    rule = load_rules_text(text, "f.rule")[0]
    assert implied_fresh(rule) == ()  # the guard requires it: no second judgement
    src = "__global__ void k(float* y, int scratch) {\n    y[threadIdx.x] = 0.0f;\n}\n"
    unit = parse_bytes(src.encode(), "k.cu")
    site = find_sites(unit, [rule], {"buf": "scratch"})[0]
    assert not site.ok and site.reason.startswith("`scratch` is already used in `k`")
    assert find_sites(unit, [rule])[0].holes == {"buf": "scratch_1"}  # no value given


CONTRADICTION = """
rule contradiction {
  kind: skill
  anchor: ```
    $Y[$I] = 0.0f;
  ```
  guard: is_identifier($Y) and not fresh_name(?t)
  rewrite replace: ```
    float ?t = 0.0f;
    $Y[$I] = ?t;
  ```
  hole t: ident default t
}
"""


def test_klc_check_reports_a_declared_hole_guarded_not_fresh(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuleError) as e:
        load_rules_text(CONTRADICTION, "c.rule")
    assert "c.rule:7:32: the guard requires `not fresh_name(?t)`, but the rewrite declares ?t" \
        in str(e.value)
    path = tmp_path / "c.rule"
    path.write_text(CONTRADICTION)
    assert main(["check", str(path)]) == 2
    assert f"{path}:7:32: the guard requires `not fresh_name(?t)`" in capsys.readouterr().err
    # inside a within block: its guard against its own template
    within = WITHIN_RULE.replace("    replace: ```\n      for (int $C = threadIdx",
                                 "    guard: not fresh_name(?o)\n    replace: ```\n"
                                 "      for (int $C = threadIdx")
    with pytest.raises(RuleError, match=r"w\.rule:\d+:\d+: the guard of a `rewrite within` "
                       r"block requires `not fresh_name\(\?o\)`"):
        load_rules_text(within, "w.rule")


# --------------------------------------------------------------------------------------
# Code the rewrite keeps: a $$$ run or statement dots inside the new variable's scope keep
# their own declarations, so the matched code's own variable is no longer "replaced"

KEEPS = '''rule keeps {
  kind: skill
  description: "t"
  context: global
  anchor: ```
    if ($I < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    if ($I < $N) {
        float ?t = 0.0f;
        $$$BODY;
        ?t += 1.0f;
    }
  ```
  hole t: ident default v
}
'''

SCOPED = KEEPS.replace('''        float ?t = 0.0f;
        $$$BODY;
        ?t += 1.0f;''', '''        for (int ?t = 0; ?t < 1; ?t++) { }
        $$$BODY;''')

BODY_DECLARES_V = (b"__global__ void k(const float* x, float* y, int n) {\n"
                   b"    int i = threadIdx.x;\n    if (i < n) {\n        float v = x[i];\n"
                   b"        y[i] = v;\n    }\n}\n")


def test_kept_in_scope_reads_each_declarations_scope() -> None:
    from klc.rule.fresh import kept_in_scope

    assert kept_in_scope("float ?t = 0.0f;\n$$$BODY;\n?t += 1.0f;") == (
        ("t", frozenset({"BODY"})),)
    assert kept_in_scope("for (int ?j = 0; ?j < 4; ?j++) { }\n$$$BODY;") == (
        ("j", frozenset()),)
    assert kept_in_scope("$$$PRE;\nint ?k = 0;\n...\nif ($C) {\n    $$$BODY;\n}") == (
        ("k", frozenset({"BODY", "..."})),)


def test_a_name_the_kept_code_declares_is_not_fresh() -> None:
    """The kept body's own `float v` would be declared twice (or, nested, shadow ?t where the
    rewrite reads it); before, `v` counted as the matched code's own variable and passed."""
    unit, rules = parse_bytes(BODY_DECLARES_V, "k.cu"), load_rules_text(KEEPS, "k.rule")
    sites = find_sites(unit, rules, {"t": "v"})
    assert [(s.ok, s.reason) for s in sites] == [(False, (
        "?t names a variable the rewrite declares: `v` is declared in code the rewrite keeps "
        "(k.cu:4:9)"))]
    # the default `v` untold: its first variant the kept code does not declare
    assert [(s.ok, s.holes) for s in find_sites(unit, rules)] == [(True, {"t": "v_1"})]


def test_a_declaration_scoped_before_the_kept_run_is_no_clash() -> None:
    """``for (int ?t ...) { }`` ends before the kept body: its `v` is another scope's."""
    sites = find_sites(parse_bytes(BODY_DECLARES_V, "k.cu"), load_rules_text(SCOPED, "s.rule"))
    assert [s.ok for s in sites] == [True]


def test_two_declared_holes_given_one_name_are_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Each name a rewrite declares must be fresh for the others too: ?ts and ?s both given
    `tile_len` would declare it twice; given two names, the rewrite goes through."""
    path = tmp_path / "clip_rows.cu"
    path.write_bytes((GOLDEN / "whole_range_to_grid_y_tiles" / "clip_rows.cu").read_bytes())
    rules = str(ROOT / "skills" / "experts" / "strided_loops.rule")
    argv = ["apply", rules, "--rule", "whole_range_to_grid_y_tiles", str(path),
            "--hole", "tiles=64", "--hole", "ts=tile_len"]
    assert main([*argv, "--hole", "s=tile_len"]) == 1
    err = capsys.readouterr().err
    assert "?s names a variable the rewrite declares: `tile_len` is also the value of ?ts" in err
    assert main([*argv, "--hole", "s=tile_first"]) == 0
    out = capsys.readouterr().out
    assert out.count("tile_len") >= 2 and "tile_first" in out


def test_declared_holes_meet_only_where_their_scopes_do() -> None:
    from klc.rule.fresh import shared_scope

    text = RULE_TWO_SCOPES
    (rule,) = load_rules_text(text, "two.rule")
    assert not shared_scope(rule, "a", "b")  # two loops' own variables, side by side
    assert shared_scope(rule, "a", "c")  # ?c is declared inside ?a's loop
    assert shared_scope(rule, "c", "a")
    assert shared_scope(rule, "b", "d")  # ?d in another template: judged as meeting


RULE_TWO_SCOPES = """
rule two_scopes {
  kind: skill
  anchor: ```
    $X = $Y;
  ```
  hole a: ident default i
  hole b: ident default j
  hole c: ident default k
  hole d: ident default m
  rewrite replace: ```
    for (int ?a = 0; ?a < 4; ?a++) {
        int ?c = ?a;
        $X += ?c;
    }
    for (int ?b = 0; ?b < 4; ?b++) {
        $X += $Y;
    }
  ```
  rewrite insert_body_start: ```
    int ?d = 0;
  ```
}
"""
