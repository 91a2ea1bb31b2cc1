"""Hostile and careless input: every case ends in a clear one-line message with
the file's name and exit status 2 (or 0/1 where that is the answer), never a traceback, a
hang or a write outside its place. Real processes and signals where the case is about them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from klc import batch as kb

ROOT = Path(__file__).parent.parent
KLC = [sys.executable, "-c", "import sys; from klc.cli import main; sys.exit(main())"]
FAST_MATH = str(ROOT / "skills" / "fast_math.rule")
SIGMOID = (ROOT / "bench" / "examples" / "sigmoid.cu").read_bytes()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# -- 1. Ctrl-C twice ----------------------------------------------------------------------


def _as_at_a_terminal() -> None:
    """In the child before exec: Ctrl-C's default disposition, as a command at a terminal has
    it. A test run started in the background from a shell without job control inherits SIGINT
    ignored (POSIX), and a klc started so rightly keeps ignoring it: the test would not test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(path: Path, lines: int, proc: subprocess.Popen[bytes], limit: float) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)


@pytest.mark.parametrize("when", ["starting", "running"])
def test_two_ctrl_c_end_the_batch_and_its_workers(tmp_path: Path, when: str) -> None:
    """SIGINT to the whole process group twice, 20 ms apart (a double Ctrl-C at a terminal):
    the batch ends with status 130, no traceback, no worker left, every file whole. (It used
    to hang: the second KeyboardInterrupt broke a pool's shutdown, leaving its manager thread
    waiting on a pipe.)"""
    src = tree(tmp_path / "in", {f"d{i % 4}/k{i}.cu": SIGMOID for i in range(240)})
    out = tmp_path / "out"
    proc = subprocess.Popen([*KLC, "batch", str(src), "--rule", FAST_MATH, "--out", str(out),
                             "-j", "2"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_as_at_a_terminal)
    # "starting": the journal's header is written, the workers are being started
    _wait_for(out / kb.JOURNAL_NAME, 10 if when == "running" else 1, proc, 60)
    assert proc.poll() is None, "the batch ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the batch hung after two Ctrl-C")
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # no worker of the group is left
        os.killpg(proc.pid, 0)
    fast = SIGMOID.replace(b"expf(", b"__expf(")
    for rel, data in files_under(out).items():
        if rel.endswith(".cu"):
            assert data in (SIGMOID, fast), rel


