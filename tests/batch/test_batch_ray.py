"""``klc batch --executor ray`` on a real local Ray instance (127.0.0.1, two CPUs, started
once for the module): the same results and the same output tree as the local executor,
bad files included, with and without the gate, from the Python API and from the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_batch import (
    BROKEN,
    FAST_MATH,
    NO_MATCH,
    PLAIN,
    ROOT,
    SIGMOID,
    essence,
    fast,
    make_tree,
    tree_bytes,
)

from klc.batch import BatchConfig, BatchOptions, discover_gpus, run_batch
from klc.cli import main

ray = pytest.importorskip("ray", reason="Ray is not installed (the GPU machine has no registry)")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, num_gpus=len(discover_gpus()), include_dashboard=False,
             _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def test_ray_gives_the_local_result(local_ray: None, tmp_path: Path) -> None:
    loop = b"__global__ void k(float* y) {\n  for (int j = 0; j < 8; ++j) y[j] = 0.0f;\n}\n"
    src = make_tree(tmp_path / "src", {"a/plain.cu": PLAIN, "a/b/sig.cu": SIGMOID,
                                       "loop.cuh": loop, "none.cu": NO_MATCH,
                                       "broken.cu": BROKEN, "binary.cu": b"\0\1\2\3"})
    (src / "gone.cu").symlink_to(tmp_path / "missing.cu")
    cfg = BatchConfig.from_paths([str(ROOT / "skills")])
    local = run_batch(cfg, BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "lo")))
    remote = run_batch(cfg, BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "ro"),
                                         executor="ray"))
    assert remote.executor == "ray"
    assert essence(remote.results) == essence(local.results)
    assert remote.counts() == local.counts() and remote.counts()["rewritten"] >= 2
    assert tree_bytes(tmp_path / "ro") == tree_bytes(tmp_path / "lo")
    statuses = {Path(r.path).name: r.status for r in remote.results}
    assert statuses["broken.cu"] == "parse_failed" and statuses["binary.cu"] == "error"
    assert statuses["gone.cu"] == "error"


def test_ray_gate_and_in_place_from_the_cli(local_ray: None, tmp_path: Path) -> None:
    files = {"sig.cu": SIGMOID, "plain.cu": PLAIN, "none.cu": NO_MATCH}
    ray_tree = make_tree(tmp_path / "ray", files)
    local_tree = make_tree(tmp_path / "local", files)
    for tree, executor in ((ray_tree, "ray"), (local_tree, "local")):
        rc = main(["batch", str(tree), "--rule", FAST_MATH, "--gate", "--gate-stages", "compile",
                   "--in-place",
                   "--executor", executor, "--journal", str(tmp_path / f"{executor}.jsonl"),
                   "-j", "1", "-q", "--report", str(tmp_path / f"{executor}.json")])
        assert rc == 0
    assert tree_bytes(ray_tree) == tree_bytes(local_tree) == {
        "sig.cu": fast(SIGMOID), "plain.cu": fast(PLAIN), "none.cu": NO_MATCH}
    import json

    def verdicts(name: str) -> dict[str, object]:
        doc = json.loads((tmp_path / name).read_text())
        return {Path(f["path"]).name: (f["status"], (f["gate"] or {}).get("verdict"))
                for f in doc["files"]}

    assert verdicts("ray.json") == verdicts("local.json")
    assert verdicts("ray.json")["sig.cu"] in (("rewritten", "compiled"), ("rewritten", "passed"))


@pytest.mark.gpu
def test_ray_gate_trials_are_gpu_tasks(local_ray: None, tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"sig.cu": SIGMOID, "none.cu": NO_MATCH})
    s = run_batch(BatchConfig.from_paths([FAST_MATH], gate=True),
                  BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "out"),
                               executor="ray"))
    r = next(r for r in s.results if r.path.endswith("sig.cu"))
    assert s.gpus >= 1 and r.status == "rewritten" and r.gate is not None
    assert r.gate["verdict"] == "passed" and r.gate["stages"]["verify"]["status"] == "passed"
    assert r.gate["worker_gpu"]  # gated in a task to which Ray gave a GPU
    assert tree_bytes(tmp_path / "out") == {"sig.cu": fast(SIGMOID), "none.cu": NO_MATCH}
