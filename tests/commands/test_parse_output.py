"""``klc parse``'s output paths give the bytes of the plain ways they replace.

The JSON is written a file at a time (each file's summary through ``json.dumps(...,
indent=2)``, the list's brackets and commas around them), from records made by
``klc.report.plain`` (what ``dataclasses.asdict`` makes); the text is one print per file,
written as it is where the console writes no styles (``print_plain``: what rich prints for
the markup of the same lines) and through ``print_markup`` on a terminal (what rich's
``print`` writes, a line at a time). Each is checked against the plain way: on the front
end's test corpus and on values and markup made to break a careless shortcut.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from rich.markup import escape

from klc.cli import main
from klc.commands import console
from klc.cuda.parse import parse_file
from klc.errors import terminal_safe
from klc.report import _plain_all, plain, unit_summary

CORPUS = Path(__file__).parents[1] / "data" / "frontend"
FILES = sorted(str(p) for p in CORPUS.iterdir() if p.suffix in (".cu", ".cuh"))

def test_plain_is_asdict_for_every_record_of_the_corpus() -> None:
    kinds: set[str] = set()
    for path in FILES:
        unit = parse_file(path)
        records: list[object] = [*unit.unanalyzable, *unit.problems, *unit.masks]
        for f in unit.functions:
            records += [*f.template_params, *f.params, *f.shared, *f.loops, *f.barriers,
                        *f.launches]
            if f.launch_bounds:
                records.append(f.launch_bounds)
        for r in records:
            assert plain(r) == dataclasses.asdict(r)
            assert list(plain(r)) == list(dataclasses.asdict(r))  # the same key order
            kinds.add(type(r).__name__)
        for f in unit.functions:  # a list's records, their fields looked up once
            for group in (f.params, f.loops, f.shared, f.template_params, f.launches):
                assert _plain_all(group) == [dataclasses.asdict(r) for r in group]
            with_line = _plain_all(f.loops, "line", lambda lp, u=unit: u.position(lp.start)[0])
            assert with_line == [dataclasses.asdict(lp) | {"line": unit.position(lp.start)[0]}
                                 for lp in f.loops]
            assert all(list(d)[-1] == "line" for d in with_line)
    assert {"Param", "TemplateParam", "LaunchBounds", "SharedDecl", "Loop", "Call", "Launch",
            "Mask"} <= kinds


def test_json_output_is_json_dumps_of_the_summaries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.cu")
    rc = main(["parse", "--json", FILES[0], missing, *FILES[1:]])
    out, err = capsys.readouterr()
    want = [unit_summary(parse_file(p)) for p in FILES]
    assert out == json.dumps(want, indent=2) + "\n"
    assert rc == 2 and f"{missing}: no such file" in err

    rc = main(["parse", "--json", missing])
    out, _ = capsys.readouterr()
    assert rc == 2 and out == json.dumps([], indent=2) + "\n"


def test_text_output_is_richs_print_a_line_at_a_time(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    main(["parse", *FILES])
    fast = capsys.readouterr()

    def by_line(markup: str) -> None:
        for line in markup.split("\n"):
            console.out.print(line, emoji=False)

    # the lines as markup (as on a terminal), each printed by rich
    monkeypatch.setattr(console.out, "writes_plain", False, raising=False)
    monkeypatch.setattr(console.out, "print_markup", by_line, raising=False)
    main(["parse", *FILES])
    slow = capsys.readouterr()
    assert fast.out == slow.out and fast.err == slow.err
    assert fast.out.count("\n") > 200  # a real listing, not an empty one


MARKUPS = [
    "[bold]a.cu[/bold]\n  kernel [cyan]k[/cyan]  (a.cu:1:1)",
    "    param x: float\tconst",  # a tab: rich expands it
    "    param x: " + "y" * 120 + "   ",  # past the width with blanks at the end: rich trims
    "short   \n    next",  # blanks at a line's end under the width
    escape("    shared: T s[N][2] \\"),  # a backslash at the end
    escape("[not markup] a[i] = b[/i]"),
    "    attribute: \x1b[31mred\x1b[0m \u202eevil\r\x07",  # control and bidi characters
    "    launches k<<<caf\u00e9, \u4e2d>>>",
    "",
]


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("markup", MARKUPS)
def test_print_markup_writes_what_print_writes(markup: str, terminal: bool) -> None:
    cls = console._console_class()
    fast, slow = io.StringIO(), io.StringIO()
    for buf in (fast, slow):
        c = cls(file=buf, width=40, force_terminal=terminal, highlight=False, soft_wrap=True,
                emoji=False)
        if buf is fast:
            c.print_markup(markup)
        else:
            c.print(markup, emoji=False)
    assert fast.getvalue() == slow.getvalue()


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("text", [*MARKUPS, "[bold]not a style[/bold] \\[x] \\"])
def test_print_plain_writes_what_print_of_text_writes(text: str, terminal: bool) -> None:
    from rich.text import Text

    cls = console._console_class()
    fast, slow = io.StringIO(), io.StringIO()
    for buf in (fast, slow):
        c = cls(file=buf, width=40, force_terminal=terminal, highlight=False, soft_wrap=True,
                emoji=False)
        if buf is fast:
            c.print_plain(text)
        else:
            c.print(Text(terminal_safe(text)))
    assert fast.getvalue() == slow.getvalue()
    if not terminal and "\t" not in text:  # written as it is
        assert fast.getvalue() == terminal_safe(text) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_print_markup_on_any_escaped_text(lines: list[str]) -> None:
    markup = "\n".join(f"[bold]{escape(t)}[/bold] {escape(t)}" for t in lines)
    cls = console._console_class()
    fast, slow = io.StringIO(), io.StringIO()
    cls(file=fast, width=30, highlight=False, soft_wrap=True, emoji=False).print_markup(markup)
    cls(file=slow, width=30, highlight=False, soft_wrap=True, emoji=False).print(markup,
                                                                                emoji=False)
    assert fast.getvalue() == slow.getvalue()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.lists(st.sampled_from([b"\n", b"a", b"\r\n", b""])).map(
    b"".join))
def test_line_starts_are_the_offsets_after_each_newline(data: bytes) -> None:
    from klc.cuda.syntax import line_starts

    assert line_starts(data) == [0] + [i + 1 for i, byte in enumerate(data) if byte == 10]


PIECE = st.text(st.sampled_from("ab/[]\\ #@:<>\n\x1b")) | st.text()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(PIECE, st.booleans(), st.sampled_from(["", " ", "\n", "  ("])),
                max_size=6))
@example([("[", False, ""), ("@", False, ""), ("]", False, "")])  # (a tag across pieces)
def test_text_taken_as_it_is_is_what_its_markup_shows(
        pieces: list[tuple[str, bool, str]]) -> None:
    """Where ``_as_is`` takes every piece of source text, the text printed as it is shows
    what rich shows for the markup (each piece escaped, some styled, literal text between);
    where it does not, ``klc parse`` prints the markup."""
    from rich.markup import render

    from klc.commands.parse import _as_is, _ReadsAsMarkup

    try:
        text = "".join(_as_is(p) + sep for p, _, sep in pieces)
    except _ReadsAsMarkup:
        assume(False)
    markup = "".join((f"[cyan]{escape(p)}[/cyan]" if styled else escape(p)) + sep
                     for p, styled, sep in pieces)
    assert render(terminal_safe(markup), emoji=False).plain == terminal_safe(text)


def test_text_that_reads_as_markup_is_printed_as_markup() -> None:
    """A piece that its markup would not show as it is: ``klc parse`` prints the markup."""
    from klc.commands.parse import _as_is, _ReadsAsMarkup

    # (a "[" that ends a piece: the pieces "[", "@" and "]" read as the tag "[@]")
    for piece in ("float* \\", "a\\[0]", "x[ab", "<T [a>", "x[", "["):
        with pytest.raises(_ReadsAsMarkup):
            _as_is(piece)
    for piece in ("float* s[32]", "[const, restrict]", "a[i] = b[/i]", "[0", "@]"):
        assert _as_is(piece) == piece


# -- the JSON text (klc.report.json_text): json.dumps(indent=2)'s, written by orjson where
# that gives the same text

_JSON_LEAVES = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=12)


@settings(max_examples=400, deadline=None)
@given(value=st.recursive(_JSON_LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=6), inner, max_size=4), max_leaves=25))
def test_json_text_is_the_standard_librarys(value: object) -> None:
    from klc.report import json_text

    assert json_text(value) == json.dumps(value, indent=2)


def test_json_text_writes_what_orjson_cannot_as_the_standard_library_does() -> None:
    from klc.report import json_text

    for value in ({"path": "ünï/k.cu"}, ["\x7f"], {1: "a"}, [2**65], {"a": [{"b": "é"}]}):
        assert json_text(value) == json.dumps(value, indent=2)
