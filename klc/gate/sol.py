"""Stage 4 of the gate: the speed-of-light floor, from the device's measured ceilings.

floor = max(bytes / copy bandwidth, flops / peak rate, launch latency). The ceilings are
measured once per device (a device-to-device copy counting bytes read plus written, the
better of cudaMemcpy and a 16-byte-per-thread copy kernel; FMA-bound kernels for fp32, fp16
and fp64; a cuBLAS half-precision matrix product for tensor cores; an empty kernel of one
thread, timed between its own CUDA events exactly as the profile times a run, for the launch
latency) and cached on disk by device name and driver, because datasheet numbers are not
what a kernel on this card can reach. With the launch term a kernel that moves a few
kilobytes is judged against what any launch costs (``bound: launch``), not against a floor
of nanoseconds that would put it at 0% of SOL and make it look far from its limit.

A candidate measured faster than ``IMPOSSIBLE_FRACTION`` of the work's floor (bytes and
flops; the launch term is left out, a time at the edge of the launch latency is noise, not
missing work) did not move the bytes or do the flops its spec claims: it is rejected.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from klc.fsutil import atomic_write
from klc.gate.compile import cache_dir
from klc.gate.profile import summarize

IMPOSSIBLE_FRACTION = 0.9
FIGURES_VERSION = 2  # 2: the launch latency

_PEAK_SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void fma_f32(float* out, float seed, int iters) {
    float a0 = seed + threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    float a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    const float m = 0.9999f, c = 0.0001f;
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int k = 0; k < 16; ++k) {
            a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
            a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
        }
    }
    float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    if (s == 12345.678f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void fma_f64(double* out, double seed, int iters) {
    double a0 = seed + threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    const double m = 0.9999, c = 0.0001;
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int k = 0; k < 16; ++k) {
            a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
        }
    }
    double s = a0 + a1 + a2 + a3;
    if (s == 12345.678) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void fma_f16(float* out, float seed, int iters) {
    __half2 a0 = __float2half2_rn(seed + threadIdx.x * 1e-3f), a1 = __hadd2(a0, a0);
    __half2 a2 = __hadd2(a1, a0), a3 = __hadd2(a2, a0), a4 = __hadd2(a3, a0);
    __half2 a5 = __hadd2(a4, a0), a6 = __hadd2(a5, a0), a7 = __hadd2(a6, a0);
    const __half2 m = __float2half2_rn(0.999f), c = __float2half2_rn(0.001f);
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int k = 0; k < 16; ++k) {
            a0 = __hfma2(a0, m, c); a1 = __hfma2(a1, m, c); a2 = __hfma2(a2, m, c);
            a3 = __hfma2(a3, m, c); a4 = __hfma2(a4, m, c); a5 = __hfma2(a5, m, c);
            a6 = __hfma2(a6, m, c); a7 = __hfma2(a7, m, c);
        }
    }
    __half2 s = __hadd2(__hadd2(__hadd2(a0, a1), __hadd2(a2, a3)),
                        __hadd2(__hadd2(a4, a5), __hadd2(a6, a7)));
    float f = __low2float(s) + __high2float(s);
    if (f == 12345.678f) out[blockIdx.x * blockDim.x + threadIdx.x] = f;
}
extern "C" __global__ void empty_launch() {}
extern "C" __global__ void copy16(const int4* __restrict__ src, int4* __restrict__ dst,
                                  long n) {
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        dst[i] = src[i];
    }
}
"""


def figures_path(device: dict[str, Any]) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{device['name']}_drv{device['driver']}").strip("_")
    return cache_dir() / "device" / f"{slug}.json"


def device_info() -> dict[str, Any]:
    import cupy as cp

    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return {
        "name": name,
        "cc": f"{props['major']}{props['minor']}",
        "sms": int(props["multiProcessorCount"]),
        "l2_bytes": int(props["l2CacheSize"]),
        "memory_bytes": int(props["totalGlobalMem"]),
        "max_threads_per_block": int(props["maxThreadsPerBlock"]),
        "max_smem_per_block_optin": int(props.get("sharedMemPerBlockOptin",
                                                  props["sharedMemPerBlock"])),
        "max_grid": [int(x) for x in props["maxGridSize"]],
        "max_block": [int(x) for x in props["maxThreadsDim"]],
        "driver": cp.cuda.runtime.driverGetVersion(),
        "runtime": cp.cuda.runtime.runtimeGetVersion(),
    }


def load_or_measure(device: dict[str, Any], cubin_for_peaks: str | None) -> dict[str, Any]:
    """The device's ceilings, from the cache or measured now (a few seconds) and cached."""
    path = figures_path(device)
    try:
        figures = json.loads(path.read_text())
        if figures.get("version") == FIGURES_VERSION:
            figures["cached"] = True
            return figures
    except (OSError, ValueError):
        pass
    import cupy as cp

    figures = measure(device, cubin_for_peaks)
    cp.get_default_memory_pool().free_all_blocks()  # the copy buffers: the job's memory now
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(figures, indent=2).encode())
    figures["cached"] = False
    return figures


