"""The counts and claims of README.md and docs/ against the tree: how many rules ``klc
check`` loads, skills, walks and the devices they ran on, lineage families, the one
hand-written skill, the guard families drawn in the architecture, the distribution name the
install lines use. A number of walks, lineages, families, skills or passes written anywhere
in the docs is checked against the tree (one that describes an earlier state says so:
"(39 rules; 50 now)")."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from klc.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
WORDS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six",
                                      "seven", "eight", "nine", "ten", "eleven", "twelve"])}
LEARNED_MARK = "// klc learn:"


def _number(text: str) -> int:
    return WORDS[text.lower()] if text.lower() in WORDS else int(text.replace(",", ""))


def _text(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())  # claims wrap across lines


def _walks() -> dict[str, str]:
    """Each committed walk's family and the device it was gated on ("" for a walk gated by
    compilation only, which docs/lineage.md must name as waiting for a GPU walk)."""
    out = {}
    for p in sorted((ROOT / "bench" / "lineages").glob("*/walk/lineage.json")):
        data = json.loads(p.read_text())
        assert data["gating"] in ("full", "compile-only"), p
        out[p.parent.parent.name] = data["device"] if data["gating"] == "full" else ""
    return out


def _awaiting_gpu() -> set[str]:
    """The families docs/lineage.md names as walked by compilation only."""
    m = re.search(r"walked by compilation only, until a GPU walks them: ([\w, ]+)\.",
                  _text(ROOT / "docs" / "lineage.md"))
    return {w.strip() for w in m.group(1).split(",")} if m else set()


def _rules(folder: str) -> list[str]:
    from klc.rule import RuleSet

    return [r.name for r in RuleSet.load([str(ROOT / folder)]).rules]


def _count(noun: str) -> int:
    noun = noun.lower()
    if noun in ("walks", "lineages", "families"):
        return len(list((ROOT / "bench" / "lineages").glob("*/expert.cu")))
    if noun == "skills":
        return len(_rules("skills"))
    if noun == "passes":
        return len(_rules("passes"))
    raise AssertionError(noun)


def test_every_count_of_walks_skills_and_passes_is_the_trees() -> None:
    number = r"(\d[\d,]*|" + "|".join(WORDS) + r")"
    claim = re.compile(rf"\b{number}\s+(?:committed\s+|learned\s+|older\s+)?"
                       r"(walks|lineages|families|skills|passes)\b", re.I)
    wrong = []
    for doc in DOCS:
        text = _text(doc)
        for m in claim.finditer(text):
            if text[m.end():m.end() + 6].startswith(" then"):
                continue  # a past state, said as such
            if _number(m.group(1)) != _count(m.group(2)):
                wrong.append(f"{doc.relative_to(ROOT)}: {m.group(0)!r} (the tree has "
                             f"{_count(m.group(2))})")
    assert wrong == []


def test_rules_ok_is_what_klc_check_says(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["check", *sorted(str(p) for p in (ROOT / "passes").glob("*.rule")),
               str(ROOT / "skills")])
    out = capsys.readouterr().out
    assert rc == 0
    [said] = re.findall(r"(\d+) rules ok", out)
    [doc] = re.findall(r'"(\d+) rules ok"', _text(ROOT / "docs" / "rules.md"))
    assert doc == said


def test_guard_definitions_ok_is_what_klc_check_says(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    assert main(["check", str(ROOT / "grammar" / "guards.rule")]) == 0
    [said] = re.findall(r"^(\d+) guard definitions ok$", capsys.readouterr().out, re.M)
    [doc] = re.findall(r'grammar/guards.rule` prints "(\d+) guard definitions ok"',
                       re.sub(r"\s+", " ", _text(ROOT / "docs" / "rules.md")))
    assert doc == said


def test_library_size_now() -> None:
    for doc in DOCS:
        for now in re.findall(r"\(\d+ rules; (\d+) now\)", _text(doc)):
            assert int(now) == len(_rules("skills")), doc


def test_walks_and_their_devices() -> None:
    walks = _walks()
    h200 = sum(1 for d in walks.values() if "H200" in d)
    h100 = sum(1 for d in walks.values() if "H100" in d)
    compiled = {f for f, d in walks.items() if not d}
    assert h200 + h100 + len(compiled) == len(walks)
    # a walk gated by compilation only is named as such (its skills are `unmeasured`), and
    # leaves the list once a GPU walks it
    assert compiled == _awaiting_gpu()
    readme = _text(ROOT / "README.md")
    m = re.search(r"learned from the (\d+) walks, (\d+) run with the full gate \((\d+) on an "
                  r"NVIDIA H200 and (\d+) on an H100\) and (\d+) by compilation only", readme)
    assert m is not None and tuple(map(int, m.groups())) == (
        len(walks), h200 + h100, h200, h100, len(compiled))
    lineage = _text(ROOT / "docs" / "lineage.md")
    m = re.search(r"\((\d+) families;.*?(\d+) were (?:# )?walked on an H200, (\d+) on an H100",
                  lineage)
    assert m is not None and tuple(map(int, m.groups())) == (len(walks), h200, h100)


def test_the_one_hand_written_skill() -> None:
    hand = [p.name for p in sorted((ROOT / "skills").glob("*.rule"))
            if not p.read_text().startswith(LEARNED_MARK)]
    assert hand == ["pragma_unroll.rule"]
    from klc.rule import load_rules

    assert [r.name for r in load_rules(ROOT / "skills" / "pragma_unroll.rule")] == \
        ["unroll_loop"]
    assert ("`skills/pragma_unroll.rule` (`unroll_loop`) is the one hand-written skill"
            in _text(ROOT / "README.md"))


def test_architecture_draws_every_guard_family() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    drawn = {name for group in re.findall(r"klc/guards/\{([^}]*)\}\.py", text)
             for name in group.split(",")}
    drawn |= set(re.findall(r"klc/guards/(\w+)\.py", text))
    modules = {p.stem for p in (ROOT / "klc" / "guards").glob("*.py") if p.stem != "__init__"}
    assert modules - drawn == set(), "guard modules docs/architecture.md does not draw"
    assert drawn - modules == set(), "guard modules docs/architecture.md draws that are gone"


def test_install_lines_name_the_distribution() -> None:
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    assert name == "klc-cuda"
    for doc in DOCS:
        text = doc.read_text()
        bare = re.findall(r"pip install '?(klc(?![\w-])[^\s`']*)", text)
        assert bare == [], f"{doc.relative_to(ROOT)} installs {bare}: the distribution is {name}"
    ci = (ROOT / "docs" / "integrations.md").read_text()
    assert f"pip install {name} && klc list --format sarif" in ci
