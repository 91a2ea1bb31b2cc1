"""The predicates of klc/guards/warptile.py and klc/guards/digits.py (passes/
attention_tiles.rule's inverses): ``lane_index``, ``warp_uniform``, ``warp_converged``,
``index_digits`` and ``reads_only_with``, each judged through a probe rule at real spellings
and at the spellings that must be refused."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

SWEEP = """
rule probe {{
  kind: skill
  context: global
  anchor: ```
    for (int $T2 = $LANE; $T2 <= $BOUND; $T2 += 32) {{
        $$$PRE;
        float $DOT = $Z;
        for (int $I = 0; $I < $N; $I++) {{
            $DOT += $Q[$IQ] * $K[$IK];
        }}
        $$$POST;
    }}
  ```
  guard: {guard}
  rewrite replace: ```
    {{
    }}
  ```
}}
"""

VALUES = """
rule probe {{
  kind: skill
  context: global
  anchor: ```
    if ($IDX < $NB * $T * $HS) {{
        int $I = $EI;
        int $TT = $ET;
        int $B = $EB;
        $$$PRE;
        float $ACC = $Z;
        for (int $K = 0; $K <= $TT; $K++) {{
            $ACC += $A[$IA] * $V[$IV];
        }}
        $$$POST;
    }}
  ```
  guard: {guard}
  rewrite replace: ```
    {{
    }}
  ```
}}
"""


def spec(block: str = "256") -> str:
    return ("/* klc-spec\nkernel: k\nsizes: {N: 64, T: 16, HS: 8}\n"
            "args:\n  - {name: o, shape: [N], role: out}\n"
            "  - {name: q, shape: [N], role: in}\n  - {name: kk, shape: [N], role: in}\n"
            "  - {name: N, value: N}\n  - {name: T, value: T}\n  - {name: HS, value: HS}\n"
            f"grid: [\"N\"]\nblock: [{block}]\n*/\n")


def verdict(rule: str, guard: str, body: str, block: str = "256") -> tuple[bool, str]:
    source = (spec(block) + "__global__ void k(float* o, const float* q, const float* kk, "
              f"int N, int T, int HS) {{\n{body}}}\n")
    unit = parse_bytes(source.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(rule.format(guard=guard), "p.rule"),
                       spec=spec_of(unit))
    assert len(sites) == 1, sites
    return sites[0].ok, sites[0].reason


def warp_row(head: str = "", lane: str = "threadIdx.x % 32", bound: str = "t",
             row: str = "(blockIdx.x * blockDim.x + threadIdx.x) / 32",
             post: str = "o[t2] = dot;") -> str:
    return (f"    const int r = {row};\n    const int lane = {lane};\n{head}"
            "    if (r < N) {\n        int t = r % T;\n"
            "        const float* qt = q + r * HS;\n"
            "        const float* kb = kk + (r / T) * T * HS;\n"
            f"        for (int t2 = lane; t2 <= {bound}; t2 += 32) {{\n"
            "            const float* kt = kb + t2 * HS;\n            float dot = 0.0f;\n"
            "            for (int i = 0; i < HS; i++) {\n                dot += qt[i] * kt[i];\n"
            f"            }}\n            {post}\n        }}\n    }}\n")


def test_lane_index_reads_the_modulo_and_the_mask_on_whole_warps() -> None:
    assert verdict(SWEEP, "lane_index($LANE)", warp_row())[0]
    assert verdict(SWEEP, "lane_index($LANE)", warp_row(lane="threadIdx.x & 31"))[0]
    ok, reason = verdict(SWEEP, "lane_index($LANE)", warp_row(lane="threadIdx.x % 16"))
    assert not ok and "not initialised to threadIdx.x % 32" in reason
    ok, reason = verdict(SWEEP, "lane_index($LANE)", warp_row(), block="48")
    assert not ok and "not whole warps" in reason
    ok, reason = verdict(SWEEP, "lane_index($LANE)", warp_row(), block="32, 4")
    assert not ok and "not one-dimensional" in reason


def test_warp_uniform_takes_a_warp_index_and_refuses_the_lane() -> None:
    ok, reason = verdict(SWEEP, "warp_uniform($BOUND) and warp_uniform($Q) and "
                         "warp_uniform($IQ, $I) and warp_uniform($K, $T2) and "
                         "warp_uniform($IK, $T2, $I)", warp_row())
    assert ok, reason
    # the row from the thread's own index: its bound differs between lanes
    ok, reason = verdict(SWEEP, "warp_uniform($BOUND)",
                         warp_row(row="blockIdx.x * blockDim.x + threadIdx.x"))
    assert not ok and "reads the thread's index" in reason
    # the key's row pointer depends on the key: uniform only given it
    ok, reason = verdict(SWEEP, "warp_uniform($K)", warp_row())
    assert not ok and "`t2`" in reason
    # a warp index from a shift counts as one; a reassigned one does not
    assert verdict(SWEEP, "warp_uniform($BOUND)",
                   warp_row(row="(blockIdx.x * blockDim.x + threadIdx.x) >> 5"))[0]
    ok, reason = verdict(SWEEP, "warp_uniform($BOUND)",
                         warp_row(row="(blockIdx.x * blockDim.x + threadIdx.x) / 16"))
    assert not ok


def test_warp_uniform_refuses_memory_reads_and_a_changing_name() -> None:
    ok, reason = verdict(SWEEP, "warp_uniform($BOUND)", warp_row(bound="(int)q[lane]"))
    assert not ok and "memory read" in reason
    ok, reason = verdict(SWEEP, "warp_uniform($BOUND)",
                         warp_row(head="    int lim = T;\n    lim += 1;\n", bound="lim"))
    assert not ok and "assigned after its declaration" in reason


def test_warp_converged_refuses_lane_conditions_and_early_lane_exits() -> None:
    assert verdict(SWEEP, "warp_converged(anchor)", warp_row())[0]
    # the row from the thread's index: the if around the sweep differs between lanes
    ok, reason = verdict(SWEEP, "warp_converged(anchor)",
                         warp_row(row="blockIdx.x * blockDim.x + threadIdx.x"))
    assert not ok and "may differ between the lanes of a warp" in reason
    # an odd lane leaves before the sweep
    ok, reason = verdict(SWEEP, "warp_converged(anchor)",
                         warp_row(head="    if (lane % 2) return;\n"))
    assert not ok and "lets some lanes skip" in reason
    # a return under a warp-uniform condition leaves whole warps: fine
    assert verdict(SWEEP, "warp_converged(anchor)",
                   warp_row(head="    if (r >= N) return;\n"))[0]


def values(i: str = "idx % HS", t: str = "(idx / HS) % T", b: str = "idx / (HS * T)",
           a: str = "q[(bh * T + t) * T + t2]", v: str = "kk[(bh * T + t2) * HS + i]",
           head: str = "") -> str:
    return ("    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n" + head +
            "    if (idx < N * T * HS) {\n"
            f"        int i = {i};\n        int t = {t};\n        int bh = {b};\n"
            "        float acc = 0.0f;\n"
            "        for (int t2 = 0; t2 <= t; t2++) {\n"
            f"            acc += {a} * {v};\n        }}\n        o[idx] = acc;\n    }}\n")


def test_index_digits_reads_the_unpacking_and_its_spellings() -> None:
    ok, reason = verdict(VALUES, "index_digits($I, $TT, $B)", values())
    assert ok, reason
    assert verdict(VALUES, "index_digits($I, $TT, $B)", values(b="idx / (T * HS)"))[0]
    assert verdict(VALUES, "index_digits($I, $TT, $B)", values(b="(idx / HS) / T"))[0]


def test_index_digits_refuses_what_is_not_the_index_digits() -> None:
    # bh from the wrong divisor: its element would not be (bh * T + t) * HS + i
    ok, reason = verdict(VALUES, "index_digits($I, $TT, $B)", values(b="idx / HS"))
    assert not ok
    # the middle digit from another index
    ok, reason = verdict(VALUES, "index_digits($I, $TT, $B)",
                         values(t="(threadIdx.x / HS) % T"))
    assert not ok and "is not (idx / HS) % N" in reason
    # a digit that changes later
    ok, reason = verdict(VALUES, "index_digits($I, $TT, $B)",
                         values().replace("o[idx] = acc;", "o[idx] = acc;\n        bh++;"))
    assert not ok and "assigned after its declaration" in reason


def test_reads_only_with_tells_which_coordinates_a_read_follows() -> None:
    ok, reason = verdict(VALUES, "reads_only_with($A, $IA, $B, $TT, $K) and "
                         "reads_only_with($V, $IV, $B, $K, $I)", values())
    assert ok, reason
    # a weight that follows the channel: one tile of weights cannot serve the columns
    ok, reason = verdict(VALUES, "reads_only_with($A, $IA, $B, $TT, $K)",
                         values(a="q[(bh * T + t) * T + t2 + i]"))
    assert not ok and "`i`" in reason
    # an index read from memory
    ok, reason = verdict(VALUES, "reads_only_with($V, $IV, $B, $K, $I)",
                         values(v="kk[(int)q[t2] + i]"))
    assert not ok and "memory read" in reason
