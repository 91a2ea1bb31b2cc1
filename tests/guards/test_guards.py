"""Guard predicates on small real kernels: each one true and false, with the reason it gives.

The matcher is not needed: a ``Match`` is built by hand from the parsed unit (the anchor is a
span of the source, each metavariable the node covering a span), which is exactly what the
matcher hands to the guards.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from klc.cuda.model import Unit
from klc.cuda.parse import parse_bytes
from klc.edits.render import render
from klc.guards import PREDICATES, GuardContext, Verdict, evaluate
from klc.match import Binding, Match
from klc.pipeline import spec_of
from klc.rule.compile import parse_guard
from klc.rule.holes import HoleDecl
from klc.rule.registry import make_edit
from klc.spec import ArgSpec, Bound, Spec

K1 = """\
#define TILE 32
#define N (TILE * 4)
constexpr int K = 6;
__global__ void __launch_bounds__(256) k1(const float* __restrict__ x, float* y, float4* v,
                                          int n) {
  __shared__ float tile[TILE][TILE + 1];
  __shared__ __align__(16) float s2[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = threadIdx.x + blockDim.x * blockIdx.x + 1;
  const float* xs = x + 1;
  const float* x4 = x + 4;
  float a = 0.0f;
  for (int k = 0; k < 8; ++k) { a += x[k]; }
  #pragma unroll 4
  for (int k = 0; k < n; k += 2) { a += x[k]; }
  int z = N + K + TILE;
  if (i < n) y[i] = a;
  __syncthreads();
  y[0] = __shfl_down_sync(0xffffffff, a, 1);
}
"""

K2 = """\
__global__ void k2(float* __restrict__ p, float* __restrict__ q, int n) {
  int t = threadIdx.x;
  int lane = t % 32;
  if (lane < 16) {
    __syncthreads();
  }
  p[t] = q[t];
}
"""

K3 = """\
__global__ void k3(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int s = 1; s < 64; s *= 2) {
    if (threadIdx.x > s) break;
    __syncthreads();
  }
  y[i] = 1.0f;
}
"""


def unit_of(src: str, path: str = "k.cu") -> Unit:
    return parse_bytes(src.encode(), path)


def span(unit: Unit, text: str, nth: int = 0, after: int = 0) -> tuple[int, int]:
    """The nth occurrence of ``text`` at or after ``after``, as whole words."""
    pattern = re.compile(rb"(?<![\w])" + re.escape(text.encode()) + rb"(?![\w])")
    found = list(pattern.finditer(unit.source, after))
    return found[nth].start(), found[nth].end()


def node(unit: Unit, start: int, end: int) -> Any:
    n = unit.root.descendant_for_byte_range(start, end)
    assert n is not None and (n.start_byte, n.end_byte) == (start, end), unit.text(start, end)
    return n


def context(src: str | Unit, anchor: str, *, nth: int = 0, holes: dict[str, str] | None = None,
            spec: Spec | Bound | None = None, rule: object | None = None,
            **binds: str | tuple[str, int]) -> GuardContext:
    """A match of ``anchor`` (its nth occurrence) with metavariables bound to spans inside it
    (a text, or (text, nth occurrence inside the anchor))."""
    unit = src if isinstance(src, Unit) else unit_of(src)
    start, end = span(unit, anchor, nth)
    bindings = {}
    for name, what in binds.items():
        text, k = (what, 0) if isinstance(what, str) else what
        s, e = span(unit, text, k, after=start)
        assert e <= end, f"{text!r} is not inside the anchor"
        bindings[name] = Binding(name, s, e, unit.text(s, e), (node(unit, s, e),))
    covering = unit.root.descendant_for_byte_range(start, end)
    m = Match(rule, unit, unit.function_at(start), start, end,  # type: ignore[arg-type]
              (covering,), bindings)
    return GuardContext(m, holes or {}, spec, render=render)  # (as the pipeline passes it)


def kernel_spec(kernel: str, **fields: Any) -> Spec:
    """A spec for ``kernel`` with only the given fields (the rest empty)."""
    empty: dict[str, Any] = dict(
        path="k.cu", kernel=kernel, template=(), sizes={}, verify_sizes=(), args=(), grid=(),
        block=(), shared="", bytes=None, flops=None, peak="", tolerance=None, timeout_s=0.0,
        options=(), span=(0, 0))
    return Spec(**{**empty, **fields})


def buffer(name: str, shape: tuple[str, ...]) -> ArgSpec:
    return ArgSpec(name, None, shape, None, None, None, 0, 0)


def check(ctx: GuardContext, guard: str) -> Verdict:
    return evaluate(parse_guard(guard), ctx)


def yes(ctx: GuardContext, guard: str) -> Verdict:
    v = check(ctx, guard)
    assert v.ok and not v.unknown, v.reason
    return v


def no(ctx: GuardContext, guard: str, *fragments: str) -> Verdict:
    v = check(ctx, guard)
    assert not v.ok, v.reason
    for f in fragments:
        assert f in v.reason, (f, v.reason)
    return v


# --------------------------------------------------------------------------------------
# The registry


def test_vocabulary_is_documented() -> None:
    assert len(PREDICATES) >= 18
    for name, p in PREDICATES.items():
        assert p.name == name and p.doc and (p.doc[0].isupper() or p.doc[0] == "$"), name
        assert p.signature.startswith(name)


# --------------------------------------------------------------------------------------
# Types and qualifiers


def test_elem_type() -> None:
    ctx = context(K1, "if (i < n) y[i] = a;", Y="y", V="a")
    yes(ctx, 'elem_type($Y, "float")')
    no(ctx, 'elem_type($Y, "double")',
       "the element type of `y` is float, not double (declared at k.cu:4:72: float* y)")
    v4 = context(K1, "float4* v", V="v")
    yes(v4, "elem_type($V, float4)")
    local = context(K1, "const float* xs = x + 1;", X="xs")
    yes(local, 'elem_type($X, "float")')
    sub = context(K1, "a += x[k];", E="x[k]")
    yes(sub, 'elem_type($E, "float")')


def test_elem_type_of_a_hole_or_a_type_metavariable() -> None:
    # the type to compare with may be a hole's value (privatize_atomic_histogram's ?t) or the
    # type a metavariable bound (its simplification's $T: `__shared__ $T $S[$NB];`)
    src = ("__global__ void h(const int* k, unsigned int* hist, int* signed_hist) {\n"
           "  __shared__ unsigned int local[64];\n  atomicAdd(&hist[k[0]], 1u);\n}\n")
    ctx = context(src, "atomicAdd(&hist[k[0]], 1u)", G="hist", holes={"t": "unsigned int"})
    yes(ctx, "elem_type($G, ?t)")
    wrong = context(src, "atomicAdd(&hist[k[0]], 1u)", G="hist", holes={"t": "int"})
    no(wrong, "elem_type($G, ?t)", "the element type of `hist` is unsigned int, not int")
    pending = check(context(src, "atomicAdd(&hist[k[0]], 1u)", G="hist"), "elem_type($G, ?t)")
    assert pending.ok and pending.unknown  # no value yet: pending, judged once filled
    unit = unit_of(src)
    both = context(unit, "unsigned int* hist, int* signed_hist", G="hist", S="signed_hist",
                   T="unsigned int")
    yes(both, "elem_type($G, $T)")
    no(both, "elem_type($S, $T)", "the element type of `signed_hist` is int, not unsigned int")


def test_is_pointer_const_restrict() -> None:
    ctx = context(K1, "if (i < n) y[i] = a;", Y="y", N="n", I="i")
    yes(ctx, "is_pointer($Y)")
    no(ctx, "is_pointer($N)", "`n` is not a pointer: its type is int")
    no(ctx, "is_const($Y)", "`y` is not const (k.cu:4:72: float* y)")
    no(ctx, "is_restrict($Y)", "`y` is not __restrict__ (k.cu:4:72: float* y)")
    x = context(K1, "a += x[k];", X="x")
    yes(x, "is_const($X) and is_restrict($X) and is_pointer($X)")
    no(context(K1, "x4 = x + 4", P="x4"), "is_restrict($P)", "`x4` is not __restrict__",
       "k.cu:11:3: const float* x4 = x + 4;")


def test_is_identifier_same_text_kernel_param() -> None:
    ctx = context(K1, "const float* xs = x + 1;", X="x", E="x + 1", XS="xs")
    yes(ctx, "is_identifier($X) and is_kernel_param($X)")
    no(ctx, "is_identifier($E)", "`x + 1` is not an identifier but binary expression "
       "(k.cu:10:21)")
    no(ctx, "is_kernel_param($XS)", "`xs` is not a parameter of k1 (declared at k.cu:10:3")
    loop = context(K1, "for (int k = 0; k < 8; ++k) { a += x[k]; }", A="x[k]",
                   B=("x[k]", 0))
    yes(loop, "same_text($A, $B)")
    two = context(K1, "if (i < n) y[i] = a;", A="y[i]", B="i < n")
    no(two, "same_text($A, $B)", "`y[i]` (k.cu:17:14) and `i < n` (k.cu:17:7) differ")


# --------------------------------------------------------------------------------------
# Constants


def test_is_constant_and_const_value() -> None:
    ctx = context(K1, "int z = N + K + TILE;", Z="N + K + TILE", N="N", K="K", T="TILE")
    yes(ctx, "is_constant($Z)")
    v = yes(ctx, "const_value($Z, ==, 166)")
    assert "#define N (TILE * 4)" in v.reason and "constexpr int K = 6;" in v.reason
    yes(ctx, "equals($N, 128) and const_value($T, >=, 32)")
    no(ctx, "const_value($K, <, 5)", "`K` = 6", "and not 6 < 5")
    n = context(K1, "if (i < n)", N="n")
    no(n, "is_constant($N)", "`n` is not a compile-time constant: `n` is a parameter "
       "(a run-time value) (k.cu:17:11)")


TPL = """\
constexpr int TILE = 8;  // shadowed inside t by its template parameter
template <int TILE, typename T>
__global__ void t(T* y) {
  __shared__ T s[TILE][TILE + 1];
  y[threadIdx.x] = s[0][0];
}
void host(float* y) {
  t<32, float><<<1, 32>>>(y);
}
"""


def test_template_parameter_constants_without_clang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A template value parameter takes its file's one instantiation; with none or several
    it is unknown, and so is any expression on it: clang could not evaluate it either
    (it is value-dependent), so no translation unit is parsed to learn that."""
    from klc.cuda.facts import Facts

    def no_parse(self: Facts) -> None:
        raise AssertionError("libclang was asked")

    monkeypatch.setattr(Facts, "tu", property(no_parse))
    one = context(TPL, "__shared__ T s[TILE][TILE + 1];", E="TILE + 1")
    v = yes(one, "const_value($E, ==, 33)")  # 32 + 1, not the shadowed file constant 8 + 1
    assert "template argument TILE = 32 (its one instantiation in the file)" in v.reason
    for launches in ("", "  t<32, float><<<1, 32>>>(y);\n  t<16, float><<<1, 16>>>(y);\n"):
        src = TPL.replace("  t<32, float><<<1, 32>>>(y);\n", launches)
        ctx = context(src, "__shared__ T s[TILE][TILE + 1];", E="TILE + 1")
        v = check(ctx, "is_constant($E)")
        assert not v.ok and v.unknown, v.reason
        assert "`TILE` is a template parameter of t" in v.reason
        assert "libclang" not in v.reason  # the same answer with and without clang
    spec = kernel_spec("t", template=(("TILE", "64"),))
    yes(context(TPL, "__shared__ T s[TILE][TILE + 1];", spec=spec, E="TILE + 1"),
        "const_value($E, ==, 65)")