def _median_ms(fn: Any, runs: int = 20, warmup: int = 3) -> float:
    import cupy as cp

    stream = cp.cuda.get_current_stream()
    for _ in range(warmup):
        fn()
    stream.synchronize()
    times = []
    for _ in range(runs):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(stream)
        fn()
        e.record(stream)
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    return summarize(times, False).median_ms


def measure(device: dict[str, Any], cubin_for_peaks: str | None) -> dict[str, Any]:
    """Measure copy bandwidth and arithmetic peaks on the current device."""
    import cupy as cp
    import numpy as np

    t0 = time.perf_counter()
    stream = cp.cuda.get_current_stream()
    nbytes = min(1 << 30, device["memory_bytes"] // 8)
    nbytes -= nbytes % 16
    src = cp.arange(nbytes // 4, dtype=cp.int32)  # never zeros
    dst = cp.empty_like(src)

    def memcpy() -> None:
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr)

    copy_ms = _median_ms(memcpy)
    bandwidths = {"memcpy": 2 * nbytes / (copy_ms * 1e-3)}
    peaks: dict[str, float | None] = {"fp32": None, "fp16": None, "fp64": None, "tensor": None}
    notes: list[str] = []
    if cubin_for_peaks is not None:
        mod = cp.RawModule(path=cubin_for_peaks)
        copy16 = mod.get_function("copy16")
        n16 = nbytes // 16
        blocks = device["sms"] * 8
        copy_k_ms = _median_ms(lambda: copy16((blocks,), (512,), (src, dst, np.int64(n16))))
        bandwidths["copy_kernel"] = 2 * nbytes / (copy_k_ms * 1e-3)
        out = cp.empty(device["sms"] * 32 * 256, dtype=cp.float64)
        grid, block, iters = device["sms"] * 32, 256, 256
        threads = grid * block
        for key, fn_name, flops_per_iter, arg in (
                ("fp32", "fma_f32", 2 * 8 * 16, np.float32(1.0)),
                ("fp16", "fma_f16", 4 * 8 * 16, np.float32(1.0)),
                ("fp64", "fma_f64", 2 * 4 * 16, np.float64(1.0))):
            kern = mod.get_function(fn_name)
            ms = _median_ms(lambda k=kern, a=arg: k((grid,), (block,), (out, a, np.int32(iters))),
                            runs=10)
            peaks[key] = threads * iters * flops_per_iter / (ms * 1e-3)
        empty = mod.get_function("empty_launch")
        launch_s = _median_ms(lambda: empty((1,), (1,), ()), runs=200, warmup=20) * 1e-3
    else:
        launch_s = None
        notes.append("peak kernels not compiled: fp32/fp16/fp64 peaks and the launch "
                     "latency unknown")
    try:
        n = 8192
        rng = cp.random.default_rng(1)
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
        c = cp.empty((n, n), dtype=cp.float16)
        ms = _median_ms(lambda: cp.matmul(a, b, out=c), runs=10)
        peaks["tensor"] = 2 * n**3 / (ms * 1e-3)
    except Exception as e:  # cuBLAS missing is a note, not a failure
        notes.append(f"tensor peak not measured: {e}")
    return {
        "version": FIGURES_VERSION,
        "device": device,
        "bandwidth_Bps": max(bandwidths.values()),
        "bandwidths_Bps": bandwidths,
        "copy_bytes": nbytes,
        "peaks_flops": peaks,
        "launch_s": launch_s,
        "notes": notes,
        "measured_in_s": time.perf_counter() - t0,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def peak_source() -> bytes:
    """The ceilings' kernels (compiled by the parent with the candidate's arch)."""
    return _PEAK_SOURCE.encode()


def floor_seconds(nbytes: float, flops: float, figures: dict[str, Any], peak: str
                  ) -> dict[str, Any]:
    """The SOL floor and which term sets it."""
    bw = figures["bandwidth_Bps"]
    rate = figures["peaks_flops"].get(peak)
    launch = figures.get("launch_s") or 0.0
    t_bytes = nbytes / bw if bw else 0.0
    t_flops = flops / rate if rate and flops else 0.0
    work = max(t_bytes, t_flops)
    bound = "memory" if t_bytes >= t_flops else "compute"
    return {
        "bytes": nbytes, "flops": flops, "peak": peak,
        "bandwidth_Bps": bw, "peak_flops": rate, "launch_s": launch or None,
        "bytes_s": t_bytes, "flops_s": t_flops, "work_s": work,
        "floor_s": max(work, launch),
        "bound": "launch" if launch > work else bound,
    }


def judge(measured_s: float, floor: dict[str, Any]) -> dict[str, Any]:
    """% of SOL, headroom, and whether the time is impossible for the claimed work (judged
    on the work's floor: bytes and flops)."""
    f = floor["floor_s"]
    work = floor.get("work_s", f)
    pct = 100.0 * f / measured_s if measured_s > 0 else 0.0
    impossible = work > 0 and measured_s < IMPOSSIBLE_FRACTION * work
    return {**floor, "measured_s": measured_s, "pct_of_sol": pct,
            "headroom": measured_s / f if f > 0 else None, "impossible": impossible}
