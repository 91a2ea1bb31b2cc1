"""Sub-rewrites (``rewrite within $$$X { ... }``), their guards, and their inversion."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.pipeline import apply_rules, find_sites
from klc.reverse import mechanical_inverse
from klc.rule import RuleError, load_rules, load_rules_text, rule_to_text

ROOT = Path(__file__).resolve().parents[2]

WARP_RULE = """
rule to_warp {
  kind: skill
  context: global
  anchor: ```
    int $R = blockIdx.x * blockDim.x + threadIdx.x;
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  guard: not mentions($$$BODY, threadIdx) and fresh_name(?lane)
  rewrite replace: ```
    const int $R = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int ?lane = threadIdx.x % 32;
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  rewrite within $$$BODY {
    anchor: ```
      for (int $C = 0; $C < $N; $C++) {
          $$$PRE;
          $ACC += $E;
      }
    ```
    guard: assigns_only_locals($$$PRE) and not mentions($E, $ACC)
    replace: ```
      for (int $C = ?lane; $C < $N; $C += 32) {
          $$$PRE;
          $ACC += $E;
      }
      for (int offset = 16; offset > 0; offset >>= 1) {
          $ACC += __shfl_xor_sync(0xffffffffu, $ACC, offset);
      }
    ```
  }
  rewrite within $$$BODY {
    anchor: ```
      for (int $C = 0; $C < $N; $C++) {
          $$$S;
      }
    ```
    guard: assigns_only_locals($$$S) and no_jumps($$$S)
    replace: ```
      for (int $C = ?lane; $C < $N; $C += 32) {
          $$$S;
      }
    ```
  }
  rewrite launch grid.x *= 32
  hole lane: ident default lane
}
"""

SPEC = """/* klc-spec
kernel: k
sizes: {rows: 64, cols: 64}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [rows, cols], role: out}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
*/
"""

KERNEL = SPEC + """__global__ void k(const float* x, float* y, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            float v = x[r * cols + c];
            s += v * v;
        }
        for (int c = 0; c < cols; c++) {
            y[r * cols + c] = x[r * cols + c] / s;
        }
        out[r] = s;
    }
}
"""


def rule() -> object:
    return load_rules_text(WARP_RULE, "warp.rule")[0]


def apply(source: str) -> tuple[str, object]:
    unit = parse_bytes(source.encode(), "k.cu")
    from klc.pipeline import spec_of

    out = apply_rules(unit, [rule()], spec=spec_of(unit))  # type: ignore[list-item]
    return out.source.decode(), out


def test_each_loop_is_rewritten_by_the_first_sub_rule_that_takes_it() -> None:
    text, out = apply(KERNEL)
    assert out.changed
    body = text[text.index("__global__"):]
    assert "const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;" in body
    assert "const int lane = threadIdx.x % 32;" in body
    # the sum loop: strided and reduced; the element-wise loop: strided only
    assert body.count("for (int c = lane; c < cols; c += 32)") == 2
    assert body.count("__shfl_xor_sync(0xffffffffu, s, offset)") == 1
    assert "            float v = x[r * cols + c];\n            s += v * v;\n" in body
    assert "out[r] = s;" in body
    assert 'grid: ["(ceil_div(rows, 256)) * 32"]' in text
    # applied again: the anchor no longer matches
    again, out2 = apply(text)
    assert not out2.changed and again == text


def two_accumulators() -> str:
    return KERNEL.replace("s += v * v;\n", "s += v * v;\n            t += v;\n").replace(
        "float s = 0.0f;", "float s = 0.0f;\n        float t = 0.0f;")


def test_a_refused_sub_match_leaves_its_loop_alone() -> None:
    # a loop accumulating two outer variables: neither block's guard holds for it
    src = two_accumulators()
    text, out = apply(src)
    assert out.changed
    assert "for (int c = 0; c < cols; c++) {\n            float v" in text  # untouched
    assert text.count("c += 32") == 1  # only the element-wise loop


def test_a_site_whose_sub_rules_match_nothing_is_refused_with_the_reason() -> None:
    src = two_accumulators()
    src = src.replace("        for (int c = 0; c < cols; c++) {\n            y[r * cols + c] = "
                      "x[r * cols + c] / s;\n        }\n", "")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = find_sites(unit, [rule()])  # type: ignore[list-item]
    assert len(sites) == 1 and not sites[0].ok
    assert "none of its 2 sub-rules matches" in sites[0].reason
    assert "writes `t`" in sites[0].reason or "writes `s`" in sites[0].reason
    _, out = apply(src)
    assert not out.changed


def test_outer_bindings_constrain_the_sub_anchor() -> None:
    # a sub-anchor naming $R must bind the same code as the rule's $R
    text = WARP_RULE.replace("""      for (int $C = 0; $C < $N; $C++) {
          $$$S;
      }""", """      for (int $C = 0; $C < $N; $C++) {
          y[$R * $N + $C] = $V;
      }""").replace("assigns_only_locals($$$S) and no_jumps($$$S)", "is_identifier($C)"
                    ).replace("""      for (int $C = ?lane; $C < $N; $C += 32) {
          $$$S;
      }""", """      for (int $C = ?lane; $C < $N; $C += 32) {
          y[$R * $N + $C] = $V;
      }""")
    r = load_rules_text(text, "w.rule")[0]
    unit = parse_bytes(KERNEL.encode(), "k.cu")
    out = apply_rules(unit, [r])
    assert "for (int c = lane; c < cols; c += 32) {\n            y[r * cols + c]" in \
        out.source.decode()
    other = KERNEL.replace("y[r * cols + c] = x", "y[(r + 1) * cols + c] = x")
    unit = parse_bytes(other.encode(), "k.cu")
    out = apply_rules(unit, [r])
    assert "y[(r + 1) * cols + c]" in out.source.decode()
    assert out.source.decode().count("c += 32") == 1  # the sum loop only


def test_without_a_replace_the_pieces_are_edited_in_place() -> None:
    text = """