def test_divisible_and_power_of_two() -> None:
    ctx = context(K1, "int z = N + K + TILE;", N="N", K="K", T="TILE")
    yes(ctx, "divisible($N, 32) and power_of_two($T) and power_of_two($N)")
    no(ctx, "divisible($K, 4)", "`K` = 6 (from constexpr int K = 6;) is not a multiple of 4")
    no(ctx, "power_of_two($K)", "`K` = 6", "is not a power of two")
    yes(context(K1, "int z = N + K + TILE;", holes={"f": "16"}, N="N"), "divisible($N, ?f)")
    assert check(context(K1, "int z = N + K + TILE;", N="N"),
                 "divisible($N, ?f)").reason == "divisible: depends on ?f"


def test_divisible_by_spec_sizes_only_when_every_size_is() -> None:
    def spec(verify: tuple[dict[str, int], ...]) -> Spec:
        return kernel_spec("k1", sizes={"n": 4096}, verify_sizes=verify)

    good = context(K1, "if (i < n)", spec=spec(({"n": 1024}, {"n": 64})), N="n")
    yes(good, "divisible($N, 64)")
    bad = context(K1, "if (i < n)", spec=spec(({"n": 1000},)), N="n")
    no(bad, "divisible($N, 64)", "`n` takes the value 1000 in the spec, not a multiple of 64")
    derived = context(K1, "if (i < n)", spec=spec(()), N="n")
    no(derived, "divisible($N, 64)", "`n` is a parameter (a run-time value)",
       "the spec does not fix it for every verification size")
    other_kernel = kernel_spec("other", sizes={"n": 64}, verify_sizes=({"n": 64},))
    no(context(K1, "if (i < n)", spec=other_kernel, N="n"), "divisible($N, 64)")


# --------------------------------------------------------------------------------------
# Alignment, writes, aliasing


def test_aligned() -> None:
    ctx = context(K1, "const float* x4 = x + 4;", X="x", X4="x4")
    yes(ctx, "aligned($X, 16) and aligned($X4, 16)")
    v = yes(ctx, "aligned($X, 256)")
    assert "kernel parameter `x`, a device allocation at offset 0" in v.reason
    xs = context(K1, "const float* xs = x + 1;", XS="xs")
    no(xs, "aligned($XS, 16)", "`xs` is only known to be 4-byte aligned, not 16",
       "offset by 1 × 4 bytes, copied into `xs` (k.cu:10:3: const float* xs = x + 1;)")
    yes(context(K1, "__shared__ __align__(16) float s2[64];", S="s2"), "aligned($S, 16)")
    yes(context(K1, "float4* v", V="v"), "aligned($V, 16)")
    no(context(K1, "__shared__ float tile", T="tile"), "aligned($T, 16)",
       "only known to be 4-byte aligned")