# the batch command, with a Ctrl-C delivered inside the progress display's start (the moment
# the race above met: the display half started, and its stop, in the command's ``finally``,
# undid steps that never ran and raised in place of the interrupt)
_CTRL_C_AT_START = """
import os, signal, sys
from rich.console import Console
from klc.cli import main
real = Console.show_cursor
def show_cursor(self, show=True):
    if not show and not getattr(Console, "_pressed", False):
        Console._pressed = True
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    return real(self, show)
Console.show_cursor = show_cursor
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_while_the_progress_display_starts_ends_the_batch_cleanly(
        tmp_path: Path) -> None:
    src = tree(tmp_path / "in", {f"k{i}.cu": SIGMOID for i in range(6)})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", _CTRL_C_AT_START, "batch", str(src), "--rule",
                           FAST_MATH, "--out", str(out), "-j", "2"], cwd=ROOT,
                          capture_output=True, timeout=120, preexec_fn=_as_at_a_terminal)
    err = proc.stderr.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "klc: interrupted" in err, err
    fast = SIGMOID.replace(b"expf(", b"__expf(")
    for rel, data in files_under(out).items() if out.exists() else ():
        if rel.endswith(".cu"):
            assert data in (SIGMOID, fast), rel

# -- helpers for in-process runs ------------------------------------------------------------


def klc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from klc.cli import main

    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def spec_file(tmp_path: Path, yaml_text: str, name: str = "k.cu") -> Path:
    """A saxpy kernel with the given klc-spec YAML."""
    body = (b"__global__ void saxpy(float a, const float* x, float* y, int n) {\n"
            b"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            b"    if (i < n) y[i] = a * x[i] + y[i];\n}\n")
    p = tmp_path / name
    p.write_bytes(b"/* klc-spec\n" + yaml_text.encode() + b"\n*/\n" + body)
    return p


GOOD_SPEC = ("kernel: saxpy\nsizes: {n: 4096}\nargs:\n  - {name: a, value: 2.0}\n"
             "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: inout}\n"
             "  - {name: n, value: n}\ngrid: [\"ceil_div(n, 256)\"]\nblock: [256]\n"
             "bytes: 12 * n\n")


def _with(field: str, value: str) -> str:
    lines = [ln for ln in GOOD_SPEC.splitlines() if not ln.startswith(field + ":")]
    return "\n".join(lines) + f"\n{field}: {value}\n"


# -- 2 and 7. spec blocks ----------------------------------------------------------------------

BAD_SPECS = [
    ("control byte", GOOD_SPEC.replace("kernel: saxpy", "kernel: sax\x0bpy"), ""),
    ("merge key", GOOD_SPEC + "tolerance: {<<: {rtol: 0.1}}\n", ""),
    ("python tag", GOOD_SPEC.replace("kernel: saxpy", "kernel: !!python/name:os.system saxpy"),
     ""),
    ("ceil_div by a fraction", _with("grid", '["ceil_div(n, 0.1)"]'), "grid"),
    ("int of infinity", _with("bytes", '"int(1e999)"'), "bytes"),
    ("int of nan", _with("bytes", '"int(1e999-1e999)"'), "bytes"),
    ("min of one", _with("bytes", '"min(1)"'), "bytes"),
    ("complex power", _with("bytes", '"(-8)**0.5"'), "bytes"),
    ("long expression", _with("bytes", '"' + "+".join(["n"] * 1000) + '"'), "bytes"),
    ("deep yaml", GOOD_SPEC + "options: " + "[" * 10000 + "]" * 10000 + "\n", ""),
    ("import", _with("bytes", "\"__import__('os')\""), "bytes"),
    ("lambda", _with("bytes", '"(lambda: 1)()"'), "bytes"),
    ("tower", _with("bytes", '"9**9**9"'), "bytes"),
    ("floor by zero", _with("bytes", '"n // 0"'), "bytes"),
    ("negative grid", _with("grid", "[-1]"), "grid"),
    ("empty block", _with("block", "[0]"), "block"),
    ("huge block", _with("block", "[100000000000]"), "block"),
    ("block of 2048", _with("block", "[64, 32]"), "block"),
    ("negative shared", _with("shared", "-1"), "shared"),
    ("nan bytes", _with("bytes", ".nan"), "bytes"),
    ("infinite bytes", _with("bytes", ".inf"), "bytes"),
    ("nan tolerance", GOOD_SPEC + "tolerance: {rtol: .nan}\n", "rtol"),
    ("duplicate size", GOOD_SPEC.replace("{n: 4096}", "{n: 4096, n: 8}"), "twice"),
    ("negative shape", GOOD_SPEC.replace("shape: [n], role: in", "shape: [n - 5000], role: in"),
     "shape"),
]


@pytest.mark.parametrize(("name", "yaml_text", "needle"), BAD_SPECS,
                         ids=[c[0] for c in BAD_SPECS])
def test_bad_spec_is_a_located_error_with_status_2(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path, name: str, yaml_text: str,
                                                  needle: str) -> None:
    """The compile-only gate (no reference) and the listing refuse each with exit 2 and one
    line naming the file and line; never a traceback, never "compiled"."""
    path = spec_file(tmp_path, yaml_text)
    rc, out, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 2, (out, err)
    line = err.strip().splitlines()[0]
    assert line.startswith(f"klc: error: {path}:"), err
    assert needle in line and "Traceback" not in err


def test_two_spec_blocks_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = spec_file(tmp_path, GOOD_SPEC)
    path.write_bytes(path.read_bytes() + b"/* klc-spec\n" + GOOD_SPEC.encode() + b"*/\n")
    rc, _, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 2 and "a second klc-spec block (the first is at line 1)" in err
    assert f"{path}:18:1" in err


def test_good_spec_still_compiles(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = spec_file(tmp_path, GOOD_SPEC)
    rc, out, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 0 and "compiled" in out, err


def test_bom_compiles_in_the_gate_and_stays(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """A file starting with a UTF-8 byte-order mark: the gate compiles it (NVRTC would read
    the mark as a token), and a rewrite keeps the mark."""
    path = tmp_path / "bom.cu"
    path.write_bytes(b"\xef\xbb\xbf" + SIGMOID)
    rc, out, err = klc(capsys, "gate", str(path), "--stages", "compile")
    assert rc == 0 and "compile  passed" in out, out + err
    rc, _, err = klc(capsys, "apply", FAST_MATH, str(path), "--in-place")
    assert rc == 0, err
    assert path.read_bytes() == b"\xef\xbb\xbf" + SIGMOID.replace(b"expf(", b"__expf(")


# -- 3. rule files --------------------------------------------------------------------------

RULE = (ROOT / "skills" / "fast_math.rule").read_text()


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("bad escape", RULE.replace('description: "Use the', 'description: "Use \\q the', 1),
     ":6:21: bad string: Invalid \\escape"),
    ("a thousand nots", RULE.replace("  rewrite replace:", "  guard: " + "not " * 1000
                                     + "in_loop\n  rewrite replace:", 1), "nested too deeply"),
    ("500 parentheses", RULE.replace("expf($X)\n  ```\n  rewrite", "expf(" + "(" * 500 + "$X"
                                     + ")" * 500 + ")\n  ```\n  rewrite", 1),
     "nested more than 200 deep"),
])
def test_bad_rule_file_is_a_located_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          name: str, text: str, needle: str) -> None:
    rule = tmp_path / "r.rule"
    rule.write_text(text)
    kernel = tree(tmp_path / "src", {"s.cu": SIGMOID})
    for argv in (["check", str(rule)], ["apply", str(rule), str(kernel / "s.cu")],
                 ["list", "--skills", str(rule), str(kernel / "s.cu")],
                 ["batch", str(kernel), "--rule", str(rule)]):
        rc, _, err = klc(capsys, *argv)
        assert rc == 2, (argv, err)
        assert f"{rule}" in err and needle in err and "Traceback" not in err, (argv, err)


def test_a_tab_inside_a_quoted_string_is_taken(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    rule = tmp_path / "r.rule"
    rule.write_text(RULE.replace('description: "Use the', 'description: "Use\tthe', 1))
    rc, _, err = klc(capsys, "check", str(rule))
    assert rc == 0, err


# -- 4 and 10. what is not a regular file, and what is too big -------------------------------


def test_fifo_device_loop_and_broken_link_are_refused_without_blocking(tmp_path: Path) -> None:
    """In a child process with a time limit, so that a regression fails instead of hanging."""
    os.mkfifo(tmp_path / "fifo.cu")
    (tmp_path / "zero.cu").symlink_to("/dev/zero")
    (tmp_path / "loop1.cu").symlink_to(tmp_path / "loop2.cu")
    (tmp_path / "loop2.cu").symlink_to(tmp_path / "loop1.cu")
    (tmp_path / "broken.cu").symlink_to(tmp_path / "nothing.cu")
    os.mkfifo(tmp_path / "fifo.rule")
    script = f"""
