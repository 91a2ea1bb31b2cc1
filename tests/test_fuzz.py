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


@pytest.mark.parametrize(("kind", "count"), [("rule", 12), ("kernel", 2), ("spec", 4)])
def test_short_fuzz_profile(kind: str, count: int) -> None:
    t = fuzz.fuzz(kind, count, seed=21)
    assert t.inputs == count and t.runs >= 3 * count
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
