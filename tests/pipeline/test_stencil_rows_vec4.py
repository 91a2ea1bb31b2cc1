"""The stencil_rows_vec4 lineage (bench/lineages/stencil_rows_vec4) and its skills: the
compile-only walk (four columns per thread through float4s, then the row sums in registers,
taken off before the stencil_rows passes take the rest), and the learned skills continuing the
stencil_rows skills on the transfer set's 3 x 3 box blur (bench/transfer/blur_3x3.cu): the
recipe forward reaches the float4 kernel from the naive blur, or from where the stencil_rows
recipe stops; the interior loads each image row with one 16-byte load (PTX); and on a GPU the
rewrites compute what the blur computes at widths that are and are not multiples of 4,
ragged heights and tiny images, while four wrong rewrites are found wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.recipes import load, replay
from klc.reverse import Learned, learn
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]
FAMILY = ROOT / "bench/lineages/stencil_rows_vec4"
BLUR = ROOT / "bench/transfer/blur_3x3.cu"
SKILLS = ROOT / "skills"


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("stencil_rows_vec4")
    write_lineage(walk(FAMILY / "expert.cu", ROOT / "passes", stages=("compile",)), d)
    return d


@pytest.fixture(scope="module")
def learned(walked: Path) -> dict[str, Learned]:
    return {item.rule.name: item for item in learn([walked], ROOT / "passes")}


def _rules() -> dict[str, Rule]:
    return {r.name: r for r in RuleSet.load([str(SKILLS)]).rules}


def _apply(src: bytes, name: str, holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(src, "k.cu")
    out = apply_rules(unit, [_rules()[name]], holes or {}, spec_of(unit)).source
    assert out != src, name
    return out


def _replay(family: str, src: bytes) -> bytes:
    """The family's recipe replayed as klc optimize replays it, every step timed faster than
    the last (the committed walk is compile-only: its recipe holds no times yet)."""
    rec = next(r for r in load([SKILLS]) if r.family == family)
    for i, s in enumerate(rec.steps):
        s.before_us, s.after_us = 100.0 * 0.8 ** i, 100.0 * 0.8 ** (i + 1)
    rp = replay(rec, src, str(BLUR), _rules())
    assert rp is not None
    return rp.source


def _ptx(src: bytes) -> str:
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(src.decode(), "k.cu", [], [])
    nvrtc.compileProgram(prog, ["--gpu-architecture=compute_90", "-default-device"])
    return nvrtc.getPTX(prog).decode()


def test_the_walk_takes_each_optimization_off(walked: Path) -> None:
    data = json.loads((walked / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "vec4_columns_to_one", "row_sums_to_windows", "remove_bare_pragma_unroll",
        "remove_bare_pragma_unroll", "rows_interior_to_clipped_rows", "stencil_rows_to_one",
        "remove_restrict", "remove_restrict", "remove_const_param"]
    assert data["versions"][1]["step"]["launch"] == [["grid", "x", "*", 4]]
    # two steps down, the stencil_rows expert but for the kernel's name and its block
    two = (walked / "v02_row_sums_to_windows.cu").read_text()
    theirs = (ROOT / "bench/lineages/stencil_rows/expert.cu").read_text()

    def body(text: str) -> str:
        return " ".join(text[text.index("#define RADIUS"):].split()).replace(
            "box_blur_rows_vec4", "box_blur_rows")
    assert body(two) == body(theirs)


def test_the_walk_learns_the_committed_skills(learned: dict[str, Learned]) -> None:
    committed = _rules()
    for name in ("stencil_columns_vec4", "windows_to_row_sums"):
        assert learned[name].rule.anchor == committed[name].anchor
        assert learned[name].rule.guard == committed[name].guard
    guard = (SKILLS / "stencil_rows_vec4.rule").read_text()
    for conjunct in ('equals($R, 1)', 'elem_type($SRC, "float")', "grid_cols_cover($W, 4)",
                     "no_alias($SRC, $DST)", "const_value($Z, ==, 0)"):
        assert conjunct in guard


def test_the_recipe_takes_the_naive_blur_to_float4s() -> None:
    from klc.gate import gate

    out = _replay("stencil_rows_vec4", read_source(BLUR))
    text = " ".join(out.decode().split())
    assert 'grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(ceil_div(H, 16), 4)"]' in text
    assert "int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4; " \
        "int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4; if (x0 >= W) return; " \
        "if (y0 >= 1 && y0 + 4 + 1 <= H && x0 >= 1 && x0 + 4 < W && W % 4 == 0 " \
        "&& ((reinterpret_cast<unsigned long long>(img) " \
        "| reinterpret_cast<unsigned long long>(out)) & 15) == 0) { float4 hs[4 + 2 * 1];" \
        in text
    assert "} else { for (int cc = 0; cc < 4; cc++) { int x = x0 + cc; if (x >= W) return; " \
        "#pragma unroll for (int rr = 0; rr < 4; rr++) { int y = y0 + rr; if (y >= H) break;" \
        in text
    rec = gate(out, str(BLUR), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_the_skills_continue_the_stencil_rows_recipe() -> None:
    """Where the stencil_rows recipe leaves the blur (its expert's shape), this lineage's
    recipe goes on from its row sums: the same kernel as the whole recipe from the start."""
    src = read_source(BLUR)
    theirs = _replay("stencil_rows", src)
    assert b"float4" not in theirs and b"#pragma unroll\n        for (int rr" in theirs
    rec = next(r for r in load([SKILLS]) if r.family == "stencil_rows_vec4")
    for i, s in enumerate(rec.steps):
        s.before_us, s.after_us = 100.0 * 0.8 ** i, 100.0 * 0.8 ** (i + 1)
    rp = replay(rec, theirs, str(BLUR), _rules())
    assert rp is not None and rp.recipe.steps[rp.start].skill == "windows_to_row_sums"
    assert rp.source == _replay("stencil_rows_vec4", src)


def test_the_interior_loads_each_row_once_in_16_bytes() -> None:
    """Six image rows for four output rows of four columns: one v4 load and two scalar
    loads per row, four v4 stores, in the interior branch."""
    out = _replay("stencil_rows_vec4", read_source(BLUR))
    interior = out[:out.index(b"} else {")] + b"}\n}\n"
    assert interior.count(b"{") == interior.count(b"}")
    ptx = _ptx(interior)
    loads = re.findall(r"\bld\.global[.\w]*", ptx)
    stores = re.findall(r"\bst\.global[.\w]*", ptx)
    assert len(loads) == 18 and sum(1 for ld in loads if ld.endswith(".v4.f32")) == 6, loads
    assert len(stores) == 4 and all(st.endswith(".v4.f32") for st in stores), stores


def test_a_radius_two_mean_takes_the_row_sums_but_not_the_float4s() -> None:
    src = read_source(ROOT / "tests/golden/windows_to_row_sums/mean_5x5_rows.cu")
    out = _apply(src, "windows_to_row_sums")
    unit = parse_bytes(out, "k.cu")
    sites = find_sites(unit, [_rules()["stencil_columns_vec4"]], {}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "not 2 == 1" in sites[0].reason


# Verified at widths that are multiples of 4 (the float4 path) and that are not (the one-column
# path everywhere), heights that end inside a thread's rows, and images smaller than a window.
SIZES = (b"verify_sizes:\n  - {H: 64, W: 256}\n  - {H: 37, W: 100}\n  - {H: 37, W: 101}\n"
         b"  - {H: 9, W: 12}\n  - {H: 6, W: 8}\n  - {H: 5, W: 7}\n  - {H: 1, W: 2}\n")


def _sized(src: bytes) -> bytes:
    head, rest = src.split(b"verify_sizes:\n", 1)
    return head + SIZES + rest[rest.index(b"args:"):]


@pytest.mark.gpu
@pytest.mark.parametrize("rpt", ["2", "4", "8"])
def test_the_float4_blur_verifies_on_the_gpu(rpt: str) -> None:
    from klc.gate import gate

    src = _sized(read_source(BLUR))
    out = _apply(_apply(src, "add_restrict"), "stencil_rows_per_thread", {"rpt": rpt})
    out = _apply(_apply(out, "clipped_rows_to_interior_rows"), "add_bare_pragma_unroll")
    out = _apply(_apply(out, "windows_to_row_sums"), "stencil_columns_vec4")
    assert b"float4" in out
    rec = gate(out, str(BLUR), reference=src, reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", sorted(
    p for d in ("stencil_columns_vec4", "windows_to_row_sums")
    for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")),
    ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), str(expected), reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("old", "new"), [
    # the first group of a row in the float4 path: p[-1] is the row above's last pixel
    (b"x0 >= 1 && ", b""),
    # the last group: p[4] is the next row's first pixel
    (b"x0 + 4 < W", b"x0 + 4 <= W"),
    # rows that do not start 16-byte aligned (W = 101) in the float4 path: a misaligned load
    (b"W % 4 == 0", b"W % 1 == 0"),
    # a thread whose rows end below the image stops its other columns too
    (b"if (y >= H) break;", b"if (y >= H) return;"),
])
def test_wrong_columns_are_found_wrong(old: bytes, new: bytes) -> None:
    from klc.gate import gate

    src = _sized(read_source(BLUR))
    good = _replay("stencil_rows_vec4", src)
    bad = good.replace(old, new, 1)
    assert bad != good
    rec = gate(bad, "bad.cu", reference=src, reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason


@pytest.mark.parametrize(("anchor", "any_loop"), [
    ("for ($INIT; $COND; $STEP) $BODY", True),
    ("for ($A; $B; $C)\n    $D", True),
    ("for ($INIT; $C < 32; $STEP) $BODY", False),
    ("for (int $I = 0; $I < $N; $I++) $BODY", False),
    ("for ($INIT; $COND; $STEP) { $X = 0; }", False),
    ("while ($COND) $BODY", False),
])
def test_a_recipe_step_on_any_loop_is_told_by_its_compiled_anchor(anchor: str,
                                                                  any_loop: bool) -> None:
    """A first step whose anchor takes any loop starts a replay only at the walk's site
    (``klc.recipes._any_loop``, read from the compiled pattern, not the anchor's text)."""
    from klc.recipes import _any_loop
    from klc.rule import load_rules_text

    text = (f'rule r {{\n  kind: skill\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n  rewrite replace: ```\n{anchor}\n  ```\n}}\n")
    assert _any_loop(load_rules_text(text, "t.rule")[0]) is any_loop
