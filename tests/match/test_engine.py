"""The matcher, the rewriter and the apply/list pipeline, end to end on real parses."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.match import compile_pattern, find_matches
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import load_rules, load_rules_text

ROOT = Path(__file__).resolve().parents[2]

KERNEL = b"""\
__global__ void k(const float* __restrict__ x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
  #pragma unroll 4
  for (int j = 0; j < 8; ++j) { y[j] += x[j]; }
  foo(1, 2, 3);
  __syncthreads();
  y[i] = y[i] /* same */ + 1;
}
"""


def matches(pattern: str, source: bytes = KERNEL) -> list[dict[str, str]]:
    unit = parse_bytes(source, "k.cu")
    return [{k: b.text for k, b in m.bindings.items()}
            for m in find_matches(compile_pattern(pattern), unit)]


def test_statement_pattern_binds_metavariables() -> None:
    assert matches("int $I = blockIdx.x * blockDim.x + threadIdx.x;") == [{"I": "i"}]


def test_expression_pattern_matches_every_product() -> None:
    assert matches("$A * $B") == [{"A": "blockIdx.x", "B": "blockDim.x"},
                                  {"A": "2.0f", "B": "x[i]"}]


def test_sequence_pattern_with_metavariable_in_pragma_text() -> None:
    found = matches("#pragma unroll $N\nfor ($INIT; $C; $U) $BODY")
    assert found == [{"N": "4", "INIT": "int j = 0;", "C": "j < 8", "U": "++j",
                      "BODY": "{ y[j] += x[j]; }"}]


def test_sequence_metavariable_binds_a_run_of_arguments() -> None:
    assert matches("foo($A, $$$REST);") == [{"A": "1", "REST": "2, 3"}]
    assert matches("foo($$$ALL);") == [{"ALL": "1, 2, 3"}]


def test_repeated_metavariable_must_bind_equal_code_ignoring_comments() -> None:
    assert matches("$Y[$I] = $Y[$I] + 1;") == [{"Y": "y", "I": "i"}]
    assert matches("$Y[$I] = $X[$J] + 2;") == []
    assert matches("y[$I] = x[$I] + 1;") == []


def test_whitespace_and_comments_do_not_matter() -> None:
    assert matches("if   ($C)\n   $S") == [{"C": "i < n", "S": "y[i] = 2.0f * x[i];"}]


def test_early_reject_by_words_and_dispatch_by_type() -> None:
    pattern = compile_pattern("__shfl_down_sync($M, $V, $D)")
    assert pattern.root_type == "call_expression"
    assert b"__shfl_down_sync" in pattern.words
    assert matches("__shfl_down_sync($M, $V, $D)") == []


def test_bad_patterns_are_refused() -> None:
    with pytest.raises(KlcError, match="would match anything"):
        compile_pattern("$X")
    with pytest.raises(KlcError, match="does not parse"):
        compile_pattern("for ( ) ) {")


RULES = """\
rule fast_exp {
  kind: skill
  description: "expf to __expf"
  context: global
  anchor: ```
    expf($X)
  ```
  rewrite replace: ```
    __expf($X)
  ```
}

