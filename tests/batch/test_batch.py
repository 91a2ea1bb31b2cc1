"""``klc batch``: the walk, the output modes (mirror, in place byte for byte, diff, check),
bad input (each file's problem its own, the batch's problems before anything is touched),
the journal and resume (with real SIGKILL and SIGINT of a running batch), the worker pool,
the gate (compile only here; GPU tests marked), GPU worker routing, --optimize, reports."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from klc import batch as kb
from klc.batch import BatchConfig, BatchOptions, FileResult, Journal, run_batch, walk
from klc.batch import local as kb_local
from klc.batch import run as kb_run
from klc.batch import worker as kb_worker
from klc.cli import main
from klc.errors import KlcError
from klc.optimize import OptimizeOptions

ROOT = Path(__file__).resolve().parents[2]
KLC = [sys.executable, "-c", "import sys; from klc.cli import main; sys.exit(main())"]
FAST_MATH = str(ROOT / "skills" / "fast_math.rule")

SIGMOID = (ROOT / "bench" / "examples" / "sigmoid.cu").read_bytes()
PLAIN = b"""__global__ void act(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = expf(x[i]) + expf(-x[i]);
}
"""
NO_MATCH = b"""__global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""
BROKEN = b"""__global__ void broken(float* y, int n) {
    int i = threadIdx.x
    y[i] = expf(1.0f) +;
}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
        yield


def fast(b: bytes) -> bytes:
    """What skills/fast_math.rule makes of a file whose only transcendental calls are expf."""
    return b.replace(b"expf(", b"__expf(")


def make_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix in (".cu", ".cuh")}


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(kb.TMP_SUFFIX)]


def config(*rules: str, **kw: object) -> BatchConfig:
    return BatchConfig.from_paths(list(rules) or [FAST_MATH], **kw)  # type: ignore[arg-type]


# -- the walk ---------------------------------------------------------------------------


def test_walk_recursive_sorted_suffixes_hidden_exclude(tmp_path: Path) -> None:
    make_tree(tmp_path, {"b.cu": PLAIN, "a/x.cuh": PLAIN, "a/y.cpp": PLAIN, "a/z.cu.bak": PLAIN,
                         ".git/hidden.cu": PLAIN, "third_party/t.cu": PLAIN,
                         "a/gen/skip_me.cu": PLAIN})
    found, problems = walk([str(tmp_path)], ["third_party", "skip_*"])
    assert [rel for _, _, rel in found] == ["a/x.cuh", "b.cu"]
    assert problems == []


def test_walk_symlink_loop_and_alias_once(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/k.cu": PLAIN, "src/sub/j.cu": PLAIN})
    (tmp_path / "src" / "sub" / "loop").symlink_to(tmp_path / "src")  # a loop
    (tmp_path / "src" / "alias.cu").symlink_to(tmp_path / "src" / "k.cu")  # the same file
    (tmp_path / "src" / "dangling.cu").symlink_to(tmp_path / "nowhere.cu")
    found, problems = walk([str(tmp_path / "src")])
    rels = [rel for _, _, rel in found]
    assert rels == ["alias.cu", "sub/j.cu"]  # k.cu is alias.cu, reached first; no loop
    assert problems == [(str(tmp_path / "src" / "dangling.cu"), "broken symbolic link")]


def test_walk_missing_root_is_a_batch_error(tmp_path: Path) -> None:
    with pytest.raises(KlcError, match="no such file or folder"):
        walk([str(tmp_path / "nope")])


# -- output modes -----------------------------------------------------------------------


def test_out_mirrors_tree(tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"top.cu": PLAIN, "deep/er/sig.cu": SIGMOID,
                                       "deep/none.cuh": NO_MATCH})
    out = tmp_path / "out"
    assert main(["batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j", "1",
                 "-q"]) == 0
    assert tree_bytes(out) == {"top.cu": fast(PLAIN), "deep/er/sig.cu": fast(SIGMOID),
                               "deep/none.cuh": NO_MATCH}
    assert tree_bytes(src) == {"top.cu": PLAIN, "deep/er/sig.cu": SIGMOID,
                               "deep/none.cuh": NO_MATCH}  # inputs untouched
    assert (out / kb.JOURNAL_NAME).exists() and leftovers(out) == []


def test_out_with_several_roots_mirrors_each_under_its_name(tmp_path: Path) -> None:
    a = make_tree(tmp_path / "a", {"k.cu": PLAIN})
    b = make_tree(tmp_path / "b", {"k.cu": SIGMOID})
    out = tmp_path / "out"
    s = run_batch(config(), BatchOptions([str(a), str(b)], mode="out", out_dir=str(out)))
    assert s.counts()["rewritten"] == 2
    assert tree_bytes(out) == {"a/k.cu": fast(PLAIN), "b/k.cu": fast(SIGMOID)}


def test_in_place_keeps_every_byte_outside_the_edits(tmp_path: Path) -> None:
    body = (b"__global__ void act(const float* x, float* y, int n) {  \r\n"
            b"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\t\r\n"
            b"\tif (i < n)   y[i] = expf(x[i]) ;   \r\n"
            b"}\r\n\r\n   \r\n// trailing comment without a newline  ")
    files = {"crlf_bom.cu": b"\xef\xbb\xbf" + body, "crlf.cu": body, "lf.cu": PLAIN}
    src = make_tree(tmp_path / "src", files)
    os.chmod(src / "lf.cu", 0o640)
    rc = main(["batch", str(src), "--rule", FAST_MATH, "--in-place", "--journal",
               str(tmp_path / "j.jsonl"), "-j", "1", "-q"])
    assert rc == 0
    assert tree_bytes(src) == {k: fast(v) for k, v in files.items()}
    assert (src / "lf.cu").stat().st_mode & 0o777 == 0o640
    assert leftovers(src) == []


def test_in_place_through_a_symbolic_link_rewrites_its_target(tmp_path: Path) -> None:
    target = make_tree(tmp_path / "elsewhere", {"k.cu": PLAIN}) / "k.cu"
    src = tmp_path / "src"
    src.mkdir()
    (src / "link.cu").symlink_to(target)
    s = run_batch(config(), BatchOptions([str(src)], mode="in_place",
                                         journal=str(tmp_path / "j")))
    assert [r.status for r in s.results] == ["rewritten"]
    assert (src / "link.cu").is_symlink() and target.read_bytes() == fast(PLAIN)


def test_in_place_leaves_a_file_changed_during_the_batch(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    src = make_tree(tmp_path / "src", {"a.cu": PLAIN, "b.cu": PLAIN})
    real_write = kb_run._write

    def someone_edits_b_first(src_: kb.Source, res: FileResult, *a: object) -> None:
        if src_.path.endswith("b.cu"):
            Path(src_.path).write_bytes(PLAIN + b"// edited meanwhile\n")
        real_write(src_, res, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(kb_run, "_write", someone_edits_b_first)
    s = run_batch(config(), BatchOptions([str(src)], mode="in_place",
                                         journal=str(tmp_path / "j")))
    by = {Path(r.path).name: r for r in s.results}
    assert by["a.cu"].status == "rewritten" and (src / "a.cu").read_bytes() == fast(PLAIN)
    assert by["b.cu"].status == "error" and "changed on disk" in by["b.cu"].reason
    assert (src / "b.cu").read_bytes() == PLAIN + b"// edited meanwhile\n"


def test_diff_prints_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN, "n.cu": NO_MATCH})
    assert main(["batch", str(src), "--rule", FAST_MATH, "--diff", "-j", "1", "-q"]) == 0
    out = capsys.readouterr().out
    # (outside the working folder: named from the root, as git apply and patch -p1 take it)
    assert f"--- a/{str(src / 'k.cu').lstrip('/')}\n" in out
    assert "+    if (i < n) y[i] = __expf(x[i])" in out
    assert "n.cu" not in out
    assert tree_bytes(src) == {"k.cu": PLAIN, "n.cu": NO_MATCH}
    assert not (src / kb.JOURNAL_NAME).exists() and not Path(kb.JOURNAL_NAME).exists()


def test_default_mode_only_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    assert main(["batch", str(src), "--rule", FAST_MATH, "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert "files rewritten" in err and "nothing written" in err
    assert tree_bytes(src) == {"k.cu": PLAIN}


def test_an_ungated_write_says_it_was_not_gated(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    assert main(["batch", str(src), "--rule", FAST_MATH, "-j", "1", "--out",
                 str(tmp_path / "o")]) == 0
    assert "klc: note: the rewrites were not gated" in capsys.readouterr().err
    assert main(["batch", str(src), "--rule", FAST_MATH, "-j", "1", "--out",
                 str(tmp_path / "g"), "--gate", "--gate-stages", "compile"]) == 0
    assert "not gated" not in capsys.readouterr().err


def test_summary_counts_and_refusals(tmp_path: Path) -> None:
    # the skills library: unroll_loop refuses loops whose trip count is unknown
    loop = b"""__global__ void k(float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = 0.0f;
    for (int j = 0; j < 8; ++j) y[j] += 1.0f;
}
"""
    src = make_tree(tmp_path / "src", {"loop.cu": loop, "none.cu": b"int x = 1;\n"})
    s = run_batch(BatchConfig.from_paths([str(ROOT / "skills" / "pragma_unroll.rule")]),
                  BatchOptions([str(src)]))
    c = s.counts()
    assert (c["scanned"], c["matched"], c["rewritten"], c["unchanged"]) == (2, 1, 1, 1)
    assert c["refused_by_guard"] == 1 and c["sites_refused_by_guard"] >= 1
    r = next(r for r in s.results if r.path.endswith("loop.cu"))
    assert [(a["rule"], a["line"]) for a in r.applied] == [("unroll_loop", 3)]
    assert any("trip count" in x["reason"] and x["line"] == 2 for x in r.refused)


def test_tree_only_guards_fail_closed_and_change_the_configuration(tmp_path: Path) -> None:
    """A static member constant's value is known to libclang but not to the tree: with
    --tree-only the guard cannot decide and refuses, saying so; the journal of one setting
    is not trusted by the other."""
    rule = tmp_path / "pad.rule"
    rule.write_text(rule_text("pad", "__shared__ $TYPE $TILE[$A][$B + 1];",
                              "__shared__ $TYPE $TILE[$A][$B];").replace(
        "  rewrite", "  guard: is_constant($A)\n  rewrite"))
    kernel = b"""struct Cfg { static constexpr int TILE = 32; };
