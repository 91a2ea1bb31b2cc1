"""Reading and parsing: CUDA source bytes -> masks (``klc.cuda.macros``) -> a lossless
tree-sitter tree -> a ``Unit``, which is handed what builds its model
(``klc.cuda.build.build_model``) and what gives its facts (``klc.cuda.facts.Facts``).

A file whose last line has no newline is parsed with one appended (spans past the end are
clamped), so no hidden MISSING node is reported for it. A re-parse after a rewrite
(``parse_bytes(previous=...)``) reuses the old tree for what did not change, and the masks
its recovery made where their text did not change.

The top of ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): the one place that makes
units, so the only module that knows both the builder and the facts.
"""

from __future__ import annotations

import bisect
from pathlib import Path

from tree_sitter import Point, Tree

from klc.cuda.build import build_model
from klc.cuda.facts import Facts
from klc.cuda.macros import Mask, always_masks, blank, definitions_of, recover
from klc.cuda.model import Unit
from klc.cuda.syntax import line_start, line_starts, parser
from klc.errors import KlcError, shown, where
from klc.fsutil import read_input

SOURCE_SUFFIXES = (".cu", ".cuh")


def read_source(path: str | Path) -> bytes:
    """Read a source file, or raise KlcError with a message naming the file."""
    data = read_input(path, "CUDA source file")  # regular files only, bounded, never blocks
    check_text(str(path), data)
    return data


