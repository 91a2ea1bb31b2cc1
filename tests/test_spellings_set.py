"""The public-spellings set (bench/spellings/): first versions written here in the spellings
public naive kernels use, checked without a GPU, and on a GPU against themselves.

Without a GPU: every file parses with no syntax problem, holds the one kernel its spec
names, its spec loads and fits the signature, it gives verify sizes (one of them ragged or
tiny), and it compiles with NVRTC through the gate's compile stage (sm_90). The README
lists every file. On a GPU (``pytest -m gpu tests/test_spellings_set.py``): each kernel
passes the gate against itself (deterministic, every output written, inside its buffers).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from klc.cuda.parse import parse_file, read_source
from klc.gate import gate
from klc.spec import check_spec, load_spec

ROOT = Path(__file__).parent.parent
SPELLINGS = ROOT / "bench" / "spellings"
FILES = sorted(p.name for p in SPELLINGS.glob("*.cu"))


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        yield


def test_the_set_is_there_and_listed() -> None:
    assert len(FILES) >= 5
    readme = (SPELLINGS / "README.md").read_text()
    for name in FILES:
        assert f"`{name}`" in readme, f"{name} is not in bench/spellings/README.md"


@pytest.mark.parametrize("name", FILES)
def test_parses_with_one_kernel_a_fitting_spec_and_verify_sizes(name: str) -> None:
    path = SPELLINGS / name
    unit = parse_file(path)
    assert unit.problems == []
    assert len(unit.kernels) == 1
    spec = load_spec(read_source(path), str(path))
    assert spec is not None, f"{name}: no klc-spec block"
    bound = check_spec(spec, unit)
    assert bound.function_name == unit.kernels[0].name
    assert [a.spec.name for a in bound.args] == [p.name for p in unit.kernels[0].params]
    assert len(spec.verify_sizes) >= 2, f"{name}: give verify sizes, one ragged or tiny"


@pytest.mark.parametrize("name", FILES)
def test_compiles_with_nvrtc(name: str) -> None:
    path = SPELLINGS / name
    rec = gate(read_source(path), str(path), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("name", FILES)
def test_passes_the_gate_against_itself(name: str) -> None:
    path = SPELLINGS / name
    rec = gate(read_source(path), str(path))
    assert rec.verdict == "passed", rec.reason
