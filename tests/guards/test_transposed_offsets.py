"""``transposed_offsets($$$D, $SI, $DI, $COLS, $P, $C, $B)``: the offsets of a naive batched
transpose are declarations and expressions of (batch, row, column) and unassigned parameters
alone, reading no memory or built-in, and they transpose: the read is contiguous along the
column, the write along the row (batched_tile_transpose)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    int $P = blockIdx.x * blockDim.x + threadIdx.x;
    int $C = blockIdx.y;
    int $B = blockIdx.z;
    if ($P < $COLS) {
        $$$DECLS;
        $DST[$DI] = $SRC[$SI];
    }
  ```
  guard: transposed_offsets($$$DECLS, $SI, $DI, $COLS, $P, $C, $B)
  rewrite replace: ```
    ;
  ```
}
"""

HEAD = ("#define STRIDE 7\n"
        "__global__ void k(const float* x, float* y, const int* s, int N, int C, int HW) {\n")
IDX = ("    int p = blockIdx.x * blockDim.x + threadIdx.x;\n    int c = blockIdx.y;\n"
       "    int n = blockIdx.z;\n")


def verdict(body: str, before: str = "", after: str = "") -> tuple[bool, str]:
    source = HEAD + before + IDX + "    if (p < HW) {\n" + body + "    }\n" + after + "}\n"
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(PROBE, "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_nchw_to_nhwc_with_size_t_offsets_is_a_transpose() -> None:
    ok, reason = verdict("        size_t i = ((size_t)n * C + c) * HW + p;\n"
                         "        size_t o = ((size_t)n * HW + p) * C + c;\n"
                         "        y[o] = x[i];\n")
    assert ok, reason


def test_inline_offsets_and_a_define() -> None:
    ok, reason = verdict(
        "        y[(n * HW + p) * C + c + STRIDE - STRIDE] = x[(n * C + c) * HW + p];\n")
    assert ok, reason


def test_a_permutation_that_keeps_the_column_inner_is_refused() -> None:
    ok, reason = verdict("        y[(c * N + n) * HW + p] = x[(n * C + c) * HW + p];\n")
    assert not ok
    assert "is not contiguous along the row `c`" in reason


def test_a_read_that_strides_is_refused() -> None:
    ok, reason = verdict("        y[(n * HW + p) * C + c] = x[(n * HW + p) * C + c];\n")
    assert not ok
    assert "not contiguous along the column `p`" in reason


def test_an_offset_read_from_memory_is_refused() -> None:
    ok, reason = verdict("        int st = s[0];\n"
                         "        y[n * st + p * C + c] = x[n * st + c * HW + p];\n")
    assert not ok
    assert "reads memory" in reason


def test_a_thread_index_in_an_offset_is_refused() -> None:
    ok, reason = verdict(
        "        y[(n * HW + p) * C + c + threadIdx.y] = x[(n * C + c) * HW + p];\n")
    assert not ok
    assert "built-in" in reason


def test_a_local_from_before_the_indices_is_refused() -> None:
    ok, reason = verdict("        y[(n * HW + p) * C + c] = x[(n * C + c) * HW + p + t];\n",
                         before="    int t = threadIdx.x % 2;\n")
    assert not ok
    assert "`t`" in reason


def test_an_assigned_parameter_is_refused() -> None:
    ok, reason = verdict("        y[(n * HW + p) * C + c] = x[(n * C + c) * HW + p];\n",
                         before="    C = C + 1;\n")
    assert not ok
    assert "`C`" in reason


def test_a_statement_that_is_not_a_declaration_is_refused() -> None:
    ok, reason = verdict("        y[0] = 1.0f;\n"
                         "        y[(n * HW + p) * C + c] = x[(n * C + c) * HW + p];\n")
    assert not ok
    assert "is not a declaration" in reason


def test_a_declaration_without_initialiser_or_shared_is_refused() -> None:
    ok, reason = verdict("        float tmp[4];\n"
                         "        y[(n * HW + p) * C + c] = x[(n * C + c) * HW + p];\n")
    assert not ok
    assert "has no initialiser" in reason
    ok, reason = verdict("        static int k2 = 3;\n"
                         "        y[(n * HW + p) * C + c] = x[(n * C + c) * HW + p];\n")
    assert not ok
    assert "not a plain local" in reason
