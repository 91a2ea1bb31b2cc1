"""The gate's NVRTC compile finds CUDA's runtime, math and CCCL headers in pip packages, never
in a system toolkit: real NVRTC compiles of kernels that use cooperative groups, CUB, libcu++,
cuda_fp16.h / cuda_bf16.h, mma.h, cuda/pipeline and what <math.h> gives device code, in a
fresh interpreter with CUDA_PATH / CUDA_HOME unset and, where this machine lets a mount
namespace be made, /usr/local/cuda hidden under an empty tmpfs. Missing headers are named."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.gate import compile as gate_compile
from klc.gate.compile import compile_unit, header_package, include_dirs

HEADERS = Path(__file__).resolve().parents[1] / "data" / "gate" / "headers"
ROOT = Path(__file__).resolve().parents[2]
# the kernel of each file and the name expression the gate would use
KERNELS = {
    "async_pipeline.cu": "staged_copy",
    "cg_reduce.cu": "row_sum_cg",
    "cmath_std.cu": "softplus",
    "cub_block_reduce.cu": "block_max<256>",
    "half_types.cu": "scale_mixed",
    "libcudacxx.cu": "saturate",
    "math_constants.cu": "gelu_rows",
    "no_include_infinity.cu": "row_max",
    "std_mix.cu": "std_mix",
    "wmma_tile.cu": "wmma_16x16",
}
SYSTEM_ROOTS = ("/usr/local/cuda", "/opt/cuda", "/usr/include")

# Run in a fresh interpreter: compile every header kernel, report the include path used, and
# where the NVRTC library this process loaded lives.
_CHILD = r"""
import json, sys
from klc.cuda.parse import parse_bytes, read_source
from klc.gate.compile import compile_unit
out = {"results": {}}
for path, name in json.loads(sys.argv[1]).items():
    r = compile_unit(parse_bytes(read_source(path), path), arch="sm_90",
                     name_expressions=(name,), use_cache=False)
    out["results"][path] = {"ok": r.ok, "error": r.error, "include": list(r.include),
                            "lowered": r.lowered}
with open("/proc/self/maps") as f:
    out["libs"] = sorted({l.split()[-1] for l in f if "nvrtc" in l or "cudart" in l})
print(json.dumps(out))
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
        yield


def _can_hide_system_cuda() -> bool:
    if not Path("/usr/local/cuda").exists() or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs none /usr/local/cuda && test -z \"$(ls -A /usr/local/cuda)\""],
        capture_output=True, timeout=30)
    return probe.returncode == 0


def test_header_kernels_compile_from_pip_packages_only(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if "cuda" not in p.lower())
    env["KLC_CACHE_DIR"] = str(tmp_path / "child-cache")
    files = {str(HEADERS / f): name for f, name in KERNELS.items()}
    cmd = [sys.executable, "-c", _CHILD, json.dumps(files)]
    hidden = _can_hide_system_cuda()
    if hidden:  # the toolkit's folder is an empty tmpfs for the child: nothing can come from it
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               'mount -t tmpfs none /usr/local/cuda && exec "$0" "$@"', *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(out["results"]) == set(files)
    for path, r in out["results"].items():
        assert r["ok"], f"{path}: {r['error']}"
        assert r["lowered"][files[path]], path
        for d in r["include"]:
            assert not d.startswith(SYSTEM_ROOTS), (path, d)
        # CUDA's headers from the wheels, the shims from klc itself
        assert any(d.endswith(os.path.join("nvidia", "cu13", "include")) for d in r["include"])
        assert any(d.endswith(os.path.join("cu13", "include", "cccl")) for d in r["include"])
        assert r["include"][-1] == str(gate_compile.SHIM_DIR)
    assert out["libs"], "NVRTC was not loaded"
    for lib in out["libs"]:
        assert not lib.startswith(SYSTEM_ROOTS), lib
    print(f"/usr/local/cuda hidden: {hidden}")


def test_include_path_has_no_system_toolkit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_PATH", "/usr/local/cuda")
    dirs = include_dirs(("/some/kernel/folder",))
    assert dirs[-2:] == ("/some/kernel/folder", str(gate_compile.SHIM_DIR))
    assert not any(d.startswith(SYSTEM_ROOTS) for d in dirs)
    assert (Path(dirs[0]) / "cuda_fp16.h").is_file()
    assert (Path(dirs[1]) / "cub" / "block" / "block_reduce.cuh").is_file()


