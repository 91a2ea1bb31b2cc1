"""Rewrites of code as other people write it: every spelling of a declaration, host
code beside kernels, pointers that escape, and the batch that writes a whole tree.

The golden cases in tests/golden/ hold one file per spelling; these tests hold the properties
that must hold for every spelling (hypothesis), and the command-level behaviour."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules, find_sites
from klc.rule.paths import default_skill_dirs
from klc.rule.ruleset import RuleSet

ROOT = Path(__file__).resolve().parents[2]
KLC = [sys.executable, "-m", "klc"]


@functools.cache
def _library() -> dict[str, Any]:
    return {r.name: r for r in RuleSet.load(default_skill_dirs()).rules}


def _rules(*names: str) -> list[Any]:
    return [_library()[n] for n in names]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[A-Za-z_]\w*|\d+|\S", re.sub(r"/\*.*?\*/", " ", text))


# --------------------------------------------------------------------------------------
# Qualifiers: correct tokens whatever the spacing

BASES = ("float", "int", "unsigned int", "double", "T", "float4")
# (how the declarator is written, with {name}; where __restrict__ goes in its tokens)
DECLARATORS = st.sampled_from(["*{n}", "* {n}", " *{n}", " * {n}", "  *  {n}", " *const {n}",
                               "* const {n}", " * /*out*/ {n}", "*\n    {n}", " **{n}"])


def _kernel(base: str, declarator: str, name: str, body: str, extra: str = "") -> str:
    template = "template <typename T>\n" if "T" in base.split() else ""
    return (f"{template}__global__ void k({base}{declarator.format(n=name)}{extra}, int n) "
            f"{{\n{body}\n}}\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), declarator=DECLARATORS,
       name=st.sampled_from(["x", "g_data", "out_", "restrictive", "constant"]))
def test_restrict_goes_after_the_star_nearest_the_name(base: str, declarator: str,
                                                       name: str) -> None:
    """Whatever the blanks and comments, add_restrict writes ``__restrict__`` as its own
    token right after the star nearest the name: every other token stays as it was."""
    deref = "[0]" if declarator.strip().startswith("**") else ""
    code = _kernel(base, declarator, name, f"    {name}{deref}[threadIdx.x] = {name}{deref}[0];")
    out = apply_rules(parse_bytes(code.encode(), "k.cu"), _rules("add_restrict"))
    assert out.changed, code
    new = out.source.decode()
    head_old, head_new = code.split("(", 1)[1].split(",")[0], new.split("(", 1)[1].split(",")[0]
    old_t, new_t = _tokens(head_old), _tokens(head_new)
    last_star = max(i for i, t in enumerate(old_t) if t == "*")
    assert new_t == [*old_t[:last_star + 1], "__restrict__", *old_t[last_star + 1:]], new
    assert parse_bytes(out.source, "k.cu").problems == []
    again = apply_rules(parse_bytes(out.source, "k.cu"), _rules("add_restrict"))
    assert not again.changed  # once is enough


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), declarator=DECLARATORS)
def test_const_goes_before_the_type(base: str, declarator: str) -> None:
    deref = "[0]" if declarator.strip().startswith("**") else ""
    code = (f"{'template <typename T>' + chr(10) if base == 'T' else ''}__global__ void "
            f"k({base}{declarator.format(n='src')}, {base} *dst) {{\n"
            f"    dst[threadIdx.x] = src{deref}[threadIdx.x];\n}}\n")
    out = apply_rules(parse_bytes(code.encode(), "k.cu"), _rules("add_const_param"))
    assert out.changed, code
    head_old = code.split("(", 1)[1].split(",")[0]
    head_new = out.source.decode().split("(", 1)[1].split(",")[0]
    assert _tokens(head_new) == ["const", *_tokens(head_old)]


SPELLED = {
    "star at the name": "__global__ void k(int *g_data, int n) {{ g_data[threadIdx.x] = n; }}",
    "star at the type": "__global__ void k(int* g_data, int n) {{ g_data[threadIdx.x] = n; }}",
    "no blanks": "__global__ void k(int*g_data, int n) {{ g_data[threadIdx.x] = n; }}",
    "const pointer": "__global__ void k(float *const g, int n) {{ g[threadIdx.x] = n; }}",
    "comment": "__global__ void k(float * /* out */ g, int n) {{ g[threadIdx.x] = n; }}",
    "template": "template <typename T>\n__global__ void k(T *g, int n) {{ g[threadIdx.x] = n; }}"
                "\ntemplate __global__ void k<float>(float * __restrict__ g, int n);",
}


@pytest.mark.parametrize("spelling", sorted(SPELLED))
def test_qualified_spellings_compile_with_nvrtc(spelling: str) -> None:
    """The rewritten declarations compile (real NVRTC, no GPU)."""
    from klc.gate.compile import compile_unit

    code = SPELLED[spelling].format().encode()
    unit = parse_bytes(code, "k.cu")
    out = apply_rules(unit, _rules("add_restrict", "add_const_param"))
    if spelling != "template":
        assert out.changed
    result = compile_unit(parse_bytes(out.source, "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, (out.source.decode(), result.error)


def test_an_edit_never_glues_two_words() -> None:
    from klc.edits.bytes import ByteEdit, apply_edits

    src = b"int *x; float y;"
    assert apply_edits(src, [ByteEdit(5, 5, "__restrict__", "q")]) == \
        b"int *__restrict__ x; float y;"
    assert apply_edits(b"const int a;", [ByteEdit(0, 6, "", "d")]) == b"int a;"
    assert apply_edits(b"a b", [ByteEdit(1, 2, "", "d")]) == b"a b"  # the only separator stays
    assert apply_edits(b"f(x)", [ByteEdit(0, 1, "g", "r")]) == b"g(x)"
    assert apply_edits(b"x=y", [ByteEdit(1, 2, " += ", "r")]) == b"x += y"


# --------------------------------------------------------------------------------------
# Execution space

HOST_AND_DEVICE = b"""#include <math.h>
void reference_cpu(float* out, const float* in, int n) {
    for (int i = 0; i < n; i++) out[i] = expf(in[i]);
}
__host__ __device__ float both(float x) { return expf(x); }
__device__ float dev(float x) { return expf(x); }
__global__ void k(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = expf(in[i]) + dev(in[i]);
}
int main() { float y = expf(1.0f); return (int)y; }
"""


def test_device_only_rewrites_stay_in_device_code() -> None:
    unit = parse_bytes(HOST_AND_DEVICE, "k.cu")
    sites = find_sites(unit, _rules("precise_exp_to_fast"))
    by_fn = {s.function_name: s for s in sites}
    assert by_fn["reference_cpu"].reason.startswith(
        "context: host code (`reference_cpu` is a host function)")
    assert "`both` is __host__ __device__" in by_fn["both"].reason
    assert by_fn["main"].stage == "context" and not by_fn["main"].ok
    assert by_fn["dev"].ok and by_fn["k"].ok
    out = apply_rules(unit, _rules("precise_exp_to_fast")).source.decode()
    assert out.count("__expf(") == 2
    assert "out[i] = expf(in[i]);" in out and "return expf(x); }\n__device__" in out


def test_device_only_names_of_a_rule() -> None:
    from klc.pipeline import device_only_names

    exp, unroll, restrict = _rules("precise_exp_to_fast", "unroll_loop", "add_restrict")
    assert device_only_names(exp) == ("__expf",)
    assert device_only_names(unroll) == ()
    assert device_only_names(restrict) == ()
    warp = _rules("thread_per_row_to_warp_per_row")[0]
    assert "__shfl_xor_sync" in device_only_names(warp)


# --------------------------------------------------------------------------------------
# const and the analysis behind it


@pytest.mark.parametrize(("code", "why"), [
    ("__global__ void k(float *a, float *b) { float *p = a + 1; b[0] = p[0] + a[0]; }",
     "is a non-const pointer into `a`"),
    ("__global__ void k(float *a, float *b) { float *p; p = a + 4; p[0] = 1.0f; b[0] = a[0]; }",
     "`a` is written"),
    ("struct S { float *p; };\n__global__ void k(float *a, float *b) "
     "{ S s; s.p = a; s.p[1] = 2.0f; b[0] = a[0]; }", "stores through it"),
    ("__global__ void k(float *a, float *b) { auto q = a + 2; q[0] = 1.0f; b[0] = a[0]; }",
     "stores through it"),
    ("__global__ void k(float *a, float *b) { float &r = a[3]; r = 1.0f; b[0] = a[0]; }",
     "`a` is written in global function `k`: k.cu:1:58: r = 1.0f"),
    ("__device__ void put(float *p) { p[0] = 1.0f; }\n"
     "__global__ void k(float *a, float *b) { put(a); b[0] = a[0]; }", "passes it to put"),
    ("__global__ void k(float *a, float *b) { b[0] = static_cast<float*>(a)[0] + a[0]; }",
     "casts `a` to the non-const `float*`"),
])
def test_const_refuses_what_would_write_or_not_compile(code: str, why: str) -> None:
    unit = parse_bytes(code.encode(), "k.cu")
    sites = [s for s in find_sites(unit, _rules("add_const_param"))
             if s.match.bindings["X"].text == "a"]
    assert sites and not any(s.ok for s in sites), code
    assert any(why in s.reason for s in sites), [s.reason for s in sites]


def test_const_reads_through_const_views_are_fine() -> None:
    code = (b"__global__ void k(float *a, float *b) {\n"
            b"    const float *row = a + 32 * blockIdx.x;\n"
            b"    const float4 v = reinterpret_cast<const float4*>(a)[threadIdx.x];\n"
            b"    b[threadIdx.x] = row[threadIdx.x] + v.x + a[0];\n}\n")
    out = apply_rules(parse_bytes(code, "k.cu"), _rules("add_const_param"))
    assert b"const float *a" in out.source, out.source.decode()


def test_a_kernel_named_in_an_included_header_keeps_its_type(tmp_path: Path) -> None:
    (tmp_path / "kernels.cuh").write_text("__global__ void scale(float*, float*, int);\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "kernels.cuh"\n__global__ void scale(float* o, float* i, int n) '
                   "{ o[threadIdx.x] = i[threadIdx.x] * n; }\n")
    unit = parse_bytes(src.read_bytes(), str(src))
    sites = [s for s in find_sites(unit, _rules("add_const_param")) if not s.ok]
    assert any("named in the included kernels.cuh" in s.reason for s in sites)


def test_a_pointer_rule_never_binds_a_scalar() -> None:
    code = b"__global__ void k(float *out, const int depth, int n) { out[n + depth] = depth; }"
    unit = parse_bytes(code, "k.cu")
    sites = find_sites(unit, _rules("add_const_param", "add_restrict"))
    # `n + depth` and `depth` fit `$X + $OFFSET` and `$X`: only the pointer `out` is bound
    assert sites
    assert {s.match.bindings["X"].text for s in sites} == {"out"}


# --------------------------------------------------------------------------------------
# Commands


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*KLC, *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=300, env=env)


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "src"
    (tree / "kernels").mkdir(parents=True)
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / "kernels" / "common.h").write_text("#define SCALE 2.0f\n")
    (tree / "CMakeLists.txt").write_text("project(demo CUDA)\n")
    (tree / "kernels" / "act.cu").write_text(
        '#include "common.h"\n#include <math.h>\n'
        "void act_cpu(float *out, const float *in, int n) {\n"
        "    for (int i = 0; i < n; i++) out[i] = expf(in[i]);\n}\n"
        "__global__ void act(float *out, const float *in, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = SCALE * expf(in[i]);\n}\n")
    return tree


def test_batch_out_copies_the_rest_of_the_tree_and_holds_back_precision(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    out = tmp_path / "out"
    r = _run("batch", str(tree), "--out", str(out), "-q", "-j", "1")
    assert r.returncode == 0, r.stderr
    assert (out / "kernels" / "common.h").read_text() == "#define SCALE 2.0f\n"
    assert (out / "CMakeLists.txt").is_file() and not (out / ".git").exists()
    assert "copied 2 other file(s)" in r.stderr
    # every skill whose card says it changes results is held back: fast exp, and the row
    # splits whose atomics add partial sums in the order the blocks finish
    held = r.stderr.split("not applied without --gate: ", 1)[1].split(" (", 1)[0].split(", ")
    assert sorted(held) == ["block_column2_to_row_split_early_return", "block_column_to_row_split",
                    "precise_exp_to_fast"], r.stderr
    assert "__expf" not in (out / "kernels" / "act.cu").read_text()
    # named, the rule applies, in the kernel only
    r = _run("batch", str(tree), "--out", str(tmp_path / "named"), "-q", "-j", "1",
             "--only", "precise_exp_to_fast")
    text = (tmp_path / "named" / "kernels" / "act.cu").read_text()
    assert r.returncode == 0 and "SCALE * __expf(in[i])" in text and "= expf(in[i]);" in text


def test_batch_keeps_the_original_of_a_rewrite_that_no_longer_compiles(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    rule = tmp_path / "broken.rule"
    rule.write_text('rule break_exp {\n  kind: skill\n  context: global\n  anchor: ```\n'
                    "    expf($X)\n  ```\n  rewrite replace: ```\n    no_such_fn($X)\n  ```\n}\n")
    before = (tree / "kernels" / "act.cu").read_bytes()
    r = _run("batch", str(tree), "--rule", str(rule), "--in-place", "-j", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tree / "kernels" / "act.cu").read_bytes() == before
    assert "does not compile where the original does" in r.stderr
    assert 'identifier "no_such_fn" is undefined' in r.stderr
    r = _run("batch", str(tree), "--rule", str(rule), "--in-place", "-j", "1",
             "--no-compile-check", "-q", cwd=tmp_path)
    assert r.returncode == 0 and b"no_such_fn" in (tree / "kernels" / "act.cu").read_bytes()


def test_list_exits_2_where_parse_does(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* x) {\n  x[0] = ;\n}\n"
                   "__global__ void ok(float* y) { y[threadIdx.x] = 1.0f; }\n")
    parse, listing = _run("parse", str(bad)), _run("list", str(bad))
    assert parse.returncode == listing.returncode == 2
    assert f"{bad}:2:8: syntax error" in listing.stderr and "Traceback" not in listing.stderr
    assert "ok: add_restrict" in listing.stdout  # the rest of the file is still listed


def test_why_not_names_a_run_time_block_size(tmp_path: Path) -> None:
    unit = parse_bytes((ROOT / "tests/golden/add_launch_bounds/runtime_block.cu").read_bytes(),
                       "k.cu")
    (site,) = [s for s in find_sites(unit, _rules("add_launch_bounds"))]
    assert "the launch at k.cu:12:5 gives block `block_size`, not a constant" in site.reason


def test_a_loop_macro_in_a_kernel_is_part_of_the_kernel() -> None:
    """``CUDA_KERNEL_LOOP(i, n) { ... }`` reads as a function definition with no type; it is
    a statement of the kernel: not a function of the model, not host code the gate blanks."""
    from klc.gate.compile import prepare_device_source

    code = (b"#define KERNEL_LOOP(i, n) \\\n"
            b"    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); "
            b"i += blockDim.x * gridDim.x)\n"
            b"__global__ void relu_grad(const int n, float* x, float* dy, float* dx) {\n"
            b"    KERNEL_LOOP(index, n) {\n        dx[index] = x[index] > 0 ? dy[index] : 0.0f;\n"
            b"    }\n}\n")
    unit = parse_bytes(code, "k.cu")
    assert [f.name for f in unit.functions] == ["relu_grad"]
    prepared = prepare_device_source(unit)
    assert prepared.removed == () and prepared.source == code
    sites = find_sites(unit, _rules("add_const_param"))
    assert {s.function_name for s in sites} == {"relu_grad"}


ALT_EXP = '''\
rule alt_fast_exp {
  kind: skill
  description: "exp to __expf, whether the argument was scaled by a fast reciprocal or not"
  context: global
  anchor any {
    ```
    __fdividef($X, $Y) * expf($E)
    ```
    ```
    $X / $Y * expf($E)
    ```
  }
  rewrite replace: ```
    __fdividef($X, $Y) * __expf($E)
  ```
  card {
    intent: "test"
    where: "test"
    conditions: "test"
    pitfalls: "test"
  }
}
'''


def test_device_only_names_count_every_branch_of_anchor_any() -> None:
    """A name one branch of `anchor any` has and another lacks is written new where the other
    branch matched: ``__fdividef`` is device-only for a match of the plain-division branch, so
    the rule must not rewrite host code."""
    from klc.pipeline import device_only_names
    from klc.rule import load_rules_text

    rule = load_rules_text(ALT_EXP, "alt.rule")[0]
    assert set(device_only_names(rule)) == {"__expf", "__fdividef"}


def test_headroom_and_llm_prompt_read_every_branch() -> None:
    from klc.fill import FillRequest
    from klc.fill.llm import prompt
    from klc.optimize.headroom import reach
    from klc.rule import load_rules_text

    rule = load_rules_text(ALT_EXP, "alt.rule")[0]
    assert reach(rule).aspects == ()  # an intrinsic for another: cheap in either branch
    unit = parse_bytes(b"__global__ void k(float* y, const float* x, float s) {\n"
                       b"    int i = threadIdx.x;\n    y[i] = x[i] / s * expf(x[i]);\n}\n", "k.cu")
    site = next(s for s in find_sites(unit, [rule]) if s.ok)
    text = prompt(FillRequest(rule, site, unit, None), 1)
    assert "the site matched one of these" in text
    assert "__fdividef($X, $Y) * expf($E)" in text and "$X / $Y * expf($E)" in text
