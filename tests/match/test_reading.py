"""The isomorphism ``read_through`` (klc.match.reading): a stable local read as the value it
was given once, and ``x = f(x);`` as the one statement of a small helper, only where the
reading is the same code. It is a simplification's (the walks of experts' code): a skill
does not read through (``test_a_skill_does_not_read_through``)."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.match.reading import reader
from klc.pipeline import apply_rules, find_sites
from klc.rule import load_rules_text


def rule(anchor: str, replace: str = "", extra: str = "") -> str:
    return (f'rule r {{\n  kind: simplification\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{replace or anchor}\n  ```\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    rules = load_rules_text(rule_text, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items() if not k.startswith("\0")}
            for s in find_sites(unit, rules) if s.ok]


LANE = "if ($T % 32 == 0) {\n    $R[$T / 32] = $V;\n}"


def kernel(decls: str, body: str = "if (lane == 0) { s[warp] = v; }") -> str:
    return ("__global__ void k(const float* x, float* y, int n) {\n"
            "    __shared__ float s[32];\n    float v = x[threadIdx.x];\n"
            f"{decls}\n{body}\n    y[0] = s[0];\n}}\n")


@pytest.mark.parametrize("decls", [
    "int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;",
    "unsigned tid = threadIdx.x; unsigned lane = tid % 32; unsigned warp = tid / 32;",
    "const int tid = threadIdx.x; const int lane = tid % 32, warp = tid / 32;",
])
def test_a_stable_local_reads_as_its_initialiser(decls: str) -> None:
    got = sites(rule(LANE), kernel(decls))
    assert len(got) == 1 and got[0]["R"] == "s" and got[0]["V"] == "v"
    assert got[0]["T"] in ("threadIdx.x", "tid")


@pytest.mark.parametrize("decls, after", [
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "lane = 3;"),    # assigned
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "lane++;"),      # incremented
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "int* p = &lane;"),  # escapes
    ("int t = threadIdx.x; int lane = t % 32; int warp = t / 32;", "t += 1;"),     # its name moves
    ("int lane = (int)x[0] % 32; int warp = threadIdx.x / 32;", ""),               # reads memory
    ("int lane = min(n, 3) % 32; int warp = threadIdx.x / 32;", ""),               # a call
    ("int lane = n % 32; int warp = threadIdx.x / 32; n = 2;", ""),  # a parameter moves
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "int& r = lane; r = 1;"),
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "bump(lane);"),  # by ref?
    ("int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;", "(lane) = 1;"),
])
def test_a_local_that_may_change_is_not_read(decls: str, after: str) -> None:
    assert sites(rule(LANE), kernel(decls + "\n" + after)) == []


def test_a_local_is_read_only_after_its_declaration_and_inside_its_block() -> None:
    code = ("__global__ void k(float* y) {\n    int lane = 0, warp = 0;\n    {\n"
            "        int lane = threadIdx.x % 32;\n    }\n"
            "    if (lane == 0) { y[warp] = 1.0f; }\n}\n")
    unit = parse_bytes(code.encode(), "k.cu")
    r = reader(unit)
    uses = [n for n in unit.root.children[0].child_by_field_name("body").children
            if n.type == "if_statement"]
    ident = uses[0].child_by_field_name("condition").named_children[0].child_by_field_name("left")
    assert ident.text == b"lane"
    assert r.local_value(ident) is None  # (two declarations of lane: neither is read)
    one = code.replace("int lane = 0, warp = 0;", "int warp = 0;").replace(
        "    {\n        int lane = threadIdx.x % 32;\n    }\n", "")
    one = one.replace("if (lane == 0)", "int lane = threadIdx.x % 32;\n    if (lane == 0)")
    unit = parse_bytes(one.encode(), "k.cu")
    r = reader(unit)
    decl_value = [n for n in unit.root.children[0].child_by_field_name("body").children
                  if n.type == "declaration"][1]
    name = decl_value.named_children[1].child_by_field_name("declarator")
    assert r.local_value(name) is None  # (the declaration's own name)


HELPER = ("__device__ float warpSum(float val) {\n"
          "    for (int o = 16; o > 0; o >>= 1)\n"
          "        val += __shfl_down_sync(0xffffffff, val, o);\n    return val;\n}\n")
LOOP = ("float $V = $E;\nfor (int $O = 16; $O > 0; $O >>= 1) {\n"
        "    $V += __shfl_down_sync($M, $V, $O);\n}\nif ($T == 0) {\n    $D = $V;\n}")


def reduce_kernel(helper: str = HELPER, call: str = "sum = warpSum(sum);",
                  decl: str = "float sum = x[threadIdx.x];") -> str:
    return (helper + "__global__ void k(const float* x, float* y) {\n"
            f"    {decl}\n    {call}\n    if (threadIdx.x == 0) {{ y[blockIdx.x] = sum; }}\n}}\n")


def test_a_helper_call_reads_as_its_loop_and_the_rewrite_writes_the_callers_names() -> None:
    got = sites(rule(LOOP), reduce_kernel())
    assert got == [{"V": "sum", "E": "x[threadIdx.x]", "O": "o", "M": "0xffffffff",
                    "T": "threadIdx.x", "D": "y[blockIdx.x]"}]
    # the loop written back inline: the caller's variable, the helper's own loop index
    rules = load_rules_text(rule(LOOP, "float $V = $E;\nfor (int $O = 1; $O < 32; $O *= 2) "
                                 "{\n    $V += __shfl_xor_sync($M, $V, $O);\n}\n"
                                 "if ($T == 0) {\n    $D = $V;\n}"), "t.rule")
    out = apply_rules(parse_bytes(reduce_kernel().encode(), "k.cu"), rules).source.decode()
    kernel_text = out.split("__global__")[1]
    assert "warpSum(sum)" not in kernel_text and "val" not in kernel_text
    assert "sum += __shfl_xor_sync(0xffffffff, sum, o);" in kernel_text


@pytest.mark.parametrize("helper, call, decl", [
    (HELPER.replace("(float val)", "(float& val)"), None, None),        # by reference
    (HELPER.replace("return val;", "return val * 2.0f;"), None, None),  # another value
    (HELPER.replace("(float val)", "(double val)"), None, None),        # another type
    (HELPER, "sum = warpSum(other);", "float sum = x[0], other = x[1];"),  # another variable
    (HELPER.replace("    return val;", "    val += 1.0f;\n    return val;"), None, None),
    # the loop's mask is a global the caller's code may not see the same way
    ("__device__ unsigned full = 0xffffffff;\n" + HELPER.replace("0xffffffff", "full"),
     None, None),
])
def test_a_helper_that_is_not_its_loop_alone_is_not_read(helper: str, call: str | None,
                                                          decl: str | None) -> None:
    code = reduce_kernel(helper, call or "sum = warpSum(sum);",
                         decl or "float sum = x[threadIdx.x];")
    assert sites(rule(LOOP), code) == []


def test_the_helpers_parameter_binds_the_callers_variable() -> None:
    # $A is first bound inside the helper, to `val`: the parameter stands for the caller's
    # `sum`, which the binding then holds (the helper's own loop matches as written too)
    anchor = "for (int $O = 16; $O > 0; $O >>= 1) {\n    $A += __shfl_down_sync($M, $A, $O);\n}"
    unit = parse_bytes(reduce_kernel().encode(), "k.cu")
    found = [s.match for s in find_sites(unit, load_rules_text(rule(anchor), "t.rule"))]
    assert sorted((m.function.name, m.bindings["A"].text) for m in found) == [
        ("k", "sum"), ("warpSum", "val")]
    call = next(m for m in found if m.function.name == "k")
    assert unit.source[call.start:call.end] == b"sum = warpSum(sum);"
    assert unit.source[call.bindings["A"].start:call.bindings["A"].end] == b"sum"


def test_a_binding_that_names_the_parameter_inside_more_code_is_refused() -> None:
    # $E binds `val * 0.5f` inside the helper: written at the call, it would name `val`
    helper = HELPER.replace("val += __shfl_down_sync(0xffffffff, val, o);",
                            "val += __shfl_down_sync(0xffffffff, val * 0.5f, o);")
    anchor = "for (int $O = 16; $O > 0; $O >>= 1) {\n    $A += __shfl_down_sync($M, $E, $O);\n}"
    unit = parse_bytes(reduce_kernel(helper).encode(), "k.cu")
    found = [s.match for s in find_sites(unit, load_rules_text(rule(anchor), "t.rule"))]
    assert [m.function.name for m in found] == ["warpSum"]


def test_read_through_off() -> None:
    extra = "  isomorphisms: -read_through\n"
    assert sites(rule(LOOP, extra=extra), reduce_kernel()) == []
    assert sites(rule(LANE, extra=extra), kernel(
        "int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;")) == []


def test_a_site_that_read_a_local_is_judged_again_when_its_declaration_changes() -> None:
    """Two rules of one run: the first rewrites the lane's initialiser, the second had read
    the lane through it. The second is judged again on the rewritten code (its footprint
    holds the initialiser it read: Match.reads), where the lane no longer stands for
    threadIdx.x % 32."""
    narrow = ('rule a_narrow {\n  kind: simplification\n  description: "t"\n  context: any\n'
              "  anchor: ```\nint $L = threadIdx.x % 32;\n  ```\n"
              "  rewrite replace: ```\nint $L = threadIdx.x % 16;\n  ```\n}\n")
    store = rule("if (threadIdx.x % 32 == 0) {\n    $R[0] = $V;\n}",
                 "if (threadIdx.x % 32 == 0) {\n    $R[1] = $V;\n}").replace("rule r ", "rule b ")
    code = kernel("int lane = threadIdx.x % 32;", "if (lane == 0) { s[0] = v; }")
    unit = parse_bytes(code.encode(), "k.cu")
    alone = apply_rules(unit, load_rules_text(store, "t.rule")).source.decode()
    assert "if (threadIdx.x % 32 == 0) {\n    s[1] = v;" in alone
    both = apply_rules(parse_bytes(code.encode(), "k.cu"),
                       load_rules_text(narrow + store, "t.rule")).source.decode()
    assert "int lane = threadIdx.x % 16;" in both
    assert "if (lane == 0) { s[0] = v; }" in both  # (not read as threadIdx.x % 32 any more)


def test_a_skill_does_not_read_through() -> None:
    """A skill's anchor meets the code as written (and the comparisons tree-sitter misread,
    read again): its retry on every file a listing reads cost more than the listing."""
    code = kernel("int lane = threadIdx.x % 32;", "if (lane == 0) { s[0] = v; }")
    anchor = "if (threadIdx.x % 32 == 0) {\n    $R[0] = $V;\n}"
    assert len(sites(rule(anchor), code)) == 1
    assert sites(rule(anchor).replace("kind: simplification", "kind: skill"), code) == []
