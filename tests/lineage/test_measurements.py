"""Measurements beside the skills: klc learn writes the effects and provenance of the learned
skills to skills/measurements.json, not into their cards; every reader finds them there; an
older skill file whose card still carries effect and provenance lines loads as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cli import main
from klc.errors import KlcError
from klc.measurements import (
    MEASUREMENTS_FILE,
    Measured,
    load_measurements,
    measured,
    measurements_text,
    write_measurements,
)
from klc.reverse import learn, skill_measurements
from klc.rule import load_rules

ROOT = Path(__file__).resolve().parents[2]
KERNEL = b"""__global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = expf(x[i]);
}
"""
OLD_CARD = """rule precise_exp_to_fast {
  kind: skill
  description: "Use the fast exponential"
  context: any
  anchor: ```
    expf($X)
  ```
  rewrite replace: ```
    __expf($X)
  ```
  card {
    intent: "Use the fast exponential"
    effect: "faster: 1.31x on NVIDIA H100, saxpy"
    effect: "neutral (within the noise): 1.01x on NVIDIA H200, saxpy"
    pitfalls: "none seen"
    provenance: "bench/lineages/saxpy/expert.cu (sha256 0123456789ab), step 3"
    verdict: "faster"
  }
}
"""


def test_committed_measurements_are_what_learn_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """skills/measurements.json holds what klc learn measured of the committed walks, and
    no learned skill file carries an effect or provenance line any more."""
    monkeypatch.chdir(ROOT)
    learned = learn(sorted(Path("bench/lineages").glob("*/walk")), "passes")
    text = (ROOT / "skills" / MEASUREMENTS_FILE).read_text()
    assert text == measurements_text(skill_measurements(learned))
    doc = json.loads(text)
    assert list(doc["skills"]) == sorted(doc["skills"])
    assert all(m["effect"] and m["provenance"] for m in doc["skills"].values())
    for path in (ROOT / "skills").glob("*.rule"):
        assert not re.search(r"^\s*(effect|provenance):", path.read_text(), re.M), path


def test_a_learned_skill_reads_its_effects_beside_it() -> None:
    rules = {r.name: r for r in load_rules(ROOT / "skills" / "qualifiers.rule")}
    r = rules["add_const_param"]
    assert r.card.effect == () and r.card.provenance == ()
    m = measured(r)
    # every effect measured on a GPU, but a walk gated by compilation only says so (its
    # lineage is named in docs/lineage.md, "Walks without a GPU")
    assert any("on NVIDIA" in e for e in m.effect)
    assert all("on NVIDIA" in e or (e.startswith("not measured yet: ")
                                    and e.endswith("(compile-only walk)")) for e in m.effect)
    assert len(m.provenance) == len(m.effect)
    assert r.card.verdict == "neutral" and r.card.conditions.count(". ") >= 2


def test_an_old_card_with_effect_lines_still_loads_and_is_shown(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "old.rule").write_text(OLD_CARD)
    kernel = tmp_path / "k.cu"
    kernel.write_bytes(KERNEL)
    rule = load_rules(skills / "old.rule")[0]
    assert measured(rule) == Measured(
        ("faster: 1.31x on NVIDIA H100, saxpy",
         "neutral (within the noise): 1.01x on NVIDIA H200, saxpy"),
        ("bench/lineages/saxpy/expert.cu (sha256 0123456789ab), step 3",))
    assert main(["list", "--format", "sarif", "--skills", str(skills), str(kernel)]) == 0
    sarif = json.loads(capsys.readouterr().out)
    help_text = sarif["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"]
    assert "Measured effect: faster: 1.31x on NVIDIA H100, saxpy" in help_text
    assert "Learned from: bench/lineages/saxpy/expert.cu" in help_text


def test_measurements_file_is_read_written_and_checked(tmp_path: Path) -> None:
    assert load_measurements(tmp_path) == {}
    entries = {"b": Measured(("2x",), ("p2",)), "a": Measured(("1x",), ("p1",))}
    path = write_measurements(tmp_path, entries)
    assert path == tmp_path / MEASUREMENTS_FILE
    assert list(json.loads(path.read_text())["skills"]) == ["a", "b"]  # by name
    assert load_measurements(tmp_path) == entries
    write_measurements(tmp_path, entries)
    assert path.read_text() == measurements_text(entries)  # the same bytes again
    path.write_text("{not json")
    with pytest.raises(KlcError, match=r"measurements.json: not valid JSON"):
        load_measurements(tmp_path)
    path.write_text(json.dumps({"skills": {"a": {"effect": "1x"}}}))
    with pytest.raises(KlcError, match=r"skill a: effect must be a list of strings"):
        load_measurements(tmp_path)


def test_skills_learned_from_third_party_experts_name_them_and_keep_their_measurements(
) -> None:
    """skills/experts/ holds skills learned from walks kept outside the repository (the
    third-party experts of bench/experts): each card's where names every expert's package,
    version, file and kernel, and each measured skill has its H200 effects and provenance in
    the folder's own measurements.json (a `klc learn` into skills/ leaves them alone)."""
    folder = ROOT / "skills" / "experts"
    rules = [r for p in sorted(folder.glob("*.rule")) for r in load_rules(p)]
    assert rules
    doc = json.loads((folder / MEASUREMENTS_FILE).read_text())
    assert sorted(doc["skills"]) == sorted(r.name for r in rules)
    for r in rules:
        named = re.findall(r"\w+ \((\S+) (\S+), (\S+), kernel (\w+)\)", r.card.where)
        assert named and all(v[0].isdigit() for _, v, _, _ in named), r.card.where
        m = measured(r)
        assert m.effect and all("on NVIDIA H200" in e for e in m.effect), r.name
        assert len(m.provenance) == len(m.effect)
