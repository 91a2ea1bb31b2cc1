"""Hostile inputs, each fixed at its root: the batch journal through a planted link, a journal
entry of the wrong shape, a transient write error on --resume, NVRTC crashing or never
ending, spec options that name host files, holes of huge ranges and long integers, -j out of
bounds, deep --pattern, rule files of many rules and kernels of many nodes, file names with
control characters, and the smaller argument checks. Real files, processes and NVRTC."""

from __future__ import annotations

import json
import os
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

from klc import batch as kb

ROOT = Path(__file__).parent.parent
KLC = [sys.executable, "-c", "import sys; from klc.cli import main; sys.exit(main())"]
FAST_MATH = str(ROOT / "skills" / "fast_math.rule")
SIGMOID = (ROOT / "bench" / "examples" / "sigmoid.cu").read_bytes()
FAST = SIGMOID.replace(b"expf(", b"__expf(")
SAXPY = (ROOT / "bench" / "examples" / "saxpy.cu").read_bytes()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def klc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from klc.cli import main

    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def one_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("klc: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- the batch journal --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["out", "in_place", "journal"])
def test_the_journal_is_never_written_through_a_link(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path, where: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A link planted where the journal goes (OUT/.klc-batch.jsonl, ./.klc-batch.jsonl with
    --in-place, or named by --journal) is refused before any file is touched; the file it
    names keeps its bytes."""
    src = tree(tmp_path / "in", {"a.cu": SIGMOID, "b.cu": SIGMOID})
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    argv = ["batch", str(src), "--rule", FAST_MATH, "-j", "1", "-q"]
    if where == "out":
        out.mkdir()
        (out / kb.JOURNAL_NAME).symlink_to(victim)
        argv += ["--out", str(out)]
    elif where == "in_place":
        (tmp_path / kb.JOURNAL_NAME).symlink_to(victim)
        argv += ["--in-place"]
    else:
        (tmp_path / "j.jsonl").symlink_to(victim)
        argv += ["--out", str(out), "--journal", str(tmp_path / "j.jsonl")]
    rc, _, err = klc(capsys, *argv)
    assert rc == 2 and "the journal is a symbolic link" in one_error(err)
    assert victim.read_bytes() == b"precious\n"
    assert (src / "a.cu").read_bytes() == SIGMOID and not list(out.glob("*.cu"))


def test_a_journal_with_other_hard_links_is_refused(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    src = tree(tmp_path / "in", {"a.cu": SIGMOID})
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    out = tmp_path / "out"
    out.mkdir()
    os.link(victim, out / kb.JOURNAL_NAME)
    rc, _, err = klc(capsys, "batch", str(src), "--rule", FAST_MATH, "--out", str(out),
                     "-j", "1", "-q")
    assert rc == 2 and "hard links" in one_error(err)
    assert victim.read_bytes() == b"precious\n"


BAD_ENTRIES = [
    {"key": "K", "phase": "done"},  # no config, shas, result
    {"config": "C", "key": "K", "phase": "done", "input_sha": 5, "output_sha": "",
     "result": {}},
    {"config": "C", "key": "K", "phase": "done", "input_sha": "", "output_sha": "",
     "result": {"path": "p", "status": "rewritten", "applied": "abc"}},
    {"config": "C", "key": "K", "phase": "done", "input_sha": "", "output_sha": "",
     "result": {"path": "p", "status": "rewritten", "elapsed_s": "fast"}},
    {"config": "C", "key": ["K"], "phase": "later", "input_sha": "", "output_sha": "",
     "result": {"path": "p", "status": "nonsense"}},
]


def test_journal_entries_of_the_wrong_shape_are_skipped_with_a_note(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Valid JSON that is not an entry (a field missing, a wrong type), with this run's
    configuration and keys: --resume skips each with a note and does those files again."""
    src = tree(tmp_path / "in", {"a.cu": SIGMOID, "b.cu": SIGMOID})
    out = tmp_path / "out"
    argv = ["batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j", "1", "-q"]
    assert klc(capsys, *argv)[0] == 0
    journal = out / kb.JOURNAL_NAME
    lines = journal.read_text().splitlines()
    entry = json.loads(lines[-1])
    bad = []
    for doc in BAD_ENTRIES:
        doc = dict(doc)
        if doc.get("config") == "C":
            doc["config"] = entry["config"]
        if doc.get("key") == "K":
            doc["key"] = entry["key"]
        bad.append(json.dumps(doc))
    journal.write_text("\n".join([*lines[:-2], *bad]) + "\n")  # both files' entries gone
    (out / "a.cu").unlink()
    rc, _, err = klc(capsys, *argv, "--resume")
    assert rc == 0, err
    assert f"{len(BAD_ENTRIES)} line(s) are not journal entries" in err
    assert "Traceback" not in err
    assert (out / "a.cu").read_bytes() == FAST and (out / "b.cu").read_bytes() == FAST


def test_resume_retries_a_file_whose_write_failed(tmp_path: Path) -> None:
    """A kernel file too large to write (RLIMIT_FSIZE: EFBIG, the same path as a full disk's
    ENOSPC) is an error of that file, journaled; once there is room, --resume writes it
    instead of reusing the journaled error."""
    import resource

    pad = b"// " + b"x" * 12000 + b"\n"
    src = tree(tmp_path / "in", {"big.cu": pad + SIGMOID, "small.cu": SIGMOID})
    out = tmp_path / "out"

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10000, 10000))

    cmd = [*KLC, "batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j", "1", "-q"]
    first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                           preexec_fn=limit)
    assert first.returncode == 1, first.stderr
    assert "big.cu: cannot write: File too large" in first.stderr
    assert not (out / "big.cu").exists() and (out / "small.cu").read_bytes() == FAST
    resumed = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "big.cu").read_bytes() == pad + FAST


