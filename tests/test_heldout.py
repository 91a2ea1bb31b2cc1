"""The held-out kernels (bench/heldout/): 22 first versions that no lineage walks.

Without a GPU: each file parses cleanly, holds exactly one kernel, the one its spec names,
its spec loads and fits the signature, the claims are sane (verify sizes with a ragged case,
inputs larger than the L2 cache at the profiling size, a byte count no larger than reading
and writing every buffer once), and it compiles with NVRTC for sm_90 with no spills.

On a GPU (``pytest -m gpu tests/test_heldout.py``): each kernel passes the gate against
itself (deterministic, every output written, inside its buffers, inputs untouched, not
faster than the SOL floor), and computes what it claims: a float64 NumPy reference written
here, independently of the kernel, on every verify size of its spec. The gate alone cannot
see a kernel that computes the wrong function consistently; the reference can.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from klc.cuda.parse import parse_file, read_source
from klc.gate import gate
from klc.spec import Bound, Spec, check_spec, element_count, evaluate, launch_dims, load_spec

ROOT = Path(__file__).parent.parent
HELDOUT = ROOT / "bench" / "heldout"
L2_BYTES = 50 * 2**20  # H100 and H200: 50 MiB of L2
NAMES = (
    "vector_add", "saxpy_scale", "relu", "gelu", "bias_add", "row_sum", "col_sum", "matvec",
    "histogram", "prefix_scan", "stencil_1d", "stencil_2d", "conv1d", "rms_norm",
    "rotary_embedding", "cross_entropy", "adam_update", "embedding_gather",
    "batched_gemm_small", "softmax_backward", "layernorm_backward", "silu_mul",
)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        yield


def load(name: str) -> tuple[Path, bytes, Spec, Bound]:
    path = HELDOUT / f"{name}.cu"
    source = read_source(path)
    spec = load_spec(source, str(path))
    assert spec is not None, f"{path}: no klc-spec block"
    return path, source, spec, check_spec(spec, parse_file(path))


def test_the_set_is_complete() -> None:
    assert sorted(p.stem for p in HELDOUT.glob("*.cu")) == sorted(NAMES)
    assert len(NAMES) == 22


# -- static: no GPU needed ---------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_parses_with_one_kernel_and_a_fitting_spec(name: str) -> None:
    path = HELDOUT / f"{name}.cu"
    unit = parse_file(path)
    assert unit.problems == []
    assert [k.name for k in unit.kernels] == [name]
    _, _, spec, bound = load(name)
    assert spec.kernel_name == name and bound.function_name == name
    assert [a.spec.name for a in bound.args] == [p.name for p in unit.kernels[0].params]


@pytest.mark.parametrize("name", NAMES)
def test_compiles_for_sm90_without_spills(name: str) -> None:
    path, source, _, bound = load(name)
    rec = gate(source, str(path), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason
    res = rec.stages["compile"].data["resources"][bound.name_expression]
    assert res["registers"] and res["registers"] > 0
    # (a stack frame is allowed: sinf/cosf keep one for their slow argument reduction)
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0


def _buffer_bytes(bound: Bound, env: dict[str, Any], roles: tuple[str, ...]) -> int:
    from klc.gate.verify import storage_dtype

    return sum(element_count(a.spec.shape or (), env) * a.ctype.lanes
               * storage_dtype(a.ctype.dtype).itemsize
               for a in bound.args if a.pointer and a.spec.role in roles)


@pytest.mark.parametrize("name", NAMES)
def test_spec_claims_are_sane(name: str) -> None:
    _, _, spec, bound = load(name)
    env = bound.env()
    # the profiling size does not fit in L2: what is timed is DRAM traffic
    assert _buffer_bytes(bound, env, ("in", "inout")) > L2_BYTES
    # the byte claim is the minimal traffic: at most every buffer read or written once
    claimed = evaluate(spec.bytes or "0", env)
    most = _buffer_bytes(bound, env, ("in", "out")) + 2 * _buffer_bytes(bound, env, ("inout",))
    assert 0 < claimed <= most
    assert evaluate(spec.flops or "0", env) >= 0
    # explicit verify sizes, one of them not a multiple of the block in some dimension
    assert len(spec.verify_sizes) >= 2
    block = launch_dims(spec.block, env)
    assert any(v % block[0] or v % 32 for s in spec.verify_sizes for v in s.values())
    # every input is initialised with something that shows wrong indexing
    for a in spec.args:
        if a.is_buffer and a.role != "out":
            assert a.init is not None and a.init.kind not in ("zeros", "ones"), a.name
        if a.is_buffer:
            for sizes in spec.verify_sizes:
                assert element_count(a.shape or (), bound.env(sizes)) >= 1


def _gpu_arch() -> str | None:
    from klc.gate import gpu_status

    return gpu_status()[0]


@pytest.mark.skipif(_gpu_arch() is not None, reason="with a GPU, the gpu tests run the cases")
@pytest.mark.parametrize("name", NAMES)
def test_gate_plans_every_case_without_a_gpu(name: str) -> None:
    """Every expression of the spec evaluates at every verify size and at the profiling
    size: the gate plans all the cases, then says that it needs a GPU to run them."""
    path, source, spec, _ = load(name)
    rec = gate(source, str(path), arch="sm_90")
    assert rec.verdict == "compiled", rec.reason
    assert rec.stages["verify"].data["planned_cases"] == 3 * len(spec.verify_sizes)
    assert "no GPU" in rec.stages["verify"].reason


# -- NumPy references (float64), one per kernel ------------------------------------------
# Each takes the sizes and a generator and returns (the kernel's arguments by name, the
# expected content of every out and inout buffer). Inputs are float32 (or the kernel's
# integer type); scalars are given as the kernel receives them, and the references use
# exactly those float32 values, in float64.

Case = tuple[dict[str, Any], dict[str, np.ndarray]]
f32 = np.float32


def _normal(rng: np.random.Generator, *shape: int, mean: float = 0.0, std: float = 1.0
            ) -> np.ndarray:
    return (rng.standard_normal(shape) * std + mean).astype(f32)


def _uniform(rng: np.random.Generator, lo: float, hi: float, *shape: int) -> np.ndarray:
    return rng.uniform(lo, hi, shape).astype(f32)


def _d(a: Any) -> Any:
    """float32 data (or a float32 scalar) as float64, for the reference."""
    return np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else float(a)


def ref_vector_add(s: dict[str, int], rng: np.random.Generator) -> Case:
    a, b = _normal(rng, s["n"]), _uniform(rng, -2, 2, s["n"])
    return {"a": a, "b": b, "n": s["n"]}, {"c": _d(a) + _d(b)}


def ref_saxpy_scale(s: dict[str, int], rng: np.random.Generator) -> Case:
    a, b = f32(1.75), f32(0.375)
    x, y = _normal(rng, s["n"]), _normal(rng, s["n"])
    return ({"a": a, "b": b, "x": x, "y": y, "n": s["n"]},
            {"y": _d(a) * _d(x) + _d(b) * _d(y)})


def ref_relu(s: dict[str, int], rng: np.random.Generator) -> Case:
    x = _normal(rng, s["n"])
    return {"x": x, "n": s["n"]}, {"y": np.maximum(_d(x), 0.0)}


def ref_gelu(s: dict[str, int], rng: np.random.Generator) -> Case:
    x = _normal(rng, s["n"], std=2.0)
    v = _d(x)
    y = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))
    return {"x": x, "n": s["n"]}, {"y": y}


def ref_bias_add(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, cols = s["rows"], s["cols"]
    x, bias = _normal(rng, rows, cols), _uniform(rng, -1, 1, cols)
    return ({"x": x, "bias": bias, "rows": rows, "cols": cols},
            {"y": _d(x) + _d(bias)[None, :]})


def ref_row_sum(s: dict[str, int], rng: np.random.Generator) -> Case:
    x = _normal(rng, s["rows"], s["cols"], mean=0.5)
    return {"x": x, "rows": s["rows"], "cols": s["cols"]}, {"out": _d(x).sum(axis=1)}


def ref_col_sum(s: dict[str, int], rng: np.random.Generator) -> Case:
    x = _normal(rng, s["rows"], s["cols"], mean=0.5)
    return {"x": x, "rows": s["rows"], "cols": s["cols"]}, {"out": _d(x).sum(axis=0)}


def ref_matvec(s: dict[str, int], rng: np.random.Generator) -> Case:
    A, x = _normal(rng, s["rows"], s["cols"]), _uniform(rng, -1, 1, s["cols"])
    return ({"A": A, "x": x, "rows": s["rows"], "cols": s["cols"]}, {"y": _d(A) @ _d(x)})


def ref_histogram(s: dict[str, int], rng: np.random.Generator) -> Case:
    data = rng.integers(0, 256, s["n"]).astype(np.uint8)
    data[:3] = (0, 255, 255)  # both ends of the range
    bins = rng.integers(0, 1000, 256).astype(np.uint32)
    want = bins + np.bincount(data, minlength=256).astype(np.uint32)
    return {"data": data, "bins": bins, "n": s["n"]}, {"bins": want}


def ref_prefix_scan(s: dict[str, int], rng: np.random.Generator) -> Case:
    n = s["n"]
    x = _normal(rng, n, mean=0.5)
    padded = np.zeros(-(-n // 1024) * 1024)
    padded[:n] = _d(x)
    y = np.cumsum(padded.reshape(-1, 1024), axis=1).ravel()[:n]  # each segment on its own
    return {"x": x, "n": n}, {"y": y}


def ref_stencil_1d(s: dict[str, int], rng: np.random.Generator) -> Case:
    n = s["n"]
    x = _normal(rng, n)
    w = _d(np.array([0.05, 0.1, 0.2, 0.3, 0.2, 0.1, 0.05], dtype=f32))
    xp = np.concatenate([np.zeros(3), _d(x), np.zeros(3)])
    y = sum(w[k] * xp[k:k + n] for k in range(7))
    return {"x": x, "n": n}, {"y": y}


def ref_stencil_2d(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, cols = s["rows"], s["cols"]
    u = _normal(rng, rows, cols)
    v = _d(u)
    want = v.copy()
    want[1:-1, 1:-1] = 0.25 * (v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
    return {"u": u, "rows": rows, "cols": cols}, {"u_next": want}


def ref_conv1d(s: dict[str, int], rng: np.random.Generator) -> Case:
    n, k = s["n"], s["k"]
    x, w = _normal(rng, n), _uniform(rng, -1, 1, k)
    windows = np.lib.stride_tricks.sliding_window_view(_d(x), k)  # windows[i] = x[i:i+k]
    return {"x": x, "w": w, "n": n, "k": k}, {"y": windows @ _d(w)}


def ref_rms_norm(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, cols, eps = s["rows"], s["cols"], f32(1e-5)
    x, weight = _normal(rng, rows, cols, mean=0.5), _uniform(rng, 0.5, 1.5, cols)
    v = _d(x)
    y = v / np.sqrt((v * v).mean(axis=1, keepdims=True) + _d(eps)) * _d(weight)
    return {"x": x, "weight": weight, "rows": rows, "cols": cols, "eps": eps}, {"y": y}


def ref_rotary_embedding(s: dict[str, int], rng: np.random.Generator) -> Case:
    seq, heads, head_dim, base = s["seq"], s["heads"], s["head_dim"], f32(10000.0)
    x = _normal(rng, seq, heads, head_dim)
    v = _d(x)
    i = np.arange(head_dim // 2)
    angle = np.arange(seq)[:, None] * _d(base) ** (-2.0 * i / head_dim)  # [seq, head_dim/2]
    c, sn = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    x0, x1 = v[..., 0::2], v[..., 1::2]
    y = np.empty_like(v)
    y[..., 0::2] = x0 * c - x1 * sn
    y[..., 1::2] = x0 * sn + x1 * c
    return ({"x": x, "seq": seq, "heads": heads, "head_dim": head_dim, "base": base},
            {"y": y})


def ref_cross_entropy(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, classes = s["rows"], s["classes"]
    logits = _normal(rng, rows, classes, std=3.0)
    labels = rng.integers(0, classes, rows).astype(np.int32)
    labels[0], labels[-1] = 0, classes - 1
    v = _d(logits)
    m = v.max(axis=1)
    lse = np.log(np.exp(v - m[:, None]).sum(axis=1)) + m
    loss = lse - v[np.arange(rows), labels]
    return ({"logits": logits, "labels": labels, "rows": rows, "classes": classes},
            {"loss": loss})


def ref_adam_update(s: dict[str, int], rng: np.random.Generator) -> Case:
    n = s["n"]
    lr, beta1, beta2, eps, step = f32(1e-3), f32(0.9), f32(0.999), f32(1e-8), 10
    param, grad = _normal(rng, n), _normal(rng, n, std=0.1)
    m, v = _normal(rng, n, std=0.01), _uniform(rng, 1e-4, 1e-3, n)
    b1, b2, g = _d(beta1), _d(beta2), _d(grad)
    m_new = b1 * _d(m) + (1 - b1) * g
    v_new = b2 * _d(v) + (1 - b2) * g * g
    m_hat, v_hat = m_new / (1 - b1**step), v_new / (1 - b2**step)
    p_new = _d(param) - _d(lr) * m_hat / (np.sqrt(v_hat) + _d(eps))
    return ({"param": param, "grad": grad, "m": m, "v": v, "lr": lr, "beta1": beta1,
             "beta2": beta2, "eps": eps, "step": step, "n": n},
            {"param": p_new, "m": m_new, "v": v_new})


def ref_embedding_gather(s: dict[str, int], rng: np.random.Generator) -> Case:
    tokens, vocab, dim = s["tokens"], s["vocab"], s["dim"]
    ids = rng.integers(0, vocab, tokens).astype(np.int32)
    ids[0] = vocab - 1
    table = _normal(rng, vocab, dim)
    return {"ids": ids, "table": table, "tokens": tokens, "dim": dim}, {"out": _d(table)[ids]}


def ref_batched_gemm_small(s: dict[str, int], rng: np.random.Generator) -> Case:
    batch, dim = s["batch"], s["dim"]
    A, B = _uniform(rng, -1, 1, batch, dim, dim), _uniform(rng, -1, 1, batch, dim, dim)
    return {"A": A, "B": B, "batch": batch, "dim": dim}, {"C": _d(A) @ _d(B)}


def ref_softmax_backward(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, cols = s["rows"], s["cols"]
    y, dy = _uniform(rng, 0, 0.01, rows, cols), _normal(rng, rows, cols)
    yv, dyv = _d(y), _d(dy)
    dx = yv * (dyv - (dyv * yv).sum(axis=1, keepdims=True))
    return {"y": y, "dy": dy, "rows": rows, "cols": cols}, {"dx": dx}


def ref_layernorm_backward(s: dict[str, int], rng: np.random.Generator) -> Case:
    rows, cols = s["rows"], s["cols"]
    dy, x = _normal(rng, rows, cols), _normal(rng, rows, cols, mean=0.5)
    gamma = _uniform(rng, 0.5, 1.5, cols)
    mean, rstd = _normal(rng, rows, mean=0.5, std=0.1), _uniform(rng, 0.5, 2, rows)
    xhat = (_d(x) - _d(mean)[:, None]) * _d(rstd)[:, None]
    g = _d(dy) * _d(gamma)[None, :]
    dx = _d(rstd)[:, None] * (g - g.mean(axis=1, keepdims=True)
                              - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return ({"dy": dy, "x": x, "gamma": gamma, "mean": mean, "rstd": rstd, "rows": rows,
             "cols": cols}, {"dx": dx})


def ref_silu_mul(s: dict[str, int], rng: np.random.Generator) -> Case:
    tokens, hidden = s["tokens"], s["hidden"]
    x = _normal(rng, tokens, 2 * hidden, std=2.0)
    g, u = _d(x)[:, :hidden], _d(x)[:, hidden:]
    return {"x": x, "tokens": tokens, "hidden": hidden}, {"out": g / (1 + np.exp(-g)) * u}


REFERENCES: dict[str, Callable[[dict[str, int], np.random.Generator], Case]] = {
    name: globals()[f"ref_{name}"] for name in NAMES
}


def test_every_kernel_has_a_reference_for_all_its_arguments() -> None:
    """The references name exactly the kernels' parameters and outputs (checked without a
    GPU, so that a typo does not wait for the device machine)."""
    rng = np.random.default_rng(0)
    for name in NAMES:
        _, _, spec, bound = load(name)
        sizes = min(spec.verify_sizes, key=lambda s: math.prod(s.values()))
        args, want = REFERENCES[name](sizes, rng)
        assert set(args) == {a.spec.name for a in bound.args if a.spec.role != "out"}, name
        assert set(want) == {a.spec.name for a in bound.args
                             if a.pointer and a.spec.role in ("out", "inout")}, name
        env = bound.env(sizes)
        for a in bound.args:
            if a.pointer:
                n = element_count(a.spec.shape or (), env)
                got = want[a.spec.name] if a.spec.role != "in" else args[a.spec.name]
                assert np.asarray(got).size == n, (name, a.spec.name)
                assert np.all(np.isfinite(np.asarray(got, dtype=np.float64))), (name, a.spec.name)


# -- on the GPU ------------------------------------------------------------------------


def run_kernel(name: str, sizes: dict[str, int], args: dict[str, Any]) -> dict[str, np.ndarray]:
    """Compile the file with CuPy's own NVRTC path (not the gate's), launch it once with the
    spec's geometry at ``sizes``, and return every out and inout buffer."""
    import cupy as cp

    from klc.gate.verify import storage_dtype

    _, source, spec, bound = load(name)
    module = cp.RawModule(code=source.decode(), options=("-std=c++17",),
                          name_expressions=[bound.name_expression])
    fn = module.get_function(bound.name_expression)
    env = bound.env(sizes)
    launch_args: list[Any] = []
    outputs: dict[str, Any] = {}
    for a in bound.args:
        dtype = storage_dtype(a.ctype.dtype)
        if not a.pointer:
            launch_args.append(dtype.type(args[a.spec.name]))
            continue
        count = element_count(a.spec.shape or (), env)
        if a.spec.role == "out":  # NaN (or 0xA5 bytes): an element never written shows
            buf = cp.full(count, np.nan, dtype=dtype) if dtype.kind == "f" else \
                cp.full(count, 0xA5, dtype=dtype)
        else:
            host = np.ascontiguousarray(args[a.spec.name], dtype=dtype).ravel()
            assert host.size == count, (name, a.spec.name, host.size, count)
            buf = cp.asarray(host)
        if a.spec.role != "in":
            outputs[a.spec.name] = buf
        launch_args.append(buf)
    fn(launch_dims(spec.grid, env), launch_dims(spec.block, env), tuple(launch_args),
       shared_mem=int(evaluate(spec.shared, env)))
    cp.cuda.Device().synchronize()
    return {k: v.get() for k, v in outputs.items()}


