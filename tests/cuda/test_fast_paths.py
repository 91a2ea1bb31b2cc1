"""The front end's shortcuts give what the plain ways they replace give.

The known macro prefixes are found by one scan per first byte they share (not one ``in`` per
prefix); a unit's first positions are counted from the text (not looked up in a table of
every line start). Each is checked against the plain way on the front end's test corpus and
on text made to break a careless shortcut (prefixes inside one another, offsets out of order,
past the end, lines ended by "\\r\\n").
"""

from __future__ import annotations

import bisect
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from klc.cuda import model
from klc.cuda.macros import _KNOWN_PREFIXES, _known_prefixes
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import line_starts

CORPUS = Path(__file__).parents[1] / "data" / "frontend"
SOURCES = [p.read_bytes() for p in sorted(CORPUS.iterdir()) if p.suffix in (".cu", ".cuh")]


def _prefixes_by_in(source: bytes) -> set[bytes]:
    return {p for p in _KNOWN_PREFIXES if p in source}


def test_known_prefixes_are_those_the_text_holds() -> None:
    made = [b"CUTHRUST_", b"xTHRUSTORCH_ C10_CUB_", b"CUTCUTLASS_", b"__CCCL_", b"C", b"",
            b"CUTLASS_DEVICE void f();", b"THRUSTHRUST_", b"TORCH_THRUST_CUTE_"]
    held = 0
    for source in [*SOURCES, *made]:
        assert _known_prefixes(source) == _prefixes_by_in(source), source[:60]
        held += bool(_prefixes_by_in(source))
    assert held >= 8  # (the corpus and the made text hold some)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_KNOWN_PREFIXES, b"C", b"T", b"_", b"UT", b"x", b"10_"]))
       .map(b"".join))
def test_known_prefixes_of_any_run_of_their_pieces(source: bytes) -> None:
    assert _known_prefixes(source) == _prefixes_by_in(source)


def _position_by_table(source: bytes, offset: int) -> tuple[int, int]:
    starts = line_starts(source)
    line = bisect.bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"\n", b"\r\n", b" ", b"{}", b"int x;"]), min_size=1)
       .map(b"".join).filter(bytes.strip),
       st.lists(st.integers(min_value=0, max_value=2_000), max_size=40))
def test_counted_positions_are_those_of_the_line_table(source: bytes,
                                                       offsets: list[int]) -> None:
    unit = parse_bytes(source, "t.cu")
    for offset in offsets:  # (in any order, past the end too)
        assert unit.position(offset) == _position_by_table(source, offset)
    assert "_line_starts" not in unit.__dict__  # (counted: no table made)


def test_positions_past_the_counted_ones_come_from_the_table() -> None:
    source = b"".join(SOURCES)
    unit = parse_bytes(source, "all.cu")
    offsets = list(range(len(source) - 1, -1, -max(1, len(source) // 700)))
    assert len(offsets) > model._COUNTED_POSITIONS + 100
    for i, offset in enumerate(offsets):
        assert unit.position(offset) == _position_by_table(source, offset), i
    assert "_line_starts" in unit.__dict__
    assert unit.position(len(source) + 5) == _position_by_table(source, len(source) + 5)
