"""The gate on a machine without a GPU: real NVRTC compiles, the resource report, the cache,
compile errors mapped to the file, bad input (exit 2), the no-GPU skip, the isolated child
runner, and the host-side checks of verify and SOL (plain NumPy)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes, read_source
from klc.errors import KlcError
from klc.gate import default_verify_sizes, gate, gpu_status
from klc.gate.child import run_process
from klc.gate.compile import CompileResult, check_arch, compile_unit, map_log, parse_ptxas
from klc.gate.profile import summarize
from klc.gate.sol import floor_seconds, judge
from klc.gate.verify import (
    GUARD_BYTE,
    compare,
    guard_damage,
    make_data,
    poison,
    to_float64,
    unwritten_mask,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bench" / "examples"
DATA = Path(__file__).resolve().parents[1] / "data" / "gate"
NO_GPU = gpu_status()[0] is None


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
        yield tmp_path / "cache"


def compile_file(path: Path, names: tuple[str, ...] = (), arch: str = "sm_90"
                 ) -> CompileResult:
    return compile_unit(parse_bytes(read_source(path), str(path)), arch=arch,
                        name_expressions=names)


# -- compile --------------------------------------------------------------------------


def test_compile_reports_resources() -> None:
    res = compile_file(EXAMPLES / "reduce_sum.cu", ("reduce_sum<256>",))
    assert res.ok and res.cubin_path and Path(res.cubin_path).read_bytes()[:4] == b"\x7fELF"
    assert res.lowered["reduce_sum<256>"].startswith("_Z")  # C++-mangled, found by NVRTC
    r = res.resources["reduce_sum<256>"]
    assert r.registers and r.registers > 0
    assert r.static_smem == 256 * 4  # __shared__ float s[BLOCK]
    assert (r.spill_stores, r.spill_loads) == (0, 0)
    assert r.barriers == 1


def test_compile_reports_spills() -> None:
    src = b"""extern "C" __global__ void __launch_bounds__(1024, 2) spill(float* out, int k) {
    float acc[256];
    for (int i = 0; i < 256; ++i) acc[i] = out[(i * k) & 1023];
    float s = 0;
    for (int i = 0; i < 256; ++i) s += acc[(i * k) & 255] * acc[i];
    out[threadIdx.x] = s;
}
"""
    res = compile_unit(parse_bytes(src, "spill.cu"), arch="sm_90")
    assert res.ok
    r = res.resources["spill"]
    assert r.stack_frame >= 1024  # the array went to local memory


def test_cache_hit_and_keys(_cache: Path) -> None:
    first = compile_file(EXAMPLES / "saxpy.cu", ("saxpy",))
    again = compile_file(EXAMPLES / "saxpy.cu", ("saxpy",))
    assert (first.cached, again.cached) == (False, True)
    assert again.key == first.key and again.resources == first.resources
    other = compile_file(EXAMPLES / "saxpy.cu", ("saxpy",), arch="sm_80")
    assert other.key != first.key and not other.cached
    assert len(list((_cache / "modules").glob("*.cubin"))) == 2


def test_host_code_is_removed_and_lines_kept(tmp_path: Path) -> None:
    src = b"""#include <cstdio>
