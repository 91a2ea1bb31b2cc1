"""bench/experts: the frozen manifest of third-party experts, and the script that takes each
expert's pieces out of the pinned corpus (here a corpus folder written by the test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "experts"))

import materialize  # noqa: E402

SCRIPT = ROOT / "bench" / "experts" / "materialize.py"

SOURCE = b"""#pragma once
#define LANES 32
#define STEP_LOOP(i, n) \\
    for (int i = threadIdx.x; i < (n); i += blockDim.x)

namespace lib {
template <typename T, int N>
__device__ T lane_sum(T* v) {
    for (int m = 16; m > 0; m >>= 1) v[0] += __shfl_xor_sync(0xffffffffu, v[0], m);
    return v[0];
}

__global__ void scale(float* x, float a, int n) { STEP_LOOP(i, n) x[i] *= a; }
__global__ void scale(double* x, double a, int n) { STEP_LOOP(i, n) x[i] *= a; }

template <typename T>
__global__ void spec_only(T* x);

template <>
__global__ void spec_only<float>(float* x) { x[threadIdx.x] = 1.0f; }
}  // namespace lib
"""

ENTRY = """experts:
  - name: lib_scale
    category: element-wise
    package: lib
    version: "1.0"
    file: src/k.cuh
    kernel: scale
    take: [LANES, STEP_LOOP, "scale#1"]
    spec:
      kernel: scale
      sizes: {n: 1024}
      args:
        - {name: x, shape: [n], role: inout}
        - {name: a, value: 2}
        - {name: n, value: n}
      grid: [4]
      block: [256]
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus" / "lib-1.0" / "src"
    root.mkdir(parents=True)
    (root / "k.cuh").write_bytes(SOURCE)
    return tmp_path / "corpus"


def test_pieces_finds_functions_overloads_templates_and_macros() -> None:
    found = materialize.pieces(SOURCE)
    assert len(found["scale"]) == 2 and len(found["spec_only"]) == 2
    a, b = found["scale"][1]
    assert SOURCE[a:b].startswith(b"__global__ void scale(double* x")
    a, b = found["lane_sum"][0]
    assert SOURCE[a:b].startswith(b"template <typename T, int N>")  # the template line too
    a, b = found["STEP_LOOP"][0]
    assert SOURCE[a:b].endswith(b"i += blockDim.x)")  # the continuation line too
    a, b = found["spec_only"][1]
    assert SOURCE[a:b].startswith(b"template <>\n__global__ void spec_only<float>")


def test_materialize_writes_the_pieces_and_the_spec(corpus: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(ENTRY)
    experts = materialize.load_manifest(manifest)
    [path] = materialize.materialize(experts, corpus, tmp_path / "out")
    text = path.read_text()
    assert text.startswith("/* klc-spec\nkernel: scale\n")
    assert "#define LANES 32" in text and "scale(double* x, double a" in text
    assert "scale(float* x" not in text  # only the overload asked for
    record = (path.parent / "SOURCE").read_text()
    assert record.startswith("lib==1.0 src/k.cuh\n") and "scale#1 sha256 " in record
    from klc.cuda.parse import parse_bytes
    from klc.spec import check_spec, load_spec

    data = path.read_bytes()
    check_spec(load_spec(data, str(path)), parse_bytes(data, str(path)))  # a spec that fits


@pytest.mark.parametrize("text,message", [
    ("experts: [\n  {name: a b}\n", "m.yaml:3:1: not YAML"),
    ("experts: {}\n", "a mapping with a list 'experts'"),
    (ENTRY.replace("    take:", "    taek:"), "unknown field 'taek'"),
    (ENTRY + ENTRY.split("experts:\n", 1)[1], "name 'lib_scale' given twice"),
    (ENTRY.replace('"scale#1"', '"scale#5"'), "has 2 definitions of 'scale', not #5"),
    (ENTRY.replace("LANES,", "NO_SUCH,"), "src/k.cuh defines no 'NO_SUCH'"),
    (ENTRY.replace("package: lib", "package: gone"), "not in the corpus"),
])
def test_bad_manifests_are_one_line_and_exit_2(corpus: Path, tmp_path: Path, text: str,
                                               message: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(SCRIPT), "--manifest", str(manifest), "--corpus",
                        str(corpus), "--out", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not any(out.rglob("expert.cu"))


def test_the_committed_set_is_frozen_at_25_spread_over_the_kinds() -> None:
    experts = materialize.load_manifest(materialize.DEFAULT_MANIFEST)
    assert len(experts) >= 25 and len({e.name for e in experts}) == len(experts)
    assert len({e.package for e in experts}) >= 4
    kinds = " ".join(e.category for e in experts)
    for kind in ("layer norm", "RMS norm", "softmax", "reduction", "element-wise",
                 "transpose", "permute", "GEMV", "embedding", "histogram", "attention"):
        assert kind in kinds, kind


WALK = ROOT / "bench" / "experts" / "walk.py"


def test_walk_tabulates_recorded_walks(tmp_path: Path) -> None:
    from klc.lineage import walk, write_lineage

    manifest = tmp_path / "m.yaml"
    manifest.write_text(ENTRY)
    kernel = tmp_path / "lib_scale.cu"
    kernel.write_text(
        "/* klc-spec\nkernel: scale\nsizes: {n: 1024}\nargs:\n"
        "  - {name: x, shape: [n], role: inout}\n  - {name: a, value: 2}\n"
        "  - {name: n, value: n}\ngrid: [4]\nblock: [256]\n*/\n"
        "__global__ void scale(float* __restrict__ x, float a, int n) {\n"
        "    const float4* x4 = reinterpret_cast<const float4*>(x);\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n / 4) {\n        float4 v = x4[i];\n"
        "        x[4 * i] = a * v.x + __expf(v.y);\n    }\n}\n")
    lin = walk(kernel, [ROOT / "passes", ROOT / "passes" / "warp_sums"], stages=("compile",))
    write_lineage(lin, tmp_path / "walks" / "lib_scale" / "walk")
    md = tmp_path / "t.md"
    r = subprocess.run([sys.executable, str(WALK), "--manifest", str(manifest), "--from-walks",
                        str(tmp_path / "walks"), "--markdown", str(md)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "1 of 1 walk at least 2 structural steps" in r.stdout
    text = md.read_text()
    # the alias read and the fast exp are structural; __restrict__ is not
    assert "| lib_scale | 3 | 2 | 0 |" in text
    assert "lib_scale: fast_exp_to_precise, devectorize_const_float4_alias, remove_restrict" \
        in text


@pytest.mark.parametrize("args,message", [
    (["--from-walks", "/nonexistent/walks"], "no such folder"),
    (["--only", "no_such_expert"], "no expert 'no_such_expert'"),
    (["--experts", "/nonexistent/x", "--only", "ds_gelu"], "not materialised"),
])
def test_walk_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    r = subprocess.run([sys.executable, str(WALK), *args], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