import sys
from klc.cli import main
d = {str(tmp_path)!r}
for name in ("fifo.cu", "zero.cu", "loop1.cu", "broken.cu"):
    for argv in (["parse"], ["list"], ["apply", {FAST_MATH!r}], ["gate", "--stages", "compile"]):
        print(name, argv[0], main([*argv, d + "/" + name]), flush=True)
print("rule", "check", main(["check", d + "/fifo.rule"]), flush=True)
k = {str(ROOT / "bench/examples/sigmoid.cu")!r}
print("rule", "apply", main(["apply", d + "/fifo.rule", k]), flush=True)
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    codes = [line.split() for line in proc.stdout.splitlines()]
    assert len(codes) == 18 and all(c[2] == "2" for c in codes), proc.stdout
    err = proc.stderr
    assert "Traceback" not in err
    assert f"{tmp_path}/fifo.cu: is a FIFO (named pipe), not a regular file" in err
    assert f"{tmp_path}/zero.cu: is a character device, not a regular file" in err
    assert f"{tmp_path}/loop1.cu: symbolic link loop" in err
    assert f"{tmp_path}/broken.cu: broken symbolic link" in err
    assert f"{tmp_path}/fifo.rule: is a FIFO (named pipe), not a regular file" in err


def test_a_folder_walk_names_each_kind(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    d = tree(tmp_path / "d", {"ok.cu": SIGMOID})
    os.mkfifo(d / "fifo.cu")
    (d / "zero.cu").symlink_to("/dev/zero")
    (d / "loop1.cu").symlink_to(d / "loop2.cu")
    (d / "loop2.cu").symlink_to(d / "loop1.cu")
    (d / "broken.cu").symlink_to(d / "nothing.cu")
    rc, out, err = klc(capsys, "list", str(d))
    assert rc == 2 and "ok.cu" in out
    assert f"{d}/fifo.cu: is a FIFO (named pipe), not a regular file" in err
    assert f"{d}/zero.cu: is a character device, not a regular file" in err
    assert f"{d}/loop1.cu: symbolic link loop" in err
    assert f"{d}/broken.cu: broken symbolic link" in err


def test_max_bytes(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KLC_MAX_BYTES", raising=False)
    path = tmp_path / "s.cu"
    path.write_bytes(SIGMOID)
    rc, _, err = klc(capsys, "parse", str(path), "--max-bytes", "100")
    assert rc == 2 and f"{path}: {len(SIGMOID)} bytes, over the limit of 100 (--max-bytes)" in err
    rc, _, err = klc(capsys, "parse", str(path), "--max-bytes", "1M")
    assert rc == 0, err
    rc, _, err = klc(capsys, "parse", str(path), "--max-bytes", "lots")
    assert rc == 2 and "--max-bytes 'lots': expected a size" in err
    (tmp_path / "big.cu").write_bytes(SIGMOID + b"// padding\n" * 20000)
    monkeypatch.setenv("KLC_MAX_BYTES", "100000")  # (what --max-bytes hands to batch workers)
    rc, _, err = klc(capsys, "batch", str(tmp_path), "--rule", FAST_MATH, "-j", "2")
    assert rc == 1 and f"{tmp_path}/big.cu: {220000 + len(SIGMOID)} bytes, over the limit" in err


def test_deep_expression_is_refused_quickly(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    """One expression of 100,000 terms ran for over 300 s in the model's queries."""
    path = tmp_path / "deep.cu"
    path.write_text("__global__ void k(float* y, float a) {\n  y[0] = "
                    + "+".join(["a"] * 100000) + ";\n}\n")
    t0 = time.monotonic()
    rc, _, err = klc(capsys, "list", str(path))
    assert rc == 2 and f"{path}:2:" in err and "nested more than" in err
    assert time.monotonic() - t0 < 30


# -- 8. writes stay in their place -----------------------------------------------------------

FAST = SIGMOID.replace(b"expf(", b"__expf(")


def test_out_never_follows_a_link_out_of_the_output_folder(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    src = tree(tmp_path / "in", {"d0/a.cu": SIGMOID, "d1/b.cu": SIGMOID, "c.cu": SIGMOID})
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "d0").symlink_to(outside)  # a folder link, already there
    (out / "c.cu").symlink_to(outside / "c.cu")  # a file link to a file not yet there
    rc, _, err = klc(capsys, "batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j",
                     "1")
    assert rc == 1
    assert list(outside.iterdir()) == []  # nothing written outside
    assert f"{out}/d0/a.cu: a symbolic link in the output folder leads out of it" in err
    assert f"{out}/c.cu: a symbolic link in the output folder leads out of it" in err
    assert (out / "d1" / "b.cu").read_bytes() == FAST


def test_output_must_be_a_regular_file(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    kernel = tree(tmp_path, {"s.cu": SIGMOID}) / "s.cu"
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
    for target in (os.devnull, str(tmp_path / "fifo"), str(tmp_path / "stdout"),
                   str(tmp_path)):
        rc, _, err = klc(capsys, "apply", FAST_MATH, str(kernel), "-o", target)
        assert rc == 2 and "not a regular file; not replaced" in err, (target, err)
    assert os.path.islink(tmp_path / "stdout") and kernel.read_bytes() == SIGMOID
    proc = subprocess.run([*KLC, "apply", FAST_MATH, str(kernel), "-o", str(tmp_path / "stdout")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr  # (fd 1 is a pipe here)
    assert "not a regular file; not replaced" in proc.stderr


def test_in_place_on_a_link_writes_its_target_in_apply_and_batch(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One behaviour for both: the file the link names is rewritten, the link stays a link."""
    real = tree(tmp_path / "real", {"a.cu": SIGMOID, "b.cu": SIGMOID})
    links = tmp_path / "links"
    links.mkdir()
    (links / "a.cu").symlink_to(real / "a.cu")
    (links / "b.cu").symlink_to(real / "b.cu")
    rc, _, err = klc(capsys, "apply", FAST_MATH, str(links / "a.cu"), "--in-place")
    assert rc == 0, err
    rc, _, err = klc(capsys, "batch", str(links / "b.cu"), "--rule", FAST_MATH, "--in-place",
                     "--journal", str(tmp_path / "j.jsonl"), "-j", "1")
    assert rc == 0, err
    for name in ("a.cu", "b.cu"):
        assert (links / name).is_symlink() and (real / name).read_bytes() == FAST


def test_in_place_refuses_a_file_with_hard_links(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    d = tree(tmp_path / "d", {"a.cu": SIGMOID})
    os.link(d / "a.cu", tmp_path / "other_name.cu")
    rc, _, err = klc(capsys, "apply", FAST_MATH, str(d / "a.cu"), "--in-place")
    assert rc == 2 and "has 2 hard links" in err
    rc, _, err = klc(capsys, "batch", str(d), "--rule", FAST_MATH, "--in-place", "--journal",
                     str(tmp_path / "j.jsonl"), "-j", "1")
    assert rc == 1 and "has 2 hard links" in err
    assert (tmp_path / "other_name.cu").read_bytes() == SIGMOID == (d / "a.cu").read_bytes()
    rc, _, err = klc(capsys, "apply", FAST_MATH, str(d / "a.cu"), "-o", str(tmp_path / "c.cu"))
    assert rc == 0 and (tmp_path / "c.cu").read_bytes() == FAST


# -- 9. one batch at a time on a journal ----------------------------------------------------


def test_a_second_batch_on_the_same_journal_stops_before_touching_anything(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import fcntl

    src = tree(tmp_path / "src", {"a.cu": SIGMOID})
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b"")
    with open(journal, "ab") as held:  # as a running batch holds it
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        rc, _, err = klc(capsys, "batch", str(src), "--rule", FAST_MATH, "--in-place",
                         "--journal", str(journal), "-j", "1")
        assert rc == 2 and "another klc batch is running with this journal" in err
        assert (src / "a.cu").read_bytes() == SIGMOID and journal.read_bytes() == b""
    rc, _, err = klc(capsys, "batch", str(src), "--rule", FAST_MATH, "--in-place",
                     "--journal", str(journal), "-j", "1")
    assert rc == 0 and (src / "a.cu").read_bytes() == FAST, err


def test_a_fifo_named_as_the_journal_is_refused_without_blocking(tmp_path: Path) -> None:
    src = tree(tmp_path / "src", {"a.cu": SIGMOID})
    os.mkfifo(tmp_path / "journal")
    for extra in ([], ["--resume"]):
        proc = subprocess.run([*KLC, "batch", str(src), "--rule", FAST_MATH, "--in-place",
                               "--journal", str(tmp_path / "journal"), *extra], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "journal" in proc.stderr, proc.stderr
        assert "is a FIFO" in proc.stderr or "not a regular file" in proc.stderr
    assert (src / "a.cu").read_bytes() == SIGMOID


# -- 5. a full disk during --out ---------------------------------------------------------------


def test_a_journal_that_cannot_grow_stops_the_batch_cleanly(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the kernel refuse writes past 6 KB (EFBIG, the same path as a full
    disk's ENOSPC): the journal outgrows it after a few files, the kernel files never do."""
    import resource

    src = tree(tmp_path / "in", {f"k{i:02}.cu": SIGMOID for i in range(20)})
    out = tmp_path / "out"

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))

    cmd = [*KLC, "batch", str(src), "--rule", FAST_MATH, "--out", str(out), "-j", "1", "-q"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{out}/.klc-batch.jsonl: cannot write the journal: File too large; the batch " \
        "stopped" in proc.stderr
    written = [p for p in out.glob("*.cu")]
    assert 0 < len(written) < 20 and all(p.read_bytes() == FAST for p in written)
    resumed = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(p.name for p in out.glob("*.cu")) == sorted(p.name for p in src.iterdir())


# -- 10. smaller ones ----------------------------------------------------------------------


def test_a_bad_hole_value_names_the_rule_file(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    kernel = tree(tmp_path, {"s.cu": SIGMOID}) / "s.cu"
    rule = str(ROOT / "skills" / "launch_bounds.rule")
    rc, _, err = klc(capsys, "apply", rule, str(kernel), "--hole", "threads=7")
    assert rc == 2 and f"klc: error: {rule}:" in err and "hole ?threads" in err


def test_diff_header_quotes_a_name_with_a_newline(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    kernel = tree(tmp_path, {"a\nb.cu": SIGMOID}) / "a\nb.cu"
    rc, out, _ = klc(capsys, "apply", FAST_MATH, str(kernel))
    assert rc == 0
    root = str(tmp_path).lstrip("/")  # (outside the working folder: named from the root)
    assert out.splitlines()[0] == f'--- "a/{root}/a\\nb.cu"'
    rc, out, _ = klc(capsys, "batch", str(tmp_path), "--rule", FAST_MATH, "--diff", "-j", "1")
    assert f'--- "a/{root}/a\\nb.cu"' in out.splitlines()


# -- the skills library settles ------------------------------------------------------------


def test_the_skills_library_settles_on_the_shipped_kernels() -> None:
    """Applying the whole library is not idempotent in one run (a site that overlaps one
    rewritten is left for another run: a nest of loops gets one #pragma per run), but
    repeated runs reach a fixed point: no skill rewrites its own output forever. (On every
    shipped kernel, lineage steps included, it settles within 10 runs; docs/batch.md.)"""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet, default_skill_dirs

    rules = list(RuleSet.load(default_skill_dirs()).rules)
    files = sorted([*(ROOT / "bench" / "examples").glob("*.cu"),
                    *(ROOT / "bench" / "heldout").glob("*.cu")])
    assert len(files) >= 20
    runs = {}
    for path in files:
        unit = parse_bytes(path.read_bytes(), str(path))
        for n in range(12):
            outcome = apply_rules(unit, rules, {}, spec_of(unit))
            if not outcome.changed:
                runs[path.name] = n
                break
            unit = parse_bytes(outcome.source, str(path))
        assert path.name in runs, f"{path}: the library still rewrites it after 12 runs"
    assert max(runs.values()) >= 2  # (some file does need a second run)
