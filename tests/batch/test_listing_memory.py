"""A listed file's tree is freed when its listing is done: no cycle of the listing holds the
unit, so reference counting frees it (the collector does not weigh a tree's C memory); a unit
that cycles still hold is collected with the next few."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from klc.batch import listing
from klc.cuda import parse

ROOT = Path(__file__).resolve().parents[2]
# kernels of this repository whose guards read loops, constants and declarations (the lazy
# reasons of a guard's verdict, a run's lookahead, the leaves of a span): each made a cycle
KERNELS = sorted([*ROOT.glob("bench/heldout/*.cu"), *ROOT.glob("bench/lineages/*/expert.cu")])


@pytest.fixture
def units(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[weakref.ref[Any]]]:
    """The units the listing parses, held weakly; the collector off while the test runs."""
    made: list[weakref.ref[Any]] = []
    parse_bytes = parse.parse_bytes

    def parsed(*args: Any, **kwargs: Any) -> Any:
        unit = parse_bytes(*args, **kwargs)
        made.append(weakref.ref(unit))
        return unit

    monkeypatch.setattr(parse, "parse_bytes", parsed)
    listing._init([str(ROOT / "skills")], True, False)
    gc.collect()
    gc.disable()
    try:
        yield made
    finally:
        gc.enable()


def test_a_listed_units_tree_is_freed_without_the_collector(units: list[Any]) -> None:
    assert len(KERNELS) > 40
    sites = 0
    for path in KERNELS:
        got = listing.list_file(str(path))
        assert not got.error, got.error
        sites += len(got.sites)
        alive = [u() for u in units if u() is not None]
        assert not alive, f"{path.relative_to(ROOT)}: a cycle holds its unit"
        units.clear()
    assert sites > 20  # (the guards ran: sites were judged, and some apply)


def test_units_cycles_hold_are_collected_with_the_next_few(
        units: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    list_unit = listing._list_unit

    def cycling(path: str, unit: Any) -> Any:
        loop: list[Any] = [unit]
        loop.append(loop)  # (a cycle that holds the unit, as a rule's code might make)
        return list_unit(path, unit)

    monkeypatch.setattr(listing, "_list_unit", cycling)
    listing._STATE["held"] = 0
    path = str(ROOT / "bench" / "examples" / "saxpy.cu")
    for n in range(1, listing._COLLECT_EVERY):
        listing.list_file(path)
        assert sum(u() is not None for u in units) == n  # (held, not collected yet)
    listing.list_file(path)
    assert all(u() is None for u in units)  # (the few collected at once)
