"""Commands that would replace measured data with unmeasured data refuse unless ``--force``:
``klc lineage --out`` onto a walk measured on a GPU when this run cannot measure, and ``klc
learn`` that would turn measured verdicts into ``unmeasured``. Nothing is written when
refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from klc.cli import main

ROOT = Path(__file__).resolve().parents[2]
SPEC = ("/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
        "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: out}\n"
        "  - {name: n, value: n}\ngrid: [\"ceil_div(n, 256)\"]\nblock: [256]\n*/\n")
# two passes undo it: fast_exp_to_precise, remove_const_param
KERNEL = ("__global__ void k(const float* x, float* y, int n) {\n"
          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "    if (i < n) {\n        y[i] = __expf(x[i]);\n    }\n}\n")


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def walked(tmp_path: Path) -> tuple[Path, Path]:
    """(the expert, a compile-only walk of it written by klc lineage)."""
    expert = tmp_path / "k.cu"
    expert.write_text(SPEC + KERNEL)
    out = tmp_path / "walk"
    assert main(["lineage", str(expert), "--passes", str(ROOT / "passes"), "--stages",
                 "compile", "--out", str(out)]) == 0
    return expert, out


def test_lineage_refuses_to_replace_a_measured_walk(walked: tuple[Path, Path],
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    expert, out = walked
    data = json.loads((out / "lineage.json").read_text())
    data["gating"], data["device"] = "full", "NVIDIA H200"  # as a GPU walk records it
    data["versions"][0]["median_ms"] = 0.25
    (out / "lineage.json").write_text(json.dumps(data))
    before = files(out)
    capsys.readouterr()
    for stages in ("compile", "compile,verify"):  # compile only; verify without profile
        rc = main(["lineage", str(expert), "--passes", str(ROOT / "passes"), "--stages",
                   stages, "--out", str(out)])
        err = capsys.readouterr().err
        assert rc == 2, err
        assert err.startswith(f"klc: error: {out}/lineage.json: a walk measured on NVIDIA "
                              "H200; this run would replace its ")
        assert err.rstrip().endswith("give --force to replace it, or another --out")
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert files(out) == before
    assert main(["lineage", str(expert), "--passes", str(ROOT / "passes"), "--stages",
                 "compile", "--out", str(out), "--force"]) == 0
    assert json.loads((out / "lineage.json").read_text())["gating"] == "compile-only"
    # a walk that measured nothing is replaced without asking
    assert main(["lineage", str(expert), "--passes", str(ROOT / "passes"), "--stages",
                 "compile", "--out", str(out)]) == 0


def test_learn_refuses_to_turn_measured_skills_unmeasured(
        walked: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    _, walk = walked
    skills = tmp_path / "skills"
    shutil.copytree(ROOT / "skills", skills)  # measured on a GPU: neutral, faster, ...
    before = files(skills)
    capsys.readouterr()
    rc = main(["learn", str(walk), "--out", str(skills), "--passes", str(ROOT / "passes")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.strip() == (
        f"klc: error: --out {skills}: 2 measured skills would become unmeasured "
        "(precise_exp_to_fast (neutral), add_const_param (neutral)): 1 of the walks were "
        f"gated by compile only ({walk}); walk them again on a GPU, or give --force "
        "(nothing written)")
    assert files(skills) == before
    assert main(["learn", str(walk), "--out", str(skills), "--passes", str(ROOT / "passes"),
                 "--force"]) == 0
    assert 'verdict: "unmeasured"' in (skills / "fast_math.rule").read_text()
    # a library with nothing measured at stake: no question asked
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert main(["learn", str(walk), "--out", str(fresh), "--passes",
                 str(ROOT / "passes")]) == 0
