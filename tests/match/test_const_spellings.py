"""Skills whose anchors declare an index with a type metavariable (``$TY $I = blockIdx.x *
...``) take the index declared const (``const int i``, ``int const i``, ``const size_t
i``): the const_local isomorphism binds the type without its const, and the rewrite, which
writes ``$TY`` back (const again where it never assigns the index) and may assign the index
(a grid-stride step, then without the const), still compiles. Checked
on each such skill's own golden inputs with every index declaration made const."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit
from klc.golden import _holes
from klc.pipeline import apply_rules, spec_of
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]
# an anchor line declaring an index with a metavariable type: its initialiser reads a
# built-in (`$TY $C = blockIdx.x * $BX + threadIdx.x;`) or is the index metavariable the
# guard checks (`$TY $I = $GIDX;`, `$IT $I = $GI;`, `$IT $I = $START;`), not an accumulator
# (`$T $ACC = $Z;`)
_TYPED_INDEX = re.compile(r"^\s*\$\w+\s+\$\w+\s*=\s*(?:\$(?:GIDX|GI|START)|"
                          r"[^;]*\b(?:threadIdx|blockIdx)\b[^;]*);", re.M)
# a kernel line declaring a local from a built-in index: `int col = blockIdx.x * ...;`
_INDEX_DECL = re.compile(r"^(\s*)((?:unsigned |signed |long )*[A-Za-z_][\w:]*)\s+"
                         r"([A-Za-z_]\w*)\s*=\s*([^;]*\b(?:threadIdx|blockIdx)\b[^;]*);", re.M)


def _skills() -> dict[str, Rule]:
    rules = RuleSet.load([str(ROOT / "skills"), str(ROOT / "skills" / "experts")]).rules
    return {r.name: r for r in rules if any(_TYPED_INDEX.search(a)
                                            for a in (r.anchors or (r.anchor,)))}


SKILLS = _skills()



def _cases() -> list[tuple[str, Path]]:
    """Up to two golden cases of each skill that rewrite an input with an index to make
    const."""
    out = []
    for name in sorted(SKILLS):
        found = [p for p in sorted((ROOT / "tests" / "golden" / name).glob("*.expected.cu"))
                 if constified(_input(p).read_text()) != _input(p).read_text()]
        out += [(name, p) for p in found[:2]]
    return out


def _input(expected: Path) -> Path:
    return expected.with_name(expected.name.replace(".expected.cu", ".cu"))


def constified(src: str) -> str:
    """Every declaration of a local from a built-in index made const, where the kernel
    never assigns that local afterwards."""
    def const(m: re.Match[str]) -> str:
        name, rest = m.group(3), src[m.end():]
        if m.group(2) in ("return", "const", "static", "volatile") or re.search(
                rf"(?<![\w.]){name}\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)|(?:\+\+|--){name}\b",
                rest):
            return m.group(0)
        return f"{m.group(1)}const {m.group(2)} {name} = {m.group(4)};"
    return _INDEX_DECL.sub(const, src)


CASES = _cases()


def test_the_skills_with_typed_indices_are_found() -> None:
    assert {"elementwise_grid_stride", "tile_transpose", "privatize_atomic_histogram",
            "row_copy_vec4", "batched_tile_transpose", "grid_stride_loop"} <= set(SKILLS)
    assert len(CASES) >= 20


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[f"{n}/{p.name}" for n, p in CASES])
def test_a_const_index_is_rewritten_into_code_that_compiles(name: str, expected: Path) -> None:
    rule = SKILLS[name]
    case = _input(expected)
    const = constified(case.read_text())
    holes = _holes(case.with_name(case.name[:-3] + ".holes"))
    unit = parse_bytes(const.encode(), str(case))
    out = apply_rules(unit, [rule], holes, spec_of(unit))
    assert out.changed
    # the rewrite declares the index again (const only where it never assigns it): it compiles
    result = compile_unit(parse_bytes(out.source, str(case)), arch="sm_90", use_cache=False)
    assert result.ok, result.log
    # the isomorphism is what takes the const spelling
    plain = dataclasses.replace(rule, isos_off=(*rule.isos_off, "const_local"))
    assert not apply_rules(unit, [plain], holes, spec_of(unit)).changed


CONST_GOLDEN = [
    "elementwise_grid_stride/const_long_long_index",
    "elementwise_grid_stride/east_const_int_index",
    "tile_transpose/transpose_const_indices",
    "privatize_atomic_histogram/const_unsigned_index",
    "thread_per_row_to_warp_per_row/const_row_count_declared",
]


@pytest.mark.parametrize("case", CONST_GOLDEN)
def test_golden_rewrites_of_const_indices_compile(case: str) -> None:
    """The golden cases written with const indices: the kernel and its rewrite (the index
    declared again, const where the rewrite never assigns it) both compile with NVRTC."""
    root = ROOT / "tests" / "golden"
    before = (root / f"{case}.cu").read_bytes()
    after = (root / f"{case}.expected.cu").read_bytes()
    assert b"const " in before and before != after
    for src in (before, after):
        result = compile_unit(parse_bytes(src, f"{case}.cu"), arch="sm_90", use_cache=False)
        assert result.ok, result.log