@pytest.mark.parametrize(("header", "package"), [
    ("cub/block/block_reduce.cuh", "nvidia-cuda-cccl"),
    ("cuda/std/type_traits", "nvidia-cuda-cccl"),
    ("cuda/pipeline", "nvidia-cuda-cccl"),
    ("cooperative_groups/reduce.h", "nvidia-cuda-runtime"),
    ("cuda_bf16.h", "nvidia-cuda-runtime"),
    ("mma.h", "nvidia-cuda-runtime"),
    ("crt/mma.h", "nvidia-cuda-crt"),
    ("torch/extension.h", None),
])
def test_header_package(header: str, package: str | None) -> None:
    assert header_package(header) == package


def test_missing_cccl_header_is_named_with_its_package(tmp_path: Path) -> None:
    src = b"#include <cub/block/block_reduc.cuh>\n__global__ void k(float* y) { y[0] = 1; }\n"
    path = tmp_path / "typo.cu"
    path.write_bytes(src)
    r = compile_unit(parse_bytes(src, str(path)), arch="sm_90")
    assert not r.ok
    first = r.error.splitlines()[0]
    assert first.startswith(f"{path}:1:")
    assert "missing header <cub/block/block_reduc.cuh>" in first
    assert "nvidia-cuda-cccl" in first


def test_missing_runtime_headers_name_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment without the CUDA header wheels: the error says which header and which
    package, instead of NVRTC's bare "cannot open source file"."""
    monkeypatch.setattr(gate_compile, "cuda_include_dirs", lambda: ())
    src = read_source(HEADERS / "half_types.cu")
    r = compile_unit(parse_bytes(src, "half_types.cu"), arch="sm_90", use_cache=False)
    assert not r.ok
    assert "missing header <cuda_fp16.h>: it comes from the pip package nvidia-cuda-runtime" \
        in r.error.splitlines()[0]


def test_missing_foreign_header_says_what_is_searched() -> None:
    src = b"#include <torch/extension.h>\n__global__ void k(float* y) { y[0] = 1; }\n"
    r = compile_unit(parse_bytes(src, "ext.cu"), arch="sm_90")
    assert not r.ok
    first = r.error.splitlines()[0]
    assert first.startswith("ext.cu:1:")
    assert "missing header <torch/extension.h>: no CUDA package has it" in first


def test_math_constants_have_their_values(tmp_path: Path) -> None:
    """The shim's constants are the C library's: a static_assert on each compiles."""
    src = b"""#include <cmath>
#include <cfloat>
static_assert(M_PI > 3.14159265358979 && M_PI < 3.1415926535898, "pi");
static_assert(M_E > 2.71828182845904 && M_E < 2.71828182845905, "e");
static_assert(M_SQRT2 * M_SQRT2 > 1.9999999999 && M_SQRT1_2 * M_SQRT2 < 1.0000000001, "r2");
static_assert(INFINITY > FLT_MAX && -INFINITY < -FLT_MAX && HUGE_VALF == INFINITY, "inf");
static_assert(HUGE_VAL > DBL_MAX, "huge");
static_assert(!(NAN == NAN), "nan");
__global__ void k(float* y) { y[0] = M_LN2 + M_PI_2; }
"""
    r = compile_unit(parse_bytes(src, "consts.cu"), arch="sm_90")
    assert r.ok, r.error
    bad = src.replace(b"M_PI < 3.1415926535898", b"M_PI < 3.14")
    r = compile_unit(parse_bytes(bad, "consts.cu"), arch="sm_90")
    assert not r.ok and "static assertion failed" in r.error


@pytest.mark.parametrize("name", ["no_include_infinity.cu", "math_constants.cu",
                                  "cmath_std.cu", "half_types.cu"])
def test_libclang_sees_what_nvcc_sees(name: str) -> None:
    """klc's libclang facts (klc/cuda_stub.h) know M_PI and INFINITY without an include, as
    nvcc does, and agree with the host's <math.h> where a kernel includes it (no
    redefinition: no diagnostic at all)."""
    from klc.cuda.parse import parse_file

    unit = parse_file(HEADERS / name)
    assert unit.facts.diagnostics == []
    assert [d.spelling for d in unit.facts.tu.diagnostics] == []
