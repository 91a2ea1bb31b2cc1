"""Stage 2 of the gate: run reference and candidate on the same fresh random inputs and compare.

The host-side pieces (making inputs, poisoning, the guard zones, the comparison) are plain
NumPy so that they are tested on a machine without a GPU; ``run_case`` is the part that needs
CuPy and runs inside the child process (``klc.gate.child``).

How a kernel can look right without doing the work, and what catches it here:
- it writes nothing, or skips the tail: every ``out`` buffer is filled with a distinctive
  bit pattern (the *poison*: a NaN with a payload no arithmetic produces, or 0xA5 bytes for
  integers) before each run. A correct kernel may write the poison's value itself (an
  ``unsigned char`` mean of 165 is 0xA5), so an element still holding it is only a suspect:
  the run is made again with a second poison (another NaN payload, 0x5A bytes), and an
  element is unwritten only if it holds each run's poison (``unwritten_after``).
  ``inout`` buffers start from the input data and must end equal to the reference's.
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
from typing import Any, Protocol

import numpy as np

GUARD_BYTES = 4096  # each side of every buffer; keeps 16-byte (and 4 KiB) alignment
GUARD_BYTE = 0xA5
SECOND_POISON_BYTE = 0x5A  # integers' second poison: every bit of the first flipped
# quiet NaNs with a payload no arithmetic produces (CUDA's canonical NaN is 0x7fffffff), and
# the second run's (another payload)
_POISON_BITS: dict[str, int] = {
    "float64": 0x7FFDA5A5A5A5A5A5, "float32": 0x7FE5A5A5, "float16": 0x7E5A,
    "bfloat16": 0x7FDA,
}
_SECOND_POISON_BITS: dict[str, int] = {
    "float64": 0x7FFD5A5A5A5A5A5A, "float32": 0x7FE55A5A, "float16": 0x7EA5,
    "bfloat16": 0x7FE5,
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


def _from_float(values: Any, dtype: str) -> Any:
    """Float values (NumPy or CuPy) to the storage of ``dtype``."""
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32)
        one, half = np.uint32(1), np.uint32(0x7FFF)
        rounded = bits + half + ((bits >> np.uint32(16)) & one)  # round to nearest even
        return (rounded >> np.uint32(16)).astype(np.uint16)
    return values.astype(storage_dtype(dtype))


class Draw(Protocol):
    """Where random values come from: NumPy on the host, or cuRAND on the device."""

    xp: Any  # the array module the draws are made in (numpy or cupy)

    def normal(self, count: int, work: np.dtype) -> Any: ...

    def uniform(self, lo: float, hi: float, count: int, work: np.dtype) -> Any: ...

    def integers(self, lo: int, hi: int, count: int) -> Any: ...


class HostDraw:
    """NumPy's generator: float64 draws, whatever the buffer's type."""

    xp = np

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def normal(self, count: int, work: np.dtype) -> np.ndarray:
        return self.rng.standard_normal(count)

    def uniform(self, lo: float, hi: float, count: int, work: np.dtype) -> np.ndarray:
        return self.rng.uniform(lo, hi, count)

    def integers(self, lo: int, hi: int, count: int) -> np.ndarray:
        return self.rng.integers(lo, hi, count)


def work_dtype(dtype: str) -> np.dtype:
    """The float type values are drawn in on the device (float64 only for float64 data)."""
    return np.dtype(np.float64 if dtype == "float64" else np.float32)


def make_values(init: dict[str, Any], count: int, dtype: str, draw: Draw) -> Any:
    """Fill ``count`` scalar elements as the spec's init says (args already evaluated), in
    the draw's array module: the same code makes host data and device data."""
    xp, work = draw.xp, work_dtype(dtype)
    kind, args = init["kind"], [float(a) for a in init.get("args", ())]
    if kind == "normal":
        mean, std = (args + [0.0, 1.0][len(args):])[:2]
        vals = draw.normal(count, work) * std + mean
    elif kind == "uniform":
        lo, hi = (args + [-1.0, 1.0][len(args):])[:2]
        vals = draw.uniform(lo, hi, count, work)
    elif kind == "randint":
        vals = draw.integers(int(args[0]), int(args[1]), count)
    elif kind == "range":
        vals = xp.arange(count, dtype=np.int64)
        if not is_float(dtype):
            top = int(np.iinfo(storage_dtype(dtype)).max) if dtype != "bool" else 1
            if count - 1 > top:  # wrap around rather than overflow
                vals = vals % (top + 1)
    elif kind == "ones":
        vals = xp.ones(count, dtype=work)
    elif kind == "zeros":
        vals = xp.zeros(count, dtype=work)
    elif kind == "constant":
        vals = xp.full(count, args[0], dtype=np.float64)
    else:  # the spec loader refuses other kinds
        raise ValueError(f"unknown init {kind}")
    if not is_float(dtype):
        if kind in ("normal", "uniform"):
            vals = xp.round(vals * 16)  # integer data with some spread, never all zeros
        return vals.astype(storage_dtype(dtype))
    return _from_float(vals, dtype)


