"""Stage 2 of the gate: run reference and candidate on the same fresh random inputs and compare.

The host-side pieces (making inputs, poisoning, the guard zones, the comparison) are plain
NumPy so that they are tested on a machine without a GPU; ``run_case`` is the part that needs
CuPy and runs inside the child process (``klc.gate.child``).

How a kernel can look right without doing the work, and what catches it here:
- it writes nothing, or skips the tail: every ``out`` buffer is filled with a NaN of a
  distinctive bit pattern (the *poison*) before each run; an element still holding that exact
  pattern was never written. ``inout`` buffers start from the input data and must end equal
  to the reference's.
- it writes past the end of a buffer (off-by-one bounds): each buffer sits between two guard
  zones of a byte pattern, checked after every run; a small overrun that would not fault is
  named with the buffer and the offset.
- it writes into an input: inputs are compared bit for bit with what was uploaded.
- it races: outputs differ from the reference (or from the kernel's own earlier run) beyond
  a tolerance that reordered float sums stay well inside.
- it computes on a lucky input: several fresh seeds, two sizes (one not a multiple of the
  block), never zeros.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

GUARD_BYTES = 4096  # each side of every buffer; keeps 16-byte (and 4 KiB) alignment
GUARD_BYTE = 0xA5
# quiet NaNs with a payload no arithmetic produces (CUDA's canonical NaN is 0x7fffffff)
_POISON_BITS: dict[str, int] = {
    "float64": 0x7FFDA5A5A5A5A5A5, "float32": 0x7FE5A5A5, "float16": 0x7E5A,
    "bfloat16": 0x7FDA,
}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# (rtol, atol): relative to max(|ref|, rms(ref buffer)), so reordered sums pass and an
# element read from the wrong index (an O(1) relative error) does not
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-12), "float32": (1e-4, 1e-6), "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}


def storage_dtype(dtype: str) -> np.dtype:
    """NumPy has no bfloat16: it is stored as its 16 raw bits."""
    return np.dtype(np.uint16) if dtype == "bfloat16" else np.dtype(dtype)


def is_float(dtype: str) -> bool:
    return dtype in _POISON_BITS


def to_float64(a: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def _from_float(values: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32)
        rounded = bits + 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
        return (rounded >> 16).astype(np.uint16)
    return values.astype(storage_dtype(dtype))


def make_data(init: dict[str, Any], count: int, dtype: str, rng: np.random.Generator
              ) -> np.ndarray:
    """Fill ``count`` scalar elements as the spec's init says (args already evaluated)."""
    kind, args = init["kind"], [float(a) for a in init.get("args", ())]
    if kind == "normal":
        mean, std = (args + [0.0, 1.0][len(args):])[:2]
        vals = rng.standard_normal(count) * std + mean
    elif kind == "uniform":
        lo, hi = (args + [-1.0, 1.0][len(args):])[:2]
        vals = rng.uniform(lo, hi, count)
    elif kind == "randint":
        vals = rng.integers(int(args[0]), int(args[1]), count)
    elif kind == "range":
        vals = np.arange(count)
        if not is_float(dtype):
            info = np.iinfo(storage_dtype(dtype)) if dtype != "bool" else None
            vals = vals % (int(info.max) + 1) if info is not None else vals % 2
    elif kind == "ones":
        vals = np.ones(count)
    elif kind == "zeros":
        vals = np.zeros(count)
    elif kind == "constant":
        vals = np.full(count, args[0])
    else:  # the spec loader refuses other kinds
        raise ValueError(f"unknown init {kind}")
    if not is_float(dtype):
        if kind in ("normal", "uniform"):
            vals = np.round(vals * 16)  # integer data with some spread, never all zeros
        return vals.astype(storage_dtype(dtype))
    return _from_float(vals, dtype)


def make_scalar(init: dict[str, Any], dtype: str, rng: np.random.Generator) -> Any:
    return make_data(init, 1, dtype, rng)[0]


def poison(count: int, dtype: str) -> np.ndarray:
    """An output buffer's starting content: the poison NaN, or 0xA5 bytes for integers."""
    st = storage_dtype(dtype)
    if dtype in _POISON_BITS:
        return np.full(count, _POISON_BITS[dtype], dtype=_UINT_OF_SIZE[st.itemsize]).view(st)
    return np.full(count * st.itemsize, GUARD_BYTE, dtype=np.uint8).view(st)


def unwritten_mask(a: np.ndarray, dtype: str) -> np.ndarray:
    st = storage_dtype(dtype)
    bits = a.view(_UINT_OF_SIZE[st.itemsize])
    return bits == poison(1, dtype).view(_UINT_OF_SIZE[st.itemsize])[0]


def guard_damage(guard: np.ndarray) -> int | None:
    """Index of the first guard byte that changed, or None."""
    bad = np.flatnonzero(guard != GUARD_BYTE)
    return int(bad[0]) if bad.size else None


def tolerance_for(dtype: str, spec_tol: dict[str, float] | None) -> tuple[float, float]:
    if spec_tol is not None:
        return spec_tol["rtol"], spec_tol["atol"]
    return DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))


def _element(index: int, lanes: int) -> str:
    return f"[{index // lanes}].{'xyzw'[index % lanes]}" if lanes > 1 else f"[{index}]"