__global__ void k(float* y) {
    __shared__ float t[Cfg::TILE][Cfg::TILE];
    t[threadIdx.x][0] = 1.0f;
    y[threadIdx.x] = t[0][threadIdx.x];
}
"""
    src = make_tree(tmp_path / "src", {"k.cu": kernel})
    full = run_batch(BatchConfig.from_paths([str(rule)]), BatchOptions([str(src)]))
    tree = run_batch(BatchConfig.from_paths([str(rule)], tree_only=True),
                     BatchOptions([str(src)]))
    assert full.results[0].status == "rewritten"
    assert tree.results[0].status == "refused"
    assert "libclang facts not consulted" in tree.results[0].reason
    assert BatchConfig.from_paths([str(rule)]).digest() != \
        BatchConfig.from_paths([str(rule)], tree_only=True).digest()


# -- bad input --------------------------------------------------------------------------


def test_bad_files_are_reported_and_the_rest_goes_on(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src = make_tree(tmp_path / "src", {"good.cu": PLAIN, "binary.cu": b"\x7fELF\x00\x01\x02",
                                       "latin1.cu": b"// caf\xe9\nint x;\n",
                                       "broken.cu": BROKEN, "empty.cuh": b"",
                                       "badspec.cu": b"/* klc-spec\nkernel: act\nsizes: [1, 2\n"
                                                     b"*/\n" + PLAIN})
    (src / "gone.cu").symlink_to(tmp_path / "missing.cu")
    out = tmp_path / "out"
    rc = main(["batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j", "1",
               "--report", str(tmp_path / "r.json")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{src / 'binary.cu'}: binary file" in err
    assert f"{src / 'latin1.cu'}:1:7: not UTF-8" in err
    assert f"{src / 'broken.cu'}:3:5: syntax error" in err and "was not rewritten" in err
    assert f"{src / 'gone.cu'}: broken symbolic link" in err
    assert "empty.cuh" not in err  # an empty file is nothing to do, not a failure
    assert f"{src / 'badspec.cu'}:4:1: bad YAML in klc-spec" in err
    assert (out / "good.cu").read_bytes() == fast(PLAIN)
    assert (out / "broken.cu").read_bytes() == BROKEN  # the mirror keeps it as it was
    report = json.loads((tmp_path / "r.json").read_text())
    status = {Path(f["path"]).name: f["status"] for f in report["files"]}
    assert status == {"good.cu": "rewritten", "binary.cu": "error", "latin1.cu": "error",
                      "broken.cu": "parse_failed", "empty.cuh": "unchanged", "gone.cu": "error",
                      "badspec.cu": "error"}
    assert report["counts"]["parse_failed"] == 1 and report["counts"]["errors"] == 4


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = make_tree(tmp_path / "src", {"a.cu": PLAIN, "b.cu": PLAIN})
    secret = src / "b.cu"
    real_open = os.open  # (inputs are opened by klc.fsutil.read_input; root reads any file)

    def fake_open(path: object, *a: object, **k: object) -> object:
        if str(path) == str(secret):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", fake_open)
    s = run_batch(config(), BatchOptions([str(src)], mode="in_place",
                                         journal=str(tmp_path / "j")))
    by = {Path(r.path).name: r for r in s.results}
    assert by["b.cu"].status == "error" and "permission denied" in by["b.cu"].reason
    assert by["a.cu"].status == "rewritten" and s.failed
    assert secret.read_bytes() == PLAIN


def test_out_inside_input_tree_is_refused_before_anything(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    assert main(["batch", str(src), "--rule", FAST_MATH, "--out", str(src / "out")]) == 2
    assert "inside the input tree" in capsys.readouterr().err
    assert not (src / "out").exists()
    assert main(["batch", str(src / "k.cu"), "--out", str(src / "o2")]) == 0  # a file root


def test_rule_file_that_fails_to_load_stops_everything(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    rules = tmp_path / "rules"
    rules.mkdir()
    shutil.copy(FAST_MATH, rules / "a.rule")
    (rules / "b.rule").write_text("rule oops {\n  kind: skill\n  anchor: ```\n    $X +\n"
                                  "  ```\n}\n")
    rc = main(["batch", str(src), "--skills", str(rules), "--in-place", "--journal",
               str(tmp_path / "j")])
    assert rc == 2
    err = capsys.readouterr().err
    assert f"{rules / 'b.rule'}:" in err and "Traceback" not in err
    assert (src / "k.cu").read_bytes() == PLAIN and not (tmp_path / "j").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--hole", "factor=3"], "factor"),
    (["--hole", "nope"], "expected NAME=VALUE"),
    (["--only", "no_such_rule"], "no rule named no_such_rule"),
    (["--resume"], "--resume continues a batch that writes files"),
    (["--address", "127.0.0.1:1"], "--address needs --executor ray"),
    (["--budget", "3"], "is an --optimize option"),
    (["--tree-only", "--optimize"], "--tree-only applies rules once"),
    (["--report", "r.txt"], "give a .json, .md or .html file"),
    (["-j", "0"], "at least one job"),
])
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            argv: list[str], message: str) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    assert main(["batch", str(src), "--skills", str(ROOT / "skills"), *argv]) == 2
    assert message in capsys.readouterr().err


def test_missing_input_and_empty_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    assert main(["batch", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["batch", str(tmp_path / "empty"), "-q"]) == 1
    assert "no .cu/.cuh files" in capsys.readouterr().err


def rule_text(name: str, replacement: str, anchor: str = "expf($X)") -> str:
    return (f'rule {name} {{\n  kind: skill\n  description: "x"\n  context: any\n'
            f'  anchor: ```\n    {anchor}\n  ```\n  rewrite replace: ```\n'
            f'    {replacement}\n  ```\n}}\n')


def test_a_rewrite_that_breaks_the_syntax_is_refused(tmp_path: Path) -> None:
    rule = tmp_path / "breaks.rule"
    rule.write_text(rule_text("breaks", "{ $X; }"))  # a statement where an expression was
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN, "n.cu": NO_MATCH})
    s = run_batch(BatchConfig.from_paths([str(rule)]),
                  BatchOptions([str(src)], mode="in_place", journal=str(tmp_path / "j")))
    r = s.results[0]
    assert (Path(r.path).name, r.status) == ("k.cu", "refused")
    assert f"{src / 'k.cu'}:3:" in r.reason and "produces a syntax error" in r.reason
    assert (src / "k.cu").read_bytes() == PLAIN and not s.failed


# -- parallel workers -------------------------------------------------------------------


def corpus(path: Path, n: int) -> Path:
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_corpus.py"), str(path), "-n",
                    str(n)], check=True, capture_output=True)
    return path


def essence(results: list[FileResult]) -> list[tuple[object, ...]]:
    return [(r.path, r.status, r.reason, r.input_sha, r.output_sha, r.applied, r.refused,
             r.refused_by, r.skipped, r.notes) for r in results]


def test_two_workers_give_the_one_worker_result(tmp_path: Path) -> None:
    src = corpus(tmp_path / "src", 40)
    (src / "binary.cu").write_bytes(b"\0\1\2")
    cfg = BatchConfig.from_paths([str(ROOT / "skills" / "pragma_unroll.rule"),
                                  str(ROOT / "skills" / "fast_math.rule")])
    one = run_batch(cfg, BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "o1")))
    two = run_batch(cfg, BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "o2"),
                                      jobs=2))
    assert essence(one.results) == essence(two.results)
    assert one.counts()["rewritten"] >= 20
    assert tree_bytes(tmp_path / "o1") == tree_bytes(tmp_path / "o2")


_FORKED_BATCH = """
import json, os, sys, threading
from klc import batch as kb
cfg = kb.BatchConfig.from_paths([sys.argv[1]])
assert threading.active_count() == 1
ex = kb.LocalExecutor(2)
ex.prefork(cfg, want_diff=False, send_unchanged=False)
assert ex._forked is not None, "no fork in a process without threads"
assert ex._forked[0].submit(os.getppid).result() == os.getpid()  # forked and ready
ex.stop()
assert ex._forked is None
s = kb.run_batch(cfg, kb.BatchOptions([sys.argv[2]], mode="out", out_dir=sys.argv[3], jobs=2))
print(json.dumps(s.counts()))
"""


def test_workers_are_forked_only_while_no_other_thread_runs(tmp_path: Path) -> None:
    """Forked workers start with the driver's rules; with another thread running (a lock it
    holds would be copied held) the batch spawns them, with the same result. The forked
    half runs in a fresh interpreter: this one may hold threads that other tests left."""
    import threading

    rule = str(ROOT / "skills" / "pragma_unroll.rule")
    src = corpus(tmp_path / "src", 12)
    proc = subprocess.run([sys.executable, "-c", _FORKED_BATCH, rule, str(src),
                           str(tmp_path / "forked")], capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    forked = json.loads(proc.stdout.strip().splitlines()[-1])
    cfg = BatchConfig.from_paths([rule])
    ex = kb.LocalExecutor(2)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        ex.prefork(cfg, want_diff=False, send_unchanged=False)
        assert ex._forked is None  # a thread runs: no fork
        spawned = run_batch(cfg, BatchOptions([str(src)], mode="out",
                                              out_dir=str(tmp_path / "spawned"), jobs=2))
    finally:
        release.set()
        other.join()
    assert forked == spawned.counts()
    assert forked["rewritten"] >= 6
    assert tree_bytes(tmp_path / "forked") == tree_bytes(tmp_path / "spawned")


_WORK_CHUNK = kb_worker._work_chunk


def crashing_chunk(paths: list[str]) -> list[FileResult]:
    """A worker's chunk function that dies like a segfault on one file (spawned workers
    import it from this module by name)."""
    if any(p.endswith("crash.cu") for p in paths):
        os.kill(os.getpid(), signal.SIGKILL)
    return _WORK_CHUNK(paths)


def test_a_worker_that_dies_costs_its_file_only(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"k{i:02}.cu": PLAIN for i in range(12)} | {"m_crash.cu": PLAIN}
    src = make_tree(tmp_path / "src", files)
    monkeypatch.setattr(kb_local, "_work_chunk", crashing_chunk)
    s = run_batch(config(), BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "out"),
                                         jobs=2))
    by = {Path(r.path).name: r for r in s.results}
    assert by["m_crash.cu"].status == "error" and "worker process died" in \
        by["m_crash.cu"].reason
    assert all(r.status == "rewritten" for n, r in by.items() if n != "m_crash.cu")
    assert len(by) == 13
    assert tree_bytes(tmp_path / "out") == {n: fast(PLAIN) for n in files if n != "m_crash.cu"}


def test_chunks_balance_and_stream() -> None:
    paths = [f"f{i}" for i in range(1000)]
    cut = kb.chunks(paths, 2)
    assert [p for c in cut for p in c] == paths  # every file once, in order
    sizes = [len(c) for c in cut]
    assert sizes[0] == kb.MAX_CHUNK and sizes == sorted(sizes, reverse=True)
    assert sizes[-4:] == [1, 1, 1, 1]  # the tail leaves no worker idle
    assert [len(c) for c in kb.chunks(paths[:5], 8)] == [1] * 5
    assert all(len(c) == 1 for c in kb.chunks(paths[:50], 2, isolate=True))


# -- journal and resume -----------------------------------------------------------------


def test_journal_ignores_a_torn_line_and_other_configurations(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    j = Journal(path, "cfg")
    j.open(fresh=True)
    j.append({"key": "/a", "phase": "done", "input_sha": "1", "output_sha": "1",
              "result": {"path": "a", "status": "unchanged"}})
    j.close()
    with open(path, "ab") as f:
        f.write(json.dumps({"config": "other", "key": "/b", "phase": "done"}).encode() + b"\n")
        f.write(b'{"config": "cfg", "key": "/c", "pha')  # torn by a kill
    entries = Journal(path, "cfg").read()
    assert set(entries) == {"/a"}
    j = Journal(path, "cfg")
    j.open(fresh=False)
    j.append({"key": "/d", "phase": "done", "input_sha": "2", "output_sha": "3",
              "result": {"path": "d", "status": "rewritten"}})
    j.close()
    assert set(Journal(path, "cfg").read()) == {"/a", "/d"}  # the torn line was ended


def test_resume_skips_done_files_and_redoes_changed_ones(tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"a.cu": PLAIN, "b.cu": SIGMOID, "c.cu": NO_MATCH})
    out = tmp_path / "out"
    opts = BatchOptions([str(src)], mode="out", out_dir=str(out))
    first = run_batch(config(), opts)
    again = run_batch(config(), BatchOptions([str(src)], mode="out", out_dir=str(out),
                                             resume=True))
    assert again.resumed == 3 and essence(again.results) == essence(first.results)
    (src / "c.cu").write_bytes(PLAIN)  # a changed input is redone
    (out / "a.cu").write_bytes(b"damaged")  # so is a damaged output
    third = run_batch(config(), BatchOptions([str(src)], mode="out", out_dir=str(out),
                                             resume=True))
    assert third.resumed == 1
    assert tree_bytes(out) == {"a.cu": fast(PLAIN), "b.cu": fast(SIGMOID), "c.cu": fast(PLAIN)}
    # another configuration (other rules) does not trust this journal
    other = run_batch(BatchConfig.from_paths([str(ROOT / "skills")]),
                      BatchOptions([str(src)], mode="out", out_dir=str(out), resume=True))
    assert other.resumed == 0 and "written by another configuration" in other.notes[0]
    fresh = run_batch(config(), BatchOptions([str(src)], mode="out",
                                             out_dir=str(tmp_path / "new"), resume=True))
    assert fresh.resumed == 0 and "no journal" in fresh.notes[0]


def test_in_place_resume_tells_a_finished_write_from_one_that_never_happened(
        tmp_path: Path) -> None:
    """A kill between the journal's ``begin`` line and the rename, or between the rename and
    the ``done`` line: resume must redo the first and must not apply the rule twice to the
    second (this rule changes its own output again: expf(x) -> expf(0.5f * x))."""
    rule = tmp_path / "halve.rule"
    rule.write_text(rule_text("halve_exp", "expf(0.5f * $X)"))
    cfg = BatchConfig.from_paths([str(rule)])
    src = make_tree(tmp_path / "src", {"written.cu": PLAIN, "not_written.cu": PLAIN})
    once = PLAIN.replace(b"expf(x[i])", b"expf(0.5f * x[i])").replace(
        b"expf(-x[i])", b"expf(0.5f * -x[i])")
    journal = tmp_path / "j.jsonl"
    run_batch(cfg, BatchOptions([str(src)], mode="in_place", journal=str(journal)))
    assert tree_bytes(src) == {"written.cu": once, "not_written.cu": once}
    lines = journal.read_text().splitlines()
    kept = [ln for ln in lines if json.loads(ln).get("phase") != "done"]
    assert len(kept) == 3  # the header and two "begin" lines
    journal.write_text("\n".join(kept) + "\n")  # both writes begun, neither done
    (src / "not_written.cu").write_bytes(PLAIN)  # this one never reached its rename
    again = run_batch(cfg, BatchOptions([str(src)], mode="in_place", journal=str(journal),
                                        resume=True))
    assert again.resumed == 1
    assert tree_bytes(src) == {"written.cu": once, "not_written.cu": once}
    third = run_batch(cfg, BatchOptions([str(src)], mode="in_place", journal=str(journal),
                                        resume=True))
    assert third.resumed == 2 and tree_bytes(src)["written.cu"] == once


def journal_done(path: Path) -> int:
    """Files a journal records as done (a line torn by the kill is not one)."""
    done = set()
    for line in path.read_bytes().splitlines():
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        if doc.get("phase") == "done":
            done.add(doc["key"])
    return len(done)


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen[bytes], limit: float) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)


# the journal tests need many files and frequent rewrites, not every skill
KILL_RULES = ["--rule", str(ROOT / "skills" / "pragma_unroll.rule"),
              "--rule", str(ROOT / "skills" / "launch_bounds.rule")]


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A corpus and the output of an uninterrupted batch over it."""
    base = tmp_path_factory.mktemp("big")
    src = corpus(base / "src", 160)
    ref = base / "ref"
    proc = subprocess.run([*KLC, "batch", str(src), *KILL_RULES, "--out", str(ref), "-j", "2",
                           "-q",
                           "--report", str(base / "ref.json")], cwd=ROOT, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return src, ref


def _report_files(path: Path) -> list[tuple[object, ...]]:
    """What a report says of each file, less the timings and the folder it was in."""
    files = json.loads(path.read_text())["files"]
    return [(Path(f["path"]).name, f["status"], f["input_sha"] if f["status"] != "rewritten"
             else "", f["output_sha"], f["applied"], f["refused_by"], f["skipped"])
            for f in files]


@pytest.mark.parametrize("mode", ["out", "in_place"])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path: Path, mode: str,
                                                         big_tree: tuple[Path, Path]) -> None:
    src, ref = big_tree
    journal = tmp_path / "journal.jsonl"
    if mode == "out":
        target = tmp_path / "out"
        where = ["--out", str(target)]
        inputs = src
    else:
        target = tmp_path / "work"
        shutil.copytree(src, target)
        where = ["--in-place"]
        inputs = target
    cmd = [*KLC, "batch", str(inputs), *KILL_RULES, *where, "--journal", str(journal), "-j",
           "2", "-q"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_lines(journal, 25, proc, 60)
    assert proc.poll() is None, "the batch ended before it could be killed: use more files"
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    done = journal_done(journal)
    assert 0 < done < 160
    expected = tree_bytes(ref)
    original = tree_bytes(src)
    for rel, data in tree_bytes(target).items():  # no half-written file
        assert data in (expected[rel], original[rel]), rel
    resumed = subprocess.run([*cmd, "--resume", "--report", str(tmp_path / "r.json")],
                             cwd=ROOT, capture_output=True)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["resumed"] >= done
    assert tree_bytes(target) == expected
    assert leftovers(target) == []
    assert _report_files(tmp_path / "r.json") == _report_files(ref.parent / "ref.json")


def test_ctrl_c_stops_cleanly_and_resume_finishes(tmp_path: Path,
                                                 big_tree: tuple[Path, Path]) -> None:
    src, ref = big_tree
    out = tmp_path / "out"
    cmd = [*KLC, "batch", str(src), *KILL_RULES, "--out", str(out), "-j", "2", "-q"]
    # Ctrl-C's default disposition in the child, as at a terminal (a test run started in the
    # background from a shell without job control inherits SIGINT ignored, POSIX)
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for_lines(out / kb.JOURNAL_NAME, 20, proc, 60)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"--resume" in err and b"Traceback" not in err
    resumed = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True)
    assert resumed.returncode == 0
    assert tree_bytes(out) == tree_bytes(ref) and leftovers(out) == []


