"""Dependencies by use: the core install has no Ray, matplotlib, Optuna or OpenAI client; the
commands of the core install run with all four missing; a command that needs a missing one
names its extra (one line, exit 2, nothing written)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from klc.cli import main

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"
OPTIONAL = {"ray": "ray", "matplotlib": "plot", "optuna": "tune", "openai": "llm"}


def _name(requirement: str) -> str:
    import re

    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()


def test_the_core_install_has_no_optional_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in project["dependencies"]}
    assert not core & set(OPTIONAL), core & set(OPTIONAL)
    extras = project["optional-dependencies"]
    for package, extra in OPTIONAL.items():
        assert [_name(r) for r in extras[extra]] == [package]
    # the README's setup installs `dev`: every extra and the test tools
    assert extras["dev"] == ["klc-cuda[test,ray,plot,tune,llm]"]
    assert "'.[dev]'" in (ROOT / "README.md").read_text()


# A child interpreter in which the four optional packages cannot be imported, as in a core
# install, runs the commands of the core install through the CLI.
_BLOCKED_RUN = """
import importlib.abc, sys

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
from klc.cli import main
status = {{}}
for argv in {commands!r}:
    status[" ".join(argv[:1])] = main(argv)
print(status)
print(sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r}))
"""


def test_core_commands_run_without_the_optional_packages(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "tests" / "golden" / "precise_exp_to_fast",
                    tmp_path / "golden" / "precise_exp_to_fast")
    commands = [
        ["parse", str(SIGMOID)],
        ["list", "--all", str(SIGMOID)],
        ["apply", str(ROOT / "skills" / "fast_math.rule"), str(SIGMOID)],
        ["check", str(ROOT / "skills")],
        ["test", str(tmp_path / "golden"), "--rules", str(ROOT / "skills")],
        ["gate", str(SIGMOID), "--stages", "compile"],
    ]
    code = _BLOCKED_RUN.format(blocked=sorted(OPTIONAL), commands=commands)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    status_line, imported = run.stdout.strip().splitlines()[-2:]
    status = eval(status_line)  # a dict printed by the child
    assert status == {"parse": 0, "list": 0, "apply": 0, "check": 0, "test": 0, "gate": 0}
    assert imported == "[]"


def test_ray_executor_without_ray_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails: not installed
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(SIGMOID.read_bytes())
    rc = main(["batch", str(src), "--executor", "ray", "--out", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == ("klc: error: --executor ray needs the ray package, which is not "
                           "installed: pip install 'klc-cuda[ray]'")
    assert not (tmp_path / "out").exists()


def test_llm_filler_without_openai_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    out = tmp_path / "fast.cu"
    rc = main(["optimize", str(SIGMOID), "--filler", "llm", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--filler llm needs the openai package, which is not installed: " \
           "pip install 'klc-cuda[llm]'" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_require_and_available() -> None:
    from klc.errors import KlcError
    from klc.extras import available, require

    assert available("json") and not available("klc_no_such_module")
    assert require("json", "x").dumps([1]) == "[1]"
    with pytest.raises(KlcError, match=r"x needs the optuna package.*klc-cuda\[tune\]"):
        sys.modules["optuna"], saved = None, sys.modules.get("optuna")  # type: ignore[assignment]
        try:
            require("optuna", "x")
        finally:
            if saved is None:
                del sys.modules["optuna"]
            else:
                sys.modules["optuna"] = saved


def test_lineage_report_without_matplotlib_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    walk = tmp_path / "walk"
    shutil.copytree(ROOT / "bench" / "lineages" / "reduce_sum" / "walk", walk)
    (walk / "lineage.png").unlink(missing_ok=True)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["lineage", "--report", str(walk)]) == 0
    err = capsys.readouterr().err
    assert "klc: note: the plot (lineage.png) needs the matplotlib package, which is not " \
           "installed: pip install 'klc-cuda[plot]'" in err
    assert "pip install 'klc-cuda[plot]'" in (walk / "report.md").read_text()
    assert not (walk / "lineage.png").exists()
