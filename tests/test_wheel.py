"""The installed package is the checkout: a wheel built from the working tree, installed in a
fresh virtual environment outside it, lists the same sites, walks the passes in the same
order and replays the same recipes as the checkout does.

The wheel is built without build isolation (the test environment's setuptools, no network)
from a copy of the files a build reads; klc's dependencies are not installed again: the fresh
environment sees the test environment's site-packages through a ``.pth`` file, but klc itself
comes from the wheel (the test checks where it was imported from).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "bench" / "examples" / "sigmoid.cu"
# what a build reads: the metadata, the package and the folders installed inside it
BUILD_INPUTS = ("pyproject.toml", "README.md", "klc", "grammar", "passes", "skills")
# the folders whose every tracked file an installed klc may read
DATA_DIRS = {"klc": "klc", "grammar": "klc/grammar", "passes": "klc/passes",
             "skills": "klc/skills"}

# What one interpreter's klc loads, as plain data; rule files by their library-relative name.
PROBE = r"""
import json, sys
from pathlib import Path
import klc, klc.lineage, klc.plugins, klc.recipes
from klc.rule import RuleSet, default_pass_dirs, default_skill_dirs
from klc.rule.paths import packaged

klc.plugins.load()

def rel(path):
    return Path(path).parent.name + "/" + Path(path).name

passes, order_from = klc.lineage.load_passes(packaged("passes"))
skills = RuleSet.load(default_skill_dirs()).rules
print(json.dumps({
    "klc": klc.__file__,
    "pass_dirs": [Path(d).name for d in default_pass_dirs()],
    "skill_dirs": [Path(d).name for d in default_skill_dirs()],
    "passes": [(r.name, rel(r.path), r.line) for r in passes],
    "order_from": order_from.replace(str(packaged("passes")), "passes"),
    "skills": [(r.name, rel(r.path), r.line) for r in skills],
    "recipes": [[r.family, r.expert, r.device, [(s.skill, s.holes) for s in r.steps]]
                for r in klc.recipes.load([packaged("skills")])],
}))
"""


def _tracked(folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, capture_output=True,
                         check=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def _backend_missing() -> str | None:
    try:
        from setuptools import build_meta  # noqa: F401
        from setuptools.command import bdist_wheel  # noqa: F401
    except ImportError as e:
        return f"the build backend is not installed ({e}): pip install 'setuptools>=70.1'"
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return "not a git checkout"
    return None


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh environment with klc installed from a wheel of the working tree."""
    why = _backend_missing()
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    for name in BUILD_INPUTS:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(p, src / name)
    dist = base / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(dist), str(src)], check=True,
                   capture_output=True, cwd=base)
    (wheel,) = dist.glob("klc_cuda-*.whl")
    env_dir = base / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True,
                   cwd=base)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print("
                                "sysconfig.get_paths()['purelib'])"], check=True,
                               capture_output=True, text=True).stdout.strip())
    # klc's dependencies: the test environment's site-packages (never the checkout itself)
    deps = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    deps.append(sysconfig.get_paths()["purelib"])
    (site / "zz_test_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    return env_dir


def _run(argv: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1) and done.stdout, done.stderr
    return done.stdout


def test_the_wheel_holds_every_file_klc_reads(installed):
    (wheel,) = (installed.parent / "dist").glob("klc_cuda-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for folder, target in DATA_DIRS.items():
        for path in _tracked(folder):
            inside = target + path[len(folder):]
            if inside not in names:
                missing.append(path)
    assert missing == []


def test_installed_klc_loads_what_the_checkout_loads(installed, tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    ours = json.loads(_run([sys.executable, str(probe)], tmp_path))
    theirs = json.loads(_run([str(installed / "bin" / "python"), str(probe)], tmp_path))
    assert Path(ours["klc"]).is_relative_to(ROOT)
    assert Path(theirs["klc"]).is_relative_to(installed)  # the wheel's klc, not the checkout
    assert theirs["order_from"].startswith("passes/ORDER")
    assert theirs["recipes"], "the installed skills have no recipes"
    del ours["klc"], theirs["klc"]
    assert theirs == ours


def test_installed_klc_lists_what_the_checkout_lists(installed, tmp_path):
    kernel = tmp_path / EXAMPLE.name
    shutil.copy2(EXAMPLE, kernel)

    def listing(klc: str) -> list[dict]:
        sites = json.loads(_run([klc, "list", "--all", "--json", str(kernel)], tmp_path))
        for s in sites:
            path, _, line = s["rule_location"].rpartition(":")
            s["rule_location"] = f"{Path(path).parent.name}/{Path(path).name}:{line}"
        return sites

    ours = listing(str(Path(sys.executable).parent / "klc"))
    theirs = listing(str(installed / "bin" / "klc"))
    assert theirs and any(s["verdict"] not in (None, "unmeasured") for s in theirs)
    assert theirs == ours