def assert_matches(label: str, got: np.ndarray, want: np.ndarray, rtol: float,
                   atol: float) -> None:
    """Integers exactly; floats as the gate compares (relative to max(|want|, rms(want)))."""
    want = np.asarray(want).ravel()
    if got.dtype.kind in "iu":
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (f"{label}[{bad[0]}] = {got[bad[0]]}, expected {want[bad[0]]} "
                               f"({bad.size} of {got.size} differ)")
        return
    g = got.astype(np.float64)
    scale = float(np.sqrt(np.mean(want * want)))
    bound = atol + rtol * np.maximum(np.abs(want), scale)
    bad = np.flatnonzero(~(np.abs(g - want) <= bound))  # NaN (unwritten) is bad too
    assert bad.size == 0, (f"{label}[{bad[0]}] = {g[bad[0]]!r}, expected {want[bad[0]]!r} "
                           f"({bad.size} of {g.size} outside rtol {rtol:g}, atol {atol:g})")


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gate_passes_against_itself(name: str) -> None:
    path, source, spec, _ = load(name)
    rec = gate(source, str(path))
    assert rec.verdict == "passed", rec.reason
    assert len(rec.stages["verify"].data["cases"]) == 3 * len(spec.verify_sizes)
    sol = rec.stages["profile"].data["sol"]
    assert 0 < sol["pct_of_sol"] < 100 / 0.9


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_matches_numpy_reference(name: str) -> None:
    from klc.gate.verify import tolerance_for

    _, _, spec, _ = load(name)
    tol = {"rtol": spec.tolerance.rtol, "atol": spec.tolerance.atol} if spec.tolerance else None
    rtol, atol = tolerance_for("float32", tol)
    for i, sizes in enumerate(spec.verify_sizes):
        args, want = REFERENCES[name](sizes, np.random.default_rng(1000 + i))
        got = run_kernel(name, sizes, args)
        label = " ".join(f"{k}={v}" for k, v in sizes.items())
        for buf, expected in want.items():
            assert_matches(f"{name} {label}: {buf}", got[buf], expected, rtol, atol)
