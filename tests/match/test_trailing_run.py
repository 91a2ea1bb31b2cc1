"""A ``$$$X`` run that ends a statement pattern takes the rest of the block (as a run inside
a block does), so that an anchor ``if (c >= n) return; ... $$$POST;`` binds the whole
epilogue; a run before a fixed statement still stops where that statement matches, and
statement dots still skip as little as they can."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.match import compile_pattern, find_matches

KERNEL = b"""\
__global__ void k(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = 1.0f;
    y[i] = a;
    y[i] += 2.0f;
}
"""


def matches(pattern: str) -> list[dict[str, str]]:
    unit = parse_bytes(KERNEL, "k.cu")
    return [{k: " ".join(b.text.split()) for k, b in m.bindings.items()}
            for m in find_matches(compile_pattern(pattern), unit)]


def test_a_trailing_run_takes_the_rest_of_the_block() -> None:
    got = matches("if ($I >= $N) return;\n$$$POST;")
    assert got[0]["POST"] == "float a = 1.0f; y[i] = a; y[i] += 2.0f;"


def test_a_run_before_a_fixed_statement_stops_there() -> None:
    got = matches("if ($I >= $N) return;\n$$$MID;\ny[$J] += $E;")
    assert got[0]["MID"] == "float a = 1.0f; y[i] = a;"
