"""The guard registry: every predicate declares its traits, the caches read them, and a wrong
or missing declaration is refused at import time; a name two families declare is refused
when the table is collected."""

from __future__ import annotations

import pytest

from klc.guards import PREDICATES, READS, ArgSpec, predicate, with_trait
from klc.guards.registry import Verdict


def test_the_traits_give_the_tables_the_caches_read() -> None:
    assert with_trait(lambda t: t.per_declaration) == {
        "is_kernel_param", "is_const", "is_restrict", "no_write", "writes_in", "is_identifier",
        "elem_type", "is_pointer", "vector_elems", "byte_integer"}
    assert with_trait(lambda t: t.reads_layout) == {
        "aligned", "element_aligned", "elem_type", "vector_elems", "byte_integer", "smem_fits",
        "index_below",
        "is_pointer",
        "restrict_safe", "elementwise_only", "double_buffered"}
    assert with_trait(lambda t: t.reads_rule) == {"smem_fits"}
    assert with_trait(lambda t: t.hole_relation) == {"is_product"}
    assert with_trait(lambda t: t.pass_only) == {"const_removable", "block_y_is", "block_y_tiles",
                                                "flat_padded_tile", "grid_extent_is",
                                                "shared_array_holds", "block_times_loads",
                                                "block_of_warps"}


def test_every_predicate_says_what_it_reads() -> None:
    for name, p in PREDICATES.items():
        assert p.traits.reads and p.traits.reads <= set(READS), name


def test_a_predicate_that_does_not_say_what_it_reads_is_refused() -> None:
    with pytest.raises(TypeError):
        predicate("__probe_no_reads")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="reads= must name what its verdict reads"):
        predicate("__probe_empty", reads=())
    with pytest.raises(ValueError, match="reads= must name"):
        predicate("__probe_typo", reads=("declaration",))
    assert "__probe_no_reads" not in PREDICATES


def test_a_shared_verdict_that_reads_the_position_is_refused() -> None:
    with pytest.raises(ValueError, match="shared per declaration"):
        predicate("__probe_shared", reads=("declarations", "position"), per_declaration=True)
    with pytest.raises(ValueError, match="shared per declaration"):
        predicate("__probe_shared2", reads=("arguments",), per_declaration=True)


def test_a_hole_relation_reads_only_hole_values() -> None:
    with pytest.raises(ValueError, match="hole relation"):
        predicate("__probe_holes", ArgSpec("$X", frozenset({"metavar"})), reads=("holes",))
    with pytest.raises(ValueError, match="hole relation"):
        predicate("__probe_holes2", reads=("holes", "spec"))


def test_a_name_is_declared_once() -> None:
    from types import ModuleType

    from klc.guards import loops
    from klc.guards.registry import collect

    other = ModuleType("klc.guards.probe")
    other.in_loop = predicate("in_loop", reads=("position",))(lambda ctx: Verdict(True, ""))
    other.in_loop.__module__ = other.__name__
    with pytest.raises(ValueError, match="'in_loop' is declared twice"):
        collect((loops, other))
    assert set(collect((other,))) == {"in_loop"}  # one family alone is collected
