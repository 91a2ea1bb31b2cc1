"""The pre-commit hooks of ``.pre-commit-hooks.yaml``, run by the real ``pre-commit`` package
in a temporary git repository, with no network: pre-commit validates the manifest, and the
hooks are installed as a ``repo: local`` configuration made from it (each hook as the manifest
defines it: id, entry, file pattern, verbosity), where only ``language`` is ``system``: the
klc of this environment runs them, instead of pre-commit installing klc from an index into an
environment of its own (what ``language: python`` does for a user)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    from pre_commit.clientlib import load_manifest

    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))  # pre-commit's own check
    assert [h["id"] for h in hooks] == ["klc-check", "klc-list"]
    assert all(h["language"] == "python" for h in hooks)  # what a user's pre-commit installs
    local = [{"id": h["id"], "name": h["name"], "entry": h["entry"], "language": "system",
              "files": h["files"], "verbose": h["verbose"],
              "require_serial": h["require_serial"]} for h in hooks]
    repo = tmp_path / "proj"
    repo.mkdir()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), HOME=str(tmp_path),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid",
               GIT_CONFIG_NOSYSTEM="1")
    env.pop("GIT_INDEX_FILE", None)
    assert _git(repo, "init", "-q", env=env).returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}, sort_keys=False))
    assert _git(repo, "add", ".pre-commit-config.yaml", env=env).returncode == 0
    assert _git(repo, "commit", "-q", "-m", "config", env=env).returncode == 0
    run = subprocess.run([str(BIN / "pre-commit"), "install"], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return repo, env


def test_hooks_pass_on_good_files_and_list_the_kernel(repo: tuple[Path, dict[str, str]]
                                                      ) -> None:
    path, env = repo
    (path / "kernels").mkdir()
    shutil.copy(ROOT / "bench" / "examples" / "sigmoid.cu", path / "kernels" / "sigmoid.cu")
    shutil.copy(ROOT / "skills" / "fast_math.rule", path / "fast_math.rule")
    _git(path, "add", "kernels/sigmoid.cu", "fast_math.rule", env=env)
    commit = _git(path, "commit", "-m", "a kernel and a rule", env=env)  # the hooks run here
    out = commit.stdout + commit.stderr
    assert commit.returncode == 0, out
    assert "klc check (rule files)" in out and "klc list (changed kernels)" in out
    assert "Passed" in out and "Failed" not in out
    # klc-list is verbose: the listing of the changed kernel shows in the commit's output
    assert "kernels/sigmoid.cu:17:31 in sigmoid: precise_exp_to_fast" in out


def test_a_broken_rule_stops_the_commit(repo: tuple[Path, dict[str, str]]) -> None:
    path, env = repo
    text = (ROOT / "skills" / "fast_math.rule").read_text()
    broken = text.replace("  context: any\n", "  context: any\n  guard: no_such_predicate($X)\n",
                          1)
    assert broken != text
    (path / "broken.rule").write_text(broken)
    _git(path, "add", "broken.rule", env=env)
    commit = _git(path, "commit", "-m", "broken", env=env)
    out = commit.stdout + commit.stderr
    assert commit.returncode != 0
    assert "klc check (rule files)" in out and "Failed" in out
    assert "broken.rule:" in out and "no_such_predicate" in out
    head = _git(path, "log", "--oneline", env=env).stdout.splitlines()
    assert len(head) == 1  # nothing was committed


def test_an_unreadable_kernel_fails_the_list_hook(repo: tuple[Path, dict[str, str]]) -> None:
    path, env = repo
    (path / "blob.cu").write_bytes(b"\x00\x01\x02 not source")
    _git(path, "add", "blob.cu", env=env)
    run = subprocess.run([str(BIN / "pre-commit"), "run", "klc-list"], cwd=path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1
    assert "klc: error: blob.cu: binary file (contains NUL bytes), not CUDA source" \
        in run.stdout
