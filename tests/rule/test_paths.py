"""The default rule libraries are the ones klc ships, whatever folder klc runs in: a
``skills/`` or ``passes/`` folder in the current directory is used only when a flag names it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from klc.cli import main
from klc.rule import default_pass_dirs, default_skill_dirs
from klc.rule.paths import packaged

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bench" / "examples" / "sigmoid.cu"

LOCAL_RULE = """rule only_here {
  kind: skill
  description: "a rule of the current folder's skills/"
  context: any
  anchor: ```
    __global__ void $K($$$PARAMS) { $$$BODY; }
  ```
  rewrite add_attribute: "__launch_bounds__(128)"
}
"""


def _listed(capsys, *argv: str) -> set[str]:
    capsys.readouterr()
    assert main(["list", "--json", *argv]) == 0
    return {site["rule"] for site in json.loads(capsys.readouterr().out)}


def test_a_skills_folder_in_the_current_directory_is_not_the_default(
        tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "here.rule").write_text(LOCAL_RULE)
    (tmp_path / "passes").mkdir()
    kernel = tmp_path / "sigmoid.cu"
    shutil.copy2(EXAMPLE, kernel)
    monkeypatch.chdir(tmp_path)
    assert [Path(d).resolve() for d in default_skill_dirs()] == [
        packaged("skills").resolve(), (packaged("skills") / "experts").resolve()]
    assert [Path(d).resolve() for d in default_pass_dirs()] == [packaged("passes").resolve()]
    shipped = _listed(capsys, str(kernel))
    assert "only_here" not in shipped and "add_launch_bounds" in shipped
    assert _listed(capsys, str(kernel), "--skills", "skills") == {"only_here"}


def test_in_a_checkout_the_libraries_are_shown_relative(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    if packaged("skills").resolve() != (ROOT / "skills").resolve():
        return  # klc is installed from a wheel: its library is not this checkout's
    assert default_skill_dirs() == ["skills", "skills/experts"]
    assert default_pass_dirs() == ["passes"]
