"""The window_interior_checked lineage (bench/lineages/window_interior_checked) and its skill:
the compile-only walk (the interior fast path of a window of checked offsets taken back to
the checked loops for every pixel), the learned checked_window_to_interior_path putting the
expert back together from its first version byte for byte, not splitting the border loops
it keeps again, and taking the checked-offsets first version of another lineage
(halo_tile_zero_fill_u8: an 8-bit mean whose window lies in an if block and whose count is
`count++`), compiled by NVRTC here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn

ROOT = Path(__file__).resolve().parents[2]
FAMILY = ROOT / "bench/lineages/window_interior_checked"
OTHER = ROOT / "bench/lineages/halo_tile_zero_fill_u8/walk/v02_remove_const_param.cu"


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Learned]:
    d = tmp_path_factory.mktemp("window_interior_checked")
    write_lineage(walk(FAMILY / "expert.cu", ROOT / "passes", stages=("compile",)), d)
    data = json.loads((d / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "window_interior_checked_to_checked", "remove_const_param"]
    learned = {item.rule.name: item for item in learn([d], ROOT / "passes")}
    return d, learned["checked_window_to_interior_path"]


def test_the_committed_walk_is_the_walk_the_passes_make(walked: tuple[Path, Learned]) -> None:
    d, _skill = walked
    for name in ("v01_window_interior_checked_to_checked.cu", "v02_remove_const_param.cu"):
        assert (d / name).read_bytes() == (FAMILY / "walk" / name).read_bytes(), name
    first = (d / "v02_remove_const_param.cu").read_text()
    assert "if (r >= 0 && r < H && c >= 0 && c < W) {" in first and "R &&" not in first


def test_the_skill_gives_the_expert_back_once(walked: tuple[Path, Learned]) -> None:
    d, skill = walked
    src = (d / "v01_window_interior_checked_to_checked.cu").read_bytes()
    unit = parse_bytes(src, "v01.cu")
    out = apply_rules(unit, [skill.rule], {}, spec_of(unit))
    assert out.source == (FAMILY / "expert.cu").read_bytes()
    # the checked loops it keeps for the border are an else branch: not split again
    again = parse_bytes(out.source, "v00.cu")
    sites = find_sites(again, [skill.rule], {}, spec_of(again))
    assert len(sites) == 1 and not sites[0].ok and "else branch" in sites[0].reason


def test_the_halo_lineages_first_version_gets_the_interior_path(
        walked: tuple[Path, Learned]) -> None:
    from klc.gate import gate

    _d, skill = walked
    unit = parse_bytes(OTHER.read_bytes(), str(OTHER))
    out = apply_rules(unit, [skill.rule], {}, spec_of(unit))
    assert out.changed, [s.reason for s in out.refused]
    text = " ".join(out.source.decode().split())
    assert "} else { for (int dy = -R; dy <= R; dy++) {" in text
    rec = gate(out.source, str(OTHER), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason
