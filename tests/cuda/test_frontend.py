"""The CUDA front end: the model it builds, its lossless spans, the masking/recovery step,
its share of analyzable kernels over the robustness corpus, bad input through ``klc parse``.

The corpus is ``tests/data/frontend/``: hand-written kernels in the styles of CUTLASS/CuTe,
PyTorch ATen, FlashAttention, llama.cpp, gtest files, arch ``#if`` branches, Hopper clusters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Node

from klc.cli import main
from klc.cuda.macros import _ATTRIBUTE_RE, _attributes
from klc.cuda.model import Function, Unit
from klc.cuda.parse import parse_bytes, parse_file
from klc.cuda.syntax import matches_at, parser

CORPUS = Path(__file__).parents[1] / "data" / "frontend"
CORPUS_FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".cu", ".cuh"))


@pytest.fixture(scope="module")
def units() -> dict[str, Unit]:
    return {p.name: parse_file(p) for p in CORPUS_FILES}


def kernel(units: dict[str, Unit], file: str, name: str) -> Function:
    f = units[file].function(name)
    assert f is not None, f"{name} not found in {file}"
    return f


def walk(node: Node) -> Iterator[Node]:
    cursor = node.walk()
    while True:
        yield cursor.node  # type: ignore[misc]
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


# --------------------------------------------------------------------------------------
# The model


def test_params_qualifiers_and_templates(units: dict[str, Unit]) -> None:
    f = kernel(units, "cutlass_gemm_sm80.cu", "gemm_sm80_multistage")
    assert f.kind == "global"
    assert [t.name for t in f.template_params] == [
        "ElementA", "ElementB", "ElementC", "kBlockM", "kBlockN", "kBlockK", "kStages"]
    k_block_m = f.template_params[3]
    assert (k_block_m.kind, k_block_m.type, k_block_m.default) == ("value", "int", "128")
    a = f.param("ptr_A")
    assert a is not None
    assert (a.base_type, a.pointer, a.const, a.restrict) == ("ElementA", 1, True, True)
    assert a.type == "ElementA const * __restrict__"
    c = f.param("ptr_C")
    assert c is not None and (c.const, c.restrict, c.pointer) == (False, True, 1)
    lda = f.param("lda")
    assert lda is not None and (lda.type, lda.pointer, lda.const) == ("int", 0, False)

    v = kernel(units, "vector_types.cu", "saxpy_float4")
    x = v.param("x")
    assert x is not None and (x.base_type, x.pointer, x.const, x.restrict) == (
        "float4", 1, True, True)

    dot = kernel(units, "modern_cpp_kernels.cu", "dot_n")
    arr = dot.param("a")
    assert arr is not None and (arr.reference, arr.const, arr.array) == (True, True, True)


def test_launch_bounds_written_and_through_macros(units: dict[str, Unit]) -> None:
    def bounds(file: str, name: str) -> tuple[str, str | None] | None:
        lb = kernel(units, file, name).launch_bounds
        return None if lb is None else (lb.max_threads, lb.min_blocks)

    assert bounds("cutlass_gemm_sm80.cu", "gemm_sm80_multistage") == ("256", None)
    assert bounds("cutlass_gemm_sm80.cu", "Kernel2") == ("Operator::kThreadCount", "1")
    assert bounds("flash_fwd_kernel.cu", "flash_fwd_splitkv_kernel") == (
        "Kernel_traits::kNThreads", "1")
    # PyTorch's macros, known to the front end
    assert bounds("aten_unary_ops.cu", "gelu_kernel_impl") == ("kNumThreads", None)
    assert bounds("aten_unary_ops.cu", "clamp_min_max_kernel") == ("512", "4")
    # a project macro, expanded from the file's own #define
    assert bounds("attention_decode.cu", "paged_attention_v1_kernel") == ("NUM_THREADS", None)
    assert bounds("attention_decode.cu", "paged_attention_v2_reduce_kernel") == (
        "NUM_THREADS", "2")
    # inside "#if __CUDA_ARCH__ >= VOLTA": the branch a CUDA build takes, not the HIP one
    assert bounds("ggml_mmq.cuh", "mul_mat_q") == ("WARP_SIZE*nwarps", "1")
    assert bounds("rocm_compat.cu", "warp_sum_rows") == ("1024", None)
    assert bounds("cub_style.cuh", "RadixHistogramKernel") is None


def test_specifier_macros_make_device_functions(units: dict[str, Unit]) -> None:
    load = kernel(units, "cutlass_gemm_sm80.cu", "load")  # CUTLASS_DEVICE on its own line
    assert load.is_device and load.attributes == ("CUTLASS_DEVICE",)
    src = units["cutlass_gemm_sm80.cu"]
    assert src.text(load.start, load.start + 14) == "CUTLASS_DEVICE"  # the macro is in it
    lane = kernel(units, "cute_copy.cuh", "lane_id")
    assert lane.kind == "device"
    ceil = kernel(units, "cute_copy.cuh", "ceil_div_")
    assert ceil.kind == "host device"
    reduce = kernel(units, "cub_style.cuh", "DeviceReduceKernel")  # a macro means __global__
    assert reduce.is_kernel and reduce.attributes == ("CUB_DETAIL_KERNEL_ATTRIBUTES",)
    mmq = kernel(units, "ggml_mmq.cuh", "mul_mat_q")
    assert mmq.attributes == ()  # a macro in an "#if" line is not an attribute


def test_attributes_the_grammar_lacks(units: dict[str, Unit]) -> None:
    assert kernel(units, "hopper_cluster.cu", "cluster_hist_kernel").attributes == (
        "__cluster_dims__(2, 1, 1)",)
    assert kernel(units, "hopper_cluster.cu", "low_reg_saxpy").attributes == ("__maxnreg__(64)",)
    assert kernel(units, "hopper_cluster.cu", "dsmem_reduce").attributes == (
        "__cluster_dims__(kClusterX, 1, 1)", "__maxnreg__(128)")


def test_shared_memory_static_and_dynamic(units: dict[str, Unit]) -> None:
    def shared(file: str, name: str) -> list[tuple[str, str, tuple[str, ...], bool]]:
        return [(s.name, s.type, s.dims, s.extern) for s in kernel(units, file, name).shared]

    assert shared("cutlass_gemm_sm80.cu", "gemm_sm80_multistage") == [
        ("smem_A", "ElementA", ("kStages", "kBlockM", "kBlockK + 8"), False),
        ("smem_B", "ElementB", ("kStages", "kBlockK", "kBlockN + 8"), False),
    ]
    assert shared("cutlass_gemm_sm80.cu", "Kernel") == [
        ("SharedStorageBase", "int", ("",), True)]
    assert shared("shared_mem_mix.cu", "mixed_shared") == [
        ("warp_sums", "T", ("kWarps",), False),
        ("counter", "int", (), False),
        ("scale_cache", "float", ("4",), False),
        ("bias_cache", "float", ("4",), False),
        ("dynamic_raw", "unsigned char", ("",), True),
        ("done", "bool", (), False),
    ]
    assert shared("shared_mem_mix.cu", "shared_2d_dynamic") == [
        ("rows", "float", ("", "33"), True)]
    names = [s[0] for s in shared("hopper_cluster.cu", "tma_like_producer_consumer")]
    assert names == ["stage", "full_barrier", "empty_barrier"]


def test_loops_induction_variables_and_unroll(units: dict[str, Unit]) -> None:
    f = kernel(units, "cutlass_gemm_sm80.cu", "gemm_sm80_multistage")
    got = [(lp.var, lp.depth, lp.unroll) for lp in f.loops]
    assert got[:3] == [("i", 0, ""), ("j", 1, ""), ("k_iter", 0, "1")]  # CUTLASS_PRAGMA_*
    assert got[3] == ("idx", 1, None)
    k_iter = f.loops[2]
    assert (k_iter.init, k_iter.cond, k_iter.update) == (
        "int k_iter = 0", "k_iter < gemm_k_iterations", "++k_iter")

    stencil = kernel(units, "stencil_3d.cu", "fd_25pt")
    iz = next(lp for lp in stencil.loops if lp.var == "iz")
    assert (iz.unroll, iz.depth) == ("9", 0)
    inner = [lp for lp in stencil.loops if iz.start < lp.start < iz.end]
    assert inner and all(lp.depth == 1 and lp.unroll == "" for lp in inner)
    jacobi = kernel(units, "stencil_3d.cu", "jacobi2d")
    assert [lp.kind for lp in jacobi.loops] == ["do"]

    # "#pragma unroll" between a loop header and its body (masked, still read)
    conv = kernel(units, "conv_implicit_gemm.cu", "depthwise_conv3x3")
    assert [(lp.var, lp.depth, lp.unroll) for lp in conv.loops] == [("dy", 0, ""), ("dx", 1, "")]
    ranges = kernel(units, "modern_cpp_kernels.cu", "range_for_kernel")
    assert [(lp.kind, lp.var, lp.cond) for lp in ranges.loops] == [
        ("for", "x", "arr"), ("for", "x", "arr")]
    messy = kernel(units, "messy_misc.cu", "unsigned_loops")
    assert [(lp.kind, lp.var) for lp in messy.loops] == [("for", "i"), ("for", "k"),
                                                         ("while", None)]
    assert "unroll 4" in [p.text for p in
                          kernel(units, "flash_fwd_kernel.cu",
                                 "flash_fwd_splitkv_combine_kernel").pragmas]


def test_barriers_warp_intrinsics_atomics_asm(units: dict[str, Unit]) -> None:
    gemm = kernel(units, "cutlass_gemm_sm80.cu", "gemm_sm80_multistage")
    assert [c.name for c in gemm.barriers] == ["__syncthreads", "__syncthreads"]
    assert {c.name for c in gemm.warp_intrinsics} == {"__shfl_sync"}

    dsmem = kernel(units, "hopper_cluster.cu", "dsmem_reduce")
    assert [c.name for c in dsmem.barriers] == ["block.sync", "cluster.sync", "cluster.sync"]
    assert {c.name for c in dsmem.warp_intrinsics} == {"cg::reduce"}
    grid = kernel(units, "coop_groups_reduce.cu", "grid_sync_kernel")
    assert "grid.sync" in [c.name for c in grid.barriers]
    tile = kernel(units, "coop_groups_reduce.cu", "reduce_sum_tile_shfl")
    assert [c.name for c in tile.warp_intrinsics] == ["g.shfl_down"]
    async_copy = kernel(units, "coop_groups_reduce.cu", "async_copy_kernel")
    assert {c.name for c in async_copy.warp_intrinsics} == {
        "active.shfl", "active.any", "active.ballot"}

    zoo = kernel(units, "histogram_atomics.cu", "atomic_zoo")
    assert {c.name for c in zoo.atomics} == {
        "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc", "atomicDec",
        "atomicAnd", "atomicOr", "atomicXor", "atomicAdd", "atomicAdd_block",
        "atomicAdd_system", "atomicCAS"}
    agg = kernel(units, "histogram_atomics.cu", "warp_aggregated_inc")
    assert {c.name for c in agg.warp_intrinsics} == {
        "__activemask", "__ballot_sync", "__shfl_sync"}
    assert {c.name for c in kernel(units, "ggml_quant.cu",
                                   "vec_dot_q4_0_q8_1_impl").calls} >= {"__dp4a"}

    assert len(kernel(units, "inline_ptx.cu", "clock_and_globaltimer").asm) == 2
    assert len(kernel(units, "inline_ptx.cu", "cp_async_cg_16").asm) == 1


def test_launches_with_template_args_and_config(units: dict[str, Unit]) -> None:
    host = units["host_launch.cu"]
    got = [(lc.kernel, lc.template_args, lc.config) for lc in host.launches]
    assert got[:4] == [
        ("iota_kernel", "float, 256", ("ceil_div(n, 256)", "256")),
        ("iota_kernel", "float, 128", ("ceil_div(n, 128)", "128", "0", "s")),
        ("add_kernel", None, ("ceil_div(n, 512)", "512", "0", "s")),
        ("add_kernel", "float", ("dim3(ceil_div(n, 256))", "dim3(256)", "0", "s")),  # comments
    ]
    assert ("ops::negate", None) in [(k, t) for k, t, _ in got]
    run = host.function("run")
    assert run is not None and run.kind == "host" and len(run.launches) == 8
    assert host.launches[0].args == ("a", "0.f", "n")

    aten = units["aten_unary_ops.cu"]  # inside an AT_DISPATCH lambda
    gelu = aten.function("gelu_cuda_kernel")
    assert gelu is not None
    assert [(lc.kernel, lc.template_args, lc.config) for lc in gelu.launches] == [
        ("gelu_kernel_impl", "scalar_t, accscalar_t", ("blocks", "kNumThreads", "0", "stream"))]


def test_extern_c_static_and_test_macros(units: dict[str, Unit]) -> None:
    ec = units["extern_c_kernels.cu"]
    assert [(f.name, f.extern_c) for f in ec.kernels] == [
        ("vec_add", True), ("vec_scale", True), ("transpose_naive", True),
        ("clamp_kernel", True), ("uint8_to_float", True), ("maybe_c_linkage", True)]
    vec_add = ec.function("vec_add")
    assert vec_add is not None and ec.text(vec_add.start, vec_add.start + 10) == 'extern "C"'
    assert "static" in kernel(units, "ggml_quant.cu", "quantize_q8_1").specifiers

    gtest = units["gtest_gemm_test.cu"]
    names = [f.name for f in gtest.functions if f.kind == "host"]
    assert "TEST(Gemm, 128x128)" in names and "TEST_F(ReduceTest, SumsOnes)" in names
    test = gtest.function("TEST(Gemm, 128x128)")
    assert test is not None
    assert [(lc.kernel, lc.template_args) for lc in test.launches] == [
        ("naive_gemm_kernel", "16")]


def test_conditional_branches_cuda_view(units: dict[str, Unit]) -> None:
    axpy = kernel(units, "arch_conditional.cu", "axpy_arch")
    x = axpy.param("x")
    assert x is not None and x.base_type == "__nv_bfloat16"  # the __CUDA_ARCH__ >= 800 one
    rocm = units["rocm_compat.cu"]
    assert rocm.function("enabled_kernel") is not None
    assert rocm.function("disabled_kernel") is None  # "#if 0"
    assert not rocm.problems


def test_function_lookup_by_offset(units: dict[str, Unit]) -> None:
    u = units["stencil_3d.cu"]
    f = kernel(units, "stencil_3d.cu", "stencil7")
    assert u.function_at(f.body_start + 1) is f
    assert u.function_at(0) is None
    assert u.nodes_of_type("for_statement").__next__().start_byte == f.loops[0].start


# --------------------------------------------------------------------------------------
# Lossless: spans, masks, positions


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_spans_are_exact(path: Path) -> None:
    source = path.read_bytes()
    unit = parse_file(path)
    assert unit.source == source
    assert len(unit.parsed) == len(source)
    masked = bytearray(len(source))
    for m in unit.masks:
        assert 0 <= m.start < m.end <= len(source)
        for i in range(m.start, m.end):
            masked[i] = 1
    for i, (a, b) in enumerate(zip(source, unit.parsed, strict=True)):
        if a in (10, 13):
            assert b == a, f"a newline moved at byte {i}"
        elif not masked[i]:
            assert a == b, f"byte {i} changed outside any mask"
    size = len(source)
    for node in walk(unit.root):
        start, end = node.start_byte, node.end_byte
        assert 0 <= start <= end <= size + 1  # +1: the newline a last line lacks
        # the tree's own points (from what it parsed) are the original's line:column
        if start < size:
            assert unit.position(start) == (node.start_point.row + 1,
                                            node.start_point.column + 1)
        # outside masks, the tree's text is the original text of the span
        if end <= size and not any(masked[start:end]):
            assert node.text == source[start:end]
            assert unit.text(node) == source[start:end].decode()


def test_no_problem_in_corpus_and_position_of_problems() -> None:
    for path in CORPUS_FILES:
        unit = parse_file(path)
        assert unit.problems == [], [p.describe(str(path)) for p in unit.problems]
    src = b"__global__ void ok(int *p) { p[0] = 1; }\n\n__global__ void bad(int *p) {\n" \
          b"  p[0] = ;\n}\n"
    unit = parse_bytes(src, "bad.cu")
    assert [(p.line, p.col) for p in unit.problems] == [(4, 8)]
    assert unit.problems[0].describe("bad.cu") == "bad.cu:4:8: syntax error: unexpected `=`"
    assert unit.line_text(4) == "  p[0] = ;"
    assert [u.name for u in unit.unanalyzable] == ["bad"]
    assert "bad.cu:4:8" in unit.unanalyzable[0].reason
    ok = unit.function("ok")
    assert ok is not None and ok.analyzable  # reported as far as it parsed


def test_analyzable_share_over_corpus(units: dict[str, Unit]) -> None:
    assert 25 <= len(units) <= 40
    analyzable = sum(1 for u in units.values() for k in u.kernels if k.analyzable)
    unanalyzable = sum(len(u.unanalyzable) for u in units.values())
    total = analyzable + unanalyzable
    assert total >= 80
    assert analyzable / total >= 0.98, [
        (name, x.name, x.reason) for name, u in units.items() for x in u.unanalyzable]
    for u in units.values():  # every one that is not analyzable says why
        assert all(x.reason for x in u.unanalyzable)


def test_libclang_is_not_loaded_by_parsing() -> None:
    import sys

    parse_file(CORPUS / "inline_ptx.cu")
    assert "clang.cindex" not in sys.modules or "klc.cuda.facts" in sys.modules


# --------------------------------------------------------------------------------------
# Each masking case: raw tree-sitter fails, the front end does not, and exactly this text
# became blanks (before/after)

MASKING_CASES: list[tuple[str, bytes, list[bytes], str]] = [
    ("statement-like macro before a for",
     b"__device__ void f(float *x) {\n  CUTE_UNROLL\n  for (int i = 0; i < 4; ++i) x[i] = 0;\n}\n",
     [b"CUTE_UNROLL"], "pragma"),
    ("macro call line at file scope",
     b"__global__ void k(int *p) { p[0] = 1; }\nREGISTER_KERNEL(k, 256)\n"
     b"__global__ void j(int *p) { p[0] = 2; }\n",
     [b"REGISTER_KERNEL(k, 256)"], "statement-like macro"),
    ("specifier macro before a declaration",
     b"CUTLASS_DEVICE float twice(float x) { return 2 * x; }\n",
     [b"CUTLASS_DEVICE"], "specifier macro"),
    ("project launch-bounds macro between __global__ and void",
     b"#define MY_LB(n) __launch_bounds__(n)\n"
     b"__global__ MY_LB(256) void k(float *x) { x[0] = 0; }\n",
     [b"MY_LB(256)"], "specifier macro"),
    ("unknown ALL-CAPS specifier macro",
     b"__global__ PROJECT_KERNEL_ATTRS void k(float *x) { x[0] = 0; }\n",
     [b"PROJECT_KERNEL_ATTRS"], "specifier macro"),
    ("__align__",
     b"struct __align__(16) V { float a[4]; };\n__global__ void k(V *v) { v->a[0] = 1; }\n",
     [b"__align__(16)"], "attribute"),
    ("__cluster_dims__",
     b"__global__ void __cluster_dims__(2, 1, 1) k(int *p) { p[0] = 0; }\n",
     [b"__cluster_dims__(2, 1, 1)"], "attribute"),
    ("__maxnreg__",
     b"__global__ void __maxnreg__(64) k(int *p) { p[0] = 0; }\n",
     [b"__maxnreg__(64)"], "attribute"),
    ("gtest TEST with a 128x128 name",
     b"TEST(Gemm, 128x128) {\n  k<<<1, 32>>>(nullptr);\n}\n",
     [b"Gemm, 128x128"], "test macro header"),
    ("#if/#else splitting braces",
     b"__global__ void k(float *x, int n) {\n#if __CUDA_ARCH__ >= 800\n"
     b"  for (int i = 0; i < n; i++) {\n#else\n  for (int i = 0; i < n; ++i) {\n#endif\n"
     b"    x[i] = 0;\n  }\n}\n",
     [b"#if __CUDA_ARCH__ >= 800", b"#else", b"  for (int i = 0; i < n; ++i) {", b"#endif"],
     "conditional branch"),
    ("#ifdef around extern C",
     b"#ifdef __cplusplus\nextern \"C\"\n#endif\n__global__ void k(int *p) { *p = 1; }\n",
     [b"#ifdef __cplusplus", b"#endif"], "conditional branch"),
    ("#pragma between a loop header and its body",
     b"__global__ void k(float *x) {\n  for (int i = 0; i < 4; ++i)\n#pragma unroll\n"
     b"    for (int j = 0; j < 4; ++j) x[i * 4 + j] = 0;\n}\n",
     [b"#pragma unroll"], "pragma"),
    ("extended lambda",
     b"__global__ void k(int *p) { auto f = [] __device__ (int v) { return v; }; p[0] = f(1); }\n",
     [b"__device__"], "lambda specifier"),
    ("_Pragma operator",
     b"__global__ void k(float *x) {\n  _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) x[i] = 0;"
     b"\n}\n",
     [b'_Pragma("unroll")'], "pragma"),
    ("last line: a macro without a newline",
     b"__global__ void k(int *p) { p[0] = 1; }\nINSTANTIATE(k)",
     [b"INSTANTIATE(k)"], "statement-like macro"),
]


def _blanked(before: bytes, masked: list[bytes]) -> bytes:
    """``before`` with each listed text (in order, each after the previous) turned to blanks."""
    out, at = bytearray(before), 0
    for text in masked:
        at = before.index(text, at)
        out[at:at + len(text)] = bytes(32 if c not in (10, 13) else c for c in text)
        at += len(text)
    return bytes(out)


@pytest.mark.parametrize(("case", "before", "masked", "reason"), MASKING_CASES,
                         ids=[c[0] for c in MASKING_CASES])
def test_masking_case(case: str, before: bytes, masked: list[bytes], reason: str) -> None:
    assert parser().parse(before).root_node.has_error, f"{case}: raw tree-sitter copes"
    unit = parse_bytes(before, "case.cu")
    assert unit.problems == []
    after = _blanked(before, masked)
    if reason == "test macro header":  # the name stays, the arguments become blanks
        assert after.startswith(b"TEST(             )")
    assert unit.parsed == after
    assert unit.source == before
    assert reason in {m.reason for m in unit.masks}
    assert unit.functions


def test_masked_cases_keep_their_meaning() -> None:
    cases = {c[0]: c[1] for c in MASKING_CASES}
    u = parse_bytes(cases["statement-like macro before a for"])
    assert [lp.unroll for lp in u.functions[0].loops] == [""]
    u = parse_bytes(cases["#pragma between a loop header and its body"])
    assert [(lp.var, lp.unroll) for lp in u.functions[0].loops] == [("i", None), ("j", "")]
    u = parse_bytes(cases["specifier macro before a declaration"])
    assert u.functions[0].kind == "device" and u.functions[0].start == 0
    u = parse_bytes(cases["project launch-bounds macro between __global__ and void"])
    lb = u.functions[0].launch_bounds
    assert lb is not None and (lb.max_threads, lb.min_blocks) == ("256", None)
    u = parse_bytes(cases["gtest TEST with a 128x128 name"])
    assert u.functions[0].name == "TEST(Gemm, 128x128)"
    u = parse_bytes(cases["#ifdef around extern C"])
    assert u.kernels[0].extern_c
    u = parse_bytes(cases["_Pragma operator"])
    assert [lp.unroll for lp in u.functions[0].loops] == [""]


def test_last_line_without_newline() -> None:
    src = b"__global__ void k(int *p) { p[0] = 1; }\n#pragma once"
    assert parser().parse(src).root_node.has_error  # the hidden MISSING newline
    unit = parse_bytes(src)
    assert unit.problems == [] and unit.masks == ()
    unit = parse_file(CORPUS / "no_trailing_newline.cu")
    last = unit.kernels[-1]
    assert last.end == len(unit.source) and unit.text(last.end - 1, last.end) == "}"


# --------------------------------------------------------------------------------------
# klc parse: bad input and --json


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["parse", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return rc, captured.out, captured.err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "nope.cu"
    rc, _, err = _run(capsys, str(path))
    assert rc == 2 and f"{path}: no such file" in err


def test_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, _, err = _run(capsys, str(tmp_path))
    assert rc == 2 and f"{tmp_path}: is a directory" in err


def test_binary_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "kernel.cu"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    rc, _, err = _run(capsys, str(path))
    assert rc == 2 and f"{path}: binary file" in err


def test_non_utf8_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "latin1.cu"
    path.write_bytes(b"// caf\xe9\n__global__ void k() {}\n")
    rc, _, err = _run(capsys, str(path))
    assert rc == 2 and f"{path}:1:7: not UTF-8" in err


def test_empty_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "empty.cu"
    path.write_bytes(b"  \n\n")
    rc, _, err = _run(capsys, str(path))
    assert rc == 2 and f"{path}: file is empty" in err


def test_syntax_error_reported_as_far_as_parsed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.cu"
    path.write_bytes(b"__global__ void good(float *x) { x[0] = 1.f; }\n"
                     b"__global__ void bad(float *x) {\n  x[0] = ;\n}\n")
    rc, out, err = _run(capsys, str(path))
    assert rc == 2
    assert f"{path}:3:8: syntax error" in err
    assert "good" in out and "not analyzable" in out and "bad" in out


def test_one_bad_file_does_not_stop_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, out, err = _run(capsys, str(tmp_path / "missing.cu"), str(CORPUS / "nbody.cu"))
    assert rc == 2 and "missing.cu: no such file" in err and "bodyForce" in out


def test_text_output_is_not_rich_markup(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, str(CORPUS / "hopper_cluster.cu"))
    assert rc == 0
    assert "hopper_cluster.cu:100:1" in out  # ":100:" is not an emoji code
    assert "launch bounds: 384, min blocks 1" in out
    rc, out, _ = _run(capsys, str(CORPUS / "modern_cpp_kernels.cu"))
    assert "param a: const T (&)[N]" in out  # brackets are not markup


def test_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--json", str(CORPUS / "attention_decode.cu"),
                      str(CORPUS / "cutlass_gemm_sm80.cu"))
    assert rc == 0
    data = json.loads(out)
    assert [Path(d["path"]).name for d in data] == ["attention_decode.cu",
                                                    "cutlass_gemm_sm80.cu"]
    for unit in data:
        assert set(unit) == {"path", "bytes", "functions", "unanalyzable", "problems", "masked"}
        for m in unit["masked"]:
            assert set(m) == {"start", "end", "reason", "text"}
            assert len(m["text"].encode()) == m["end"] - m["start"]
        for f in unit["functions"]:
            assert {"name", "kind", "line", "col", "start", "end", "specifiers", "extern_c",
                    "return_type", "template_params", "params", "launch_bounds",
                    "attributes", "shared", "loops", "pragmas", "barriers",
                    "warp_intrinsics", "atomics", "inline_asm", "launches",
                    "analyzable"} <= set(f)
            assert f["kind"] in ("global", "device", "host device", "host")
            for p in f["params"]:
                assert set(p) >= {"name", "type", "base_type", "pointer", "const", "restrict"}
    v1 = next(f for f in data[0]["functions"] if f["name"] == "paged_attention_v1_kernel")
    assert v1["launch_bounds"]["max_threads"] == "NUM_THREADS"
    assert v1["shared"][0] == {"name": "shared_mem", "type": "char", "dims": [""],
                               "extern": True, "start": v1["shared"][0]["start"],
                               "end": v1["shared"][0]["end"]}
    assert (v1["line"], v1["col"]) == (28, 1)


# --------------------------------------------------------------------------------------
# Properties: never raises, masks keep length and newlines

CUDA_TOKENS = st.sampled_from([
    "__global__", "__device__", "void", "k", "(", ")", "{", "}", ";", "\n", " ", "int", "*",
    "x", "[", "]", "=", "0", "for", "#if 1", "#else", "#endif", "#pragma unroll", "CUTE_UNROLL",
    "MY_MACRO(a, b)", "__launch_bounds__(256)", "__align__(16)", "<<<", ">>>", "template",
    "<", ">", "typename", "T", ",", "TEST(A, 128x128)", "extern \"C\"", "__shared__", "\"",
    "/*", "*/", "//", "\\\n", "_Pragma(\"unroll\")", "[] __device__",
])


def _check_unit(source: bytes) -> None:
    unit = parse_bytes(source, "prop.cu")
    assert len(unit.parsed) == len(source)
    for i, (a, b) in enumerate(zip(source, unit.parsed, strict=True)):
        assert (a in (10, 13)) == (b in (10, 13)) or a == b, i
        if a in (10, 13):
            assert a == b
    for m in unit.masks:
        assert 0 <= m.start <= m.end <= len(source)
    for p in unit.problems:
        assert p.line >= 1 and p.col >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_parse_never_raises_on_text(text: str) -> None:
    _check_unit(text.encode())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CUDA_TOKENS, max_size=120))
def test_parse_never_raises_on_cuda_like_text(tokens: list[str]) -> None:
    _check_unit(" ".join(tokens).encode())


# pieces of text in which the literals of the front end's scans overlap, repeat and stand
# glued to words, blanks and parentheses
SCAN_PIECES = st.sampled_from([
    "__", "_", "__align__", "_Pragma", "__maxnreg__", "__cluster_dims__", "asm", "while", "<<",
    "<<<", "->", ".", "::", ":", "sync", "shfl", "any", "a", "(", " ", "\t", "\n", "x", "1"])
SCAN_PATTERNS = [(b"__align__", rb"__align__[ \t]*\("), (b"_Pragma", rb"_Pragma[ \t]*\("),
                 (b"while", rb"while\b"), (b"<<<", rb"<<<"), (b"__", rb"__(?:asm__|asm\b|a)"),
                 (b"->", rb"->[ \t\n]*(sync\b|shfl|any\b)"), (b"::", rb"::[ \t\n]*(sync\b)")]


@settings(max_examples=300, deadline=None)
@given(st.lists(SCAN_PIECES, max_size=60))
def test_matches_at_gives_the_matches_finditer_gives(pieces: list[str]) -> None:
    """``matches_at`` (a literal found by ``bytes.find``, the pattern matched there) gives
    what the regular expression engine's scan gives, for every pattern that starts with the
    literal, and the attribute masks' words found one by one give the attribute expression's
    matches in order."""
    data = "".join(pieces).encode()
    for literal, expression in SCAN_PATTERNS:
        pattern = re.compile(expression)
        want = [(m.span(), m.groups()) for m in pattern.finditer(data)]
        assert [(m.span(), m.groups()) for m in matches_at(data, literal, pattern)] == want
    assert [(m.span(), m.group(1)) for m in _attributes(data)] == [
        (m.span(), m.group(1)) for m in _ATTRIBUTE_RE.finditer(data)]
