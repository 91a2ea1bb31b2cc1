"""Rows and columns per thread as holes (skills/tile_rows.rule, skills/transpose_rows.rule,
skills/row_copy_vec4.rule): each takes the tile edge, the rows and the vector groups from
the site's own launch, compiles there with NVRTC, and is refused where the block cannot
hold the relation."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]

TILED = """/* klc-spec
kernel: tiled
sizes: {{rows: 512, cols: 256}}
args:
  - {{name: out, shape: [cols, rows], role: out}}
  - {{name: in, shape: [rows, cols], role: in}}
  - {{name: rows, value: rows}}
  - {{name: cols, value: cols}}
grid: ["ceil_div(cols, {b})", "ceil_div(rows, {b})"]
block: [{b}, {by}]
*/
__global__ void tiled(float *out, const float *in, int rows, int cols) {{
    __shared__ float tile[{b}][{b} + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {{
        tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    }}
    __syncthreads();
    {{
        int c = blockIdx.x * blockDim.x + threadIdx.y;
        int r = blockIdx.y * blockDim.y + threadIdx.x;
        if (r < rows && c < cols) {{
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y];
        }}
    }}
}}
"""

FLAT = """/* klc-spec
kernel: flat
sizes: {{rows: 512, cols: 256}}
args:
  - {{name: out, shape: [cols, rows], role: out}}
  - {{name: in, shape: [rows, cols], role: in}}
  - {{name: rows, value: rows}}
  - {{name: cols, value: cols}}
grid: ["ceil_div(cols, {bx})", "ceil_div(rows, {by})"]
block: [{bx}, {by}]
*/
__global__ void flat(float *out, const float *in, int rows, int cols) {{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {{
        out[c * rows + r] = in[r * cols + c];
    }}
}}
"""


def skill(name: str) -> Rule:
    return next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)


def site(source: str, rule: Rule, holes: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    unit = parse_bytes(source.encode(), "k.cu")
    (s,) = [s for s in find_sites(unit, [rule], holes, spec_of(unit)) if s.rule is rule]
    return s


def compiled(source: bytes) -> None:
    result = compile_unit(parse_bytes(source, "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, result.log


@pytest.mark.parametrize(("b", "given", "want"), [
    (32, {}, {"t": "32", "factor": "4", "r": "8"}),
    (16, {}, {"t": "16", "factor": "4", "r": "4"}),
    (16, {"factor": "2"}, {"t": "16", "r": "8"}),
    (8, {"factor": "4"}, {"t": "8", "r": "2"}),
])
def test_tile_rows_take_the_tile_edge_of_the_block(b: int, given: dict[str, str],
                                                   want: dict[str, str]) -> None:
    rule = skill("tile_rows_per_thread")
    src = TILED.format(b=b, by=b)
    s = site(src, rule, given)
    assert s.ok, s.reason
    assert s.holes == want
    out = apply_rules(parse_bytes(src.encode(), "k.cu"), [rule], given, spec_of(
        parse_bytes(src.encode(), "k.cu")))
    text = out.source.decode()
    rows = want.get("r") or str(b // int(given["factor"]))
    assert "for (int j = 0; j < blockDim.x; j += blockDim.y)" in text
    assert f'block: [{b}, "ceil_div({b}, {given.get("factor", want.get("factor"))})"]' in text
    assert int(rows) * int(given.get("factor", want.get("factor", "1"))) == b
    compiled(out.source)


def test_tile_rows_refuse_a_block_that_is_not_square() -> None:
    s = site(TILED.format(b=32, by=8), skill("tile_rows_per_thread"))
    assert not s.ok and "not square" in s.reason


@pytest.mark.parametrize(("bx", "by", "factor"), [(32, 8, 4), (32, 16, 2), (16, 4, 4),
                                                  (32, 4, 8)])
def test_rows_per_thread_transpose_at_each_short_block(bx: int, by: int, factor: int) -> None:
    rule = skill("rows_per_thread_transpose")
    src = FLAT.format(bx=bx, by=by)
    s = site(src, rule)
    assert s.ok, s.reason
    assert s.holes == {"t": str(bx), "r": str(by), "factor": str(factor)}
    unit = parse_bytes(src.encode(), "k.cu")
    out = apply_rules(unit, [rule], None, spec_of(unit))
    text = out.source.decode()
    assert f'grid: ["ceil_div(cols, {bx})", "ceil_div(ceil_div(rows, {by}), {factor})"]' in text
    compiled(out.source)
    # then the tile: an edge of the block's x extent, the same block
    tiled = apply_rules(parse_bytes(out.source, "k.cu"), [skill("tile_rows_loop_transpose")],
                        None, spec_of(parse_bytes(out.source, "k.cu")))
    assert f"__shared__ float tile[{bx}][{bx}];" in tiled.source.decode()
    compiled(tiled.source)


@pytest.mark.parametrize(("bx", "by", "why"), [
    (16, 16, "the first is the product of the other two"),  # square: nothing to coarsen
    (32, 12, "block.y is 12"),  # 12 rows do not divide 32
    (64, 8, "block.x is 64"),  # a tile edge outside the domain (64 x 65 floats)
])
def test_rows_per_thread_transpose_refuses(bx: int, by: int, why: str) -> None:
    s = site(FLAT.format(bx=bx, by=by), skill("rows_per_thread_transpose"))
    assert not s.ok and why in s.reason, s.reason


def test_row_copy_groups_are_a_hole_the_launch_follows() -> None:
    rule = skill("row_copy_vec4")
    src = (ROOT / "bench/transfer/index_select_rows.cu").read_text()
    for v in ("1", "2", "4"):
        unit = parse_bytes(src.encode(), "k.cu")
        out = apply_rules(unit, [rule], {"v": v}, spec_of(unit))
        text = out.source.decode()
        assert f"blockIdx.x * blockDim.x * {v} + threadIdx.x) * 4" in text
        assert f'"ceil_div(ceil_div(ceil_div(width, 32), {v}), 4)"' in text
        assert "*reinterpret_cast<const uint4*>(&src[r * width + col])" in text
        compiled(out.source)


ROWS = """
__global__ void rows(T *__restrict__ out, const T *__restrict__ in, const int *__restrict__ pick,
                     int n, int width) {{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < n && c < width) {{
        int s = pick[r];
        out[(size_t)r * width + c] = in[(size_t)s * width + c];
    }}
}}
void launch(T *out, const T *in, const int *pick, int n, int width) {{
    dim3 block(32, 8);
    dim3 grid((width + 31) / 32, (n + 7) / 8);
    rows<<<grid, block>>>(out, in, pick, n, width);
}}
"""


@pytest.mark.parametrize(("typ", "head", "w"), [
    ("float", "", 4), ("int", "", 4), ("__half", "#include <cuda_fp16.h>\n", 8),
    ("__nv_bfloat16", "#include <cuda_bf16.h>\n", 8), ("unsigned char", "", 16),
    ("short", "", 8), ("double", "", 2)])
def test_row_copy_groups_take_the_element_size(typ: str, head: str, w: int) -> None:
    rule = skill("row_copy_vec4")
    src = head + ROWS.format().replace("T *", f"{typ} *")
    s = site(src, rule)
    assert s.ok, s.reason
    assert s.holes["w"] == str(w) and s.holes["t"] == typ
    out = apply_rules(parse_bytes(src.encode(), "k.cu"), [rule])
    text = out.source.decode()
    assert f"(blockIdx.x * blockDim.x * 2 + threadIdx.x) * {w};" in text
    # the host launch: a grid 2 * w times narrower along x
    assert f"dim3 grid((width + {32 * 2 * w - 1}) / {32 * 2 * w}, (n + 7) / 8);" in text
    compiled(out.source)


def test_row_copy_refuses_a_conversion_and_an_unsized_type() -> None:
    rule = skill("row_copy_vec4")
    mixed = "#include <cuda_fp16.h>\n" + ROWS.format().replace(
        "T *__restrict__ out", "float *__restrict__ out").replace("T *", "__half *")
    s = site(mixed, rule)
    assert not s.ok and "not float" in s.reason, s.reason
    pairs = ROWS.format().replace("T *", "float2 *")
    s = site(pairs, rule)
    assert not s.ok and "float2" in s.reason, s.reason
