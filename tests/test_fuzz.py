"""The fuzz suite's short profile: hypothesis mutates kernels, rule files and spec
blocks, and every command run on them in this process (parse, list, apply, check, gate
--stages compile) must end with status 0, 1 or 2, never a traceback or a hang, with a
message naming the file on status 2, and write nothing when it fails. The long profile is
``python bench/fuzz.py`` (10,000 inputs per kind)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
if str(ROOT) not in sys.path:  # bench/ is a folder of scripts
    sys.path.insert(0, str(ROOT))
from bench import fuzz  # noqa: E402


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize(("kind", "count"), [("rule", 12), ("kernel", 2), ("spec", 4),
                                           ("journal", 6), ("args", 6), ("holes", 6),
                                           ("names", 2)])
def test_short_fuzz_profile(kind: str, count: int) -> None:
    t = fuzz.fuzz(kind, count, seed=21)
    runs = {"journal": 1, "args": 1}.get(kind, 3)
    assert t.inputs <= count and t.runs >= runs * t.inputs and t.inputs >= count // 2
    assert (t.tracebacks, t.hangs, t.wrong_exit, t.data_lost) == (0, 0, 0, 0), t.examples


def test_the_judge_sees_a_traceback_a_wrong_status_and_a_write(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """The harness itself can fail: an exception out of main, a status 2 that does not name
    the file, and an output left by a failing command are each counted."""
    import klc.cli

    tally = fuzz.Tally()

    def boom(argv: list[str]) -> int:
        raise ZeroDivisionError("in the model")

    monkeypatch.setattr(klc.cli, "main", boom)
    fuzz.judge("rule", b"rule r {}", tally, tmp_path)
    assert tally.tracebacks == tally.runs == 3 and "ZeroDivisionError" in tally.examples[0]

    def anonymous(argv: list[str]) -> int:
        print("klc: error: something", file=sys.stderr)
        if "-o" in argv:
            Path(argv[argv.index("-o") + 1]).write_bytes(b"half")
        return 2

    tally = fuzz.Tally()
    monkeypatch.setattr(klc.cli, "main", anonymous)
    fuzz.judge("kernel", b"__global__ void k() {}\n", tally, tmp_path)
    assert tally.wrong_exit == tally.runs == 4 and tally.data_lost == 1


def test_mutations_reach_the_hostile_tokens() -> None:
    data = fuzz.mutate(b"abcdef", [("insert", 0.5, 0.0, b"\x0b"), ("delete", 0.0, 0.0, b"")])
    assert data == b"bc\x0bdef"
    assert fuzz.mutate(b"abcdef", [("truncate", 0.5, 0.0, b"")]) == b"abc"


def test_the_new_judges_see_what_they_are_for(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted journal link that is followed, an argument accepted that must be refused, a
    domain search lists whole, and a name printed raw are each counted."""
    import klc.cli
    import klc.fill.search

    tally = fuzz.Tally()
    fuzz.judge_args(("-j", ["list", "{kernel}", "-j", "1"], (2,)), tally, tmp_path)
    assert tally.wrong_exit == 1  # -j 1 is fine: status 0, not the 2 the case says
    monkeypatch.setattr(klc.fill.search, "MAX_SEARCHED", 10)
    monkeypatch.setattr(klc.fill.search, "searched_values", lambda decl, domain: domain)
    text = ("rule r {\n  kind: skill\n  description: \"s\"\n  context: any\n"
            "  hole f: int in 0..100 default 4\n  anchor: ```\n    expf($X)\n  ```\n"
            "  rewrite replace: ```\n    expf($X * ?f)\n  ```\n}\n")
    tally = fuzz.Tally()
    fuzz.judge_holes((text, "3"), tally, tmp_path)
    assert tally.wrong_exit == 1 and "search ranked 101 values" in tally.examples[0]
    tally = fuzz.Tally()

    def raw(argv: list[str]) -> int:
        print(f"klc: error: {argv[-1]}\x1b[31m", file=sys.stderr)
        return 2

    monkeypatch.setattr(klc.cli, "main", raw)
    fuzz.judge_names(("a\nb.cu", b"x"), tally, tmp_path)
    assert tally.wrong_exit == 3
    tally = fuzz.Tally()

    def follows(argv: list[str]) -> int:
        Path(argv[argv.index("--out") + 1], ".klc-batch.jsonl").write_text("{}\n")
        return 0

    monkeypatch.setattr(klc.cli, "main", follows)
    (tmp_path / "journal.seed").write_bytes(b"{}\n")  # the seed exists: no real batch
    (tmp_path / "jout").mkdir()
    fuzz.judge_journal(("link", [], None), tally, tmp_path)
    assert tally.wrong_exit == 1 and tally.data_lost == 1