def make_data(init: dict[str, Any], count: int, dtype: str, rng: np.random.Generator
              ) -> np.ndarray:
    """Host data for one buffer, from NumPy's generator."""
    return make_values(init, count, dtype, HostDraw(rng))


def make_scalar(init: dict[str, Any], dtype: str, rng: np.random.Generator) -> Any:
    return make_data(init, 1, dtype, rng)[0]


def poison(count: int, dtype: str, second: bool = False) -> np.ndarray:
    """An output buffer's starting content: the poison NaN, or 0xA5 bytes for integers
    (``second``: the second run's poison, another NaN or 0x5A bytes)."""
    st = storage_dtype(dtype)
    if dtype in _POISON_BITS:
        bits = (_SECOND_POISON_BITS if second else _POISON_BITS)[dtype]
        return np.full(count, bits, dtype=_UINT_OF_SIZE[st.itemsize]).view(st)
    return np.full(count * st.itemsize, SECOND_POISON_BYTE if second else GUARD_BYTE,
                   dtype=np.uint8).view(st)


def fill_poison(body: Any, dtype: str, second: bool = False) -> None:
    """Poison a buffer in place (NumPy or CuPy): the same bits as ``poison``."""
    st = storage_dtype(dtype)
    if dtype in _POISON_BITS:
        bits = (_SECOND_POISON_BITS if second else _POISON_BITS)[dtype]
        body.view(_UINT_OF_SIZE[st.itemsize]).fill(bits)
    else:
        body.view(np.uint8).fill(SECOND_POISON_BYTE if second else GUARD_BYTE)


def poison_word(dtype: str, second: bool = False) -> Any:
    """The poison of one element as an unsigned integer of its size."""
    u = _UINT_OF_SIZE[storage_dtype(dtype).itemsize]
    return poison(1, dtype, second).view(u)[0]


def unwritten_mask(a: Any, dtype: str, second: bool = False) -> Any:
    """The elements that hold the (first or ``second``) poison: suspects, not yet proof."""
    u = _UINT_OF_SIZE[storage_dtype(dtype).itemsize]
    return a.view(u) == poison_word(dtype, second)


def unwritten_after(first: Any, second: Any, dtype: str) -> Any:
    """The elements a kernel left unwritten: those holding the first poison after a run
    from the first, and the second poison after a run from the second (NumPy or CuPy)."""
    return unwritten_mask(first, dtype) & unwritten_mask(second, dtype, True)


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


def _poison_words(dtype: str) -> str:
    return "the poison NaN" if is_float(dtype) else "the poison bytes"


def _unwritten_detail(who: str, name: str, i: int, lanes: int, count: int, n: int,
                      dtype: str, ref: str) -> str:
    return (f"{who} left {name}{_element(i, lanes)} unwritten (still {_poison_words(dtype)}; "
            f"{count} of {n} elements), reference = {ref}")