# -- NVRTC in a child ---------------------------------------------------------------------


def test_a_kernel_name_that_crashes_nvrtc_costs_only_its_report(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 100,000-character kernel name made NVRTC abort klc while writing ptxas's report
    (-Xptxas=-v): the compile child dies instead, the compile is asked again without the
    report, and the file compiles, saying why it has no register figures."""
    from klc.cuda.parse import parse_file
    from klc.gate.compile import compile_unit

    name = "k" * 100_000
    path = tmp_path / "long.cu"
    path.write_text(f"__global__ void {name}(float* x) {{ x[threadIdx.x] = 1.0f; }}\n")
    res = compile_unit(parse_file(path), arch="sm_90", name_expressions=(name,))
    assert res.ok and res.cubin_path and Path(res.cubin_path).stat().st_size > 0
    assert res.resources == {} and "NVRTC crashed" in res.resources_source
    rc, out, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 0 and "compiled" in out and "Traceback" not in err, err


def _slow_source(tmp_path: Path) -> Path:
    args = ",".join(f"x[{i % 7}]" for i in range(100_000))
    p = tmp_path / "slow.cu"
    p.write_text("__device__ float f(...) { return 0; }\n"
                 f"__global__ void k(float* x) {{ x[0] = f({args}); }}\n")
    return p


def _nvrtc_servers(processes: Callable[[], list[Proc]]) -> list[Proc]:
    """Every process running klc's compile server script."""
    return [p for p in processes() if any(a.endswith(b"klc/gate/nvrtc.py") for a in p.cmdline)]


def _nvrtc_children(processes: Callable[[], list[Proc]], parent: int | None = None
                    ) -> list[int]:
    """The NVRTC compile children of ``parent`` (this process by default)."""
    want = os.getpid() if parent is None else parent
    return [p.pid for p in _nvrtc_servers(processes) if p.ppid == want]


def test_a_compile_past_its_time_limit_is_stopped(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  processes: Callable[[], list[Proc]]) -> None:
    """A call of 100,000 arguments compiles for seconds: at $KLC_COMPILE_TIMEOUT_S the
    compile child is killed and the file's compile fails, saying so."""
    from klc.gate import nvrtc

    monkeypatch.setenv(nvrtc.TIMEOUT_ENV, "2")
    path = _slow_source(tmp_path)
    rc, out, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 1 and "Traceback" not in err
    assert "NVRTC did not finish within 2 s" in out
    assert _nvrtc_children(processes) == []  # killed, not left compiling
    monkeypatch.setenv(nvrtc.TIMEOUT_ENV, "-1")
    rc, _, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 2 and f"{nvrtc.TIMEOUT_ENV}='-1'" in one_error(err)


def test_ctrl_c_stops_a_long_compile(tmp_path: Path, processes: Callable[[], list[Proc]]
                                     ) -> None:
    """Ctrl-C during a long NVRTC compile: klc ends at once with status 130 and its compile
    child with it (the compile ran in the main thread before, which ignored Ctrl-C)."""
    path = _slow_source(tmp_path)
    proc = subprocess.Popen([*KLC, "gate", str(path), "--stages", "compile"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "KLC_CACHE_DIR": str(tmp_path / "c")},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # imports, parse, then the compile child starts: Ctrl-C once it compiles (the call of
    # 100,000 arguments takes NVRTC a few seconds)
    deadline = time.monotonic() + 30
    while not _nvrtc_children(processes, proc.pid) and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    children = _nvrtc_children(processes, proc.pid)
    assert proc.poll() is None and children
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - t0 < 30
    assert b"Traceback" not in err
    time.sleep(0.2)  # the kill is sent before klc exits; give the child's end a moment
    assert not set(children) & {p.pid for p in _nvrtc_servers(processes)}  # killed, not orphaned


# -- spec -----------------------------------------------------------------------------------


def _saxpy_with(tmp_path: Path, line: str) -> Path:
    p = tmp_path / "s.cu"
    p.write_bytes(SAXPY.replace(b"block: [256]\n", b"block: [256]\n" + line.encode() + b"\n"))
    return p


@pytest.mark.parametrize(("line", "needle"), [
    ('shared: "n ** 0.5"', "is not a whole number"),
    ("options: [-1]", "option '-1': not an option a spec may give"),
    ("options: [--pre-include=/etc/passwd]", "not an option a spec may give"),
    ("options: [-I/etc]", "not an option a spec may give"),
    ("options: [-Xptxas=-o/tmp/x]", "is not one klc passes on"),
])
def test_spec_check_refuses_what_the_gate_would(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, line: str,
                                                needle: str) -> None:
    """Each passed `spec check` and failed later (verify failed; an error naming no file;
    NVRTC reading a host file): now `spec check` and the gate refuse it at line:col."""
    p = _saxpy_with(tmp_path, line)
    for argv in (["spec", "check", str(p)], ["gate", str(p), "--stages", "compile"]):
        rc, _, err = klc(capsys, *argv)
        msg = one_error(err)
        assert rc == 2 and msg.startswith(f"klc: error: {p}:11:") and needle in msg, msg
        assert "root:" not in err


def test_allowed_spec_options_still_compile(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    p = _saxpy_with(tmp_path, "options: [-use_fast_math, -DTILE=32, -maxrregcount=64]")
    rc, out, err = klc(capsys, "gate", str(p), "--stages", "compile")
    assert rc == 0 and "compiled" in out, err


# -- holes ----------------------------------------------------------------------------------


RANGE_RULE = """rule big_range {
  kind: skill
  description: "scale"
  context: any
  hole f: int in 0..%s default 4
  anchor: ```
    $X * 2.0f
  ```
  rewrite replace: ```
    $X * ?f
  ```
}
"""
KERNEL = b"__global__ void k(float* x) { x[threadIdx.x] = x[0] * 2.0f; }\n"


def test_a_huge_hole_range_stays_a_range(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    """0..10^26 checks, applies and is searched without listing it (it was an OverflowError
    in optimize, and 0..10^9 a MemoryError)."""
    from klc.fill.search import MAX_SEARCHED, ranked_values, space_size
    from klc.rule import load_rules

    rule = tmp_path / "r.rule"
    rule.write_text(RANGE_RULE % ("1" + "0" * 26))
    kernel = tree(tmp_path, {"k.cu": KERNEL}) / "k.cu"
    assert klc(capsys, "check", str(rule))[0] == 0
    rc, out, _ = klc(capsys, "apply", str(rule), str(kernel), "--hole", "f=" + "9" * 26)
    assert rc == 0 and "9" * 26 in out
    r = load_rules(rule)[0]
    decl = r.holes["f"]
    assert isinstance(decl.domain(), range) and decl.size() == 10**26 + 1
    values = ranked_values(r, "f", decl)
    assert values[0] == "4" and len(values) <= MAX_SEARCHED and space_size(r) == len(values)
    assert decl.contains("1" + "0" * 26) and not decl.contains("-1")


@pytest.mark.parametrize("where", ["range", "default", "value"])
def test_an_integer_of_5001_digits_is_a_clear_error(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path, where: str) -> None:
    big = "9" * 5001
    rule = tmp_path / "r.rule"
    text = RANGE_RULE % "64"
    if where == "range":
        text = RANGE_RULE % big
    elif where == "default":
        text = text.replace("default 4", f"default {big}")
    rule.write_text(text)
    kernel = tree(tmp_path, {"k.cu": KERNEL}) / "k.cu"
    extra = ["--hole", f"f={big}"] if where == "value" else []
    for argv in (["check", str(rule)], ["apply", str(rule), str(kernel), *extra],
                 ["list", "--skills", str(rule), str(kernel)]):
        if where == "value" and argv[0] != "apply":
            continue
        rc, _, err = klc(capsys, *argv)
        assert rc == 2 and "digits" in err and "Traceback" not in err, (argv, err)
        assert str(rule) in err


# -- bounds: -j, --pattern, rule files, kernels ---------------------------------------------


@pytest.mark.parametrize("jobs", ["99999999999999999999", "0", "-3", "2000", "x"])
def test_every_j_is_bounded(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                            jobs: str) -> None:
    src = tree(tmp_path / "in", {"a.cu": SIGMOID})
    for cmd in (["batch", str(src), "-q"], ["list", str(src)]):
        try:
            rc, _, err = klc(capsys, *cmd, "-j", jobs)
        except SystemExit as e:  # argparse: not a whole number
            rc, err = e.code, capsys.readouterr().err
        assert rc == 2 and "-j" in err and "Traceback" not in err


def test_a_deep_pattern_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = klc(capsys, "ast", "--pattern", "(" * 500 + "x" + ")" * 500)
    assert rc == 2 and "--pattern:1:" in one_error(err) and "nested more than" in err
    rc, _, err = klc(capsys, "ast", "--pattern", "+".join(["a"] * 3000))
    assert rc in (0, 2) and "Traceback" not in err


def test_a_rule_file_of_too_many_rules_is_refused(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    from klc.rule.ruleset import MAX_RULES

    one = (ROOT / "skills" / "fast_math.rule").read_text()
    body = one[one.index("rule "):]
    rule = tmp_path / "many.rule"
    rule.write_text("".join(body.replace("rule precise_exp_to_fast", f"rule r{i}", 1)
                            for i in range(MAX_RULES + 1)))
    rc, _, err = klc(capsys, "check", str(rule))
    assert rc == 2 and f"more than {MAX_RULES} rules" in err and str(rule) in err


def test_a_kernel_of_too_many_nodes_is_refused_before_the_parse(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from klc.cuda.parse import MAX_PUNCTUATION

    stmts = "".join(f"x[{i % 100}]=x[{i % 7}]+1.0f;" for i in range(MAX_PUNCTUATION // 6))
    kernel = tmp_path / "huge.cu"
    kernel.write_text("__global__ void k(float* x) {" + stmts + "}\n")
    for cmd in ("parse", "list"):
        rc, _, err = klc(capsys, cmd, str(kernel))
        assert rc == 2 and "operators and punctuation marks" in one_error(err)


# -- names with control characters ----------------------------------------------------------


def test_a_name_with_a_newline_or_an_escape_is_shown_escaped(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    name = "e\nmpty\x1b[31m.cu"
    (tmp_path / name).write_bytes(b"\0 not CUDA source\n")
    ok = tree(tmp_path, {"a\x1b]0;x\x07.cu": SIGMOID})
    for argv in (["parse", str(tmp_path / name)], ["list", str(tmp_path)],
                 ["batch", str(tmp_path), "-j", "1"]):
        _, out, err = klc(capsys, *argv)
        assert "\x1b" not in out + err and "\x07" not in out + err, argv
        line = one_error(err)
        assert "e\\nmpty\\x1b[31m.cu" in line, line
    assert ok


def test_a_newline_name_of_a_file_read_in_part_is_shown_escaped(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A file that parses only in part (a syntax error recovered) gets its problem line and,
    alone in its folder, the "no rule applies" line: both name it escaped, never raw."""
    name = "\n\nbroken.cu"
    (tmp_path / name).write_bytes(b"__global__ void f( {")
    for argv in (["list", str(tmp_path)], ["list", "--keep-going", str(tmp_path)]):
        _, out, err = klc(capsys, *argv)
        assert name not in out + err, argv
        assert "\\n\\nbroken.cu" in out + err, (argv, out, err)


# -- smaller argument checks ------------------------------------------------------------------


def test_small_argument_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    kernel = tree(tmp_path, {"s.cu": SIGMOID}) / "s.cu"
    with pytest.raises(SystemExit) as e:
        klc(capsys, "apply", FAST_MATH, str(kernel), "-o", "")
    assert e.value.code == 2 and "empty file name" in capsys.readouterr().err
    rule = str(ROOT / "skills" / "launch_bounds.rule")
    rc, _, err = klc(capsys, "apply", rule, str(kernel), "--hole", "threads=128",
                     "--hole", "threads=256")
    assert rc == 2 and "given twice" in one_error(err)
    for value in ("-1", "0", "nan", "inf"):
        with pytest.raises(SystemExit) as e:
            klc(capsys, "batch", str(tmp_path), "--gate", "--gate-timeout", value)
        assert e.value.code == 2 and "--gate-timeout" in capsys.readouterr().err
    assert kernel.read_bytes() == SIGMOID


def test_an_other_file_that_cannot_be_copied_fails_the_batch(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--out mirrors the tree: a file of it that is not copied (here a FIFO) leaves the
    mirror incomplete, an error and exit 1, not a note and exit 0."""
    src = tree(tmp_path / "in", {"a.cu": SIGMOID, "CMakeLists.txt": b"project(x)\n"})
    os.mkfifo(src / "data.pipe")
    out = tmp_path / "out"
    rc, _, err = klc(capsys, "batch", str(src), "--rule", FAST_MATH, "--out", str(out),
                     "-j", "1", "-q")
    assert rc == 1 and "not copied" in one_error(err) and "data.pipe" in err
    assert (out / "a.cu").read_bytes() == FAST
    assert (out / "CMakeLists.txt").read_bytes() == b"project(x)\n"


def test_nvrtc_that_cannot_be_loaded_is_one_line(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """NVRTC's shared library not found (its wheel missing, or in another environment than
    this Python's: CuPy raises from deep in its loader): one line that says what to install,
    exit 2, not a traceback."""
    from klc.gate import compile as gc

    class Unloadable:
        def __getattr__(self, name: str) -> object:
            def call() -> None:
                raise OSError('Failure finding "libnvrtc.so.13": No such file\nsearched: ...')
            return call

    monkeypatch.setattr(gc, "_nvrtc", Unloadable)
    gc.supported_archs.cache_clear()
    gc.nvrtc_version.cache_clear()
    try:
        path = tmp_path / "k.cu"
        path.write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
        rc, _, err = klc(capsys, "gate", str(path), "--stages", "compile")
        line = one_error(err)
        assert rc == 2
        assert 'NVRTC cannot be loaded: Failure finding "libnvrtc.so.13"' in line
        assert "nvidia-cuda-nvrtc" in line and "searched" not in line
    finally:
        gc.supported_archs.cache_clear()
        gc.nvrtc_version.cache_clear()


@pytest.mark.parametrize("command", [["parse"], ["list"], ["list", "--json"], ["parse", "--json"]])
def test_a_non_ascii_path_on_an_ascii_terminal_is_escaped(tmp_path: Path,
                                                          command: list[str]) -> None:
    """Output whose encoding cannot write the path (PYTHONIOENCODING=ascii, a C locale)
    writes it with backslash escapes: the listing whole, no traceback; a missing file with
    such a name is still one message and exit 2."""
    folder = tmp_path / "ünï"
    folder.mkdir()
    (folder / "saxpy.cu").write_bytes(SAXPY)
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "KLC_CACHE_DIR": str(tmp_path / "c")}
    run = subprocess.run([*KLC, *command, str(folder / "saxpy.cu")], capture_output=True,
                         env=env, timeout=300)
    assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr
    assert b"\\xfcn\\xef" in run.stdout or b"\\u00fcn\\u00ef" in run.stdout, run.stdout[:300]
    assert b"saxpy" in run.stdout
    missing = subprocess.run([*KLC, *command, str(folder / "gone_ö.cu")], capture_output=True,
                             env=env, timeout=300)
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr
    assert missing.stderr.count(b"\n") == 1 and b"gone_\\xf6.cu" in missing.stderr