rule stride_loops {
  kind: skill
  anchor: ```
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  rewrite within $$$BODY {
    anchor: ```
      for (int $C = 0; $C < $N; $C++) {
          $$$S;
      }
    ```
    guard: assigns_only_locals($$$S)
    replace: ```
      for (int $C = 0; $C < $N; $C += 1) {
          $$$S;
      }
    ```
  }
}
"""
    r = load_rules_text(text, "s.rule")[0]
    unit = parse_bytes(KERNEL.encode(), "k.cu")
    out = apply_rules(unit, [r])
    new = out.source.decode()
    assert new.count("c += 1)") == 1
    # everything else byte for byte
    assert new.replace("c += 1)", "c++)") == KERNEL


def test_within_blocks_round_trip_through_text() -> None:
    r = rule()
    again = load_rules_text(rule_to_text(r), "again.rule")[0]  # type: ignore[arg-type]
    assert again.edits == r.edits  # type: ignore[attr-defined]


@pytest.mark.parametrize("change, message", [
    ("    replace: ```\n      for (int $C = ?lane; $C < $N; $C += 32) {\n          $$$S;\n"
     "      }\n    ```\n", "missing `replace`"),
    ("assigns_only_locals($$$S) and no_jumps($$$S)", "$$$Q is used in the guard"),
    ("no_jumps($$$S)", "unknown guard predicate 'no_jumpz'"),
])
def test_bad_within_blocks_are_refused_with_a_position(change: str, message: str) -> None:
    if message.startswith("missing"):
        text = WARP_RULE.replace(change, "")
    elif message.startswith("$$$Q"):
        text = WARP_RULE.replace(change, "assigns_only_locals($$$Q)")
    else:
        text = WARP_RULE.replace(change, "no_jumpz($$$S)")
    with pytest.raises(RuleError) as e:
        load_rules_text(text, "bad.rule")
    assert message in str(e.value)
    assert "bad.rule:" in str(e.value)


def test_within_on_an_unbound_metavariable_is_refused() -> None:
    text = WARP_RULE.replace("rewrite within $$$BODY {", "rewrite within $$$NOPE {", 1)
    with pytest.raises(RuleError, match=r"\$\$\$NOPE is used in rewrite within"):
        load_rules_text(text, "bad.rule")


def test_the_row_pass_inverts_into_the_warp_per_row_skill() -> None:
    rules = {r.name: r for r in load_rules(ROOT / "passes" / "row_kernels.rule")}
    inv = mechanical_inverse(rules["warp_per_row_to_thread_per_row"])
    skill = inv.rule
    assert skill.name == "thread_per_row_to_warp_per_row"
    subs = [e.sub for e in skill.edits if e.kind == "within"]
    assert len(subs) == 27  # (23, and four for a sum of any start)
    # the first block: the sequential two-accumulator loop becomes the strided loop and
    # its reduction; its guard is the pass block's inverse guard
    assert subs[0].anchor.startswith("for (int $C = 0; $C < $N; $C++)")
    assert "__shfl_xor_sync(0xffffffffu, $A1, offset)" in subs[0].edits[0].template
    assert "?lane" in subs[0].edits[0].template
    from klc.rule import guard_text

    assert "assigns_only_locals($$$PRE)" in guard_text(subs[0].guard)
    assert any(e.kind == "launch" and e.op == "*" and e.factor == 32 for e in skill.edits)
    # the skill, applied to the pass's output, gives the expert back
    expert = (ROOT / "bench/lineages/row_standardize/expert.cu").read_bytes()
    unit = parse_bytes(expert, "expert.cu")
    from klc.pipeline import spec_of

    naive = apply_rules(unit, [rules["warp_per_row_to_thread_per_row"]], spec=spec_of(unit))
    assert naive.changed
    unit2 = parse_bytes(naive.source, "naive.cu")
    back = apply_rules(unit2, [skill], {"lane": "lane"}, spec=spec_of(unit2))
    want = expert.decode().replace("    const int r = (blockIdx", "    const int r = (blockIdx")
    assert back.source.decode() == want


