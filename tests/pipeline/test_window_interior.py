"""The window_interior lineage (bench/lineages/window_interior) and its skill: the
compile-only walk (the interior fast path taken back to the clipped loops), and the learned
skill on the transfer set's 3 x 3 box blur (bench/transfer/blur_3x3.cu, which no lineage
walks): the interior path added once (its own border loops are not split again), compiled by
NVRTC here and verified against the original on a GPU, border pixels and images narrower
than the window included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench/lineages/window_interior/expert.cu"
BLUR = ROOT / "bench/transfer/blur_3x3.cu"


@pytest.fixture(scope="module")
def skill(tmp_path_factory: pytest.TempPathFactory) -> Learned:
    d = tmp_path_factory.mktemp("window_interior")
    write_lineage(walk(EXPERT, ROOT / "passes", stages=("compile",)), d)
    data = json.loads((d / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "window_interior_to_clipped", "remove_const_param"]
    learned = {item.rule.name: item for item in learn([d], ROOT / "passes")}
    return learned["clipped_window_to_interior_path"]


def blur_interior(skill: Learned) -> bytes:
    src = BLUR.read_bytes()
    unit = parse_bytes(src, str(BLUR))
    out = apply_rules(unit, [skill.rule], {}, spec_of(unit))
    assert out.source != src
    return out.source


def test_blur_gets_its_interior_path_once(skill: Learned) -> None:
    from klc.gate import gate

    out = blur_interior(skill)
    text = " ".join(out.decode().split())
    assert "if (y >= 1 && y < H - 1 && x >= 1 && x < W - 1) { for (int yy = y - 1; " \
        "yy <= y + 1; yy++) { for (int xx = x - 1; xx <= x + 1; xx++) {" in text
    assert "} else { for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {" in text
    # the border loops it keeps are an else branch: the skill does not split them again
    unit = parse_bytes(out, str(BLUR))
    sites = find_sites(unit, [skill.rule], {}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "else branch" in sites[0].reason
    rec = gate(out, str(BLUR), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_a_radius_known_only_at_run_time_is_refused(skill: Learned) -> None:
    text = BLUR.read_text().replace("int H, int W) {", "int H, int W, int r) {")
    text = text.replace("y - 1, 0)", "y - r, 0)").replace("y + 1, H - 1)", "y + r, H - 1)")
    text = text.replace("x - 1, 0)", "x - r, 0)").replace("x + 1, W - 1)", "x + r, W - 1)")
    text = text.replace("  - {name: W, value: W}\n", "  - {name: W, value: W}\n"
                        "  - {name: r, value: 1}\n")
    unit = parse_bytes(text.encode(), "b.cu")
    sites = find_sites(unit, [skill.rule], {}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok
    assert "is not a compile-time constant" in sites[0].reason, sites[0].reason


@pytest.mark.gpu
def test_blur_interior_path_verifies_on_the_gpu(skill: Learned) -> None:
    """The gate's verify at every verify size: 64 x 256, 37 x 101 and 1 x 2 (no interior
    pixel at all: every pixel takes the border loops)."""
    from klc.gate import gate

    rec = gate(blur_interior(skill), str(BLUR), reference=BLUR.read_bytes(),
               reference_path=str(BLUR), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_an_interior_test_off_by_one_is_wrong() -> None:
    """What the skill's condition guards: an interior that starts at y >= 0 reads row -1;
    the gate finds the written-out rewrite wrong (or faulting)."""
    from klc.gate import gate

    good = BLUR.read_text()
    bad = good.replace(
        "    for (int yy = max(y - 1, 0);",
        "    if (y >= 0 && y < H && x >= 1 && x < W - 1) {\n"
        "        for (int yy = y - 1; yy <= y + 1; yy++) { for (int xx = x - 1; xx <= x + 1;"
        " xx++) { sum += img[yy * W + xx]; count++; } }\n"
        "    } else\n    for (int yy = max(y - 1, 0);", 1)
    assert bad != good
    rec = gate(bad.encode(), "bad.cu", reference=good.encode(), reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason
