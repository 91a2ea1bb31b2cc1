"""The kernel spec: reading the comment block, the safe evaluator, the signature check,
and the launch-geometry edit that rules make."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.spec import (
    ExprError,
    Init,
    Spec,
    check_spec,
    evaluate,
    evaluate_int,
    find_spec_block,
    launch_dims,
    load_spec,
    scale_launch,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "bench" / "examples"

SAXPY_BODY = b"""
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def spec_file(yaml_text: str, body: bytes = SAXPY_BODY) -> bytes:
    return b"/* klc-spec\n" + yaml_text.strip("\n").encode() + b"\n*/\n" + body


SAXPY_SPEC = """
kernel: saxpy
sizes: {n: 1048576}
args:
  - {name: a, value: 2.5}
  - {name: x, shape: [n], role: in}
  - {name: y, shape: [n], role: inout, init: "uniform(-1, 1)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 12 * n
flops: 2 * n
"""


def load(yaml_text: str, body: bytes = SAXPY_BODY) -> Spec | None:
    return load_spec(spec_file(yaml_text, body), "k.cu")


def error_of(yaml_text: str, body: bytes = SAXPY_BODY, check: bool = False) -> str:
    src = spec_file(yaml_text, body)
    with pytest.raises(KlcError) as e:
        spec = load_spec(src, "k.cu")
        if check:
            assert spec is not None
            check_spec(spec, parse_bytes(src, "k.cu"))
    return str(e.value)


# -- the evaluator ---------------------------------------------------------------------


@pytest.mark.parametrize(("expr", "value"), [
    ("ceil_div(n, 256)", 4096), ("ceil_div(n + 1, 256)", 4097), ("n // 3", 349525),
    ("max(1, n >> 30)", 1), ("min(n, 7) * 2", 14), ("12 * n / 4", 3145728.0),
    ("2 ** 10", 1024), ("-n % 7", (-1048576) % 7), (42, 42), ("abs(-3)", 3),
])
def test_evaluate(expr: str | int, value: float) -> None:
    assert evaluate(expr, {"n": 1048576}) == value


@pytest.mark.parametrize(("expr", "needle"), [
    ("__import__('os').system('true')", "Call is not allowed"),
    ("__import__('os')", "unknown function '__import__'"),
    ("n.bit_length()", "Call is not allowed"),
    ("n.real", "Attribute is not allowed"),
    ("[n]", "List is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("m + 1", "unknown name 'm' (known: n)"),
    ("2 ** 2 ** 30", "exponent too large"),
    ("1 << 4000", "shifts need"),
    ("n / 0", "division by zero"),
    ("'abc'", "only numbers"),
    ("ceil_div(n)", "wrong number of arguments"),
    ("n +", "cannot parse"),
])
def test_evaluate_refuses(expr: str, needle: str) -> None:
    with pytest.raises(ExprError) as e:
        evaluate(expr, {"n": 4})
    assert needle in str(e.value)


def test_evaluate_int_refuses_fractions() -> None:
    assert evaluate_int("n / 2", {"n": 8}) == 4
    with pytest.raises(ExprError, match="not a whole number"):
        evaluate_int("n / 3", {"n": 8})


# -- reading ----------------------------------------------------------------------------


def test_no_block_is_no_spec() -> None:
    assert find_spec_block(SAXPY_BODY) is None
    assert load_spec(b"/* an ordinary comment */\n" + SAXPY_BODY, "k.cu") is None


def test_block_span_and_fields() -> None:
    src = b"// header\n" + spec_file(SAXPY_SPEC)
    start, end = find_spec_block(src)  # type: ignore[misc]
    assert src[start:end].startswith(b"/* klc-spec") and src[start:end].endswith(b"*/")
    spec = load_spec(src, "k.cu")
    assert spec is not None
    assert spec.kernel == "saxpy" and spec.sizes == {"n": 1048576}
    assert [a.name for a in spec.args] == ["a", "x", "y", "n"]
    assert spec.args[1].init == Init("normal")  # the default for an input buffer
    assert spec.args[2].init == Init("uniform", ("-1", "1"))
    assert spec.grid == ("ceil_div(n, 256)",) and spec.block == ("256",)
    assert launch_dims(spec.grid, spec.env()) == (4096, 1, 1)
    assert spec.loc["grid"] == (10, 7)  # file line 10 (a header line, then the block)


def test_examples_load_and_check() -> None:
    for name, expr in (("saxpy.cu", "saxpy"), ("reduce_sum.cu", "reduce_sum<256>")):
        src = (EXAMPLES / name).read_bytes()
        spec = load_spec(src, name)
        assert spec is not None
        bound = check_spec(spec, parse_bytes(src, name))
        assert bound.name_expression == expr


def test_template_in_kernel_name_binds_constants() -> None:
    body = b"template <int BLOCK, typename T>\n__global__ void k(const T* x, T* y, int n) {}\n"
    spec = load("""
kernel: k<128, float>
sizes: {n: 1000}
args:
  - {name: x, shape: [n], role: in}
  - {name: y, shape: ["ceil_div(n, BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
""", body)
    bound = check_spec(spec, parse_bytes(spec_file("kernel: k", body)))
    assert bound.constants == {"BLOCK": 128}
    assert bound.name_expression == "k<128, float>"
    assert [a.ctype.dtype for a in bound.args] == ["float32", "float32", "int32"]
    assert launch_dims(spec.block, bound.env()) == (128, 1, 1)


@pytest.mark.parametrize(("yaml_text", "needle"), [
    ("kernel: saxpy\nsizes: {n: 4}\nargs: []\ngrid: [1]\nblock: [1]\ngird: [1]",
     "k.cu:7:1: unknown field 'gird' in klc-spec"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs: []\ngrid: [1]", "klc-spec has no 'block' field"),
    ("kernel: saxpy\nsizes: {n: -4}\nargs: []\ngrid: [1]\nblock: [1]",
     "k.cu:3:12: size n must be a positive integer"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs:\n  - {name: x, shape: [m], role: in}\ngrid: [1]\n"
     "block: [1]", "shape of x refers to unknown size 'm' (sizes: n)"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs:\n  - {name: x, shape: [n], role: sideways}\n"
     "grid: [1]\nblock: [1]", "k.cu:5:33: argument x: role must be one of in, out, inout"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs:\n  - {name: x, shape: [n], role: in, init: gauss}\n"
     "grid: [1]\nblock: [1]", "unknown init 'gauss'"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs: []\ngrid: [ceil_div(n, 256)]\nblock: [1]",
     "must be quoted"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs: []\ngrid: [1, 1, 1, 1]\nblock: [1]",
     "grid needs 1 to 3 values"),
    ("kernel: saxpy\nsizes: {n: 4\nargs: []", "bad YAML in klc-spec"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs:\n  - {name: x, shape: [n], role: in, type: quad}\n"
     "grid: [1]\nblock: [1]", "unknown type 'quad'"),
    ("kernel: saxpy\nsizes: {n: 4}\nargs: []\ngrid: [1]\nblock: [1]\noptions: [-arch=sm_80]",
     "the arch comes from the device or --arch"),
])
def test_bad_spec_is_reported_with_position(yaml_text: str, needle: str) -> None:
    assert needle in error_of(yaml_text)


def test_unclosed_block() -> None:
    with pytest.raises(KlcError, match=r"k\.cu:1:1: klc-spec block is not closed"):
        load_spec(b"/* klc-spec\nkernel: saxpy\n", "k.cu")


@pytest.mark.parametrize(("change", "needle"), [
    # a parameter with no entry
    (("  - {name: n, value: n}\n", ""), "no entry for parameter 'n' (int) of saxpy"),
    # the wrong type
    (("{name: x, shape: [n], role: in}", "{name: x, shape: [n], role: in, type: double*}"),
     "argument x: the spec says type 'double*', the kernel's parameter is "
     "'const float* __restrict__'"),
    # an argument the kernel does not have
    (("  - {name: n, value: n}\n", "  - {name: n, value: n}\n  - {name: m, value: 1}\n"),
     "argument 'm' is not a parameter of saxpy"),
    # writing through a const pointer
    (("{name: x, shape: [n], role: in}", "{name: x, shape: [n], role: out}"),
     "argument x has role out, but the kernel declares it const"),
    # a pointer without a shape
    (("{name: x, shape: [n], role: in}", "{name: x, value: 1}"),
     "parameter x is a pointer (const float* __restrict__): give it a shape"),
    # a kernel not in the file
    (("kernel: saxpy", "kernel: saxpy2"),
     "kernel 'saxpy2' is not defined in this file (kernels here: saxpy)"),
    # args out of order
    (("  - {name: a, value: 2.5}\n  - {name: x, shape: [n], role: in}\n",
      "  - {name: x, shape: [n], role: in}\n  - {name: a, value: 2.5}\n"),
     "argument 'x' is out of order"),
])
def test_signature_mismatch(change: tuple[str, str], needle: str) -> None:
    text = SAXPY_SPEC.replace(*change)
    assert text != SAXPY_SPEC
    msg = error_of(text, check=True)
    assert needle in msg and msg.startswith("k.cu:"), msg


# -- scale_launch ---------------------------------------------------------------------


@pytest.mark.parametrize(("grid", "op", "expected"), [
    ('grid: ["ceil_div(n, 256)"]', "/", 'grid: ["ceil_div(ceil_div(n, 256), 4)"]'),
    ("grid: ['ceil_div(n, 256)']", "*", "grid: ['(ceil_div(n, 256)) * 4']"),
    ("grid: [n, 1]", "/", 'grid: ["ceil_div(n, 4)", 1]'),
    ("grid: ceil_div(n, 256)", "/", "grid: ceil_div(ceil_div(n, 256), 4)"),
    ("grid:\n  - ceil_div(n, 256)\n  - 2", "/", "grid:\n  - ceil_div(ceil_div(n, 256), 4)\n  - 2"),
])
def test_scale_launch_edits_only_the_expression(grid: str, op: str, expected: str) -> None:
    text = SAXPY_SPEC.replace('grid: ["ceil_div(n, 256)"]', grid)
    src = spec_file(text)
    out = scale_launch(src, "grid", "x", op, 4)
    assert out == spec_file(text.replace(grid, expected))
    spec = load_spec(out, "k.cu")
    assert spec is not None
    before = launch_dims(load_spec(src, "k.cu").grid, {"n": 1048576})[0]  # type: ignore[union-attr]
    after = launch_dims(spec.grid, {"n": 1048576})[0]
    assert after == (before // 4 if op == "/" else before * 4)


def test_scale_launch_keeps_the_rest_byte_for_byte() -> None:
    src = (EXAMPLES / "reduce_sum.cu").read_bytes()
    out = scale_launch(src, "block", "x", "*", 2)
    a = src.index(b"block: [BLOCK]")
    assert out[:a] == src[:a]
    assert out[a:].startswith(b'block: ["(BLOCK) * 2"]')
    assert out[a + len(b'block: ["(BLOCK) * 2"]'):] == src[a + len(b"block: [BLOCK]"):]


@pytest.mark.parametrize(("args", "needle"), [
    (("grid", "y", "/", 4), "grid has no y dimension"),
    (("grid", "x", "+", 4), "op / or *"),
    (("grid", "x", "/", 0), "factor must be a positive integer"),
    (("warp", "x", "/", 2), "dim must be grid|block"),
])
def test_scale_launch_refuses(args: tuple, needle: str) -> None:
    with pytest.raises(KlcError, match=needle.replace("|", r"\|").replace("*", r"\*")):
        scale_launch(spec_file(SAXPY_SPEC), *args)


def test_libyaml_and_pure_yaml_read_the_same_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec is composed by libyaml where PyYAML has it; every spec the project ships
    reads the same (fields and their file positions) through the pure-Python loader."""
    import klc.spec.doc

    if klc.spec.doc._fast_loader() is None:
        pytest.skip("PyYAML is built without libyaml here")
    bench = Path(__file__).resolve().parents[2] / "bench"
    files = sorted(p for p in bench.rglob("*.cu") if b"klc-spec" in p.read_bytes())
    assert len(files) > 50
    fast = [load_spec(p.read_bytes(), str(p)) for p in files]
    monkeypatch.setattr(klc.spec.doc, "_fast_loader", lambda: None)
    pure = [load_spec(p.read_bytes(), str(p)) for p in files]
    assert fast == pure
    assert all(s is not None and s.loc for s in fast)


def test_bad_yaml_keeps_the_pure_loaders_words() -> None:
    """libyaml says "found character that cannot start any token"; the message names it."""
    msg = error_of("kernel: saxpy\nsizes:\n\t n: 4\nargs: []\ngrid: [1]\nblock: [1]")
    assert "k.cu:4:1: bad YAML in klc-spec: found character '\\t'" in msg


def test_a_file_without_a_spec_block_loads_no_yaml_reader() -> None:
    """The YAML reader is imported where a klc-spec block is read, not by a listing of a file
    that has none (most files): the import costs a short listing a tenth of its time."""
    import subprocess
    import sys

    code = ("import sys\nfrom klc.cuda.parse import parse_bytes\nfrom klc.pipeline import spec_of\n"
            "u = parse_bytes(b'__global__ void k(float* x) { x[0] = 1.0f; }\\n', 'k.cu')\n"
            "assert spec_of(u) is None\n"
            "print(type(sys.modules.get('yaml')).__name__, 'yaml.composer' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["_LazyModule", "False"]
    spec = Path(__file__).resolve().parents[2] / "bench" / "examples" / "sigmoid.cu"
    code = ("import sys\nfrom klc.spec import load_spec\n"
            f"assert load_spec(open({str(spec)!r}, 'rb').read(), 'k.cu') is not None\n"
            "print('yaml.composer' in sys.modules)\n")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split() == ["True"]
