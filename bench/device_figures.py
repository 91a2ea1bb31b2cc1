"""The speed-of-light figures the gate measures on this device, with klc's own measuring
code (klc.gate.sol.measure): copy bandwidth, fp32/fp16/fp64/tensor peaks and the launch
latency (an empty kernel of one thread, timed between its own CUDA events as the profile times
a run). Then, as a check of the launch term, the gate's floor and % of SOL for a kernel that
moves 16 KB, timed the same way.

    python bench/device_figures.py [--json OUT] [--arch sm_90]

Needs a GPU. Prints the figures; --json writes them (bench/results/device_figures_<device>.json
holds the current ones).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from klc.gate import gpu_status  # noqa: E402
from klc.gate.compile import compile_source  # noqa: E402
from klc.gate.sol import _median_ms, device_info, floor_seconds, judge, measure, peak_source  # noqa: E402

SMALL = r"""
extern "C" __global__ void scale_small(const float* __restrict__ x, float* __restrict__ y,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--arch")
    args = ap.parse_args()
    arch, why = gpu_status()
    if arch is None:
        print(f"no GPU: {why}")
        return 2
    import cupy as cp
    import numpy as np

    target = args.arch or arch
    peaks = compile_source(peak_source(), "klc_peaks.cu", arch=target)
    if not peaks.ok:
        print(f"the ceilings' kernels do not compile: {peaks.error}")
        return 1
    info = device_info()
    figures = measure(info, peaks.cubin_path)
    small = compile_source(SMALL.encode(), "small.cu", arch=target)
    assert small.ok, small.error
    fn = cp.RawModule(path=small.cubin_path).get_function("scale_small")
    n = 2048  # 8 KB in, 8 KB out
    x = cp.arange(1, n + 1, dtype=cp.float32)
    y = cp.empty_like(x)
    ms = _median_ms(lambda: fn((n // 256,), (256,), (x, y, np.int32(n))), runs=200, warmup=20)
    assert bool(cp.all(y == 2 * x))
    floor = floor_seconds(8 * n, n, figures, "fp32")
    small_sol = judge(ms * 1e-3, floor)
    no_launch = judge(ms * 1e-3, floor_seconds(8 * n, n, {**figures, "launch_s": None}, "fp32"))
    out = {"device": info["name"], "driver": info["driver"], "figures": figures,
           "small_kernel": {"bytes": 8 * n, "median_us": ms * 1e3,
                            "pct_of_sol": small_sol["pct_of_sol"], "bound": small_sol["bound"],
                            "pct_of_sol_without_launch_term": no_launch["pct_of_sol"]}}
    print(f"device: {info['name']} (driver {info['driver']}, cc {info['cc']})")
    print(f"copy bandwidth: {figures['bandwidth_Bps'] / 1e12:.2f} TB/s "
          f"({', '.join(f'{k} {v / 1e12:.2f}' for k, v in figures['bandwidths_Bps'].items())})")
    print("peaks: " + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in
                                figures["peaks_flops"].items() if v))
    print(f"launch latency (empty kernel, CUDA events, median of 200): "
          f"{figures['launch_s'] * 1e6:.2f} us")
    print(f"a 16 KB kernel: {ms * 1e3:.2f} us, {small_sol['pct_of_sol']:.0f}% of SOL "
          f"({small_sol['bound']}-bound); without the launch term "
          f"{no_launch['pct_of_sol']:.2f}%")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