def compare(name: str, cand: np.ndarray, ref: np.ndarray, dtype: str, lanes: int,
            tol: tuple[float, float], who: str = "candidate",
            unwritten: np.ndarray | None = None) -> Mismatch | None:
    """Compare one buffer; None if equal within tolerance, else the first bad element.
    ``unwritten``: the elements the candidate left unwritten (``unwritten_after``: the gate
    runs it from two poisons). Without it, a float element still holding the poison NaN
    where the reference's does not counts as unwritten (no arithmetic makes that NaN), and
    an integer is only compared: its poison is a value a kernel may write."""
    st = storage_dtype(dtype)
    if unwritten is None:
        unwritten = unwritten_mask(cand, dtype) & ~unwritten_mask(ref, dtype) \
            if is_float(dtype) else np.zeros(cand.shape, dtype=bool)
    if unwritten.any():
        i, count = int(np.flatnonzero(unwritten)[0]), int(unwritten.sum())
        r = _fmt(_show(ref, dtype)[i])
        return Mismatch(name, i, "unwritten", r, "unwritten", count,
                        _unwritten_detail(who, name, i, lanes, count, cand.size, dtype, r))
    if cand.shape == ref.shape and st.itemsize in _UINT_OF_SIZE and np.array_equal(
            cand.view(_UINT_OF_SIZE[st.itemsize]), ref.view(_UINT_OF_SIZE[st.itemsize])):
        return None  # the same bits: no difference
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
# On the device (inside the child process). Written against the array module ``xp`` (CuPy in
# the child; NumPy in the tests, which stand in a Python function for the kernel).


@dataclass
class RunOutput:
    """What one kernel run left in its buffers (host copies) and what went wrong."""

    buffers: dict[str, np.ndarray]
    problems: list[str]


def launch(fn: Any, launch_cfg: dict[str, Any], args: list[Any]) -> None:
    fn(tuple(launch_cfg["grid"]), tuple(launch_cfg["block"]), tuple(args),
       shared_mem=int(launch_cfg["shared"]))


@dataclass
class CaseInputs:
    """One case's inputs: device arrays (the pristine copies every run starts from), host
    copies of the ``in`` buffers (to check they were left alone), scalar values."""

    device: dict[str, Any]
    host: dict[str, np.ndarray]
    scalars: dict[str, Any]


class GuardedBuffers:
    """One device buffer per pointer argument, between two guard zones, allocated once for
    all the seeds of one size. The guards are written once: a run that touches them fails
    the job, so every run that follows starts from intact guards."""

    def __init__(self, xp: Any, arg_plan: list[dict[str, Any]]):
        self.plan = arg_plan
        self.whole: dict[str, tuple[Any, int]] = {}
        for a in arg_plan:
            if a["kind"] == "scalar":
                continue
            st = storage_dtype(a["dtype"])
            g = GUARD_BYTES // st.itemsize
            whole = xp.empty(a["elements"] + 2 * g, dtype=st)
            whole.view(np.uint8).fill(GUARD_BYTE)
            self.whole[a["name"]] = (whole, g)

    def body(self, name: str) -> Any:
        whole, g = self.whole[name]
        return whole[g:whole.size - g]

    def load(self, inputs: CaseInputs, second: bool = False) -> list[Any]:
        """Inputs copied in (device to device), outputs poisoned (``second``: with the second
        poison); the launch's arguments."""
        args: list[Any] = []
        for a in self.plan:
            if a["kind"] == "scalar":
                args.append(inputs.scalars[a["name"]])
                continue
            body = self.body(a["name"])
            if a["role"] == "out":
                fill_poison(body, a["dtype"], second)
            else:
                body[...] = inputs.device[a["name"]]
            args.append(body)
        return args

    def read(self, to_host: Any, inputs: CaseInputs, who: str) -> RunOutput:
        """Every buffer back to the host; guards and ``in`` buffers checked there."""
        out: dict[str, np.ndarray] = {}
        problems: list[str] = []
        for a in self.plan:
            if a["kind"] == "scalar":
                continue
            whole, g = self.whole[a["name"]]
            h = to_host(whole)
            count = a["elements"]
            st = storage_dtype(a["dtype"])
            before = guard_damage(h[:g].view(np.uint8))
            after = guard_damage(h[g + count:].view(np.uint8))
            if before is not None:
                problems.append(f"{who} wrote out of bounds before {a['name']}[0] (byte "
                                f"{before - GUARD_BYTES} relative to its start)")
            if after is not None:
                problems.append(f"{who} wrote out of bounds past the end of {a['name']} "
                                f"(element {a['name']}[{count + after // st.itemsize}] of "
                                f"{count})")
            body = h[g:g + count]
            if a["role"] == "in":
                was = inputs.host[a["name"]].view(np.uint8)
                now = body.view(np.uint8)
                if not np.array_equal(now, was):
                    i = int(np.flatnonzero(now != was)[0])
                    problems.append(f"{who} wrote into input {a['name']} (byte {i}): an 'in' "
                                    "buffer must be left as it was")
            out[a["name"]] = body
        return RunOutput(out, problems)

    def check_in_place(self, xp: Any, to_host: Any, inputs: CaseInputs, who: str
                       ) -> list[str]:
        """``read``'s checks without copying the buffers to the host: only the guard zones
        come back (4 KiB a side); ``in`` buffers are compared on the device with the
        pristine copies they were loaded from."""
        problems: list[str] = []
        for a in self.plan:
            if a["kind"] == "scalar":
                continue
            whole, g = self.whole[a["name"]]
            count = a["elements"]
            st = storage_dtype(a["dtype"])
            before = guard_damage(to_host(whole[:g]).view(np.uint8))
            after = guard_damage(to_host(whole[g + count:]).view(np.uint8))
            if before is not None:
                problems.append(f"{who} wrote out of bounds before {a['name']}[0] (byte "
                                f"{before - GUARD_BYTES} relative to its start)")
            if after is not None:
                problems.append(f"{who} wrote out of bounds past the end of {a['name']} "
                                f"(element {a['name']}[{count + after // st.itemsize}] of "
                                f"{count})")
            if a["role"] == "in":
                now = self.body(a["name"]).view(np.uint8)
                was = inputs.device[a["name"]].view(np.uint8)
                if not bool(xp.array_equal(now, was)):
                    i = _first(xp, now != was)
                    problems.append(f"{who} wrote into input {a['name']} (byte {i}): an 'in' "
                                    "buffer must be left as it was")
        return problems


