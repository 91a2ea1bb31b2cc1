"""``window_rows`` and ``grid_rows_cover`` (klc/guards/coarsen.py), through the skill
stencil_rows_per_thread: a window over rows around the pixel's row of a constant radius,
however its bounds are spelled; and a grid that, divided by the rows per thread, numbers the
same rows below H."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule import RuleSet

SPEC = """/* klc-spec
kernel: k
sizes: {{H: 2048, W: 256}}
verify_sizes:
  - {{H: {vh}, W: 48}}
args:
  - {{name: img, shape: [H, W], role: in}}
  - {{name: out, shape: [H, W], role: out}}
  - {{name: H, value: H}}
  - {{name: W, value: W}}
  - {{name: r, value: 1}}
grid: ["ceil_div(W, 16)", "{gy}"]
block: [16, 16]
*/
"""
KERNEL = """#define RAD 2
__global__ void k(const float* img, float* out, int H, int W, int r) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
    int n = 0;
    for ({rows}) {{
        for (int u = max(x - 1, 0); u <= min(x + 1, W - 1); u++) {{
            acc += img[{row} * W + u];
            n++;
        }}
    }}
    out[y * W + x] = acc / n;
}}
"""
CLIPPED = "int v = max(y - 1, 0); v <= min(y + 1, H - 1); v++"


def site(rows: str = CLIPPED, row: str = "v", gy: str = "ceil_div(H, 16)", vh: int = 37,
         holes: dict[str, str] | None = None, spec: bool = True):  # type: ignore[no-untyped-def]
    rules = [r for r in RuleSet.load(["skills"]).rules if r.name == "stencil_rows_per_thread"]
    text = (SPEC.format(gy=gy, vh=vh) if spec else "") + KERNEL.format(rows=rows, row=row)
    unit = parse_bytes(text.encode(), "k.cu")
    (s,) = find_sites(unit, rules, holes or {}, spec_of(unit))
    return s


@pytest.mark.parametrize(("rows", "row"), [
    (CLIPPED, "v"),
    ("int v = max(0, y - 1); v <= min(H - 1, y + 1); ++v", "v"),
    ("int v = y - RAD; v <= y + RAD; v++", "v"),
    ("int v = max(y - RAD, 0); min(y + RAD, H - 1) >= v; v++", "v"),
    ("int dy = -1; dy <= 1; dy++", "(y + dy)"),
    ("int dy = -RAD; dy <= RAD; dy++", "(dy + y)"),
])
def test_windows_of_a_constant_radius_hold(rows: str, row: str) -> None:
    s = site(rows, row)
    assert s.ok, s.reason


@pytest.mark.parametrize(("rows", "row", "why"), [
    ("int v = max(y - r, 0); v <= min(y + r, H - 1); v++", "v",
     "the radius `r` of"),
    ("int v = max(y - 1, 0); v <= min(y + 2, H - 1); v++", "v",
     "not a window of one radius >= 1 around the row"),
    ("int v = y - 0; v <= y + 0; v++", "v", "not a window of one radius >= 1"),
    ("int dy = -1; dy <= 1; dy++", "(x + dy) * 0 + y", "holds no loop over the rows"),
    ("int v = 0; v < H; v++", "v", "holds no loop over the rows of a window around `y`"),
])
def test_other_row_loops_are_refused(rows: str, row: str, why: str) -> None:
    s = site(rows, row)
    assert not s.ok and why in s.reason, s.reason


def test_a_radius_known_only_at_run_time_is_named() -> None:
    s = site("int v = max(y - r, 0); v <= min(y + r, H - 1); v++")
    assert "is not a compile-time constant" in s.reason and "`r` is a parameter" in s.reason


@pytest.mark.parametrize(("gy", "vh", "rpt"), [
    ("ceil_div(H, 16)", 37, "4"),    # the grid reaches every row
    ("ceil_div(H, 16)", 1, "8"),
    ("H // 16", 40, "2"),            # stops at row 32 of 40, but 2 divides its 2 block rows
    ("H // 16", 64, "4"),            # 4 block rows reach every row
])
def test_grids_whose_rows_stay_the_same_hold(gy: str, vh: int, rpt: str) -> None:
    s = site(gy=gy, vh=vh, holes={"rpt": rpt})
    assert s.ok, s.reason


@pytest.mark.parametrize(("gy", "vh", "rpt", "why"), [
    ("H // 16", 40, "4", "the grid's 2 x 16 rows stop short of `H` = 40 and 4 does not "
                         "divide 2"),
    ("H // 16", 40, "8", "8 does not divide 2"),
    ("H // 32", 64, "4", "4 does not divide 2"),
])
def test_grids_that_stop_short_and_do_not_divide_are_refused(gy: str, vh: int, rpt: str,
                                                             why: str) -> None:
    s = site(gy=gy, vh=vh, holes={"rpt": rpt})
    assert not s.ok and why in s.reason, s.reason


def test_no_spec_no_proof() -> None:
    text = KERNEL.format(rows=CLIPPED, row="v").replace(
        "const float* img, float* out", "const float* __restrict__ img, float* __restrict__ out")
    rules = [r for r in RuleSet.load(["skills"]).rules if r.name == "stencil_rows_per_thread"]
    unit = parse_bytes(text.encode(), "k.cu")
    (s,) = find_sites(unit, rules, {"rpt": "4"}, spec_of(unit))
    assert not s.ok and "no spec: the grid's rows are not known to cover `H`" in s.reason, \
        s.reason


# -- the corner spelling (corner_stencil_rows_per_thread) ----------------------------------

CORNER = """#define RAD 2
__global__ void k(const float* img, float* out, int H, int W, int r) {{
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    {corner}
    int c0 = x - 1;
    float acc = 0.0f;
    for ({rows}) {{
        for (int j = 0; j < 3; j++) {{
            if ({row} >= 0 && {row} < H && (c0 + j) >= 0 && (c0 + j) < W) {{
                acc += img[{row} * W + (c0 + j)];
            }}
        }}
    }}
    {after}
    if (y < H && x < W) {{
        out[y * W + x] = acc;
    }}
}}
"""


def corner_site(corner: str = "int r0 = y - 1;", rows: str = "int i = 0; i < 3; i++",
                row: str = "(r0 + i)", after: str = ""):  # type: ignore[no-untyped-def]
    rules = [r for r in RuleSet.load(["skills"]).rules
             if r.name == "corner_stencil_rows_per_thread"]
    # (at a block a warp wide: the skill asks for one)
    spec = SPEC.format(gy="ceil_div(H, 8)", vh=37).replace(
        'grid: ["ceil_div(W, 16)", "ceil_div(H, 8)"]\nblock: [16, 16]',
        'grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]\nblock: [32, 8]')
    assert "block: [32, 8]" in spec
    text = spec + CORNER.format(corner=corner, rows=rows, row=row, after=after)
    unit = parse_bytes(text.encode(), "k.cu")
    (s,) = find_sites(unit, rules, {}, spec_of(unit))
    return s


@pytest.mark.parametrize(("corner", "rows", "row"), [
    ("int r0 = y - 1;", "int i = 0; i < 3; i++", "(r0 + i)"),
    ("int r0 = y - RAD;", "int i = 0; i <= 2 * RAD; ++i", "(i + r0)"),
    ("const int r0 = y - (2 * RAD + 1) / 2;", "int i = 0; i < 2 * RAD + 1; i++", "(r0 + i)"),
    ("int r0 = y - 0;", "int i = 0; i < 2; i++", "(r0 + i)"),  # a window below the row
])
def test_windows_walked_from_a_corner_hold(corner: str, rows: str, row: str) -> None:
    s = corner_site(corner, rows, row)
    assert s.ok, s.reason


@pytest.mark.parametrize(("corner", "rows", "row", "after", "why"), [
    ("int r0 = y - r;", "int i = 0; i < 3; i++", "(r0 + i)", "",
     "`r` of the corner window at"),
    ("int r0 = y - 1;", "int i = 0; i < r; i++", "(r0 + i)", "",
     "`r` of the corner window at"),
    ("int r0 = y - 1;", "int i = 0; i < 1; i++", "(r0 + i)", "",
     "walks 1 row(s) from the corner `r0`"),
    ("int r0 = y - 1;", "int i = 0; i < 3; i++", "(r0 + i)", "r0 = 0;",
     "the corner `r0` of"),
    ("int r0 = x - 1;", "int i = 0; i < 3; i++", "(r0 + i)", "",
     "holds no loop over the rows of a window around `y`"),
])
def test_other_corners_are_refused(corner: str, rows: str, row: str, after: str,
                                   why: str) -> None:
    s = corner_site(corner, rows, row, after)
    assert not s.ok and why in s.reason, s.reason