# -- the gate ---------------------------------------------------------------------------


def test_gate_without_gpu_refuses_or_compiles_when_asked(tmp_path: Path) -> None:
    from klc.gate import gpu_status

    bad = tmp_path / "bad.rule"
    bad.write_text(rule_text("no_such_call", "no_such_function($X)"))
    src = make_tree(tmp_path / "src", {"sig.cu": SIGMOID, "plain.cu": PLAIN})
    out = tmp_path / "out"
    gpu = gpu_status()[0] is not None
    if not gpu:  # verify and profile cannot run: nothing is read or written
        with pytest.raises(KlcError, match="a GPU and this machine has none"):
            run_batch(config(gate=True), BatchOptions([str(src)], mode="out",
                                                      out_dir=str(out)))
        assert not out.exists()
    stages = ("compile", "verify", "profile") if gpu else ("compile",)
    s = run_batch(config(gate=True, gate_stages=stages),
                  BatchOptions([str(src)], mode="out", out_dir=str(out)))
    by = {Path(r.path).name: r for r in s.results}
    assert by["sig.cu"].status == "rewritten" and by["sig.cu"].gate is not None
    assert by["sig.cu"].gate["verdict"] == "passed" and by["sig.cu"].checks == list(stages)
    assert by["plain.cu"].checks == ["compile"]
    assert any("no klc-spec block" in n for n in by["plain.cu"].notes)
    assert tree_bytes(out) == {"sig.cu": fast(SIGMOID), "plain.cu": fast(PLAIN)}
    # a rewrite that does not compile fails the gate; the original is kept
    s = run_batch(BatchConfig.from_paths([str(bad)], gate=True, gate_stages=stages),
                  BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "o2")))
    assert [r.status for r in s.results] == ["gate_failed", "gate_failed"]
    assert "no_such_function" in s.results[0].reason or "compile" in s.results[0].reason
    assert tree_bytes(tmp_path / "o2") == {"sig.cu": SIGMOID, "plain.cu": PLAIN}
    assert s.counts()["gate_failed"] == 2 and s.failed