@dataclass(frozen=True)
class Mismatch:
    """Why a buffer failed: names the buffer, the first bad element, both values."""

    buffer: str
    index: int
    candidate: str
    reference: str
    kind: str  # "unwritten" | "nan" | "mismatch"
    count: int
    detail: str

    def describe(self) -> str:
        return self.detail

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _fmt(x: Any) -> str:
    return repr(x.item()) if hasattr(x, "item") else repr(x)


def compare(name: str, cand: np.ndarray, ref: np.ndarray, dtype: str, lanes: int,
            tol: tuple[float, float], who: str = "candidate") -> Mismatch | None:
    """Compare one buffer; None if equal within tolerance, else the first bad element."""
    loose = unwritten_mask(cand, dtype) & ~unwritten_mask(ref, dtype)
    if loose.any():
        i = int(np.flatnonzero(loose)[0])
        return Mismatch(name, i, "unwritten", _fmt(_show(ref, dtype)[i]), "unwritten",
                        int(loose.sum()),
                        f"{who} left {name}{_element(i, lanes)} unwritten (still the poison "
                        f"NaN; {int(loose.sum())} of {cand.size} elements), reference = "
                        f"{_fmt(_show(ref, dtype)[i])}")
    if is_float(dtype):
        c, r = to_float64(cand, dtype), to_float64(ref, dtype)
        rtol, atol = tol
        finite_r = r[np.isfinite(r)]
        scale = float(np.sqrt(np.mean(finite_r * finite_r))) if finite_r.size else 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(c - r)
            bound = atol + rtol * np.maximum(np.abs(r), scale)
            same_special = (c == r) | (np.isnan(c) & np.isnan(r))
            bad = ~same_special & ~(err <= bound)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            kind = "nan" if np.isnan(c[i]) else "mismatch"
            what = "produced NaN at" if kind == "nan" else "differs at"
            return Mismatch(name, i, _fmt(c[i]), _fmt(r[i]), kind, int(bad.sum()),
                            f"{who} {what} {name}{_element(i, lanes)}: {_fmt(c[i])} vs "
                            f"reference {_fmt(r[i])} (|diff| {float(err[i]):.3g} > "
                            f"{float(bound[i]):.3g}; {int(bad.sum())} of {c.size} elements "
                            f"bad, rtol {rtol:g}, atol {atol:g})")
        return None
    bad = cand != ref
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return Mismatch(name, i, _fmt(cand[i]), _fmt(ref[i]), "mismatch", int(bad.sum()),
                        f"{who} differs at {name}{_element(i, lanes)}: {_fmt(cand[i])} vs "
                        f"reference {_fmt(ref[i])} ({int(bad.sum())} of {cand.size} "
                        "elements differ; integers must match exactly)")
    return None


def _show(a: np.ndarray, dtype: str) -> np.ndarray:
    return to_float64(a, dtype) if is_float(dtype) else a


# --------------------------------------------------------------------------------------
# On the GPU (inside the child process)


@dataclass
class RunOutput:
    """What one kernel run left in its buffers (host copies) and what went wrong."""

    buffers: dict[str, np.ndarray]
    problems: list[str]


def launch(fn: Any, launch_cfg: dict[str, Any], args: list[Any]) -> None:
    fn(tuple(launch_cfg["grid"]), tuple(launch_cfg["block"]), tuple(args),
       shared_mem=int(launch_cfg["shared"]))


def run_kernel(fn: Any, launch_cfg: dict[str, Any], arg_plan: list[dict[str, Any]],
               host: dict[str, Any], who: str) -> RunOutput:
    """Upload ``host`` data between guard zones, poison outputs, launch, synchronise, read
    every buffer back and check guards and inputs."""
    import cupy as cp

    dev_bufs: dict[str, tuple[Any, int]] = {}
    args: list[Any] = []
    for a in arg_plan:
        if a["kind"] == "scalar":
            args.append(host[a["name"]])
            continue
        st = storage_dtype(a["dtype"])
        count = a["elements"]
        g = GUARD_BYTES // st.itemsize
        whole = cp.empty(count + 2 * g, dtype=st)
        whole.view(cp.uint8)[:] = GUARD_BYTE
        data = poison(count, a["dtype"]) if a["role"] == "out" else host[a["name"]]
        whole[g:g + count].set(data)
        dev_bufs[a["name"]] = (whole, g)
        args.append(whole[g:g + count])
    launch(fn, launch_cfg, args)
    cp.cuda.Device().synchronize()
    out: dict[str, np.ndarray] = {}
    problems: list[str] = []
    for a in arg_plan:
        if a["kind"] == "scalar":
            continue
        whole, g = dev_bufs[a["name"]]
        h = whole.get()
        count = a["elements"]
        st = storage_dtype(a["dtype"])
        before = guard_damage(h[:g].view(np.uint8))
        after = guard_damage(h[g + count:].view(np.uint8))
        if before is not None:
            problems.append(f"{who} wrote out of bounds before {a['name']}[0] (byte "
                            f"{before - GUARD_BYTES} relative to its start)")
        if after is not None:
            problems.append(f"{who} wrote out of bounds past the end of {a['name']} (element "
                            f"{a['name']}[{count + after // st.itemsize}] of {count})")
        body = h[g:g + count]
        if a["role"] == "in" and not np.array_equal(body.view(np.uint8),
                                                     host[a["name"]].view(np.uint8)):
            i = int(np.flatnonzero(body.view(np.uint8) != host[a["name"]].view(np.uint8))[0])
            problems.append(f"{who} wrote into input {a['name']} (byte {i}): an 'in' buffer "
                            "must be left as it was")
        out[a["name"]] = body
    return RunOutput(out, problems)
