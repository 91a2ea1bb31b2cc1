"""An output element holding the poison's value is not "unwritten" unless the kernel left
it: a correct kernel may write 0xA5 (an ``unsigned char`` mean of 165), for every dtype. The
gate runs a kernel that left any element at the poison again from a second poison; only an
element holding each run's poison is unwritten.

Kernels written here write every byte value (and, for floats, the poison NaN's own bits).
The job runner is the real one over the NumPy device of test_gate_worker; the CUDA kernels
are compiled with NVRTC here and verified on a GPU by the ``gpu`` tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_gate_worker import FAST, NumpyDevice

from klc.gate import _build_job, _read_side, gate
from klc.gate.runner import JobRunner
from klc.gate.session import Session
from klc.gate.verify import (
    poison,
    poison_word,
    storage_dtype,
    unwritten_after,
    unwritten_mask,
)

# the C type of each dtype the gate allocates
CTYPES = {"int8": "char", "uint8": "unsigned char", "int16": "short", "int32": "int",
          "float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float",
          "float64": "double"}


def _spec(dtype: str, name: str, n: int = 8192) -> bytes:
    return f"""/* klc-spec
kernel: {name}
sizes: {{n: {n}}}
verify_sizes: [{{n: 4096}}, {{n: 1000}}]
args:
  - {{name: x, shape: [n], role: in, init: "randint(0, 1000)"}}
  - {{name: z, shape: [n], role: out}}
  - {{name: n, value: n}}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void {name}(const int* x, {CTYPES[dtype]}* z, int n) {{}}
""".encode()


def _every_byte(z: np.ndarray, dtype: str) -> None:
    """z's bytes run through every value (0xA5 and 0x5A among them, each many times), and
    z[7] is the first poison's own bits, z[9] the second's: values a correct kernel wrote."""
    b = z.view(np.uint8)
    b[:] = np.arange(b.size, dtype=np.uint64) % 256
    u = z.view(np.dtype(f"u{storage_dtype(dtype).itemsize}"))
    u[7] = poison_word(dtype)
    u[9] = poison_word(dtype, True)


def every_byte(dtype: str) -> Callable[..., None]:
    def kernel(x: np.ndarray, z: np.ndarray, n: int) -> None:
        _every_byte(z, dtype)
    return kernel


def skips_poison_valued(dtype: str) -> Callable[..., None]:
    """Writes what every_byte writes, but leaves z[7] (where the reference writes the first
    poison's bits) unwritten: its bits match the reference's in the first run."""
    def kernel(x: np.ndarray, z: np.ndarray, n: int) -> None:
        keep = z[7].copy()
        _every_byte(z, dtype)
        z[7] = keep
    return kernel


def skips_last(dtype: str) -> Callable[..., None]:
    def kernel(x: np.ndarray, z: np.ndarray, n: int) -> None:
        keep = z[n - 1].copy()
        _every_byte(z, dtype)
        z[n - 1] = keep
    return kernel


KERNELS: dict[str, Callable[..., None]] = {}


class Device(NumpyDevice):
    def function(self, module: Any, lowered: str, dynamic_smem: int) -> Any:
        return lowered

    def launch(self, fn: str, cfg: dict[str, Any], args: list[Any]) -> None:
        self._check()
        KERNELS[fn](*args)

    def free_memory(self) -> int:
        return 1 << 40


def _verify(dtype: str, candidate: Callable[..., None], same: bool = False) -> dict[str, Any]:
    KERNELS.update(cand=candidate, ref=every_byte(dtype))
    cand, _ = _read_side(_spec(dtype, "cand"), "cand.cu")
    ref, _ = _read_side(_spec(dtype, "ref"), "ref.cu")
    data = cand.bound if same else ref.bound
    assert cand.bound is not None and data is not None
    j = _build_job(cand.bound, data, same, list(data.spec.verify_sizes), [1, 2], ["verify"])
    j["kernels"] = {"candidate": {"cubin": "c", "lowered": "cand"}}
    if not same:
        j["kernels"]["reference"] = {"cubin": "r", "lowered": "ref"}
    j["peaks_cubin"], j["budget"] = None, FAST.to_json()
    saved: list[dict[str, Any]] = []
    JobRunner(Session(Device), j, lambda t: None, saved.append).run()
    return saved[-1]["stages"]["verify"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("dtype", list(CTYPES))
def test_a_kernel_writing_every_byte_value_verifies(dtype: str) -> None:
    v = _verify(dtype, every_byte(dtype))
    assert v["status"] == "passed", v.get("reason")
    assert v["profile_size"]["label"].startswith("at the profiling size")
    # against itself too (the reference's own check that it wrote everything)
    assert _verify(dtype, every_byte(dtype), same=True)["status"] == "passed"


@pytest.mark.parametrize("dtype", list(CTYPES))
def test_an_unwritten_element_is_caught_even_where_the_reference_wrote_the_poison(
        dtype: str) -> None:
    v = _verify(dtype, skips_poison_valued(dtype))
    assert v["status"] == "failed"
    assert "candidate left z[7] unwritten" in v["reason"], v["reason"]
    v = _verify(dtype, skips_last(dtype))
    assert v["status"] == "failed" and "unwritten" in v["reason"], v["reason"]


def test_unwritten_after_needs_both_poisons() -> None:
    for dtype in CTYPES:
        a, b = poison(6, dtype), poison(6, dtype, second=True)
        assert unwritten_mask(a, dtype).all() and not unwritten_mask(a, dtype, True).any()
        written = a.copy()
        written[1] = b[0]  # the kernel wrote the second poison's bits in the first run...
        again = b.copy()
        again[1] = b[0]  # ...and in the second: written, not unwritten
        again[2] = a[0]  # the first poison's bits in the second run: written
        assert unwritten_after(written, again, dtype).tolist() == [True, False, False, True,
                                                                   True, True]
        if dtype not in ("int8", "uint8", "int16", "int32"):
            assert np.isnan(a.astype(np.float64) if dtype != "bfloat16" else
                            (a.astype(np.uint32) << 16).view(np.float32)).all()


# the bits of each float format: (exponent mask, mantissa mask, quiet bit)
_NAN_BITS = {"float16": (0x7C00, 0x03FF, 0x0200), "bfloat16": (0x7F80, 0x007F, 0x0040),
             "float32": (0x7F800000, 0x007FFFFF, 0x00400000),
             "float64": (0x7FF0000000000000, 0x000FFFFFFFFFFFFF, 0x0008000000000000)}


@pytest.mark.parametrize("dtype", list(_NAN_BITS))
def test_each_float_poison_is_a_quiet_nan_read_without_a_floating_point_exception(
        dtype: str) -> None:
    """Both poisons of a float are quiet NaNs with a payload of their own: a signaling one
    raises the invalid-operation flag when the host widens it to compare (NumPy warns
    "invalid value encountered in cast"), and arithmetic would not keep its bits."""
    from klc.gate.verify import to_float64

    exponent, mantissa, quiet = _NAN_BITS[dtype]
    words = [int(poison_word(dtype)), int(poison_word(dtype, True))]
    assert words[0] != words[1]
    for w in words:
        assert w & exponent == exponent and w & mantissa, hex(w)  # a NaN
        assert w & quiet, f"{dtype} poison {w:#x} is a signaling NaN"
        assert w & mantissa != quiet, hex(w)  # a payload, not the canonical NaN
    for second in (False, True):
        with np.errstate(all="raise"):
            assert np.isnan(to_float64(poison(4, dtype, second), dtype)).all()


# -- the same on the device: CUDA kernels written here --------------------------------------

CUDA = """/* klc-spec
kernel: fill
sizes: {{n: 4194304}}
verify_sizes: [{{n: 4096}}, {{n: 1000}}]
args:
  - {{name: x, shape: [n], role: in, init: "randint(0, 1000)"}}
  - {{name: z, shape: [n], role: out}}
  - {{name: n, value: n}}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Every byte of z runs through 0..255 (its value is the byte's index mod 256); z[7] holds
// the gate's first poison and z[9] its second, bit for bit: values a correct kernel writes.
extern "C" __global__ void fill(const int* x, {ctype}* z, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n{skip}) return;
    unsigned char bytes[sizeof({ctype})];
    for (int k = 0; k < (int)sizeof({ctype}); k++)
        bytes[k] = (unsigned char)((i * (int)sizeof({ctype}) + k) & 255);
    if (i == 7 || i == 9) {{
        unsigned long long p = i == 7 ? {first}ull : {second}ull;
        for (int k = 0; k < (int)sizeof({ctype}); k++) bytes[k] = (unsigned char)(p >> (8 * k));
    }}
    {ctype} v;
    memcpy(&v, bytes, sizeof(v));
    z[i] = v;
}}
"""


def cuda_kernel(dtype: str, skip: str = "") -> bytes:
    return CUDA.format(ctype=CTYPES[dtype], skip=skip, first=int(poison_word(dtype)),
                       second=int(poison_word(dtype, True))).encode()


@pytest.mark.parametrize("dtype", list(CTYPES))
def test_the_cuda_kernels_compile(dtype: str, tmp_path: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path))
    rec = gate(cuda_kernel(dtype), f"fill_{dtype}.cu", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(CTYPES))
def test_gpu_every_byte_value_verifies_and_a_skipped_element_fails(dtype: str) -> None:
    good = cuda_kernel(dtype)
    rec = gate(good, f"fill_{dtype}.cu", reference=good, stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
    assert gate(good, f"fill_{dtype}.cu", stages=("compile", "verify")).verdict == "passed"
    for skip, where in ((" || i == 7", "z[7]"), (" || i == n - 1", "unwritten")):
        bad = cuda_kernel(dtype, skip)
        rec = gate(bad, f"skip_{dtype}.cu", reference=good, stages=("compile", "verify"))
        assert rec.verdict == "failed" and where in rec.reason and "unwritten" in rec.reason, \
            rec.reason
