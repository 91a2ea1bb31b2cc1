"""Semantic facts through real libclang, on CUDA-looking sources, with no CUDA toolkit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from klc.cuda.facts import Facts
from klc.cuda.libclang import CLANG_ARGS
from klc.cuda.model import TypeFact, Unit
from klc.cuda.parse import parse_bytes

KERNELS = textwrap.dedent(
    """\
    #include <cuda_runtime.h>
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;

    #define BLOCK 256
    #define HALF_BLOCK (BLOCK / 2)
    #define SQUARE(v) ((v) * (v))
    #define NAME "scale"
    constexpr int TILE = 16;
    enum { VEC = 4 };

    __global__ void __launch_bounds__(BLOCK) scale(const float* __restrict__ x,
                                                   float* __restrict__ y, volatile int* flag,
                                                   int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = x[i] * 2.0f;
      int twice = BLOCK * 2;
      int tiles = TILE * VEC;
      int vbytes = sizeof(float4);
      bool wide = BLOCK >= 128;
      float4 quad = reinterpret_cast<const float4*>(x)[0];
      y[0] += quad.w;
    }

    template <int BLOCK_T, typename T = float>
    __global__ void reduce(const T* __restrict__ in, T* out) {
      __shared__ T buf[BLOCK_T];
      T v = in[threadIdx.x];
      for (int o = BLOCK_T / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      int lanes = BLOCK_T > 128 ? 128 : BLOCK_T;
      int halves = HALF_BLOCK + BLOCK_T;
      cg::thread_block block = cg::this_thread_block();
      cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
      v = tile.shfl_down(v, 1);
      tile.sync();
      buf[threadIdx.x] = v;
      if (threadIdx.x == 0) atomicAdd(out, v + buf[lanes]);
    }

    template __global__ void reduce<128>(const float*, float*);

    extern "C" __global__ void plain(double* d) { d[0] = sqrt(d[1]) + __expf(1.0f); }

    void launch(const float* x, float* y, int n) {
      reduce<256, float><<<n / 256, 256>>>(x, y);
      reduce<BLOCK * 2><<<n / 512, 512, 0, 0>>>(x, y);
      scale<<<(n + 255) / 256, 256>>>(x, y, nullptr, n);
    }
    """
).encode()


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_bytes(KERNELS, "kernels.cu")


def span(unit: Unit, text: str, nth: int = 0) -> tuple[int, int]:
    """The byte span of the nth occurrence of ``text`` in the unit."""
    needle = text.encode()
    at = -1
    for _ in range(nth + 1):
        at = unit.source.index(needle, at + 1)
    return at, at + len(needle)


# -- the translation unit -----------------------------------------------------------------


def test_kernels_parse_without_errors(unit: Unit) -> None:
    assert unit.facts.diagnostics == []


def test_diagnostics_name_file_line_and_column() -> None:
    u = parse_bytes(b"__global__ void k(float* x) {\n  x[0] = undeclared;\n}\n", "bad.cu")
    assert u.facts.diagnostics == ["bad.cu:2:10: use of undeclared identifier 'undeclared'"]
    # clang recovered: facts about the rest still hold
    assert u.facts.param_type("k", "x").spelling == "float *"


def test_parse_bytes_does_not_import_libclang() -> None:
    code = textwrap.dedent(
        """
        import sys
        from klc.cuda.parse import parse_bytes
        u = parse_bytes(b"__global__ void k(float* x) { x[0] = 1.0f; }\\n", "k.cu")
        assert u.functions[0].name == "k"
        print("clang.cindex" in sys.modules)
        f = u.facts  # creating the facts object does not build anything either
        print("clang.cindex" in sys.modules)
        f.type_of(0, 1)
        print("clang.cindex" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "True"]


def test_translation_unit_is_built_once_and_answers_memoized(
        unit: Unit, monkeypatch: pytest.MonkeyPatch) -> None:
    from clang import cindex

    calls: list[str] = []
    real_parse = cindex.Index.parse

    def counting_parse(self: cindex.Index, path: str, *args: object, **kw: object) -> object:
        calls.append(path)
        return real_parse(self, path, *args, **kw)

    monkeypatch.setattr(cindex.Index, "parse", counting_parse)
    facts = Facts(unit)
    assert calls == []  # lazy: nothing built until asked
    first = facts.type_of(*span(unit, "x[i]"))
    assert facts.type_of(*span(unit, "x[i]")) is first
    assert facts.constant(*span(unit, "BLOCK * 2")) == 512
    assert facts.param_type("scale", "y") is facts.param_type("scale", "y")
    assert facts.define("BLOCK") == 256
    assert facts.instantiations("reduce")
    assert len(calls) == 1 and facts.builds == 1


def test_no_cuda_toolkit_needed(tmp_path: Path) -> None:
    """With no CUDA_PATH, no nvcc on PATH and the toolkit's headers only #included, clang
    finds every header: they are unsaved files under a directory that does not exist."""
    src = tmp_path / "k.cu"
    src.write_text(textwrap.dedent(
        """\
        #include <cuda_runtime.h>
        #include <cuda.h>
        #include <cuda_fp16.h>
        #include <cooperative_groups.h>
        __global__ void k(__half* h, float4* v) {
          h[0] = __float2half(__shfl_xor_sync(0xffffffffu, v[threadIdx.x].x, 1));
        }
        """
    ))
    code = textwrap.dedent(
        f"""
        import json, os, shutil
        from klc.cuda.parse import parse_file
        u = parse_file({str(src)!r})
        half = u.facts.param_type("k", "h").pointee
        print(json.dumps({{
            "nvcc": shutil.which("nvcc"),
            "cuda_env": [k for k in os.environ if k.startswith("CUDA")],
            "diagnostics": u.facts.diagnostics,
            "half": [half.spelling, half.size_bytes],
            "virtual_dir_exists": os.path.exists("/__klc__"),
        }}))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "NVCC"))}
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "nvcc").exists()
    )
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path).stdout
    result = json.loads(out)
    assert result["nvcc"] is None and result["cuda_env"] == []
    assert result["diagnostics"] == []
    assert result["half"] == ["__half", 2]
    assert result["virtual_dir_exists"] is False
    assert "-nocudainc" in CLANG_ARGS and "-nocudalib" in CLANG_ARGS


def test_source_path_need_not_exist() -> None:
    u = parse_bytes(b'#include "cuda_runtime.h"\n__global__ void k(int* p) {}\n',
                    "/no/such/dir/k.cu")
    assert u.facts.diagnostics == []
    assert u.facts.param_type("k", "p").spelling == "int *"


# -- types --------------------------------------------------------------------------------


def test_type_of_subscript_of_const_restrict_pointer(unit: Unit) -> None:
    t = unit.facts.type_of(*span(unit, "x[i]"))
    assert t is not None
    assert t.spelling == "const float"
    assert t.const and not t.volatile and not t.is_pointer
    assert t.size_bytes == 4 and t.align_bytes == 4
    assert t.element_type == "float"


def test_param_qualifiers(unit: Unit) -> None:
    x = unit.facts.param_type("scale", "x")
    assert x is not None and x.is_pointer and x.restrict
    assert not x.const  # the pointer itself is not const; what it points at is
    assert x.pointee is not None and x.pointee.const and x.pointee.spelling == "const float"
    assert x.element_type == "float" and x.size_bytes == 8
    y = unit.facts.param_type("scale", "y")
    assert y is not None and y.restrict and not y.pointee.const
    flag = unit.facts.param_type("scale", "flag")
    assert flag is not None and flag.pointee.volatile and not flag.restrict
    n = unit.facts.param_type("scale", "n")
    assert n == TypeFact("int", "int", False, None, False, False, False, 4, 4)
    assert unit.facts.param_type("scale", "nope") is None
    assert unit.facts.param_type("nope", "x") is None


def test_type_of_declaration_span_matches_param_type(unit: Unit) -> None:
    p = unit.function("scale").param("x")
    assert unit.facts.type_of(p.start, p.end) == unit.facts.param_type("scale", "x")


def test_vector_type_size_and_alignment(unit: Unit) -> None:
    quad = unit.facts.type_of(*span(unit, "quad", 0))
    assert quad is None  # "quad" alone is the declared name, not a whole declaration
    decl = unit.facts.type_of(*span(unit, "float4 quad = reinterpret_cast<const float4*>(x)[0]"))
    assert decl is not None and decl.spelling == "float4"
    assert (decl.size_bytes, decl.align_bytes) == (16, 16)
    w = unit.facts.type_of(*span(unit, "quad.w"))
    assert w is not None and w.spelling == "float"


def test_template_dependent_type(unit: Unit) -> None:
    t = unit.facts.type_of(*span(unit, "in[threadIdx.x]"))
    assert t is not None and t.spelling == "const T" and t.const
    assert t.size_bytes is None  # unknown until instantiated


def test_type_of_span_that_is_no_expression(unit: Unit) -> None:
    start, _ = span(unit, "x[i]")
    assert unit.facts.type_of(start, start + 2) is None  # "x["


def test_extern_c_kernel(unit: Unit) -> None:
    d = unit.facts.param_type("plain", "d")
    assert d is not None and d.element_type == "double"
    assert unit.facts.type_of(*span(unit, "sqrt(d[1])")).spelling == "double"


# -- constants ----------------------------------------------------------------------------


def test_constant_of_define_in_expression(unit: Unit) -> None:
    assert unit.facts.constant(*span(unit, "BLOCK * 2")) == 512


def test_constant_of_constexpr_and_enumerator(unit: Unit) -> None:
    assert unit.facts.constant(*span(unit, "TILE * VEC")) == 64
    assert unit.facts.constant(*span(unit, "TILE", 1)) == 16


def test_constant_of_sizeof(unit: Unit) -> None:
    assert unit.facts.constant(*span(unit, "sizeof(float4)")) == 16


def test_constant_bool(unit: Unit) -> None:
    value = unit.facts.constant(*span(unit, "BLOCK >= 128"))
    assert value is True


def test_non_constant_is_none(unit: Unit) -> None:
    assert unit.facts.constant(*span(unit, "x[i] * 2.0f")) is None
    assert unit.facts.constant(*span(unit, "blockIdx.x * blockDim.x")) is None
    assert unit.facts.constant(*span(unit, "BLOCK_T / 2")) is None  # no binding given


def test_template_argument_at_instantiation(unit: Unit) -> None:
    facts = unit.facts
    assert facts.instantiations("reduce") == [
        {"BLOCK_T": "128", "T": "float"},  # explicit instantiation; T from its default
        {"BLOCK_T": "256", "T": "float"},
        {"BLOCK_T": "BLOCK * 2", "T": "float"},
    ]
    values = [facts.evaluate(b["BLOCK_T"]) for b in facts.instantiations("reduce")]
    assert values == [128, 256, 512]
    half = span(unit, "BLOCK_T / 2")
    assert [facts.constant(*half, {"BLOCK_T": v}) for v in values] == [64, 128, 256]


def test_template_dependent_folding(unit: Unit) -> None:
    facts = unit.facts
    ternary = span(unit, "BLOCK_T > 128 ? 128 : BLOCK_T")
    assert facts.constant(*ternary, {"BLOCK_T": 64}) == 64
    assert facts.constant(*ternary, {"BLOCK_T": 512}) == 128
    # a macro whose expansion sits inside a template expression
    assert facts.constant(*span(unit, "HALF_BLOCK + BLOCK_T"), {"BLOCK_T": 32}) == 160


def test_instantiations_of_non_template_and_unknown(unit: Unit) -> None:
    assert unit.facts.instantiations("scale") == []
    assert unit.facts.instantiations("nope") == []


def test_define_values(unit: Unit) -> None:
    facts = unit.facts
    assert facts.define("BLOCK") == 256
    assert facts.define("HALF_BLOCK") == 128
    assert facts.define("SQUARE") == "((v) * (v))"  # function-like: its replacement text
    assert facts.define("NAME") == '"scale"'
    assert facts.define("NOT_DEFINED") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7 / 2", 3),
        ("-7 / 2", -3),  # C truncates toward zero
        ("-7 % 2", -1),
        ("1 << 10", 1024),
        ("0x10 | 0x01", 17),
        ("3 > 2 && 1", True),
        ("BLOCK * 2u", 512),
        ("1.5f * 2", 3.0),
        ("TILE * sizeof(float)", 64),
        ("(BLOCK + 31) / 32", 8),
        ("BLOCK & 3 == 0", None),  # C's precedence differs from Python's: refused
        ("1 / 0", None),
        ("__import__('os')", None),
        ("x + 1", None),
        ("SQUARE(2)", None),
    ],
)
def test_evaluate_text(unit: Unit, text: str, expected: object) -> None:
    value = unit.facts.evaluate(text)
    assert value == expected and type(value) is type(expected)


def test_evaluate_with_bindings(unit: Unit) -> None:
    assert unit.facts.evaluate("BLOCK_T / 32", {"BLOCK_T": 256}) == 8
    assert unit.facts.evaluate("BLOCK_T / 32") is None


def test_named_constant_file_scope_wins_over_local() -> None:
    u = parse_bytes(textwrap.dedent(
        """\
        template <int B> __global__ void k(float* x) { x[0] = B; }
        void early() { const int WIDTH = 7; (void)WIDTH; }
        constexpr int WIDTH = 64;
        void host(float* x) {
          constexpr int LOCAL_B = 128;
          k<LOCAL_B><<<1, LOCAL_B>>>(x);
          k<WIDTH><<<1, WIDTH>>>(x);
        }
        """).encode(), "scopes.cu")
    facts = u.facts
    assert facts.diagnostics == []
    assert [facts.evaluate(b["B"]) for b in facts.instantiations("k")] == [128, 64]


def test_device_side_semantics() -> None:
    """Facts are those of the device compilation: __CUDA_ARCH__ is sm_90's, and the
    ``#if __CUDA_ARCH__`` branch is the one clang sees."""
    u = parse_bytes(textwrap.dedent(
        """\
        constexpr int ARCH = __CUDA_ARCH__;
        #if defined(__CUDA_ARCH__)
        constexpr int SIDE = 1;
        #else
        constexpr int SIDE = 2;
        #endif
        int probe = ARCH + SIDE;
        """).encode(), "arch.cu")
    assert u.facts.constant(*span(u, "ARCH + SIDE")) == 901