def test_gate_workers_are_pinned_one_per_gpu(tmp_path: Path) -> None:
    """The GPU route (a gate process per GPU with CUDA_VISIBLE_DEVICES set to it), driven
    with made-up GPU ids: the gate compiles without a device, and each record says which
    worker gated it."""
    src = make_tree(tmp_path / "src", {f"k{i}.cu": SIGMOID for i in range(6)})
    s = run_batch(config(gate=True, gate_stages=("compile",)), BatchOptions([str(src)], mode="out",
                                                  out_dir=str(tmp_path / "out"), jobs=1,
                                                  gpus=["5", "6"]))
    assert s.gpus == 2
    used = {r.gate["worker_gpu"] for r in s.results if r.gate}
    assert used <= {"5", "6"} and len(s.results) == 6
    assert all(r.status == "rewritten" for r in s.results)


def test_discover_gpus_reads_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert kb.discover_gpus() == ["2", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert kb.discover_gpus() == []
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert kb.discover_gpus() == []


FAULTS = """
rule sigmoid_fast {
  kind: skill
  description: "expf to __expf (correct)"
  context: any
  anchor: ```
    expf($X)
  ```
  rewrite replace: ```
    __expf($X)
  ```
}
rule fault_on_tanh {
  kind: skill
  description: "a write through a null pointer (faults on purpose)"
  context: any
  anchor: ```
    tanhf($X)
  ```
  rewrite replace: ```
    (*(volatile float*)0 = tanhf($X))
  ```
}
rule hang_on_log {
  kind: skill
  description: "an endless loop (hangs on purpose)"
  context: any
  anchor: ```
    logf($X)
  ```
  rewrite replace: ```
    ([&]() { volatile int k = 0; while (k >= 0) { k = 1; } return logf($X); }())
  ```
}
"""


def _variant(fn: str) -> bytes:
    return SIGMOID.replace(b"1.0f / (1.0f + expf(-x[i]))", f"{fn}(x[i])".encode())


@pytest.mark.gpu
def test_gpu_gate_a_faulting_or_hanging_kernel_costs_its_own_file(tmp_path: Path) -> None:
    rules = tmp_path / "faults.rule"
    rules.write_text(FAULTS)
    src = make_tree(tmp_path / "src", {"good.cu": SIGMOID, "fault.cu": _variant("tanhf"),
                                       "hang.cu": _variant("logf")})
    out = tmp_path / "out"
    s = run_batch(BatchConfig.from_paths([str(rules)], gate=True, gate_timeout=30),
                  BatchOptions([str(src)], mode="out", out_dir=str(out), jobs=2))
    by = {Path(r.path).name: r for r in s.results}
    assert s.gpus >= 1
    assert by["good.cu"].status == "rewritten" and by["good.cu"].gate["verdict"] == "passed"
    assert by["good.cu"].gate["stages"]["verify"]["status"] == "passed"
    assert by["fault.cu"].status == "gate_failed"
    assert by["hang.cu"].status == "gate_failed"
    assert (out / "good.cu").read_bytes() == fast(SIGMOID)
    assert (out / "fault.cu").read_bytes() == _variant("tanhf")  # the original kept
    assert (out / "hang.cu").read_bytes() == _variant("logf")


@pytest.mark.gpu
def test_gpu_gate_keeps_the_original_of_a_rewrite_measured_slower(tmp_path: Path) -> None:
    """Every skill at once turns conv1d (one output per thread, a short inner loop) into a
    warp or a block per output (the row skill ranked first by its card): it verifies, and
    runs many times slower. A gated batch keeps the original and says why; bias_add's
    rewrite is not slower and is written."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("conv1d.cu", "bias_add.cu"):
        shutil.copy(ROOT / "bench" / "heldout" / name, src / name)
    out = tmp_path / "out"
    s = run_batch(BatchConfig.from_paths([str(ROOT / "skills")], gate=True),
                  BatchOptions([str(src)], mode="out", out_dir=str(out), jobs=2))
    by = {Path(r.path).name: r for r in s.results}
    slow = by["conv1d.cu"]
    assert slow.status == "refused" and slow.refused_by.get("slower", 0) >= 1, slow.reason
    assert re.search(r"thread_per_row_to_(warp|block)_per_row", slow.reason), slow.reason
    assert "slower beyond the noise" in slow.reason
    assert slow.gate["stages"]["verify"]["status"] == "passed"
    assert (out / "conv1d.cu").read_bytes() == (src / "conv1d.cu").read_bytes()
    assert s.counts()["gate_slower"] == 1 and not slow.applied
    assert by["bias_add.cu"].status in ("rewritten", "unchanged"), by["bias_add.cu"].reason


# -- --optimize -------------------------------------------------------------------------


class FakeResult:
    def __init__(self, source: bytes, changed: bool) -> None:
        self.source, self.changed = source, changed

    def to_json(self) -> dict[str, object]:
        return {"changed": self.changed, "steps": ["fake"]}


def test_optimize_is_wired_to_the_optimizer(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    calls: list[dict[str, object]] = []

    def fake_optimize(source: bytes, path: str, options: OptimizeOptions) -> FakeResult:
        calls.append({"path": path, **vars(options)})
        return FakeResult(source + b"// optimized\n", b"expf" in source)

    monkeypatch.setitem(sys.modules, "klc.optimize",
                        types.SimpleNamespace(optimize=fake_optimize,
                                              OptimizeOptions=OptimizeOptions))
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN, "n.cu": NO_MATCH})
    rc = main(["batch", str(src), "--optimize", "--budget", "7", "--in-place", "--journal",
               str(tmp_path / "j"), "-j", "1", "-q", "--report", str(tmp_path / "r.json")])
    assert rc == 0
    assert (src / "k.cu").read_bytes() == PLAIN + b"// optimized\n"
    assert (src / "n.cu").read_bytes() == NO_MATCH
    assert {c["budget"] for c in calls} == {7} and len(calls) == 2
    assert all(isinstance(c["skills"], list) and c["skills"] for c in calls)
    report = json.loads((tmp_path / "r.json").read_text())
    assert [f["optimize"]["steps"] for f in report["files"]] == [["fake"], ["fake"]]


def test_optimize_without_the_optimizer_is_a_clear_error(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    monkeypatch.setitem(sys.modules, "klc.optimize", None)
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    assert main(["batch", str(src), "--optimize", "--in-place", "--journal",
                 str(tmp_path / "j")]) == 2
    assert "forward optimizer" in capsys.readouterr().err
    assert (src / "k.cu").read_bytes() == PLAIN and not (tmp_path / "j").exists()


def test_optimize_with_the_real_optimizer_on_gpu_workers(tmp_path: Path) -> None:
    """The --optimize route through per-GPU workers (made-up ids: on a machine without a
    GPU the optimizer runs its static part there and claims nothing)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "bench" / "examples", src)
    s = run_batch(BatchConfig.from_paths([str(ROOT / "skills")], optimize=True),
                  BatchOptions([str(src)], mode="out", out_dir=str(tmp_path / "out"),
                               gpus=["4"]))
    assert len(s.results) == 3 and s.gpus == 1 and not s.failed
    for r in s.results:
        assert r.optimize is not None and r.optimize["path"] == r.path
        if not kb.discover_gpus():
            assert r.status == "unchanged" and r.optimize["mode"] == "static"
            assert any("optimize:" in n for n in r.notes)
    assert tree_bytes(tmp_path / "out") == tree_bytes(src)


# -- reports ----------------------------------------------------------------------------


def test_markdown_report(tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN, "b.cu": BROKEN})
    assert main(["batch", str(src), "--rule", FAST_MATH, "-j", "1", "-q", "--report",
                 str(tmp_path / "r.md")]) == 1
    md = (tmp_path / "r.md").read_text()
    assert "| files rewritten | 1 |" in md and "| files that failed to parse | 1 |" in md
    assert "precise_exp_to_fast" in md and "parse_failed" in md


def test_ray_address_nobody_answers_at_is_a_clear_error(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    import socket

    with socket.socket() as s:  # a port on 127.0.0.1 that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = make_tree(tmp_path / "src", {"k.cu": PLAIN})
    rc = main(["batch", str(src), "--executor", "ray", "--address", f"127.0.0.1:{port}",
               "--in-place", "--journal", str(tmp_path / "j")])
    assert rc == 2
    assert f"--address 127.0.0.1:{port}: no Ray cluster answers there" in \
        capsys.readouterr().err
    assert (src / "k.cu").read_bytes() == PLAIN and not (tmp_path / "j").exists()