def test_skill_refuses_a_body_that_reads_the_thread_index(tmp_path: Path) -> None:
    src = KERNEL.replace("out[r] = s;", "out[r] = s + threadIdx.x;")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = find_sites(unit, [rule()])  # type: ignore[list-item]
    assert not sites[0].ok and "uses `threadIdx`" in sites[0].reason


def test_cli_lists_the_why_not_of_a_within_rule(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rf = tmp_path / "w.rule"
    rf.write_text(WARP_RULE)
    kf = tmp_path / "k.cu"
    kf.write_text(KERNEL.replace("out[r] = s;", "out[r] = s + threadIdx.x;"))
    assert main(["list", str(kf), "--skills", str(tmp_path), "--all"]) == 0
    out = capsys.readouterr().out
    assert "to_warp" in out and "uses `threadIdx`" in out
    assert main(["apply", str(rf), str(kf), "--in-place"]) == 1
    assert "threadIdx.x;" in kf.read_text()


def test_sub_match_never_reaches_outside_the_binding() -> None:
    # the same loop after the if: not inside $$$BODY, never rewritten
    src = KERNEL.replace("        out[r] = s;\n    }\n}", "        out[r] = s;\n    }\n"
                         "    for (int c = 0; c < cols; c++) {\n        y[c] = 0.0f;\n    }\n}")
    text, out = apply(src)
    assert out.changed
    assert "    for (int c = 0; c < cols; c++) {\n        y[c] = 0.0f;" in text


def test_klc_error_for_hole_value_outside_identifier() -> None:
    unit = parse_bytes(KERNEL.encode(), "k.cu")
    with pytest.raises(KlcError, match=r"hole \?lane: \"1x\" is not a C identifier"):
        apply_rules(unit, [rule()], {"lane": "1x"})  # type: ignore[list-item]


# ---- the predicates sub-rewrites use


def sites_for(anchor: str, guard: str, source: str) -> list[object]:
    text = f"""
rule probe {{
  kind: skill
  anchor: ```
    {anchor}
  ```
  guard: {guard}
  rewrite replace: ```
    {anchor}
  ```
}}
"""
    unit = parse_bytes(source.encode(), "k.cu")
    from klc.pipeline import spec_of

    return find_sites(unit, load_rules_text(text, "p.rule"), spec=spec_of(unit))


LOOPS = SPEC + """__global__ void k(const float* x, float* y, float* out, int rows, int cols) {
    float acc[4];
    float s = 0.0f;
    for (int c = 0; c < cols; c++) { float v = x[c]; y[c] = v; }
    for (int c = 0; c < cols; c++) { s += x[c]; }
    for (int c = 0; c < cols; c++) { acc[c % 4] = x[c]; }
    for (int c = 0; c < cols; c++) { if (x[c] < 0) break; y[c] = 1.0f; }
    for (int c = 0; c < cols; c++) { for (int j = 0; j < 4; j++) { if (j == c) break; } }
    for (int c = 0; c < cols; c++) { cols = 3; }
}
"""


def verdicts(guard: str) -> list[tuple[bool, str]]:
    return [(s.ok, s.reason) for s in sites_for(  # type: ignore[attr-defined]
        "for (int $C = 0; $C < $N; $C++) { $$$S; }", guard, LOOPS)]


def test_assigns_only_locals_tells_memory_writes_from_accumulators() -> None:
    v = verdicts("assigns_only_locals($$$S)")
    # the five loops, the inner loop of the fifth, the sixth loop
    assert [ok for ok, _ in v] == [True, False, False, True, True, True, False]
    assert "writes `s`" in v[1][1]
    assert "writes `acc`" in v[2][1]  # a register array of the enclosing code
    assert "assigns `cols`" in v[6][1]  # a parameter assigned as a whole


def test_no_jumps_allows_a_break_of_an_inner_loop_only() -> None:
    v = verdicts("no_jumps($$$S)")
    assert [ok for ok, _ in v] == [True, True, True, False, True, False, True]
    assert "leaves the code early" in v[3][1]


def test_mentions_finds_identifiers_not_substrings() -> None:
    v = verdicts("mentions($$$S, y)")
    assert [ok for ok, _ in v] == [True, False, False, True, False, False, False]
    v = verdicts("not mentions($$$S, acc)")
    assert [ok for ok, _ in v] == [True, True, False, True, True, True, True]


def test_fresh_name_and_block_size_multiple() -> None:
    ok = sites_for("float $S = 0.0f;", "fresh_name(lane) and block_size_multiple(32)", LOOPS)
    assert ok[0].ok  # type: ignore[attr-defined]
    taken = sites_for("float $S = 0.0f;", "fresh_name(acc)", LOOPS)
    assert not taken[0].ok and "already used" in taken[0].reason  # type: ignore[attr-defined]
    odd = sites_for("float $S = 0.0f;", "block_size_multiple(32)",
                    LOOPS.replace("block: [256]", "block: [100]"))
    assert not odd[0].ok and "not a multiple of 32" in odd[0].reason  # type: ignore[attr-defined]
