"""``grid_folded`` and ``fold_identity`` (klc/guards/gridfold.py): whether a kernel's one
element per thread, folded by a maximum or a minimum, may become a grid-stride loop over
fewer blocks; and the operator as a site hole (klc.guards.geometry). The golden cases of
grid_stride_fold hold whole kernels; these probe one condition at a time."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.guards.geometry import site_holes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    int $I = $GIDX;
    $T $ACC = $Z;
    if ($I < $N) {
        $ACC = $E;
    }
  ```
  metavar $ACC: identifier
  guard: grid_folded(anchor, $ACC, ?op) and fold_identity(?op, $Z, $E)
  rewrite replace: ```
    $T $ACC = $Z;
    for (int $I = $GIDX; $I < $N; $I += blockDim.x * gridDim.x) {
        $ACC = ?op($ACC, $E);
    }
  ```
  hole op: enum {fmaxf, fmax, max, fminf, fmin, min} default fmaxf
}
"""


def kernel(start: str, term: str, after: str, t: str = "float") -> str:
    return (f"__global__ void k(const {t}* x, {t}* out, int n) {{\n"
            f"    __shared__ {t} s[256];\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    {t} m = {start};\n"
            f"    if (i < n) {{\n        m = {term};\n    }}\n"
            f"{after}\n}}\n")


def tree(op: str) -> str:
    return ("    s[threadIdx.x] = m;\n    __syncthreads();\n"
            "    for (int k = 128; k > 0; k >>= 1) {\n"
            f"        if (threadIdx.x < k) s[threadIdx.x] = {op}(s[threadIdx.x], "
            "s[threadIdx.x + k]);\n        __syncthreads();\n    }\n")


def verdict(code: str, op: str) -> tuple[bool, str]:
    sites = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(PROBE, "t.rule"),
                       holes={"op": op})
    assert len(sites) == 1, code
    return sites[0].ok, sites[0].reason


ABS_MAX_BITS = tree("fmaxf") + \
    "    if (threadIdx.x == 0) atomicMax((int*)out, __float_as_int(s[0]));"


@pytest.mark.parametrize(("code", "op"), [
    # the absolute maximum: zero start, fabsf term, the integer atomicMax of the float's bits
    (kernel("0.0f", "fabsf(x[i])", ABS_MAX_BITS), "fmaxf"),
    (kernel("0.0f", "fabsf(x[i])", tree("fmaxf") +
            "    if (threadIdx.x == 0) atomicMax((unsigned int*)out, __float_as_uint(s[0]));"),
     "fmaxf"),
    # an integer maximum from INT_MIN, a max() tree, the int atomicMax
    (kernel("INT_MIN", "x[i]", tree("max") + "    if (threadIdx.x == 0) atomicMax(out, s[0]);",
            "int"), "max"),
    # an integer minimum, every thread publishing its own minimum
    (kernel("INT_MAX", "x[i]", "    atomicMin(out, m);", "int"), "min"),
    # a minimum of magnitudes from INFINITY: the bits of values >= 0 order as the floats
    (kernel("INFINITY", "fabsf(x[i])", tree("fminf") +
            "    if (threadIdx.x == 0) atomicMin((unsigned int*)out, __float_as_uint(s[0]));"),
     "fminf"),
])
def test_folds_that_keep_the_result_are_accepted(code: str, op: str) -> None:
    ok, reason = verdict(code, op)
    assert ok, reason