def test_aligned_device_function_parameter_is_unknown() -> None:
    src = ("__device__ void f(const float* p) {\n"
           "  float4 v = reinterpret_cast<const float4*>(p)[0];\n}\n")
    no(context(src, "reinterpret_cast<const float4*>(p)[0]", P="p"), "aligned($P, 16)",
       "`p` is not a pointer parameter of a kernel (k.cu:1:19: const float* p)")


def test_no_write_and_writes_in() -> None:
    ctx = context(K1, "if (i < n) y[i] = a;", Y="y")
    yes(context(K1, "a += x[k];", X="x"), "no_write($X, kernel)")
    no(ctx, "no_write($Y, kernel)", "`y` is written in global function `k1`: "
       "k.cu:17:14: y[i] = a stores through it")
    yes(ctx, "writes_in($Y, anchor)")
    loop = context(K1, "a += x[k];", Y=("x", 0))
    yes(loop, "no_write($Y, loop)")
    no(context(K1, "if (i < n)", X="i"), "no_write($X, loop)", "is not inside a loop")


@pytest.mark.parametrize(("body", "what"), [
    ("atomicAdd(&p[0], 1.0f);", "writes it with atomicAdd"),
    ("p[t]++;", "stores through it"),
    ("float* alias = p + 4; alias[0] = 1.0f;", "stores through it"),
    ("reinterpret_cast<float4*>(p)[t].x = 2.0f;", "stores through it"),
    ("helper(p + t);", "passes it to helper, which may write through it"),
    ("helper(t + p - 1);", "passes it to helper, which may write through it"),
    ('asm volatile("st.global.f32 [%0], 1.0;" :: "l"(p));', "passes it to inline asm"),
    ("p = q;", "reassigns the pointer"),
])
def test_every_kind_of_write_is_seen(body: str, what: str) -> None:
    src = ("__global__ void w(float* p, float* q) {\n  int t = threadIdx.x;\n  float r = p[t];\n"
           f"  {body}\n}}\n")
    no(context(src, "float r = p[t];", P="p"), "no_write($P, kernel)", what)


def test_reads_are_not_writes() -> None:
    src = ("__global__ void r(const float* p, float* q) {\n  int t = threadIdx.x;\n"
           "  q[t] = __ldg(&p[t]) + p[t + 1] + fmaxf(p[0], 1.0f);\n  q[p[0] > 0] = 1;\n}\n")
    ctx = context(src, "q[t] = __ldg(&p[t])", P="p")
    yes(ctx, "no_write($P, kernel)")



def test_a_difference_of_loaded_values_passes_no_pointer() -> None:
    src = ("__global__ void d(const float* a, const float* b, float* q) {\n"
           "  int t = threadIdx.x;\n  q[t] = fabsf(a[t] - b[t]) + helper(a[t] + 1.0f);\n}\n")
    yes(context(src, "fabsf(a[t] - b[t])", P="a"), "no_write($P, kernel)")
    yes(context(src, "fabsf(a[t] - b[t])", P="b"), "no_write($P, kernel)")


def test_no_alias() -> None:
    both = context(K2, "p[t] = q[t];", P="p", Q="q")
    yes(both, "no_alias($P, $Q)")
    no(both, "no_alias($P, $P)", "are the same buffer `p`")
    ro = ("__global__ void ro(const float* a, const float* b, float* out) {\n"
          "  float s = a[0] + b[0];\n  out[0] = s;\n}\n")
    v = yes(context(ro, "float s = a[0] + b[0];", A="a", B="b"), "no_alias($A, $B)")
    assert v.reason == "neither `a` nor `b` is written in `ro`"
    ctx = context(ro, "float s = a[0] + b[0];", A="a", B="b")
    out = context(ctx.match.unit, "out[0] = s;", O="out")
    ctx.match.bindings["O"] = out.match.bindings["O"]
    no(ctx, "no_alias($A, $O)", "`a` and `out` may alias: `a`, `out` not __restrict__",
       "`out` is written (k.cu:3:3: out[0] = s stores through it)")
    ctx.spec = kernel_spec("ro", args=(buffer("a", ("n",)), buffer("out", ("n",))))
    assert "distinct buffers allocated by the spec" in yes(ctx, "no_alias($A, $O)").reason


# --------------------------------------------------------------------------------------
# Threads and blocks


def test_thread_linear_index() -> None:
    ctx = context(K1, "int j = threadIdx.x + blockDim.x * blockIdx.x + 1;", J="j",
                  E="threadIdx.x + blockDim.x * blockIdx.x")
    yes(context(K1, "if (i < n)", I="i"), "thread_linear_index($I)")
    yes(ctx, "thread_linear_index($E)")
    no(ctx, "thread_linear_index($J)", "`j` is not the thread's linear index "
       "(k.cu:9:3: int j = threadIdx.x + blockDim.x * blockIdx.x + 1;)")
    reassigned = ("__global__ void r(float* y) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;"
                  "\n  i += 1;\n  y[i] = 0;\n}\n")
    no(context(reassigned, "y[i] = 0;", I="i"), "thread_linear_index($I)", "reassigned later")
    tid = ("__global__ void c(float* y) {\n  unsigned int tid = threadIdx.x;\n"
           "  int i = blockIdx.x * blockDim.x + tid;\n  y[i] = 0;\n}\n")
    yes(context(tid, "y[i] = 0;", I="i"), "thread_linear_index($I)")
    moved = tid.replace("y[i] = 0;", "tid += 1; y[i] = 0;")
    no(context(moved, "y[i] = 0;", I="i"), "thread_linear_index($I)")


def test_block_size_from_launch_bounds_is_an_upper_bound() -> None:
    ctx = context(K1, "if (i < n)")
    v = yes(ctx, "block_size_known and block_size(<=, 256) and block_size(<, 1024)")
    assert "__launch_bounds__(256) (k.cu:4:17)" in v.reason
    no(ctx, "block_size(==, 256)", "only an upper bound of 256 threads per block is known")
    no(ctx, "block_size(<=, 128)")


def test_block_size_from_spec_and_launches() -> None:
    from klc.spec import load_spec

    src = ("/* klc-spec\nkernel: s\nsizes: {n: 1024}\nargs:\n"
           "  - {name: y, type: \"float*\", shape: [n], role: inout, init: normal}\n"
           "  - {name: n, type: int, value: n}\ngrid: [\"ceil_div(n, 128)\"]\nblock: [64, 2]\n*/\n"
           "__global__ void s(float* y, int n) { y[threadIdx.x] = 0.0f; }\n")
    spec = load_spec(src.encode(), "s.cu")
    v = yes(context(src, "y[threadIdx.x] = 0.0f;", spec=spec), "block_size(==, 128)")
    assert "block 64×2×1" in check(context(src, "y[threadIdx.x] = 0.0f;", spec=spec),
                                   "block_size_known").reason
    assert "the spec's block" in v.reason
    host = ("__global__ void g(float* y) { y[0] = 1; }\n"
            "void run(float* y) { g<<<4, dim3(32, 4)>>>(y); g<<<8, dim3(32, 4)>>>(y); }\n")
    yes(context(host, "y[0] = 1;"), "block_size(==, 128)")
    unknown = "__global__ void u(float* y) { y[0] = 1; }\n"
    no(context(unknown, "y[0] = 1;"), "block_size_known",
       "the block size of `u` is unknown: no spec block, no launch of `u` in this file and no "
       "__launch_bounds__")


def test_sync_uniform() -> None:
    yes(context(K1, "__syncthreads();"), "sync_uniform(kernel) and sync_uniform")
    no(context(K2, "p[t] = q[t];"), "sync_uniform(kernel)",
       "`__syncthreads()` (k.cu:5:5) is under `lane < 16` (k.cu:4:7), which depends on the "
       "thread (`t % 32`)")
    no(context(K3, "y[i] = 1.0f;"), "sync_uniform",
       "`break;` (k.cu:5:26) under the thread-dependent `threadIdx.x > s` leaves the loop "
       "around `__syncthreads()` (k.cu:6:5)")
    uniform = ("__global__ void u(float* y, int n) {\n  for (int s = 1; s < n; s *= 2) {\n"
               "    if (blockIdx.x > 3) y[0] = 1;\n    __syncthreads();\n  }\n}\n")
    yes(context(uniform, "y[0] = 1;"), "sync_uniform")


def test_no_early_return_before_barrier_and_warp_intrinsics() -> None:
    yes(context(K1, "if (i < n)"), "no_early_return_before_barrier and uses_warp_intrinsics")
    no(context(K3, "y[i] = 1.0f;"), "no_early_return_before_barrier",
       "`return;` (k.cu:3:15) comes before `__syncthreads()` (k.cu:6:5)")
    no(context(K2, "p[t] = q[t];"), "uses_warp_intrinsics(kernel)",
       "global function `k2` calls no warp intrinsic")
    no(context(K1, "a += x[k];"), "uses_warp_intrinsics(loop)", "calls no warp intrinsic")


def test_smem_fits_counts_the_rewrite_with_hole_values() -> None:
    rule = SimpleNamespace(edits=(make_edit("insert_body_start",
                                       template="__shared__ float ?name[?tile][$W];"),),
                           holes={}, location="r.rule:1")
    ctx = context(K1, "int z = N + K + TILE;", rule=rule, W="TILE")
    v = check(ctx, "smem_fits")
    assert v.ok and v.unknown and v.reason == "smem_fits: depends on ?name"
    filled = context(K1, "int z = N + K + TILE;", rule=rule, holes={"name": "t2", "tile": "64"},
                     W="TILE")
    v = yes(filled, "smem_fits")
    assert v.reason == ("4480 B declared in `k1` + 8192 B from the rewrite = 12672 B fits "
                        "49152 B")
    big = context(K1, "int z = N + K + TILE;", rule=rule, holes={"name": "t2", "tile": "512"},
                  W="TILE")
    no(big, "smem_fits", "4480 B declared in `k1` + 65536 B from the rewrite = 70016 B exceeds "
       "49152 B (k.cu:4:1:")
    yes(big, "smem_fits(optin) and smem_fits(80000)")
    no(context(K1, "int z"), "smem_fits(4000)", "4480 B declared in `k1` = 4480 B exceeds 4000 B")


def test_smem_fits_reads_the_declarations_as_the_rewrite_writes_them() -> None:
    """A value substituted into a size keeps its meaning (in parentheses), as the rewrite
    writes it: `?n * 64` with ?n = `8 + 8` is 1024 floats (4096 B), not 8 + 8 * 64 = 520."""
    rule = SimpleNamespace(edits=(make_edit("insert_body_start",
                                       template="__shared__ float extra[?n * 64];"),),
                           holes={"n": HoleDecl("n", "expr")}, location="r.rule:1")
    ctx = context(K1, "int z = N + K + TILE;", rule=rule, holes={"n": "8 + 8"})
    no(ctx, "smem_fits(8000)", "4480 B declared in `k1` + 4096 B from the rewrite = 8576 B "
       "exceeds 8000 B")
    bound = SimpleNamespace(edits=(make_edit("insert_body_start",
                                        template="__shared__ float extra[$W * 64];"),),
                            holes={}, location="r.rule:1")
    ctx = context(K1, "int z = N + K + TILE;", rule=bound, W="N + K")
    no(ctx, "smem_fits(8000)", "+ 34304 B from the rewrite")  # (128 + 6) * 64 * 4


# --------------------------------------------------------------------------------------
# Loops


def test_trip_count_known() -> None:
    first = context(K1, "for (int k = 0; k < 8; ++k) { a += x[k]; }",
                    LOOP="for (int k = 0; k < 8; ++k) { a += x[k]; }", COND="k < 8")
    v = yes(first, "trip_count_known($LOOP) and trip_count_known($COND)")
    assert "`for (int k = 0; k < 8; ++k)` runs 8 iterations" in v.reason
    yes(first, "trip_count_known(anchor)")
    second = context(K1, "for (int k = 0; k < n; k += 2) { a += x[k]; }", COND="k < n")
    no(second, "trip_count_known($COND)",
       "the trip count of `for (int k = 0; k < n; k += 2)` (k.cu:15:3) is not known: the bound "
       "`n` is not constant: `n` is a parameter (a run-time value)")
    body = context(K1, "a += x[k];", E="a")
    no(body, "trip_count_known($E)", "is neither a loop nor in a loop header")
    yes(body, "trip_count_known(loop)")
    geometric = context(K3, "for (int s = 1; s < 64; s *= 2)", C="s < 64")
    assert "runs 6 iterations" in yes(geometric, "trip_count_known($C)").reason


def test_has_pragma_unroll_and_in_loop() -> None:
    second = context(K1, "for (int k = 0; k < n; k += 2) { a += x[k]; }")
    yes(second, "has_pragma_unroll(anchor) and has_pragma_unroll(anchor, 4)")
    no(second, "has_pragma_unroll(anchor, 8)", "has #pragma unroll 4, not 8")
    first = context(K1, "for (int k = 0; k < 8; ++k) { a += x[k]; }")
    no(first, "has_pragma_unroll(anchor)", "the loop at k.cu:13:3 has no #pragma unroll")
    no(first, "in_loop", "is not inside a loop")
    inner = context(K1, "a += x[k];", nth=1, holes={"u": "4"})
    v = yes(inner, "in_loop and has_pragma_unroll(loop, ?u)")
    assert "inside the for loop at k.cu:15:3" in v.reason


def test_has_pragma_unroll_reads_a_macro_that_stands_for_one_as_the_model_does() -> None:
    """A masked macro that stands for ``#pragma unroll`` (CUTLASS_PRAGMA_UNROLL, one of the
    file's own) counts as the pragma, with its factor, as the model's loop says; the guard
    reads the one loop and leaves the rest of the model's constructs unfound."""
    src = ("#define MY_UNROLL_2 _Pragma(\"unroll 2\")\n"
           "__global__ void k(float* x, int n) {\n  float a = 0.0f;\n"
           "  CUTLASS_PRAGMA_UNROLL\n  for (int i = 0; i < 8; ++i) { a += x[i]; }\n"
           "  MY_UNROLL_2\n  for (int j = 0; j < n; ++j) { a += x[j]; }\n"
           "  for (int m = 0; m < n; ++m) { a += x[m]; }\n  x[0] = a;\n}\n")
    first = context(src, "for (int i = 0; i < 8; ++i) { a += x[i]; }")
    yes(first, "has_pragma_unroll(anchor)")
    assert not first.unit._constructed
    second = context(src, "for (int j = 0; j < n; ++j) { a += x[j]; }")
    yes(second, "has_pragma_unroll(anchor, 2)")
    no(second, "has_pragma_unroll(anchor, 4)", "has #pragma unroll 2, not 4")
    no(context(src, "for (int m = 0; m < n; ++m) { a += x[m]; }"), "has_pragma_unroll(anchor)",
       "has no #pragma unroll")
    unit = unit_of(src)
    assert [lp.unroll for lp in unit.functions[0].loops] == ["", "2", None]
    fn = unit_of(src).functions[0]  # (its unit let go: no tree to find its loops in)
    with pytest.raises(RuntimeError, match="after its unit was let go"):
        fn.loops  # noqa: B018


def test_not_in_error() -> None:
    yes(context(K1, "if (i < n)"), "not_in_error")
    broken = "__global__ void b(float* y) {\n  y[0] = 1.0f;\n  y[1] = ) 2 (;\n}\n"
    unit = unit_of(broken)
    assert unit.problems
    bad = unit.problems[0]
    m = Match(None, unit, unit.function_at(bad.start), bad.start,  # type: ignore[arg-type]
              bad.start + 1, (unit.root,), {})
    no(GuardContext(m), "not_in_error", "the match overlaps a syntax error: k.cu:3:")


# --------------------------------------------------------------------------------------
# The evaluator


def test_and_or_not_reasons() -> None:
    ctx = context(K1, "if (i < n) y[i] = a;", Y="y", N="n")
    v = no(ctx, "is_pointer($Y) and is_const($Y) and is_restrict($Y)")
    assert v.reason == "`y` is not const (k.cu:4:72: float* y)"
    v = no(ctx, "is_const($Y) or is_restrict($Y)")
    assert v.reason == ("`y` is not const (k.cu:4:72: float* y); and `y` is not __restrict__ "
                        "(k.cu:4:72: float* y)")
    assert no(ctx, "not is_pointer($Y)").reason == "not (`y` is a pointer)"
    yes(ctx, "not is_pointer($N) and (is_const($Y) or is_pointer($Y))")


def test_pending_holes_pass_and_stay_pending_under_not() -> None:
    ctx = context(K1, "int z = N + K + TILE;", N="N")
    for guard in ("divisible($N, ?f)", "not divisible($N, ?f)",
                  "is_constant($N) and divisible($N, ?f)"):
        v = check(ctx, guard)
        assert v.ok and v.unknown and "depends on ?f" in v.reason, guard
    v = check(ctx, "divisible($N, ?f) and divisible($N, 3)")
    assert not v.ok and not v.unknown


def test_missing_libclang_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(K1, "y[0] = __shfl_down_sync(0xffffffff, a, 1);",
                  E="__shfl_down_sync(0xffffffff, a, 1)")

    def no_facts(self: Unit) -> None:
        raise ImportError("No module named 'clang'")

    monkeypatch.setattr(Unit, "facts", property(no_facts))
    for guard in ('elem_type($E, "float")', 'not elem_type($E, "float")', "is_pointer($E)"):
        v = check(ctx, guard)
        assert not v.ok and v.unknown, guard
        assert "libclang facts unavailable" in v.reason


def test_template_element_type_is_unknown_not_false() -> None:
    src = "template <typename T>\n__global__ void t(const T* x, T* y) { y[0] = x[0]; }\n"
    ctx = context(src, "y[0] = x[0];", X=("x", 0))
    v = check(ctx, 'not elem_type($X, "float")')
    assert not v.ok and v.unknown
    assert "the template parameter T" in v.reason


def test_tree_facts_stay_fast() -> None:
    import time

    unit = unit_of(K1)
    guard = parse_guard("is_restrict($X) and no_write($X, kernel) and sync_uniform and "
                        "trip_count_known(loop) and aligned($X, 16) and in_loop")
    ctx = context(unit, "a += x[k];", X="x")
    evaluate(guard, ctx)
    t0 = time.perf_counter()
    for _ in range(200):
        evaluate(guard, context(unit, "a += x[k];", X="x"))
    assert time.perf_counter() - t0 < 2.0  # ~10 ms budget per file in `klc list`


def test_every_predicate_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    missing = [name for name in PREDICATES if f"`{name}" not in doc]
    assert not missing, missing


def test_pragma_fragment_bindings_are_evaluated_as_text() -> None:
    unit = unit_of(K1)
    start, end = span(unit, "4", after=span(unit, "#pragma unroll")[0])
    ctx = context(unit, "for (int k = 0; k < n; k += 2) { a += x[k]; }")
    ctx.match.bindings["F"] = Binding("F", start, end, "4", ())
    yes(ctx, "is_constant($F) and power_of_two($F) and const_value($F, <=, 8)")
    seq = context(K1, "y[0] = __shfl_down_sync(0xffffffff, a, 1);")
    args = span(unit, "0xffffffff, a, 1")
    seq.match.bindings["ARGS"] = Binding("ARGS", *args, "0xffffffff, a, 1", ())
    v = no(seq, "is_constant($ARGS)", "`0xffffffff, a, 1` has no known value")
    assert v.unknown


# --------------------------------------------------------------------------------------
# Privatisation (passes/privatize.rule's inverse skill)


def _hist_spec(src: str) -> Any:
    from klc.spec import load_spec

    return load_spec(src.encode(), "h.cu")


HIST = """\
/* klc-spec
kernel: h
sizes: {n: 4096}
verify_sizes: [{n: 1000}, {n: 37}]
args:
  - {name: data, shape: [n], role: in, init: "randint(0, 256)"}
  - {name: labels, shape: [n], role: in, init: "randint(0, 64)"}
  - {name: bins, shape: [BINS], role: inout, init: zeros}
  - {name: byn, shape: [n], role: inout, init: zeros}
  - {name: n, value: n}
template: {BINS: 64}
grid: ["ceil_div(n, 256)"]
block: [BLOCK_X, 1]
*/
template <int BINS>
__global__ void h(const unsigned char* data, const int* labels, unsigned int* bins,
                  unsigned int* byn, int n) {
  unsigned int* alias = bins;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&bins[data[i]], 1u);
    atomicAdd(&bins[labels[i]], 1u);
    atomicAdd(&byn[labels[i]], 1u);
    atomicAdd(&alias[labels[i]], 1u);
  }
}
"""


def test_index_below_from_the_type_or_the_spec() -> None:
    src = HIST.replace("BLOCK_X", "256")
    spec = _hist_spec(src)
    byte = context(src, "atomicAdd(&bins[data[i]], 1u);", spec=spec, V="data[i]", G="bins")
    v = yes(byte, "index_below($V, $G, 256)")
    assert "`data[i]` is an unsigned char: below 256 <= 256" in v.reason
    # the type does not bound it below 128, but the spec's 64 bins do
    v = yes(byte, "index_below($V, $G, 128)")
    assert "the spec allocates `bins` with shape [BINS]: at most 64 elements <= 128" in v.reason
    no(byte, "index_below($V, $G, 32)", "`data[i]` has type unsigned char, which does not "
       "bound it below 32", "64 elements, more than 32")
    label = context(src, "atomicAdd(&bins[labels[i]], 1u);", spec=spec, V="labels[i]",
                    G="bins")
    yes(label, "index_below($V, $G, 64)")
    filled = context(src, "atomicAdd(&bins[labels[i]], 1u);", spec=spec, V="labels[i]",
                     G="bins", holes={"nb": "16"})
    no(filled, "index_below($V, $G, ?nb)", "`labels[i]` has type int", "64 elements, more "
       "than 16")
    pending = check(context(src, "atomicAdd(&bins[labels[i]], 1u);", spec=spec,
                            V="labels[i]", G="bins"), "index_below($V, $G, ?nb)")
    assert pending.ok and pending.unknown
    # a shape of the sizes: the largest of the profiling and verification sizes
    byn = context(src, "atomicAdd(&byn[labels[i]], 1u);", spec=spec, V="labels[i]", G="byn")
    yes(byn, "index_below($V, $G, 4096)")
    no(byn, "index_below($V, $G, 1000)", "shape [n]: 4096 elements, more than 1000")
    derived = _hist_spec(src.replace("verify_sizes: [{n: 1000}, {n: 37}]\n", ""))
    no(context(src, "atomicAdd(&byn[labels[i]], 1u);", spec=derived, V="labels[i]",
               G="byn"), "index_below($V, $G, 4096)",
       "depends on sizes the spec does not fix")
    # a local pointer, or no spec at all: nothing bounds the index
    no(context(src, "atomicAdd(&alias[labels[i]], 1u);", spec=spec, V="labels[i]",
               G="alias"), "index_below($V, $G, 64)", "`alias` is not a parameter of h")
    no(context(src, "atomicAdd(&bins[labels[i]], 1u);", V="labels[i]", G="bins"),
       "index_below($V, $G, 64)", "the size of `bins` is unknown: no spec")


COOP = """\
/* klc-spec
kernel: c
sizes: {n: 4096}
args:
  - {name: y, shape: [n], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [BLOCK]
*/
__global__ void c(unsigned int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&y[i % 7], 1u);
  }
  RETURN
  y[n] = 0u;
}
"""


def test_block_cooperative() -> None:
    src = COOP.replace("RETURN", "")
    spec = _hist_spec(src.replace("BLOCK", "256"))
    v = yes(context(src, "if (i < n)", spec=spec), "block_cooperative(anchor)")
    assert "a 256-thread one-dimensional block (the spec's block" in v.reason
    no(context(src, "atomicAdd(&y[i % 7], 1u);", spec=spec), "block_cooperative",
       "is not at the top level of `c`'s body")
    no(context(src, "if (i < n)", spec=_hist_spec(src.replace("BLOCK", "64, 4"))),
       "block_cooperative", "the block is 64×4×1", "threadIdx.x does not number its threads")
    no(context(src, "if (i < n)"), "block_cooperative", "the shape of the block of `c` is "
       "unknown")
    early = COOP.replace("int i = blockIdx", "if (threadIdx.x == 3) return;\n  int i = blockIdx")
    early = early.replace("RETURN", "")
    no(context(early, "if (i < n)", spec=_hist_spec(early.replace("BLOCK", "256"))),
       "block_cooperative", "`return;` (k.cu:11:25)",
       "comes before the end of the anchor")
    late = COOP.replace("RETURN", "if (i == 0) return;")
    yes(context(late, "if (i < n)", spec=_hist_spec(late.replace("BLOCK", "256"))),
        "block_cooperative")


RANGE_FOR = """\
__global__ void r(float* y, const int (&idx)[4]) {
  for (int i : idx) {
    if (threadIdx.x > 3) break;
    __syncthreads();
    y[i] = 1.0f;
  }
}
"""


def test_a_range_for_is_a_loop_to_the_guards() -> None:
    """A thread-dependent break out of a range-based for loop skips the barrier in it, and a
    predicate about the loop around a match finds the range-based loop (with a reason)."""
    ctx = context(RANGE_FOR, "y[i] = 1.0f;")
    no(ctx, "sync_uniform(kernel)",
       "`break;` (k.cu:3:26) under the thread-dependent `threadIdx.x > 3` leaves the loop "
       "around `__syncthreads()` (k.cu:4:5)")
    no(ctx, "trip_count_known(loop)", "`for (int i : idx)` (k.cu:2:3) is not known: a "
       "range-based for loop has no counted header")
    yes(ctx, "not has_pragma_unroll(loop)")


def test_an_offset_known_to_be_zero_keeps_the_alignment() -> None:
    src = ("__global__ void k(float* x, int n) {\n  float* p = x + 0 * n;\n"
           "  float* q = x + (n << 2) * 0 + 4 * 4;\n  float* u = x + 0 * n + 1;\n"
           "  p[0] = q[0] + u[0];\n}\n")
    yes(context(src, "x + 0 * n", X="x + 0 * n"), "aligned($X, 16)")
    v = yes(context(src, "x + (n << 2) * 0 + 4 * 4", X="x + (n << 2) * 0 + 4 * 4"),
            "aligned($X, 16)")
    assert "offset by `(n << 2) * 0`, which is 0" in v.reason
    no(context(src, "x + 0 * n + 1", X="x + 0 * n + 1"), "aligned($X, 16)",
       "only known to be 4-byte aligned, not 16")


TILES = """\
#define BK 8
#define BM 128
__global__ void g(float* out, int n) {
  __shared__ __align__(16) float As[2][BK][BM];
  __shared__ float Bs[BK][BM];
  __shared__ __align__(16) float Cs[BK][BM + 1];
  const int ty = threadIdx.x / 16;
  const int a_col = threadIdx.x % 2 * 4;
  int moved = 4;
  int passed = 4;
  for (int k = 0; k < BK; ++k) {
    for (int i = 0; i < 8; i += 4) {
      float4 t = make_float4(As[k % 2][k][ty * 8 + i], 0, 0, 0);
      float4 u = make_float4(Bs[k][ty * 8 + i], 0, 0, 0);
      float4 v = make_float4(Cs[k][ty * 8 + i], 0, 0, 0);
      float4 w = make_float4(As[0][k][ty * 8 + i + 1], 0, 0, 0);
      float4 x = make_float4(As[1][k][a_col], 0, 0, 0);
      float4 y = make_float4(As[1][k][n], 0, 0, 0);
      float4 z = make_float4(As[1][k][moved], 0, 0, 0);
      float4 p = make_float4(As[1][k][passed], 0, 0, 0);
      out[0] = t.x + u.x + v.x + w.x + x.x + y.x + z.x + p.x;
      moved += 2;
      bump(&passed);
    }
  }
}
"""


def test_element_aligned() -> None:
    def site(var: str, array: str, index: str) -> GuardContext:
        line = f"float4 {var} = make_float4({array}[{index}], 0, 0, 0);"
        return context(TILES, line, A=array, I=index)

    v = yes(site("t", "As[k % 2][k]", "ty * 8 + i"), "element_aligned($A, $I, 16)")
    assert v.reason.startswith("`&As[k % 2][k][ty * 8 + i]` is 16-byte aligned: __align__(16)")
    assert "`k % 2` × 4096 B" in v.reason and "`i` starts at `0` and steps by 4" in v.reason
    yes(site("x", "As[1][k]", "a_col"), "element_aligned($A, $I, 16)")
    no(site("u", "Bs[k]", "ty * 8 + i"), "element_aligned($A, $I, 16)",
       "only known to be 4-byte aligned, not 16: the natural alignment of float")
    yes(site("u", "Bs[k]", "ty * 8 + i"), "element_aligned($A, $I, 4)")
    no(site("v", "Cs[k]", "ty * 8 + i"), "element_aligned($A, $I, 16)",
       "`k` × 516 B, a multiple of 516 B")  # the padded row: 129 floats
    no(site("w", "As[0][k]", "ty * 8 + i + 1"), "element_aligned($A, $I, 16)",
       "only known to be 4-byte aligned")
    no(site("y", "As[1][k]", "n"), "element_aligned($A, $I, 16)", "`n` × 4 B, a multiple of 4 B")
    no(site("z", "As[1][k]", "moved"), "element_aligned($A, $I, 16)")  # reassigned later
    no(site("p", "As[1][k]", "passed"), "element_aligned($A, $I, 16)")  # its address escapes
    v = yes(context(TILES, "out[0] = t.x", A="out", I="0"), "element_aligned($A, $I, 16)")
    assert "kernel parameter `out`, a device allocation at offset 0" in v.reason


def test_mentions_a_name_or_the_code_a_metavariable_bound() -> None:
    src = ("__global__ void m(const float* x, float* y, int n, int k, int nn, int kk) {\n"
           "  float acc = 0.0f;\n"
           "  for (int j = 4 * (n / 4) + (threadIdx.x); j < n; j += blockDim.x) acc += x[j];\n"
           "  y[0] = acc + x[nn * kk] + x[n * /* rows */ k];\n}\n")
    tail = context(src, "for (int j = 4 * (n / 4) + (threadIdx.x); j < n;",
                   S="4 * (n / 4) + (threadIdx.x)", N=("n", 1))
    yes(tail, "mentions($S, $N) and mentions($S, threadIdx) and not mentions($S, k)")
    no(tail, "mentions($S, blockDim)", "never uses `blockDim`")
    # an expression is looked for token by token, spacing and comments aside, and whole
    # tokens only: `nn * kk` does not hold `n * k`
    last = context(src, "y[0] = acc + x[nn * kk] + x[n * /* rows */ k];",
                   S="nn * kk", N="n * /* rows */ k")
    yes(last, "mentions(anchor, $N)")
    no(last, "mentions($S, $N)", "never uses `n * /* rows */ k`")
    spaced = context(src.replace("x[nn * kk]", "x[n*k]"),
                     "y[0] = acc + x[n*k] + x[n * /* rows */ k];", S="n*k",
                     N="n * /* rows */ k")
    yes(spaced, "mentions($S, $N)")


SCALE = """\
__global__ void scale(float* y, const float* x, const float* __restrict__ w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = w[0] * x[i];
}
__global__ void dot(const float* a, const float* b, float* __restrict__ out, int n) {
  out[0] = a[n] * b[n];
}
"""

SCALE_SPEC = """\
/* klc-spec
kernel: scale
sizes: {n: 1024}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: w, shape: [1], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
"""


def test_restrict_safe() -> None:
    """__restrict__ is a promise about the caller: only made where nothing can overlap in a
    way that matters (an in-place call `scale(x, x, ...)` would break the first kernel)."""
    y = context(SCALE, "y[i] = w[0] * x[i];", X="y")
    no(y, "restrict_safe($X)", "`y` may share memory with `x` (not __restrict__, not a "
       "distinct spec buffer): `y` is written (k.cu:3:14")
    x = context(SCALE, "y[i] = w[0] * x[i];", X="x")
    no(x, "restrict_safe($X)", "`x` may share memory with `y`", "`y` is written")
    # read-only a and b may share memory; out is __restrict__ already
    a = context(SCALE, "out[0] = a[n] * b[n];", X="a")
    v = yes(a, "restrict_safe($X)")
    assert "neither `a` nor `b` is written; `out` is __restrict__" in v.reason
    # the spec allocates y, x and w as distinct buffers: the caller's contract
    unit = unit_of(SCALE_SPEC + SCALE)
    v = yes(context(unit, "y[i] = w[0] * x[i];", X="y", spec=spec_of(unit)),
            "restrict_safe($X)")
    assert "`x` is another buffer of the spec; `w` is __restrict__" in v.reason
    no(context(SCALE, "int i =", X="i"), "restrict_safe($X)", "`i` is not a pointer parameter")


def test_divisible_reads_known_multiples_of_expressions() -> None:
    src = ("#define TN 8\n__global__ void out(float* c, int n) {\n"
           "  const int col0 = blockIdx.x * 128;\n  const int tx = threadIdx.x;\n"
           "  for (int j = 0; j < TN; ++j) {\n"
           "    c[col0 + tx * TN + j] = 1.0f;\n    c[col0 + tx * 3] = 2.0f;\n  }\n}\n")
    v = yes(context(src, "c[col0 + tx * TN + j] = 1.0f;", E="col0 + tx * TN"), "divisible($E, 4)")
    assert "is a multiple of 8" in v.reason and "`TN` = 8" in v.reason
    no(context(src, "c[col0 + tx * TN + j] = 1.0f;", E="col0 + tx * TN + j"), "divisible($E, 4)")
    no(context(src, "c[col0 + tx * 3] = 2.0f;", E="col0 + tx * 3"), "divisible($E, 4)")


def test_a_cast_is_not_a_write() -> None:
    """A reinterpret_cast hands nothing to a callee: reading through it is no write, while a
    store through it, or a call that receives it, still is."""
    src = ("__global__ void k(const float* x, float* y, const float* z) {\n"
           "  float4 a = reinterpret_cast<const float4*>(x)[threadIdx.x];\n"
           "  reinterpret_cast<float4*>(y)[threadIdx.x] = a;\n"
           "  foo(reinterpret_cast<const float4*>(z));\n}\n")
    line = "float4 a = reinterpret_cast<const float4*>(x)[threadIdx.x];"
    yes(context(src, line, X="x"), "no_write($X, kernel)")
    no(context(src, "reinterpret_cast<float4*>(y)[threadIdx.x] = a;", X="y"),
       "no_write($X, kernel)", "stores through it")
    no(context(src, "foo(reinterpret_cast<const float4*>(z));", X="z"), "no_write($X, kernel)",
       "passes it to foo")


def test_elementwise_only() -> None:
    src = ("__global__ void t(const float* x, float* y) {\n"
           "  __shared__ float a[32][32];\n  __shared__ float b[32][32];\n"
           "  __shared__ float c[32][32];\n  __shared__ float d[32][32];\n"
           "  a[threadIdx.y][threadIdx.x] = x[threadIdx.x];  // a[0] in a comment\n"
           "  b[threadIdx.y][threadIdx.x] = (a)[threadIdx.x][threadIdx.y];\n"
           "  float4 v = *reinterpret_cast<const float4*>(&b[threadIdx.y][0]);\n"
           "  const float* row = c[threadIdx.y];\n"
           "  d[0][0] = v.x + row[0];\n  y[threadIdx.x] = d[0][0];\n}\n")
    v = yes(context(src, "__shared__ float a[32][32];", X="a"), "elementwise_only($X)")
    assert v.reason == "all 2 uses of `a` in `t` are single elements"
    no(context(src, "__shared__ float b[32][32];", X="b"), "elementwise_only($X)",
       "`&b[threadIdx.y][0]` (k.cu:8:47) takes the address of an element of `b`")
    no(context(src, "__shared__ float c[32][32];", X="c"), "elementwise_only($X)",
       "`c[threadIdx.y]` (k.cu:9:22) uses `c` with 1 of its 2 subscripts")
    yes(context(src, "__shared__ float d[32][32];", X="d"), "elementwise_only($X)")


DOUBLE = """\
__global__ void dbl(const float* x, float* y, int k) {
  __shared__ float t[2][64];
  __shared__ float u[64];
  float acc = 0.0f;
  float reg = x[threadIdx.x];
  int buf = 0;
  int lead = 1;
  for (int s = 0; s < k; ++s) {
    t[buf][threadIdx.x] = reg;
    __syncthreads();
    reg = x[(s + 1) * 64 + threadIdx.x];
    acc += t[buf][63 - threadIdx.x];
    __syncthreads();
  }
  for (int s = 0; s < k; ++s) {
    u[threadIdx.x] = acc;
    __syncthreads();
    acc += u[63 - threadIdx.x];
    __syncthreads();
  }
  y[threadIdx.x] = acc;
}
"""


def test_double_buffered() -> None:
    def barrier(nth: int) -> GuardContext:
        return context(DOUBLE, "__syncthreads();", nth=nth)

    v = yes(barrier(1), "double_buffered(buf)")
    assert v.reason == "the barrier ends the loop's step; t are double buffers indexed by `buf`"
    no(barrier(0), "double_buffered(buf)", "does not end the body of the loop")
    no(barrier(3), "double_buffered(buf)", "__shared__ `u` (k.cu:3:3) has no first dimension of 2")
    no(barrier(1), "double_buffered(lead)", "`t[buf]` (k.cu:9:5) is not subscripted first with "
       "`lead`")
    no(barrier(1), "double_buffered(nope)", "`nope` is not a variable declared before the loop")
    later = DOUBLE.replace("y[threadIdx.x] = acc;", "y[threadIdx.x] = acc + buf;")
    no(context(later, "__syncthreads();", nth=1), "double_buffered(buf)", "`buf` is read after "
       "the loop")
    single = DOUBLE.replace("    t[buf][threadIdx.x] = reg;\n    __syncthreads();\n",
                            "    t[buf][threadIdx.x] = reg;\n")
    no(context(single, "__syncthreads();", nth=0), "double_buffered(buf)",
       "no other barrier in the loop")


def test_moves_before() -> None:
    src = ("__global__ void m(const float* x, float* y, int n) {\n"
           "  float a = x[0];\n  int b = 2;\n  float c = x[1];\n  y[0] = 1.0f;\n"
           "  c = a + b;\n}\n")
    run = context(src, "float a = x[0];\n  int b = 2;", S="float a = x[0];", M="int b = 2;")
    # the binding helpers bind single nodes: a load that needs nothing from `int b = 2;`
    yes(run, "moves_before($S, $M)")
    uses = context(src, "int b = 2;\n  float c = x[1];\n  y[0] = 1.0f;\n  c = a + b;",
                   S="c = a + b;", M="int b = 2;")
    no(uses, "moves_before($S, $M)", "uses `b`, which `int b = 2;` declares or assigns")
    mem = context(src, "float c = x[1];\n  y[0] = 1.0f;", S="float c = x[1];", M="y[0] = 1.0f;")
    yes(mem, "moves_before($S, $M)")  # x is read, y is written: different buffers
    back = context(src, "float c = x[1];\n  y[0] = 1.0f;\n  c = a + b;", S="c = a + b;",
                   M="float c = x[1];")
    no(back, "moves_before($S, $M)", "uses `c`, which `float c = x[1];` declares or assigns")


def test_no_memory_update() -> None:
    src = ("__global__ void r(const float* x, float* y, float* z, int n) {\n"
           "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  float acc = 0.0f;\n"
           "  for (int c = 0; c < n; c++) { acc += x[row * n + c]; }\n"
           "  y[row] = acc;\n"
           "  z[row] += acc;\n"
           "  ++*(z + row);\n}\n")
    first = context(src, "for (int c = 0; c < n; c++) { acc += x[row * n + c]; }\n  y[row] = acc;",
                    S="for (int c = 0; c < n; c++) { acc += x[row * n + c]; }")
    yes(first, "no_memory_update($S)")  # acc += and c++ change locals only
    yes(context(src, "y[row] = acc;", S="y[row] = acc;"), "no_memory_update($S)")
    no(context(src, "z[row] += acc;", S="z[row] += acc;"), "no_memory_update($S)",
       "`z[row] += acc` (k.cu:6:3) updates memory in place")
    no(context(src, "++*(z + row);", S="++*(z + row)"), "no_memory_update($S)",
       "updates memory in place")


def test_block_dim() -> None:
    src = ("__global__ void t(float* y) { y[threadIdx.y * 32 + threadIdx.x] = 0.0f; }\n"
           "void launch(float* y) { t<<<64, dim3(32, 8)>>>(y); }\n")
    ctx = context(src, "y[threadIdx.y * 32 + threadIdx.x] = 0.0f;")
    v = yes(ctx, "block_dim(y, ==, 8) and block_dim(x, >=, 32) and block_dim(z, ==, 1)")
    assert v.reason.startswith("block.y = 8 == 8 (the launch at k.cu:2:25)")
    no(ctx, "block_dim(y, ==, 32)", "block.y is 8 (the launch at k.cu:2:25), and not 8 == 32")
    unknown = context(src.split("\n")[0] + "\n", "y[threadIdx.y * 32 + threadIdx.x] = 0.0f;")
    no(unknown, "block_dim(y, ==, 8)", "the block's y extent is not known exactly")
