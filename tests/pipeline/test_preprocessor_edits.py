"""A rewrite never changes text the parser did not see as code: preprocessor
directives, the branch of an ``#if`` the parser did not take, specifier macros. The package
corpus had one such break (a ``#pragma unroll 1`` removed together with a loop header that
sits between ``#if`` and ``#else``, leaving ``#endif`` without its ``#if``); these kernels
are written here in the spellings real code uses for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules
from klc.rule import load_rule_dir

ROOT = Path(__file__).resolve().parents[2]


def _pass(name: str):
    return [r for r in load_rule_dir(ROOT / "passes") if r.name == name]


HEADERS = {
    "if arch": ("#if __CUDA_ARCH__ == 1000", "#else", "#endif"),
    "ifdef": ("#ifdef ONE_ROW_PER_BLOCK", "#else", "#endif"),
    "spaced if": ("#  if defined(ONE_ROW_PER_BLOCK)", "#  else", "#  endif"),
    "elif": ("#if ROWS == 1", "#elif ROWS == 2", "#endif"),
}


def _kernel(opening: str, middle: str, closing: str) -> bytes:
    return f"""#define ROWS 4
__global__ void scale_rows(float *x, int n, int rows)
{{
    int start = blockIdx.x * ROWS;
    #pragma unroll 1
{opening}
    for (int r = start; r < start + 1; r++) {{
{middle}
    for (int r = start; r < rows; r += gridDim.x * ROWS) {{
{closing}
        x[r] *= 2.0f;
    }}
}}
""".encode()


@pytest.mark.parametrize("spelling", sorted(HEADERS))
def test_a_loop_header_inside_a_conditional_is_never_removed(spelling: str) -> None:
    source = _kernel(*HEADERS[spelling])
    unit = parse_bytes(source, "rows.cu")
    outcome = apply_rules(unit, _pass("remove_pragma_unroll"))
    assert outcome.source == source
    assert not outcome.applied
    (site, why), = outcome.skipped
    assert site.rule.name == "remove_pragma_unroll"
    opening = HEADERS[spelling][0]
    assert f"`{opening}` at rows.cu:6:1" in why and "never touches" in why


def test_the_same_pragma_before_a_plain_loop_is_still_removed() -> None:
    source = b"""#define ROWS 4
__global__ void scale_rows(float *x, int n, int rows)
{
    int start = blockIdx.x * ROWS;
    #pragma unroll 1
    for (int r = start; r < rows; r += gridDim.x * ROWS) {
        x[r] *= 2.0f;
    }
}
"""
    unit = parse_bytes(source, "rows.cu")
    outcome = apply_rules(unit, _pass("remove_pragma_unroll"))
    assert len(outcome.applied) == 1 and not outcome.skipped
    assert outcome.source == source.replace(b"    #pragma unroll 1\n", b"")


def test_a_rewrite_beside_a_conditional_applies_and_keeps_it() -> None:
    source = b"""__global__ void fill(float *x, int n)
{
#ifdef FAST_PATH
    const int stride = 2;
#else
    const int stride = 1;
#endif
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll 4
    for (int k = 0; k < 8; k++) {
        if (i * stride + k < n) x[i * stride + k] = 0.0f;
    }
}
"""
    unit = parse_bytes(source, "fill.cu")
    outcome = apply_rules(unit, _pass("remove_pragma_unroll"))
    assert len(outcome.applied) == 1 and not outcome.skipped
    assert outcome.source == source.replace(b"    #pragma unroll 4\n", b"")
    for line in (b"#ifdef FAST_PATH", b"#else", b"#endif", b"const int stride = 1;"):
        assert line in outcome.source