@pytest.mark.parametrize(("code", "op", "why"), [
    # a sum's atomic after a maximum tree: the result counts blocks
    (kernel("-INFINITY", "x[i]", tree("fmaxf") + "    if (threadIdx.x == 0) atomicAdd(out, s[0]);"),
     "fmaxf", "may store to memory"),
    # the bits of floats that may be negative do not order as the floats
    (kernel("-INFINITY", "x[i]", ABS_MAX_BITS.replace("fabsf", "")), "fmaxf",
     "not a maximum of the elements"),
    # the tree takes a minimum where the thread folds a maximum
    (kernel("0.0f", "fabsf(x[i])", tree("fminf") +
            "    if (threadIdx.x == 0) atomicMax((int*)out, __float_as_int(s[0]));"),
     "fmaxf", "given a value that is not a maximum"),
    # one thread publishes its own maximum: the block's threads were not combined first
    (kernel("INT_MIN", "x[i]", "    if (threadIdx.x == 0) atomicMax(out, m);", "int"), "max",
     "were not combined first"),
    # a condition reads the maximum
    (kernel("INT_MIN", "x[i]", "    if (m > 0) atomicMax(out, m);", "int"), "max",
     "a condition after the element block reads"),
    # a per-block output
    (kernel("-INFINITY", "x[i]", tree("fmaxf") +
            "    if (threadIdx.x == 0) out[blockIdx.x] = s[0];"), "fmaxf",
     "a store into global memory outside the element block"),
    # zero is no identity for a maximum of signed values
    (kernel("0", "x[i]", "    atomicMax(out, m);", "int"), "max", "is not the identity of max"),
    # -FLT_MAX would replace a maximum of -inf elements
    (kernel("-FLT_MAX", "x[i]", tree("fmaxf") +
            "    if (threadIdx.x == 0) out[0] = s[0];"), "fmaxf", "a store into global memory"),
    # an operator that is no maximum or minimum
    (kernel("INT_MIN", "x[i]", "    atomicMax(out, m);", "int"), "fmaxf_v",
     "no maximum or minimum"),
])
def test_folds_that_would_change_the_result_are_refused(code: str, op: str, why: str) -> None:
    if op == "fmaxf_v":  # not in the hole's domain: judged by the predicate directly
        from klc.guards import GuardContext
        from klc.guards.gridfold import grid_folded

        site = find_sites(parse_bytes(code.encode(), "k.cu"),
                          load_rules_text(PROBE, "t.rule"))[0]
        v = grid_folded(GuardContext(site.match), "anchor", site.match.bindings["ACC"],
                        "fmaxf_v")
        assert not v.ok and why in v.reason, v.reason
        return
    ok, reason = verdict(code, op)
    assert not ok and why in reason, reason


def test_minus_flt_max_is_the_identity_only_of_values_at_least_zero() -> None:
    refused = kernel("-FLT_MAX", "x[i]", "    atomicMax((int*)out, __float_as_int(m));")
    ok, reason = verdict(refused, "fmaxf")
    assert not ok, reason
    from klc.guards import GuardContext
    from klc.guards.gridfold import fold_identity

    for start, term, want in (("-FLT_MAX", "x[i]", False), ("-FLT_MAX", "fabsf(x[i])", True),
                              ("-INFINITY", "x[i]", True), ("0.0f", "x[i]", False),
                              # a ternary is never negative where each branch is not
                              ("0.0f", "i < n ? fabsf(x[i]) : 0.0f", True),
                              ("0.0f", "i < n ? fabsf(x[i]) : -1.0f", False),
                              ("0.0f", "i < n ? x[i] : 0.0f", False)):
        site = find_sites(parse_bytes(kernel(start, term, "").encode(), "k.cu"),
                          load_rules_text(PROBE, "t.rule"))[0]
        b = site.match.bindings
        v = fold_identity(GuardContext(site.match), "fmaxf", b["Z"], b["E"])
        assert v.ok is want, (start, term, v.reason)


@pytest.mark.parametrize(("op", "want"), [("fmaxf", "fmaxf"), ("max", "max"),
                                          ("fminf", "fminf")])
def test_the_operator_hole_takes_the_sites_own_spelling(op: str, want: str) -> None:
    code = kernel("0.0f", "fabsf(x[i])", tree(op) + "    if (threadIdx.x == 0) out[0] = s[0];")
    site = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(PROBE, "t.rule"))[0]
    rule = load_rules_text(PROBE, "t.rule")[0]
    assert site_holes(rule, site.match, None) == {"op": want}


def test_mixed_operators_fix_no_hole() -> None:
    code = kernel("0.0f", "fabsf(x[i])", tree("fmaxf") + tree("fminf"))
    site = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(PROBE, "t.rule"))[0]
    rule = load_rules_text(PROBE, "t.rule")[0]
    assert site_holes(rule, site.match, None) == {}