# --------------------------------------------------------------------------------------
# The check at the profiling size: the same comparison, made where the buffers are (on the
# device, in chunks), bringing back only the first bad element. Written against ``xp`` so
# that the tests run it over NumPy too, and compare it with ``compare``.

CHUNK_ELEMENTS = 1 << 24  # temporaries of one chunk: a few float64 arrays of 128 MiB


def _first(xp: Any, mask: Any) -> int:
    return int(xp.argmax(mask))


def _item(xp: Any, a: Any, i: int, dtype: str) -> Any:
    """One element, as the host message shows it (float64 for floats)."""
    one = a[i:i + 1]
    return (to_float64(one, dtype) if is_float(dtype) else one)[0]


def compare_in_place(xp: Any, name: str, cand: Any, ref: Any, dtype: str, lanes: int,
                     tol: tuple[float, float], who: str = "candidate",
                     chunk: int = CHUNK_ELEMENTS, unwritten: Any | None = None
                     ) -> Mismatch | None:
    """``compare`` without copying the buffers anywhere: the unwritten check (``unwritten``,
    as ``compare`` takes it), equal bits (one reduction), then the tolerance check chunk by
    chunk; the scale (rms of the reference's finite values) is one pass over the whole
    buffer, as ``compare`` takes it."""
    st = storage_dtype(dtype)
    u = _UINT_OF_SIZE[st.itemsize]
    n = cand.size
    pois = poison_word(dtype)
    count, first = 0, -1
    if unwritten is not None or is_float(dtype):
        for s in range(0, n, chunk):
            loose = unwritten[s:s + chunk] if unwritten is not None else \
                (cand[s:s + chunk].view(u) == pois) & (ref[s:s + chunk].view(u) != pois)
            c = int(loose.sum())
            if c and first < 0:
                first = s + _first(xp, loose)
            count += c
    if count:
        r = _fmt(_item(xp, ref, first, dtype))
        return Mismatch(name, first, "unwritten", r, "unwritten", count,
                        _unwritten_detail(who, name, first, lanes, count, n, dtype, r))
    if cand.shape == ref.shape and bool(xp.array_equal(cand.view(u), ref.view(u))):
        return None
    if not is_float(dtype):
        count, first = 0, -1
        for s in range(0, n, chunk):
            bad = cand[s:s + chunk] != ref[s:s + chunk]
            c = int(bad.sum())
            if c and first < 0:
                first = s + _first(xp, bad)
            count += c
        if not count:
            return None
        cv, rv = _fmt(_item(xp, cand, first, dtype)), _fmt(_item(xp, ref, first, dtype))
        return Mismatch(name, first, cv, rv, "mismatch", count,
                        f"{who} differs at {name}{_element(first, lanes)}: {cv} vs reference "
                        f"{rv} ({count} of {n} elements differ; integers must match exactly)")
    sq, finite = 0.0, 0
    for s in range(0, n, chunk):
        r = to_float64(ref[s:s + chunk], dtype)
        ok = xp.isfinite(r)
        sq += float(xp.where(ok, r * r, 0.0).sum())
        finite += int(ok.sum())
    scale = float(np.sqrt(sq / finite)) if finite else 0.0
    rtol, atol = tol
    count, first, first_err, first_bound = 0, -1, 0.0, 0.0
    for s in range(0, n, chunk):
        c, r = to_float64(cand[s:s + chunk], dtype), to_float64(ref[s:s + chunk], dtype)
        err = xp.abs(c - r)
        bound = atol + rtol * xp.maximum(xp.abs(r), scale)
        same_special = (c == r) | (xp.isnan(c) & xp.isnan(r))
        bad = ~same_special & ~(err <= bound)
        k = int(bad.sum())
        if k and first < 0:
            j = _first(xp, bad)
            first, first_err, first_bound = s + j, float(err[j]), float(bound[j])
        count += k
    if not count:
        return None
    cv, rv = _item(xp, cand, first, dtype), _item(xp, ref, first, dtype)
    kind = "nan" if np.isnan(float(cv)) else "mismatch"
    what = "produced NaN at" if kind == "nan" else "differs at"
    return Mismatch(name, first, _fmt(cv), _fmt(rv), kind, count,
                    f"{who} {what} {name}{_element(first, lanes)}: {_fmt(cv)} vs reference "
                    f"{_fmt(rv)} (|diff| {first_err:.3g} > {first_bound:.3g}; {count} of {n} "
                    f"elements bad, rtol {rtol:g}, atol {atol:g})")