def check_text(path: str, data: bytes) -> None:
    """Refuse what is not CUDA source text: empty, binary, or not UTF-8."""
    if not data.strip():
        raise KlcError(f"{shown(path)}: file is empty")
    if b"\0" in data[:8192]:
        raise KlcError(f"{shown(path)}: binary file (contains NUL bytes), not CUDA source")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(
            f"{where(path, line, col)}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def parse_file(path: str | Path) -> Unit:
    """Read and parse a CUDA source file."""
    return parse_bytes(read_source(path), str(path))


def parse_bytes(source: bytes, path: str = "<memory>", *,
                previous: tuple[Unit, list[tuple[int, int, int]]] | None = None) -> Unit:
    """Parse CUDA source into a Unit, with the recovery of ``klc.cuda.macros``.

    ``previous``: (a unit, the changes that turn its source into this one: ``(start, end,
    new length)`` spans of the old source, sorted, not overlapping). Its tree is then
    reused for what did not change (tree-sitter's incremental parse), and so are the masks
    its recovery made where their text did not change (the same macro line, unchanged,
    would be found and masked again): a rewrite's re-parse costs a fraction of a whole one,
    and gives the tree and problems of a whole parse."""
    work = bytearray(source)
    if not source.endswith(b"\n"):
        work += b"\n"  # past the end of the source: no span of the original changes
    defs = definitions_of(source) if b"define" in source else {}
    masks = always_masks(source, defs)
    for mask in masks:
        blank(work, mask.start, mask.end)
    always = len(masks)  # (after these: the recovery's, carried over or found again)
    if previous is not None and previous[0].recovered:
        _carry_recovered(work, masks, *previous)
    data = bytes(work)
    old = _edited_tree(*previous, data) if previous is not None else None
    if len(source) > DEPTH_CHECK_BYTES:
        _check_tokens(source, path)
    tree = parser().parse(data, old) if old is not None else parser().parse(data)
    if len(source) > DEPTH_CHECK_BYTES:
        _check_size(tree, path)
        _check_depth(tree, path)
    if tree.root_node.has_error:
        tree = recover(source, work, tree, masks)
    recovered = masks[always:]
    masks.sort(key=lambda m: m.start)
    unit = Unit(path, source, bytes(work[: len(source)]), tree, masks, defs, build=build_model,
                facts=Facts)
    unit.recovered = recovered
    return unit


MAX_DEPTH = 8192  # syntax tree levels: real code nests a few dozen deep
DEPTH_CHECK_BYTES = 65536  # checked above this size (below, a tree cannot nest deep enough to
# slow the queries down: they slowed past 65,536 levels, and a level takes 2 bytes or more)


MAX_NODES = 2_000_000  # syntax tree nodes: the largest real file we know (a generated 4 MB
# header) has 1.2 million; the model's time and memory grow with them (a 14 MB file of 4 million:
# 80 s and 2.2 GB), so a file past this is refused after the parse, before the model


MAX_PUNCTUATION = 800_000  # operator and punctuation bytes, before the parse: about 2.5 nodes
# each (the 1.2-million-node header has 470,000), so a file far past MAX_NODES is refused
# before tree-sitter spends its time (an 8 MB file of 9.5 million nodes: 20 s) and memory
_PUNCTUATION = b";,(){}[]=+-*/<>&|!?:."


def _check_tokens(source: bytes, path: str) -> None:
    """Refuse, before parsing, a file whose operators and punctuation alone promise more than
    MAX_NODES nodes (counted at C speed: the bytes that ``translate`` deletes)."""
    marks = len(source) - len(source.translate(None, _PUNCTUATION))
    if marks > MAX_PUNCTUATION:
        raise KlcError(f"{shown(path)}: {marks:,} operators and punctuation marks, over klc's "
                       f"limit of {MAX_PUNCTUATION:,} (about {MAX_NODES:,} syntax tree nodes; "
                       "the largest real CUDA files have about 1.2 million); split the file")


def _check_size(tree: Tree, path: str) -> None:
    """Refuse a tree of more than MAX_NODES nodes (the bound on time and memory that the byte
    limit alone is not: bytes of dense code make more nodes than bytes of comments)."""
    nodes = tree.root_node.descendant_count
    if nodes > MAX_NODES:
        raise KlcError(f"{shown(path)}: {nodes:,} syntax tree nodes, over klc's limit of "
                       f"{MAX_NODES:,} (the largest real CUDA files have about 1.2 million); "
                       "split the file")


def _check_depth(tree: Tree, path: str) -> None:
    """Refuse a tree nested deeper than MAX_DEPTH (one expression of 70,000 terms made the
    model's queries run for minutes), with the place where it gets too deep. A subtree of n
    nodes is at most n - 1 levels deep (tree-sitter keeps each node's count): the walk goes
    only into those that could reach the limit, and meets the first node past it where a
    walk of every node would."""
    if tree.root_node.descendant_count <= MAX_DEPTH:
        return
    cursor = tree.walk()
    depth = 0
    while True:
        if depth + cursor.node.descendant_count > MAX_DEPTH + 1 and cursor.goto_first_child():
            depth += 1
            if depth > MAX_DEPTH:
                row, col = cursor.node.start_point
                raise KlcError(f"{where(path, row + 1, col + 1)}: code nested more than "
                               f"{MAX_DEPTH} levels deep (an expression of that many terms?); "
                               "klc does not read it")
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            depth -= 1


def _carry_recovered(work: bytearray, masks: list[Mask], unit: Unit,
                     changes: list[tuple[int, int, int]]) -> None:
    """Put the old unit's recovery masks into the new text (``work``), each moved by the
    changes before it, where no change touches its text or the lines around it (then a
    whole parse would see the same macro text in the same surroundings)."""
    old = unit.parsed
    size = len(unit.source)
    i, delta = 0, 0
    taken = {m.start for m in masks}
    for m in sorted(unit.recovered, key=lambda m: m.start):
        # the lines around the mask: where recovery looks for the cause of an error
        lo = line_start(unit.source, max(0, line_start(unit.source, m.start) - 1))
        nl = unit.source.find(b"\n", m.end)
        hi = size if nl < 0 else unit.source.find(b"\n", nl + 1)
        hi = size if hi < 0 else hi
        while i < len(changes) and changes[i][1] <= lo:
            delta += changes[i][2] - (changes[i][1] - changes[i][0])
            i += 1
        if i < len(changes) and changes[i][0] < hi:
            continue  # a change near it: recovery decides afresh
        start, end = m.start + delta, m.end + delta
        if start in taken or bytes(work[start:end]) != unit.source[m.start:m.end]:
            continue
        work[start:end] = old[m.start:m.end]
        masks.append(Mask(start, end, m.reason))
        taken.add(start)


def _edited_tree(unit: Unit, changes: list[tuple[int, int, int]], data: bytes) -> Tree | None:
    """A copy of ``unit``'s tree, edited (``Tree.edit``) to describe ``data``, the text to
    parse next: the changed spans, and between them every stretch whose masking differs (a
    mask that recovery added to the old text, one of the new text's). None when the
    changes do not account for the new length (then the parse starts from nothing)."""
    old = unit.parsed + (b"" if unit.source.endswith(b"\n") else b"\n")
    spans: list[tuple[int, int, int]] = []  # old start, old end, new length
    pos = delta = 0
    for start, end, length in [*changes, (len(old), len(old), 0)]:
        if start < pos or end < start:
            return None
        if old[pos:start] != data[pos + delta:start + delta]:
            spans.append((pos, start, start - pos))  # the same length, other masks
        if end > start or length:
            spans.append((start, end, length))
        delta += length - (end - start)
        pos = end
    if len(old) + delta != len(data):
        return None
    tree = unit.tree.copy()
    lines_at = line_starts(old)

    def point(offset: int) -> Point:
        row = bisect.bisect_right(lines_at, offset) - 1
        return Point(row, offset - lines_at[row])

    delta = sum(length - (end - start) for start, end, length in spans)
    for start, end, length in reversed(spans):  # from the end: earlier offsets stay valid
        delta -= length - (end - start)
        begin = point(start)
        inserted = data[start + delta:start + delta + length]
        lines = inserted.count(b"\n")
        column = (len(inserted) - inserted.rfind(b"\n") - 1 if lines
                  else begin.column + len(inserted))
        tree.edit(start_byte=start, old_end_byte=end, new_end_byte=start + length,
                  start_point=begin, old_end_point=point(end),
                  new_end_point=Point(begin.row + lines, column))
    return tree
