"""bench/soundness.py: real NVRTC compiles of small files written here; nvcc where there is one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Proc

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "soundness.py"
if str(ROOT) not in sys.path:  # bench/ is a folder of scripts; its worker processes
    sys.path.insert(0, str(ROOT))  # (spawned) import it by this name too
from bench import soundness as sb  # noqa: E402

# A rule written to break what it rewrites: every accumulated term is scaled by a name
# that nothing declares. The shipped unroll rule is the one that rewrites soundly.
BROKEN_RULE = '''\
rule break_accumulate {
  kind: skill
  description: "Scale every accumulated term by a name that does not exist"
  context: global
  anchor: ```
    $ACC += $E;
  ```
  rewrite replace: ```
    $ACC += not_declared_anywhere * $E;
  ```
  card {
    intent: "Break the file on purpose (a test of the soundness benchmark)"
    where: "An accumulation in a kernel"
    conditions: "None"
    pitfalls: "The rewrite does not compile"
  }
}
'''

GOOD = b"""\
__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < 4; k++) {
        acc += in[i] * k;
    }
    if (i < n) out[i] = acc;
}
"""

# the rules apply here too, but the original does not compile: left out
NOT_COMPILING = b"""\
__global__ void gather(float* out) {
    float acc = 0.0f;
    for (int k = 0; k < 4; k++) {
        acc += missing_table[k];
    }
    out[0] = acc;
}
"""


def _setup(tmp_path: Path, nvcc: str | None = None) -> tuple[list, object]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.cu").write_bytes(GOOD)
    (corpus / "not_compiling.cu").write_bytes(NOT_COMPILING)
    rule = tmp_path / "broken.rule"
    rule.write_text(BROKEN_RULE)
    cfg = sb.Config(libraries=(("pragma_unroll", (str(ROOT / "skills" / "pragma_unroll.rule"),)),
                               ("broken", (str(rule),))),
                    nvcc=nvcc, cache=str(tmp_path / "cache"))
    return sb.corpus_sources([corpus]), cfg


def _rows(summary: dict) -> dict[str, dict]:
    return {r["rule"]: r for r in summary["rules"]}


def test_counts_broken_and_sound_rewrites_with_nvrtc(tmp_path: Path) -> None:
    sources, cfg = _setup(tmp_path)
    assert [Path(s.path).name for s in sources] == ["good.cu", "not_compiling.cu"]
    results = sb.run(sources, cfg, jobs=1)
    assert [r["status"] for r in results] == ["ok", "ok"]
    good, bad = results
    assert good["original"]["nvrtc"]["ok"] is True
    assert bad["original"]["nvrtc"]["ok"] is False
    assert "missing_table" in bad["original"]["nvrtc"]["error"]

    summary = sb.summarize(results)
    assert summary["totals"]["files"] == 2
    assert summary["totals"]["files_rewritten"] == 2
    assert summary["totals"]["original_nvrtc_ok"] == 1
    assert summary["totals"]["original_nvrtc_failed"] == 1
    rows = _rows(summary)
    assert set(rows) == {"unroll_loop", "break_accumulate", "(all pragma_unroll)",
                         "(all broken)"}
    # rewritten in both files; compiled only where the original did; the unroll is sound
    assert rows["unroll_loop"]["files"] == 2
    assert rows["unroll_loop"]["eligible"]["nvrtc"] == 1
    assert rows["unroll_loop"]["broken"]["nvrtc"] == 0
    assert rows["unroll_loop"]["layout"] == 0 and rows["unroll_loop"]["outside"] == 0
    assert rows["break_accumulate"]["eligible"]["nvrtc"] == 1
    assert rows["break_accumulate"]["broken"]["nvrtc"] == 1
    assert rows["(all broken)"]["broken"]["nvrtc"] == 1
    assert rows["(all pragma_unroll)"]["broken"]["nvrtc"] == 0

    broken = summary["broken"]
    assert sorted(b["rule"] for b in broken) == ["(all broken)", "break_accumulate"]
    for b in broken:
        assert b["file"].endswith("good.cu") and b["compiler"] == "nvrtc"
        assert "not_declared_anywhere" in b["error"] and "error" in b["error"]
        assert "+        acc += not_declared_anywhere * (in[i] * k);" in b["diff"]
    assert summary["causes"][0]["count"] == 2
    assert summary["causes"][0]["cause"] == 'error: identifier "…" is undefined'

    # each distinct compile is cached once: two originals, the unrolled and the broken good.cu
    cached = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(cached) == 4
    again = sb.summarize(sb.run(sources, cfg, jobs=1))
    assert again["rules"] == summary["rules"]
    assert sorted((tmp_path / "cache").rglob("*.json")) == cached

    md = sb.markdown(summary, {"corpus": "two files", "commit": "abc", "date": "2026-11-25",
                               "host": "here", "compilers": {"nvrtc": "nvrtc"},
                               "rules": "x", "modes": ["alone", "all"], "jobs": 1,
                               "seconds": 1.0})
    assert "| break_accumulate | 2 | 0 | 1 / **1** | 0 | 0 |" in md
    assert "| unroll_loop | 2 | 0 | 1 / 0 | 0 | 0 |" in md


def test_two_processes_give_the_same_counts(tmp_path: Path) -> None:
    sources, cfg = _setup(tmp_path)
    one = sb.summarize(sb.run(sources, cfg, jobs=1))
    two = sb.summarize(sb.run(sources, cfg, jobs=2))
    assert two["rules"] == one["rules"] and two["totals"] == one["totals"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on PATH")
def test_nvcc_judges_the_whole_translation_unit(tmp_path: Path) -> None:
    sources, cfg = _setup(tmp_path, nvcc=shutil.which("nvcc"))
    summary = sb.summarize(sb.run(sources, cfg, jobs=1))
    rows = _rows(summary)
    assert summary["totals"]["original_nvcc_ok"] == 1
    assert summary["totals"]["original_nvcc_failed"] == 1
    assert rows["break_accumulate"]["broken"] == {"nvrtc": 1, "nvcc": 1}
    assert rows["unroll_loop"]["broken"] == {"nvrtc": 0, "nvcc": 0}
    nvcc_cases = [b for b in summary["broken"] if b["compiler"] == "nvcc"]
    assert nvcc_cases and all("not_declared_anywhere" in b["error"] for b in nvcc_cases)
    # the error names the original's path, not the temporary copy's
    assert all(str(tmp_path / "corpus" / "good.cu") in b["error"] for b in nvcc_cases)


def test_layout_and_outside_checks() -> None:
    old = "for (int k = 0; k < 4; k++)\n        acc += k;"
    assert sb.layout_changes(old, "#pragma unroll\n" + old) == []
    assert sb.layout_changes(old, "for (int k = 0; k < 4; k++) acc += k;") == ["`)` `acc`"]
    src = b"int a;\nint b;\nint c;\n"
    new = b"int a;\nint bb;\nint c2;\n"
    assert sb.outside_lines(src, new, [(7, 13)]) == [3]  # the edit covered line 2 only
    assert sb.outside_lines(src, new, [(7, 20)]) == []
    # against the edits themselves: `b` -> `bb` is the edit, `c` -> `c2` is not
    from klc.edits import ByteEdit

    edit = [ByteEdit(11, 12, "bb", "replace")]
    assert sb.outside_edits(src, b"int a;\nint bb;\nint c;\n", edit, False) == []
    assert sb.outside_edits(src, new, edit, False) == [3]


def test_outside_is_judged_round_by_round() -> None:
    """A site judged again after another site's rewrite (klc.pipeline.compose) plans its
    edits in the code the round before it left: checked against the original they would
    read as lines changed outside every edit; round by round none is."""
    from klc import plugins
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules
    from klc.rule import RuleSet

    plugins.load()
    src = (b"__global__ void lanes(const float* x, float* y, int n) {\n"
           b"    int tidx = threadIdx.x;\n"
           b"    int wid = tidx >> 5;\n"
           b"    int lane = tidx & 0x1f;\n"
           b"    int i = blockIdx.x * blockDim.x + tidx;\n"
           b"    if (i < n) y[i] = x[i] * (float)(wid + lane);\n"
           b"}\n")
    out = apply_rules(parse_bytes(src, "lanes.cu"), list(RuleSet.load([ROOT / "passes"]).rules),
                      None, None, False)
    assert out.origin, "the case needs a site applied in a later round"
    assert b"tidx / (1 << 5)" in out.source and b"tidx % 32" in out.source
    flat = [e for a in out.applied for e in a.edits]
    assert sb.outside_edits(src, out.source, flat, False) != []  # the flat reading is wrong
    assert sb.outside_of_rounds(src, out.source, out.applied) == []
    # and a change no round made is still found
    tampered = out.source.replace(b"int i =", b"long i =")
    assert sb.outside_of_rounds(src, tampered, out.applied) != []


def test_round_robin_takes_files_in_turn() -> None:
    files = [sb.Source(f"{p}{i}", p) for p in ("a", "b") for i in range(3)]
    assert [s.path for s in sb.round_robin(files, 3)] == ["a0", "b0", "a1"]
    assert [s.path for s in sb.round_robin(files, None)] == ["a0", "b0", "a1", "b1", "a2",
                                                             "b2"]


def _cli(*args: str, env_cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "KLC_CACHE_DIR": str(env_cache)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600)


def test_cli_writes_json_and_refuses_bad_input(tmp_path: Path) -> None:
    _setup(tmp_path)
    out = tmp_path / "out.json"
    r = _cli(str(tmp_path / "corpus"), "--rules", str(tmp_path / "broken.rule"), "-j", "1",
             "--no-nvcc", "--json", str(out), "--md", str(tmp_path / "out.md"),
             env_cache=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    assert "2 files in" in r.stdout and "s per file" in r.stdout
    doc = json.loads(out.read_text())
    assert [b["rule"] for b in doc["broken"]] == ["break_accumulate", "(all broken)"]
    assert "break_accumulate" in (tmp_path / "out.md").read_text()
    for bad, words in ((["/no/such/folder"], "no such file or folder"),
                       ([str(tmp_path / "corpus"), "--rules", "/no/rules"], "no such rule"),
                       ([str(tmp_path / "corpus"), "-j", "0"], "at least 1"),
                       ([str(tmp_path / "corpus"), "--json", "/no/dir/x.json"],
                        "folder does not exist")):
        r = _cli(*bad, env_cache=tmp_path / "c")
        assert r.returncode == 2, (bad, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_merge_of_two_parts_equals_the_whole_run(tmp_path: Path) -> None:
    """A run split across calls (--only) and merged gives the whole run's table; a file in two
    parts, parts of different commits, and a cut-short part whose files no other part holds
    are refused."""
    _setup(tmp_path)
    corpus, rule = tmp_path / "corpus", str(tmp_path / "broken.rule")
    common = ("--rules", rule, "-j", "1", "--no-nvcc", "--commit", "abc1234")
    whole = tmp_path / "whole.json"
    assert _cli(str(corpus), *common, "--json", str(whole), env_cache=tmp_path / "c"
                ).returncode == 0
    parts = []
    for name in ("good.cu", "not_compiling.cu"):
        only = tmp_path / f"{name}.txt"
        only.write_text(str(corpus / name) + "\n")
        parts.append(tmp_path / f"{name}.json")
        r = _cli(str(corpus), *common, "--only", str(only), "--json", str(parts[-1]),
                 env_cache=tmp_path / "c")
        assert r.returncode == 0, r.stderr
    merged = tmp_path / "merged.json"
    r = _cli("--merge", *map(str, parts), "--json", str(merged), "--md",
             str(tmp_path / "merged.md"), env_cache=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    a, b = json.loads(whole.read_text()), json.loads(merged.read_text())
    for key in ("totals", "rules", "broken", "commit", "rule_libraries"):
        assert a[key] == b[key], key
    assert b["commit"] == "abc1234" and b["files"] == 2 and "2 runs merged" in b["corpus"]
    assert "break_accumulate" in (tmp_path / "merged.md").read_text()

    other = json.loads(parts[1].read_text())
    cut = {**json.loads(parts[0].read_text()), "partial": True, "files": 3}
    (tmp_path / "cut.json").write_text(json.dumps(cut))
    (tmp_path / "other.json").write_text(json.dumps({**other, "commit": "def5678"}))
    for bad, words in (([parts[0], parts[0]], "is in both"),
                       ([parts[0], tmp_path / "other.json"], "commit 'def5678' differs"),
                       ([tmp_path / "cut.json", parts[1]], "a partial run"),
                       ([tmp_path / "missing.json"], "No such file")):
        r = _cli("--merge", *map(str, bad), "--json", str(tmp_path / "m2.json"),
                 env_cache=tmp_path / "c")
        assert r.returncode == 2, (bad, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "m2.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_a_terminated_run_leaves_no_worker_behind(tmp_path: Path,
                                                  processes: Callable[[], list[Proc]]) -> None:
    """SIGTERM to the driver of a run over many files (a job scheduler's stop, a `timeout`):
    its worker processes end with it instead of compiling the rest of the corpus as orphans."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(400):
        (corpus / f"k{i}.cu").write_bytes(GOOD.replace(b"scale(", f"scale{i}(".encode()))
    env = {**os.environ, "KLC_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(corpus), "--rules",
                             str(ROOT / "skills" / "pragma_unroll.rule"), "-j", "2",
                             "--no-nvcc"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = [p.pid for p in processes()
                       if p.ppid == proc.pid and any(b"spawn_main" in a for a in p.cmdline)]
        assert len(workers) == 2, "the run started no workers"
        time.sleep(1.0)  # (they are checking files now)
        assert proc.poll() is None, "the run ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        def alive() -> set[int]:
            return {p.pid for p in processes() if p.state != "Z"} & set(workers)

        while time.monotonic() < deadline and alive():
            time.sleep(0.1)
        assert not alive(), "a worker outlived its driver"
    finally:
        if proc.poll() is None:
            proc.kill()