rule coarsen_nothing {
  kind: skill
  description: "a loop-only rule"
  context: loop
  anchor: ```
    $Y[$I] += $X[$I];
  ```
  guard: is_restrict($Y)
  rewrite replace: ```
    $Y[$I] = $Y[$I] + $X[$I];
  ```
}
"""


def test_apply_edits_bytes_and_keeps_the_rest_exact() -> None:
    src = (b"// header\r\n__global__ void f(float* y) {\r\n\ty[0] = expf(y[0]);   \r\n}\r\n"
           b"__device__ float g(float v) { return expf(v); }\r\n")
    rules = load_rules_text(RULES, "r.rule")
    out = apply_rules(parse_bytes(src, "f.cu"), rules)
    assert out.source == src.replace(b"= expf(", b"= __expf(")
    assert [s.reason for s in out.refused] == ["context: not inside a __global__ function"]


def test_guard_refusal_says_why() -> None:
    rules = load_rules_text(RULES, "r.rule")
    sites = find_sites(parse_bytes(KERNEL, "k.cu"), rules)
    refused = [s for s in sites if not s.ok]
    assert len(refused) == 1
    assert refused[0].rule.name == "coarsen_nothing"
    assert "restrict" in refused[0].reason


def test_match_in_syntax_error_region_is_not_rewritten() -> None:
    src = b"__global__ void f(float* y) {\n  y[0] = expf(y[0]) +* ;\n}\n"
    unit = parse_bytes(src, "bad.cu")
    assert unit.problems
    out = apply_rules(unit, load_rules_text(RULES, "r.rule"))
    assert not out.changed
    assert any("syntax-error region" in s.reason for s in out.refused)


@st.composite
def kernels(draw: st.DrawFn) -> bytes:
    stmts = ["y[i] = x[i];", "float t = x[i] * 2.0f;", "if (i < n) { y[i] += 1.0f; }",
             "__syncthreads();", "for (int k = 0; k < n; ++k) y[k] = 0.0f;",
             "/* c */ y[i] = fmaxf(y[i], 0.0f);", "// line comment", "y[i] = sqrtf(x[i]);"]
    body = draw(st.lists(st.sampled_from(stmts), min_size=1, max_size=8))
    ws = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["  ", "\t", "    "]))
    trailing = draw(st.sampled_from(["", " ", "\t"]))
    lines = ["__global__ void k(const float* x, float* y, int n) {",
             indent + "int i = blockIdx.x * blockDim.x + threadIdx.x;"]
    lines += [indent + s + trailing for s in body]
    lines.append("}")
    text = ws.join(lines) + draw(st.sampled_from(["", ws]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_no_match_means_byte_identical(src: bytes) -> None:
    rules = load_rules_text(RULES, "r.rule")
    out = apply_rules(parse_bytes(src, "k.cu"), rules)
    assert not out.changed
    assert out.source == src


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_rewrite_touches_only_the_matched_span(src: bytes) -> None:
    src = src.replace(b"sqrtf(x[i])", b"expf(x[i])")
    rules = load_rules_text(RULES, "r.rule")
    out = apply_rules(parse_bytes(src, "k.cu"), rules)
    assert out.source == src.replace(b"expf(x[i])", b"__expf(x[i])").replace(
        b"___expf", b"__expf")
    # applying again finds nothing left to do
    again = apply_rules(parse_bytes(out.source, "k.cu"), rules)
    assert not again.changed or b"expf(x" not in src


# ------------------------------------------------------------------------------------
# Simplification then its inverse skill gives the original back (the design's property)

ROUND_TRIPS = [
    ("passes/pragma_unroll.rule", "skills/pragma_unroll.rule", {"factor": "8"},
     b"__global__ void f(float* y) {\n    float a = 0.0f;\n    #pragma unroll 8\n"
     b"    for (int k = 0; k < 16; ++k) {\n        a += y[k];\n    }\n    y[0] = a;\n}\n"),
    ("passes/fast_math.rule", "skills/fast_math.rule", {},
     b"__global__ void f(float* y) { y[threadIdx.x] = __expf(y[threadIdx.x]); }\n"),
    ("passes/devectorize.rule", "skills/vectorize.rule", {},
     b"__global__ void f(const float* __restrict__ x, float4* y) {\n"
     b"    int i = threadIdx.x;\n    float4 v = reinterpret_cast<const float4*>(x)[i];\n"
     b"    y[i] = v;\n}\n"),
    ("passes/launch_bounds.rule", "skills/launch_bounds.rule", {"threads": "256"},
     b"__global__ void __launch_bounds__(256) f(float* y) { y[threadIdx.x] = 1.0f; }\n"),
]


@pytest.mark.parametrize(("simplification", "skill", "holes", "source"), ROUND_TRIPS,
                         ids=[r[0].split("/")[1] for r in ROUND_TRIPS])
def test_simplification_then_skill_round_trips(simplification: str, skill: str,
                                                holes: dict[str, str], source: bytes) -> None:
    simple = apply_rules(parse_bytes(source, "e.cu"), load_rules(ROOT / simplification))
    assert simple.changed
    spec = {"launch_bounds": b"/* klc-spec\nkernel: f\nsizes: {n: 256}\n"
                             b"args:\n  - {name: y, shape: [n], role: inout}\n"
                             b"block: [256]\ngrid: [1]\nbytes: 8 * n\n*/\n"}
    text = simple.source
    if b"__launch_bounds__" in source:  # the skill needs the block size from a spec
        text = spec["launch_bounds"] + text
    back = apply_rules(parse_bytes(text, "e.cu"), load_rules(ROOT / skill), holes,
                       _spec(text))
    assert back.changed, [s.reason for s in back.refused]
    expected = source if b"__launch_bounds__" not in source else spec["launch_bounds"] + source
    assert back.source == expected


def _spec(source: bytes) -> object | None:
    from klc.spec import load_spec

    return load_spec(source, "e.cu")


# ------------------------------------------------------------------------------------
# The CLI


@pytest.fixture()
def kernel_file(tmp_path: Path) -> Path:
    p = tmp_path / "k.cu"
    p.write_bytes(b"__global__ void k(float* y) {\n    y[0] = expf(y[0]);\n}\n")
    return p


@pytest.fixture()
def rule_file(tmp_path: Path) -> Path:
    p = tmp_path / "r.rule"
    p.write_text(RULES)
    return p


def test_cli_apply_prints_a_diff_by_default(kernel_file: Path, rule_file: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    before = kernel_file.read_bytes()
    assert main(["apply", str(rule_file), str(kernel_file)]) == 0
    out = capsys.readouterr().out
    assert "-    y[0] = expf(y[0]);" in out and "+    y[0] = __expf(y[0]);" in out
    assert kernel_file.read_bytes() == before


def test_cli_apply_in_place_and_output(kernel_file: Path, rule_file: Path,
                                       tmp_path: Path) -> None:
    target = tmp_path / "out.cu"
    assert main(["apply", str(rule_file), str(kernel_file), "-o", str(target)]) == 0
    assert b"__expf" in target.read_bytes() and b"__expf" not in kernel_file.read_bytes()
    assert main(["apply", str(rule_file), str(kernel_file), "--in-place"]) == 0
    assert kernel_file.read_bytes() == target.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu", "out.cu", "r.rule"]
    assert main(["apply", str(rule_file), str(kernel_file), "--in-place"]) == 1  # idempotent


def test_cli_apply_json_has_offsets_and_bindings(kernel_file: Path, rule_file: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["apply", str(rule_file), str(kernel_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (site,) = report["applied"]
    assert site["rule"] == "fast_exp"
    assert (site["line"], site["col"]) == (2, 12)
    assert site["bindings"]["X"]["text"] == "y[0]"
    # the edit is the tokens the rewrite changes: `expf` -> `__expf`, `(y[0])` stays as it was
    edit = site["edits"][0]
    assert edit["replacement"] == "__expf"
    assert kernel_file.read_bytes()[edit["start"]:edit["end"]] == b"expf"


def test_cli_apply_errors_exit_2_and_write_nothing(kernel_file: Path, rule_file: Path,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = kernel_file.read_bytes()
    assert main(["apply", str(rule_file), str(kernel_file), "--rule", "nope"]) == 2
    assert "no rule named nope" in capsys.readouterr().err
    assert main(["apply", str(rule_file), str(kernel_file), "--hole", "f=3"]) == 2
    assert "no selected rule declares a hole ?f" in capsys.readouterr().err
    assert main(["apply", str(tmp_path / "missing.rule"), str(kernel_file)]) == 2
    assert main(["apply", str(rule_file), str(tmp_path / "missing.cu")]) == 2
    assert "missing.cu: no such file" in capsys.readouterr().err
    assert kernel_file.read_bytes() == before


def test_cli_hole_outside_domain_is_refused_before_rewriting(
        kernel_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = kernel_file.read_bytes()
    code = main(["apply", str(ROOT / "skills/pragma_unroll.rule"), str(kernel_file),
                 "--hole", "factor=3", "--in-place"])
    assert code == 2
    assert "3" in capsys.readouterr().err
    assert kernel_file.read_bytes() == before


def test_cli_list_shows_sites_and_why_not(tmp_path: Path, rule_file: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    k = tmp_path / "k.cu"
    k.write_bytes(KERNEL.replace(b"2.0f * x[i]", b"expf(x[i])"))
    assert main(["list", str(k), "--skills", str(rule_file)]) == 0
    out = capsys.readouterr().out
    assert f"{k}:3:21" in out and "fast_exp" in out and "coarsen_nothing" not in out
    assert main(["list", str(k), "--skills", str(rule_file), "--all"]) == 0
    out = capsys.readouterr().out
    assert "coarsen_nothing" in out and "why not" in out and "restrict" in out


def test_cli_list_prints_locations_as_they_are(tmp_path: Path, rule_file: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """"k.cu:100:5" stays text (rich would make ":100:" an emoji) and a path holding
    brackets is no markup, in a listing and in an error."""
    folder = tmp_path / "run[red]"
    folder.mkdir()
    k = folder / "k.cu"
    k.write_bytes(b"\n" * 97 + KERNEL.replace(b"2.0f * x[i]", b"expf(x[i])"))
    assert main(["list", str(k), "--skills", str(rule_file)]) == 0
    out = capsys.readouterr().out
    assert f"{k}:100:21 in " in out and "fast_exp" in out and "\N{HUNDRED POINTS SYMBOL}" not in out
    assert main(["list", str(k), "--skills", str(rule_file), "--all"]) == 0
    assert f"{k}:100:21 in " in capsys.readouterr().out
    bad = folder / "bad.rule"
    bad.write_text("\n" * 99 + "rule r { kind: skil }\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:100:" in err and "\N{HUNDRED POINTS SYMBOL}" not in err


def test_cli_ast_prints_tree_and_pattern(kernel_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ast", str(kernel_file), "--pattern", "expf($X)"]) == 0
    out = capsys.readouterr().out
    assert "root type: call_expression" in out and "$X" in out
    assert "function_definition 1:1" in out


def test_golden_cases_pass() -> None:
    from klc.golden import run_golden

    results = run_golden(str(ROOT / "tests/golden"),
                         [str(ROOT / "passes"), str(ROOT / "passes" / "warp_sums"),
                          str(ROOT / "skills"), str(ROOT / "skills" / "experts")])
    failed = [f"{r.case}: {r.message}" for r in results if not r.ok]
    assert not failed
    assert len(results) >= 12
    # one rule's folder alone: its cases only, named as in the whole run
    one = run_golden(str(ROOT / "tests/golden/rows_loop_tile_transpose"),
                     [str(ROOT / "skills")])
    cases = sorted(r.case for r in one)
    assert cases == sorted(r.case for r in results
                           if r.case.startswith("rows_loop_tile_transpose/"))
    assert len(cases) >= 5 and all(r.ok for r in one)


def test_a_range_for_is_a_loop_for_the_context() -> None:
    """`context: loop` holds inside a range-based for loop as inside any other loop."""
    rules = [r for r in load_rules_text(RULES, "r.rule") if r.name == "coarsen_nothing"]
    src = (b"__global__ void f(float* __restrict__ y, const float* x, const int (&idx)[4]) {\n"
           b"  for (int i : idx) {\n    y[i] += x[i];\n  }\n}\n")
    sites = find_sites(parse_bytes(src, "k.cu"), rules)
    assert [(s.ok, s.stage) for s in sites] == [(True, "")]
    outside = src.replace(b"for (int i : idx) {", b"{ int i = idx[0];")
    sites = find_sites(parse_bytes(outside, "k.cu"), rules)
    assert [(s.ok, s.reason) for s in sites] == [(False, "context: not inside a loop")]


def test_grid_stride_loop_refuses_a_body_that_returns() -> None:
    """A `return` in the body would end a thread's whole grid-stride loop, skipping the
    elements after it: the skill refuses it, and takes the same body without the return."""
    from klc.rule import RuleSet

    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == "grid_stride_loop"]
    src = (b"__global__ void clip(const float* x, float* y, int n) {\n    {\n"
           b"        int i = blockIdx.x * 256 + threadIdx.x;\n"
           b"        if (i < n) {\n            if (x[i] < 0.0f) return;\n"
           b"            y[i] = x[i];\n        }\n    }\n}\n")
    sites = find_sites(parse_bytes(src, "k.cu"), rules, {"factor": "4"})
    assert len(sites) == 1 and not sites[0].ok
    assert sites[0].reason == "k.cu:5:30: return; leaves the code early"
    fine = src.replace(b"if (x[i] < 0.0f) return;", b"if (x[i] < 0.0f) y[i] = 0.0f;")
    sites = find_sites(parse_bytes(fine, "k.cu"), rules, {"factor": "4"})
    assert [s.ok for s in sites] == [False]  # an int index, no spec: it could overflow
    assert "a 32-bit int index" in sites[0].reason
    fine = fine.replace(b"int i =", b"size_t i =")
    sites = find_sites(parse_bytes(fine, "k.cu"), rules, {"factor": "4"})
    assert [s.ok for s in sites] == [False]  # it divides the grid, launched nowhere here
    assert "neither launches `clip`" in sites[0].reason
    fine += b"int main() { float *x, *y; clip<<<64, 256>>>(x, y, 1 << 14); return 0; }\n"
    sites = find_sites(parse_bytes(fine, "k.cu"), rules, {"factor": "4"})
    assert [s.ok for s in sites] == [True]


def test_a_site_judged_on_a_declaration_another_site_changes_is_judged_again() -> None:
    """pad_smem_tile and vectorize_shared_float4_load both hold on the [32][32] tile, each on
    its own; applied together, the float4 read would land on a padded row (132 bytes, not a
    multiple of 16). The read waits, is judged again on the padded tile in the same run, and
    the padded layout refuses it."""
    from klc.rule import RuleSet

    names = ("pad_smem_tile", "vectorize_shared_float4_load")
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name in names]
    src = (ROOT / "tests" / "data" / "align" / "square_tile.cu").read_bytes()
    unit = parse_bytes(src, "square_tile.cu")
    assert sorted(s.rule.name for s in find_sites(unit, rules) if s.ok) == sorted(names)
    out = apply_rules(unit, rules)
    assert [rw.match.rule.name for rw in out.applied] == ["pad_smem_tile"]
    [(site, why)] = out.skipped
    assert site.rule.name == "vectorize_shared_float4_load"
    assert why.startswith("pad_smem_tile (square_tile.cu:2:5) changes code that mentions `t`, "
                          "whose declaration, type or writes its guards read: judged again on "
                          "the rewritten code, refused: ")
    assert "`r` × 132 B" in why
    assert b"t[32][32 + 1]" in out.source and b"reinterpret_cast" not in out.source
    again = find_sites(parse_bytes(out.source, "square_tile.cu"), rules)
    vec = [s for s in again if s.rule.name == "vectorize_shared_float4_load"]
    assert len(vec) == 1 and not vec[0].ok and "`r` × 132 B" in vec[0].reason
    # a rule that only reads the tile's declaration and keeps it is not held back
    alone = apply_rules(unit, [r for r in rules if r.name == names[1]])
    assert [rw.match.rule.name for rw in alone.applied] == [names[1]] and not alone.skipped


def test_a_replacement_keeps_the_attributes_no_metavariable_carried() -> None:
    """`__align__(16)` is blanks to the parser, so no anchor names it: a replacement of the
    declaration puts it back after the word it followed (else in front), once."""
    rules = load_rules_text('''
rule pad {
  kind: skill
  context: any
  anchor: ```
    __shared__ $TYPE $TILE[$A][$B];
  ```
  rewrite replace: ```
    __shared__ $TYPE $TILE[$A][$B + 1];
  ```
}
rule swap {
  kind: skill
  context: any
  anchor: ```
    __shared__ float $V[64];
  ```
  rewrite replace: ```
    float __shared__ $V[64];
  ```
}
''', "r.rule")
    src = (b"__global__ void k(float* y) {\n"
           b"    __shared__ __align__(16) float t[32][32];\n"
           b"    __shared__ __align__(16) float v[64];\n"
           b"    y[0] = t[1][2] + v[0];\n}\n")
    out = apply_rules(parse_bytes(src, "k.cu"), rules)
    assert out.source == src.replace(b"t[32][32]", b"t[32][32 + 1]").replace(
        b"__shared__ __align__(16) float v[64]", b"float __shared__ __align__(16) v[64]")


def test_a_run_of_statements_never_takes_a_brace() -> None:
    """`$$$MID` before a loop binds statements only: not the `{` of the function body
    (a rewrite that replaced it would tear the body open) nor a `}`."""
    rules = load_rules_text('''
rule hoist {
  kind: skill
  context: any
  anchor: ```
    $$$MID;
    for (int $I = 0; $I < $N; ++$I) $BODY
  ```
  rewrite replace: ```
    int hoisted = 0;
    $$$MID;
    for (int $I = 0; $I < $N; ++$I) $BODY
  ```
}
''', "r.rule")
    src = (b"__global__ void k(float* y, int n) {\n    int a = 1;\n    int b = 2;\n"
           b"    for (int i = 0; i < n; ++i) y[i] = a + b;\n}\n")
    sites = find_sites(parse_bytes(src, "k.cu"), rules)
    assert [s.match.bindings["MID"].text for s in sites] == ["int a = 1;\n    int b = 2;",
                                                            "int b = 2;", ""]
    assert all(n.type not in ("{", "}") for s in sites for n in s.match.nodes)
    out = apply_rules(parse_bytes(src, "k.cu"), rules)
    assert out.source == src.replace(b"{\n    int a", b"{\n    int hoisted = 0;\n    int a")


def test_cli_apply_says_which_sites_were_judged_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "both.rule"
    rules.write_text((ROOT / "skills" / "vectorize.rule").read_text()
                     + (ROOT / "skills" / "smem_tile.rule").read_text())
    kernel = ROOT / "tests" / "data" / "align" / "square_tile.cu"
    assert main(["apply", str(rules), str(kernel), "--rule", "pad_smem_tile",
                 "--rule", "vectorize_shared_float4_load"]) == 0
    captured = capsys.readouterr()
    assert ("square_tile.cu:11:13: vectorize_shared_float4_load: not applied in this run: "
            "pad_smem_tile (") in captured.err
    assert "judged again on the rewritten code, refused: " in captured.err
    assert "+    __shared__ __align__(16) float t[32][32 + 1];" in captured.out


def test_row_cache_needs_the_cache_it_fills() -> None:
    """row_cache_in_registers writes cache[k] and reads it back: without the array's
    declaration (which its pass leaves in place) the rewrite could not compile."""
    from klc.rule import RuleSet

    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules
             if r.name == "row_cache_in_registers"]
    src = (ROOT / "tests" / "golden" / "row_cache_in_registers" / "layernorm_v03.cu").read_bytes()
    unit = parse_bytes(src, "layernorm_v03.cu")
    assert [s.ok for s in find_sites(unit, rules, {"cache": "cache"}, spec_of(unit))] == [True]
    bare = src.replace(b"    float4 cache[VPT];\n", b"")
    unit = parse_bytes(bare, "layernorm_v03.cu")
    sites = find_sites(unit, rules, {"cache": "cache"}, spec_of(unit))
    assert [s.ok for s in sites] == [False]
    assert "not (`cache` is a fresh name in `layernorm`)" in sites[0].reason


def test_rows_per_thread_needs_the_block_rows_it_divides() -> None:
    """rows_per_thread turns a block of ?t rows into one of ?t / ?factor rows that loops: on
    a block of other height the loop would miss rows, so it refuses there."""
    from klc.rule import RuleSet

    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == "rows_per_thread"]
    src = (ROOT / "tests" / "golden" / "rows_per_thread" / "transpose_v05.cu").read_bytes()
    holes = {"factor": "4", "r": "8", "t": "32"}
    unit = parse_bytes(src, "transpose_v05.cu")
    assert all(s.ok for s in find_sites(unit, rules, holes, spec_of(unit)))
    short = src.replace(b'block: [TILE, "(ROWS) * 4"]', b'block: [TILE, "(ROWS) * 2"]')
    unit = parse_bytes(short, "transpose_v05.cu")
    sites = find_sites(unit, rules, holes, spec_of(unit))
    assert sites and not any(s.ok for s in sites)
    assert all("block.y is 16" in s.reason and "not 16 == 32" in s.reason for s in sites)


def test_tile_transpose_needs_a_square_block_of_the_tile_and_the_tile() -> None:
    from klc.rule import RuleSet

    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == "tile_transpose"]
    src = (ROOT / "tests" / "golden" / "tile_transpose" / "transpose_spellings.cu").read_bytes()
    holes = {"t": "32", "tile": "tile"}
    unit = parse_bytes(src, "transpose_spellings.cu")
    assert [s.ok for s in find_sites(unit, rules, holes, spec_of(unit))] == [True]
    unit = parse_bytes(src, "transpose_spellings.cu")
    sites = find_sites(unit, rules, {"t": "16", "tile": "tile"}, spec_of(unit))
    assert [s.ok for s in sites] == [False] and "not 32 <= 16" in sites[0].reason
    # the rewrite declares the tile: a name the kernel uses is refused
    sites = find_sites(unit, rules, {"t": "32", "tile": "pitch"}, spec_of(unit))
    assert [s.ok for s in sites] == [False] and "`pitch` is already used" in sites[0].reason