#include <cuda_runtime.h>
__global__ void twice(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
int main() {
    float* d;
    cudaMalloc(&d, 1024);
    twice<<<4, 256>>>(d, 1024);
    printf("done\\n");
    return undefined_on_purpose;
}
"""
    res = compile_unit(parse_bytes(src, "host.cu"), arch="sm_90", name_expressions=("twice",))
    assert res.ok, res.error
    assert "host function main at 7:1" in res.removed
    assert "#include <cstdio> at 1:1" in res.removed


def test_compile_error_maps_to_file_line_col(tmp_path: Path) -> None:
    path = tmp_path / "broken.cu"
    src = read_source(EXAMPLES / "saxpy.cu").replace(b"y[i] = a * x[i] + y[i];",
                                                     b"y[i] = a * x[i] + yy[i];")
    path.write_bytes(src)
    line = src[: src.index(b"yy[i]")].count(b"\n") + 1
    col = src.index(b"yy[i]") - src.rfind(b"\n", 0, src.index(b"yy[i]"))
    rec = gate(src, str(path))
    assert rec.verdict == "failed"
    assert f"{path}:{line}:{col}: error: identifier \"yy\" is undefined" in rec.reason
    assert rec.stages["verify"].status == "skipped"
    assert main(["gate", str(path)]) == 1


def test_map_log_without_caret() -> None:
    log = 'k.cu(3): warning #177-D: variable "q" was declared but never referenced\n'
    assert map_log(log, "k.cu", "dir/k.cu", b"a\nb\nint q;\n").startswith(
        "dir/k.cu:3: warning #177-D")


def test_parse_ptxas() -> None:
    log = """ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
ptxas info    : Function properties for _Z1kPf
ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]
"""
    r = parse_ptxas(log)["_Z1kPf"]
    assert (r.registers, r.stack_frame, r.spill_stores, r.spill_loads) == (255, 16, 8, 4)
    assert (r.static_smem, r.const_mem, r.barriers) == (2048, 368, 1)


@pytest.mark.parametrize(("arch", "ok"), [("sm_90", "sm_90"), ("90", "sm_90"),
                                          ("SM_90a", "sm_90a"), ("sm_80", "sm_80")])
def test_check_arch(arch: str, ok: str) -> None:
    assert check_arch(arch) == ok


@pytest.mark.parametrize(("arch", "needle"), [
    ("sm_1000", "is not known to NVRTC"), ("compute_90", "needs machine code"),
    ("hopper", "is not an arch like sm_90"),
])
def test_bad_arch(arch: str, needle: str) -> None:
    with pytest.raises(KlcError, match=needle):
        check_arch(arch)


# -- the CLI and bad input --------------------------------------------------------------


def test_cli_bad_arch_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", str(EXAMPLES / "saxpy.cu"), "--arch", "sm_12"]) == 2
    err = capsys.readouterr().err
    assert "arch 'sm_12' is not known to NVRTC" in err and "Traceback" not in err


@pytest.mark.parametrize(("old", "new", "needle"), [
    (b"  - {name: n, value: n}\n", b"", "no entry for parameter 'n' (int) of saxpy"),
    (b"{name: x, shape: [n], role: in, init: normal}",
     b"{name: x, shape: [n], role: in, init: normal, type: int*}",
     "argument x: the spec says type 'int*'"),
    (b'grid: ["ceil_div(n, 256)"]', b'grid: ["ceil_div(m, 256)"]',
     "grid refers to unknown size 'm' (sizes: n)"),
    (b"kernel: saxpy", b"kernel: saxpy_v2", "kernel 'saxpy_v2' is not defined in this file"),
])
def test_cli_bad_spec_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: bytes,
                             new: bytes, needle: str) -> None:
    src = read_source(EXAMPLES / "saxpy.cu")
    assert old in src
    path = tmp_path / "saxpy.cu"
    path.write_bytes(src.replace(old, new))
    assert main(["gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and f"{path}:" in err and "Traceback" not in err, err


def test_cli_missing_file_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "no/such.cu"]) == 2
    assert "no/such.cu: no such file" in capsys.readouterr().err


def test_cli_unknown_stage_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", str(EXAMPLES / "saxpy.cu"), "--stages", "compile,fly"]) == 2
    assert "unknown gate stage 'fly'" in capsys.readouterr().err


def test_reference_without_spec_is_bad_input(tmp_path: Path) -> None:
    ref = tmp_path / "ref.cu"
    ref.write_bytes(b"__global__ void k(float* x) { x[0] = 1; }\n")
    with pytest.raises(KlcError, match="the reference has no klc-spec block"):
        gate(read_source(EXAMPLES / "saxpy.cu"), "saxpy.cu", reference=ref.read_bytes(),
             reference_path=str(ref))


def test_incompatible_candidate_fails_without_gpu() -> None:
    """Specs that do not fit each other are found when planning, before any GPU work."""
    rec = gate(read_source(EXAMPLES / "saxpy.cu"), "saxpy.cu",
               reference=read_source(DATA / "axpy.cu"), reference_path="axpy.cu")
    assert rec.verdict == "failed"
    assert "takes 4 arguments, the reference 5" in rec.stages["verify"].reason


@pytest.mark.skipif(not NO_GPU, reason="checks the message given where there is no GPU")
def test_no_gpu_compiles_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    rec = gate(read_source(DATA / "axpy_coarsened.cu"), "axpy_coarsened.cu",
               reference=read_source(DATA / "axpy.cu"), reference_path="axpy.cu")
    assert rec.verdict == "compiled" and not rec.passed
    assert rec.stages["compile"].status == "passed"
    for s in ("verify", "profile"):
        assert rec.stages[s].status == "skipped"
        assert "no GPU" in rec.stages[s].reason
    assert rec.stages["verify"].data["planned_cases"] == 6  # 2 sizes x 3 seeds
    assert "were skipped because there is no GPU" in rec.reason
    assert main(["gate", str(DATA / "axpy.cu"), "--json"]) == 0
    assert '"verdict": "compiled"' in capsys.readouterr().out


def test_file_without_spec_compiles_and_says_why(tmp_path: Path) -> None:
    src = b"template <int N> __global__ void k(float* x) { x[threadIdx.x] = N; }\n" \
          b"extern \"C\" __global__ void c(float* x) { x[0] = 2; }\n"
    rec = gate(src, str(tmp_path / "nospec.cu"))
    assert rec.stages["compile"].status == "passed"
    assert "c" in rec.stages["compile"].data["resources"]
    assert "no klc-spec block" in rec.stages["verify"].reason
    assert rec.verdict == "compiled"


def test_record_json_round_trip() -> None:
    import json

    rec = gate(read_source(EXAMPLES / "saxpy.cu"), "saxpy.cu", stages=("compile",))
    data = json.loads(json.dumps(rec.to_json()))
    assert data["source_hash"] == rec.source_hash and len(data["source_hash"]) == 64
    assert data["options"][0] == "-arch=sm_90" or not NO_GPU
    assert data["stages"]["compile"]["resources"]["saxpy"]["registers"] > 0
    assert set(data["stages"]) == {"compile"} and data["verdict"] == "passed"


# -- the isolated child -----------------------------------------------------------------


def _script(tmp_path: Path, body: str) -> list[str]:
    p = tmp_path / "child.py"
    p.write_text("import os, sys, time\nprog = open(sys.argv[1], 'a', buffering=1)\n" + body)
    return [sys.executable, str(p), str(tmp_path / "progress")]


def test_child_hang_is_killed_and_step_named(tmp_path: Path) -> None:
    argv = _script(tmp_path, "prog.write('verify n=5: candidate run\\n')\n"
                             "os.fork() or time.sleep(600)\ntime.sleep(600)\n")
    out = run_process(argv, 1.5, tmp_path / "progress")
    assert out.timed_out and out.elapsed_s < 30
    msg = out.describe(1.5)
    assert "timed out after 1.5 s during: verify n=5: candidate run" in msg


def test_child_crash_is_named(tmp_path: Path) -> None:
    argv = _script(tmp_path, "prog.write('loading candidate module\\n')\n"
                             "sys.stderr.write('boom\\n'); sys.stderr.flush(); os.abort()\n")
    out = run_process(argv, 30, tmp_path / "progress")
    assert not out.timed_out and out.returncode is not None and out.returncode < 0
    msg = out.describe(30)
    assert "killed by SIGABRT during: loading candidate module: boom" in msg


def test_child_normal_exit(tmp_path: Path) -> None:
    out = run_process(_script(tmp_path, "prog.write('done\\n')\n"), 30, tmp_path / "progress")
    assert (out.returncode, out.timed_out, out.progress) == (0, False, "done")


def test_child_module_runs_without_gpu(tmp_path: Path) -> None:
    """The real worker, given a job on a machine without a GPU, fails cleanly (named step)."""
    if not NO_GPU:
        pytest.skip("needs a machine without a GPU")
    from klc.gate.child import run_isolated

    outcome = run_isolated({"stages": ["verify"], "kernels": {}, "args": []}, 60)
    assert outcome.process.returncode not in (None, 0) or not outcome.result.get("stages")
    assert "starting CUDA" in outcome.process.describe(60)


# -- verify's host-side checks ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_poison_is_a_distinctive_nan(dtype: str) -> None:
    p = poison(5, dtype)
    assert np.isnan(to_float64(p, dtype)).all()
    assert unwritten_mask(p, dtype).all()
    computed_nan = to_float64(np.array([np.nan]), "float64").astype(np.float32)
    assert not unwritten_mask(computed_nan, "float32").any()


def test_int_poison_and_guards() -> None:
    p = poison(4, "int32")
    assert unwritten_mask(p, "int32").all()
    guard = np.full(64, GUARD_BYTE, dtype=np.uint8)
    assert guard_damage(guard) is None
    guard[17] = 0
    assert guard_damage(guard) == 17


def test_make_data_never_zeros_and_deterministic() -> None:
    for kind in ({"kind": "normal"}, {"kind": "uniform", "args": [-1, 1]},
                 {"kind": "randint", "args": [1, 9]}, {"kind": "range"}):
        a = make_data(kind, 1000, "float32", np.random.default_rng(3))
        b = make_data(kind, 1000, "float32", np.random.default_rng(3))
        assert np.array_equal(a, b) and np.count_nonzero(a) > 900
    ints = make_data({"kind": "normal"}, 1000, "int32", np.random.default_rng(1))
    assert ints.dtype == np.int32 and len(np.unique(ints)) > 10


def test_compare_passes_reordered_sums() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 4096)).astype(np.float32)
    ref = x.sum(axis=1, dtype=np.float32)
    cand = x[:, ::-1].reshape(256, 64, 64).sum(axis=2).sum(axis=1).astype(np.float32)
    assert not np.array_equal(ref, cand)  # really reordered
    assert compare("partial", cand, ref, "float32", 1, (1e-4, 1e-6)) is None


def test_compare_catches_off_by_one_and_unwritten() -> None:
    rng = np.random.default_rng(1)
    ref = rng.standard_normal(1000).astype(np.float32)
    shifted = np.roll(ref, 1)
    m = compare("z", shifted, ref, "float32", 1, (1e-4, 1e-6))
    assert m is not None and m.kind == "mismatch" and m.index == 0 and "differs at z[0]" in m.detail
    tail = ref.copy()
    tail[-3:] = poison(3, "float32")
    m = compare("z", tail, ref, "float32", 1, (1e-4, 1e-6))
    assert m is not None and m.kind == "unwritten" and m.index == 997 and m.count == 3
    vec = ref.copy()
    vec[5] += 1
    m = compare("v", vec, ref, "float32", 4, (1e-4, 1e-6))
    assert m is not None and "v[1].y" in m.detail
    nan = ref.copy()
    nan[7] = np.nan
    m = compare("z", nan, ref, "float32", 1, (1e-4, 1e-6))
    assert m is not None and m.kind == "nan" and m.index == 7


def test_compare_integers_exactly() -> None:
    a = np.arange(10, dtype=np.int32)
    assert compare("i", a, a.copy(), "int32", 1, (0, 0)) is None
    b = a.copy()
    b[4] = 5
    m = compare("i", b, a, "int32", 1, (0, 0))
    assert m is not None and m.index == 4


def test_default_verify_sizes_include_a_ragged_one() -> None:
    sizes = default_verify_sizes({"n": 67108864}, 256)
    assert len(sizes) == 2 and sizes[0]["n"] % 256 == 0 and sizes[1]["n"] % 256 != 0
    assert all(s["n"] <= 1 << 20 for s in sizes)
    two = default_verify_sizes({"m": 4096, "k": 4096}, 128)
    assert any(v % 128 for v in two[1].values()) and max(two[0].values()) <= 1024
    small = default_verify_sizes({"n": 100}, 256)
    assert all(s["n"] <= 100 for s in small)


# -- profile and SOL arithmetic ---------------------------------------------------------


def test_summarize() -> None:
    t = summarize([float(x) for x in range(1, 101)], flushed=True)
    assert t.median_ms == 50.5 and t.min_ms == 1 and t.runs == 100
    assert t.p10_ms < t.median_ms < t.p90_ms and 0 < t.spread < 2


def test_sol_floor_and_impossible() -> None:
    figures = {"bandwidth_Bps": 4e12, "peaks_flops": {"fp32": 60e12}}
    floor = floor_seconds(12 * 2**26, 2 * 2**26, figures, "fp32")
    assert floor["bound"] == "memory" and floor["floor_s"] == pytest.approx(12 * 2**26 / 4e12)
    ok = judge(floor["floor_s"] / 0.8, floor)
    assert ok["pct_of_sol"] == pytest.approx(80) and not ok["impossible"]
    assert ok["headroom"] == pytest.approx(1.25)
    too_fast = judge(floor["floor_s"] * 0.5, floor)
    assert too_fast["impossible"]
    compute = floor_seconds(1e6, 1e15, figures, "fp32")
    assert compute["bound"] == "compute"


def test_sol_launch_latency_term() -> None:
    """A kernel that moves 16 KB in 12.7 us is launch-bound: its floor is the measured
    launch latency, not 4 ns of bandwidth, so it is not "0% of SOL" and the budget split
    does not treat it as the file with the most headroom."""
    from klc.optimize.headroom import regime, split_budget

    figures = {"bandwidth_Bps": 4e12, "peaks_flops": {"fp32": 60e12}, "launch_s": 2.54e-6}
    floor = floor_seconds(16384, 0, figures, "fp32")
    assert floor["bound"] == "launch" and floor["floor_s"] == pytest.approx(2.54e-6)
    assert floor["work_s"] == pytest.approx(16384 / 4e12)
    small = judge(12.7e-6, floor)
    assert small["pct_of_sol"] == pytest.approx(20.0) and small["headroom"] == pytest.approx(5)
    assert not judge(2.0e-6, floor)["impossible"]  # under the launch term: noise, not fraud
    assert judge(floor["work_s"] * 0.5, floor)["impossible"]  # under the work's floor
    without = judge(12.7e-6, floor_seconds(16384, 0, {**figures, "launch_s": None}, "fp32"))
    assert without["pct_of_sol"] < 0.1  # what the floor said before the term
    # a memory-bound kernel keeps its bandwidth floor
    big = floor_seconds(12 * 2**26, 0, figures, "fp32")
    assert big["bound"] == "memory" and big["floor_s"] == pytest.approx(12 * 2**26 / 4e12)
    assert regime(small["pct_of_sol"]) == "far"
    shares = split_budget(10, {"launch_bound.cu": small["pct_of_sol"], "slow.cu": 2.0})
    assert shares["slow.cu"] > shares["launch_bound.cu"]


def test_cache_dir_env(_cache: Path) -> None:
    from klc.gate.compile import cache_dir

    assert cache_dir() == Path(os.environ["KLC_CACHE_DIR"]) == _cache