def unwritten_count(xp: Any, a: Any, dtype: str, chunk: int = CHUNK_ELEMENTS,
                    second: Any | None = None) -> tuple[int, int]:
    """(how many elements still hold the poison, the first of them or -1), in place; with
    ``second`` (the same buffer after a run from the second poison), those that hold each
    run's poison."""
    u = _UINT_OF_SIZE[storage_dtype(dtype).itemsize]
    pois, pois2 = poison_word(dtype), poison_word(dtype, True)
    count, first = 0, -1
    for s in range(0, a.size, chunk):
        m = a[s:s + chunk].view(u) == pois
        if second is not None:
            m &= second[s:s + chunk].view(u) == pois2
        c = int(m.sum())
        if c and first < 0:
            first = s + _first(xp, m)
        count += c
    return count, first


def checksum_in_place(xp: Any, a: Any, chunk: int = CHUNK_ELEMENTS) -> tuple[int, int]:
    """Two position-weighted sums of a buffer's words (in place, chunk by chunk): what the
    worker checks before it trusts a reference output it kept on the device."""
    nbytes = int(a.size) * a.dtype.itemsize
    word = np.uint32 if nbytes % 4 == 0 else np.uint16 if nbytes % 2 == 0 else np.uint8
    b = a.view(word).ravel()  # whole words: a quarter of the elements of a byte view
    s1 = s2 = 0
    for s in range(0, b.size, chunk):
        v = b[s:s + chunk].astype(np.uint64)
        i = xp.arange(s, s + v.size, dtype=np.uint64)
        s1 = (s1 + int((v * (i + np.uint64(1))).sum())) & 0xFFFFFFFFFFFFFFFF
        s2 = (s2 + int(((v + np.uint64(1)) * ((i * np.uint64(2654435761)) | np.uint64(1)))
                       .sum())) & 0xFFFFFFFFFFFFFFFF
    return s1, s2
