"""The Python API (klc.api): the examples of docs/api.md run as a doctest, from the
repository root, and the API's promises (plain frozen dataclasses, KlcError on bad input,
nothing written) checked directly."""

from __future__ import annotations

import dataclasses
import doctest
from pathlib import Path

import pytest

from klc import api

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = "bench/examples/sigmoid.cu"


@pytest.fixture(autouse=True)
def _at_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def test_docs_api_examples_run() -> None:
    failed, tried = doctest.testfile(
        str(ROOT / "docs" / "api.md"), module_relative=False, verbose=False, report=True,
        optionflags=doctest.ELLIPSIS)
    assert tried >= 20
    assert failed == 0


def test_results_are_plain_frozen_dataclasses() -> None:
    skills = api.load_rules("skills")
    values = [skills, skills.rules[0], skills.rules[0].card, api.parse(SIGMOID),
              api.list_sites(SIGMOID, skills)[0],
              api.apply(SIGMOID, skills.select("precise_exp_to_fast"))]
    for v in values:
        assert dataclasses.is_dataclass(v)
        with pytest.raises(dataclasses.FrozenInstanceError):
            v.path = "x"  # type: ignore[misc, union-attr]


def test_source_text_instead_of_a_file() -> None:
    src = (ROOT / SIGMOID).read_text().replace("expf(", "__expf(")
    sites = api.list_sites("memory.cu", "skills/fast_math.rule", source=src)
    assert [s.rule for s in sites] == []  # already fast: the skill no longer applies
    parsed = api.parse("memory.cu", source=src)
    assert parsed.path == "memory.cu" and parsed.kernels[0].name == "sigmoid"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: api.load_rules("no/such/skills"), "no/such/skills: no such rule file or folder"),
    (lambda: api.parse("no_such.cu"), "no_such.cu"),
    (lambda: api.apply(SIGMOID, "skills", only=["nope"]), "no rule named nope"),
    (lambda: api.apply(SIGMOID, "skills/launch_bounds.rule", {"threads": "many"}), "threads"),
    (lambda: api.optimize(SIGMOID, budget=0), "at least 1"),
    (lambda: api.gate(SIGMOID, stages=["nope"]), "unknown gate stage 'nope'"),
])
def test_bad_input_raises_klcerror(call, message: str) -> None:  # type: ignore[no-untyped-def]
    before = sorted(p.name for p in (ROOT / "bench" / "examples").iterdir())
    with pytest.raises(api.KlcError, match=message.replace("?", r"\?")):
        call()
    assert sorted(p.name for p in (ROOT / "bench" / "examples").iterdir()) == before


def test_the_api_and_the_command_line_agree(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from klc.cli import main

    assert main(["list", "--all", "--json", SIGMOID]) == 0
    cli = [(s["rule"], s["line"], s["col"], s["applicable"], s["why_not"] or "")
           for s in json.loads(capsys.readouterr().out)]
    sites = api.list_sites(SIGMOID, all=True)
    assert [(s.rule, s.line, s.col, s.applicable, s.why_not) for s in sites] == cli
    assert main(["apply", "skills/launch_bounds.rule", SIGMOID, "--hole", "threads=256"]) == 0
    diff = capsys.readouterr().out
    assert diff and api.apply(SIGMOID, "skills/launch_bounds.rule", {"threads": 256}).diff == diff
