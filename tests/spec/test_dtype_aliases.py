"""Parameter types as the compiler sees them, in the spec and the gate: a `floatX*` behind a
typedef, a `using` alias, a macro or a `-D` switch binds to the element type the compiler
gives it; `dtype: {floatX: bfloat16}` names it where the text cannot tell, and is refused
where the compiler says otherwise or the name is no element type."""

from __future__ import annotations

import pytest

from klc.cuda import flags
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.spec import check_spec, load_spec

KERNEL = """__global__ void axpy(floatX* y, const floatX* x, floatX a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""
SPEC = """/* klc-spec
kernel: axpy
sizes: {n: 4096}
args:
  - {name: y, shape: [n], role: inout}
  - {name: x, shape: [n], role: in}
  - {name: a, init: "uniform(0.5, 2)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
EXTRA*/
"""


@pytest.fixture(autouse=True)
def _no_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(flags.ENV, raising=False)


def bind(prelude: str, extra: str = ""):  # type: ignore[no-untyped-def]
    src = (SPEC.replace("EXTRA", extra) + prelude + KERNEL).encode()
    spec = load_spec(src, "k.cu")
    assert spec is not None
    return check_spec(spec, parse_bytes(src, "k.cu"))


@pytest.mark.parametrize(("prelude", "dtype"), [
    ("typedef float floatX;\n", "float32"),
    ("using floatX = double;\n", "float64"),
    ("#define floatX float\n", "float32"),
    ("#include <cuda_fp16.h>\ntypedef __half floatX;\n", "float16"),
    ("#include <cuda_bf16.h>\nnamespace m { using T = __nv_bfloat16; }\nusing floatX = m::T;\n",
     "bfloat16"),
])
def test_aliases_bind_to_the_compilers_type(prelude: str, dtype: str) -> None:
    b = bind(prelude)
    assert [a.ctype.dtype for a in b.args] == [dtype, dtype, dtype, "int32"]
    assert b.args[1].const and not b.args[0].const and b.args[0].pointer


SWITCHED = """#include <cuda_bf16.h>
#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif
"""


def test_a_minus_d_switch_picks_the_type(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bind(SWITCHED).args[0].ctype.dtype == "float32"
    # the spec's own options (which the gate compiles with) switch it
    assert bind(SWITCHED, "options: [-DENABLE_BF16]\n").args[0].ctype.dtype == "bfloat16"
    # and so does the command's -D
    flags.set_flags(flags.BuildFlags(defines=("ENABLE_BF16",)))
    assert bind(SWITCHED).args[0].ctype.dtype == "bfloat16"


def test_spec_dtype_names_what_the_text_cannot_tell() -> None:
    # floatX is declared nowhere the compiler can see (a header of the build system's)
    b = bind("", "dtype: {floatX: bfloat16}\n")
    assert [a.ctype.dtype for a in b.args[:3]] == ["bfloat16"] * 3
    assert bind("", "dtype: {floatX: __half}\n").args[0].ctype.dtype == "float16"
    with pytest.raises(KlcError, match=r"k\.cu:\d+:\d+: parameter y of axpy has type "
                                       r"'floatX\*', which the gate cannot allocate or pass "
                                       r"\(name its element type: dtype:"):
        bind("")


def test_spec_dtype_the_compiler_contradicts_is_refused() -> None:
    with pytest.raises(KlcError, match=r"the spec's dtype makes y __nv_bfloat16, but the "
                                       r"compiler sees floatX\* as float .*options: \[-DNAME\]"):
        bind("typedef float floatX;\n", "dtype: {floatX: bfloat16}\n")
    # with the switch that selects it, the two agree
    b = bind(SWITCHED, "dtype: {floatX: bfloat16}\noptions: [-DENABLE_BF16]\n")
    assert b.args[0].ctype.dtype == "bfloat16"


@pytest.mark.parametrize(("extra", "needle"), [
    ("dtype: {floatX: float128}\n", "k.cu:11:17: dtype of floatX: unknown element type "
                                    "'float128'"),
    ("dtype: [floatX]\n", "k.cu:11:8: dtype must be a mapping like {floatX: bfloat16}"),
    ("dtype: {float X: float32}\n", "dtype: 'float X' is not a type name"),
])
def test_bad_dtype_is_one_line_with_its_place(extra: str, needle: str) -> None:
    with pytest.raises(KlcError) as e:
        bind("typedef float floatX;\n", extra)
    assert needle in str(e.value) and "\n" not in str(e.value)
