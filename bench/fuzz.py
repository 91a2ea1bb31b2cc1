"""Fuzz klc's commands with mutated kernels, rules, spec blocks, batch journals, arguments,
hole domains and file names.

Each input is a seed (a shipped kernel, a skill file, a kernel's klc-spec block) mutated by a
list of edits that hypothesis draws: delete, duplicate or swap a slice, insert a token from a
hostile dictionary (control bytes, a byte-order mark, comment ends, YAML tags and merge keys,
huge and NaN numbers, deep nesting...), overwrite bytes at random, truncate. Every input is run
in this process through ``klc.cli.main``:

- a kernel: ``parse``, ``list``, ``apply`` (a skill, to ``-o``), ``gate --stages compile``;
- a rule file: ``check``, ``apply`` (the rule on a shipped kernel, to ``-o``), ``list --skills``;
- a spec block (in a shipped kernel): ``parse``, ``list``, ``gate --stages compile``;
- a batch journal (a real one, mutated, or a link planted in its place): ``batch --out
  --resume`` on the tree it journals, which must end with status 0 and the whole mirror (a
  damaged line is skipped and its file done again), or 2 for a link, whose target keeps its
  bytes;
- command-line arguments (``-j``, ``--gate-timeout``, gate ``--timeout``, ``-o``, repeated
  ``--hole``, ``ast --pattern`` nested deep, ``$KLC_COMPILE_TIMEOUT_S``), each with the status
  it must give: 2 and one line for a bad value;
- a hole declaration (ranges up to 10^60 and integers of up to 6,000 digits, in the domain,
  the default and ``--hole``): ``check``, ``apply``, ``list``, and search's ranking of the
  domain (``klc.fill.search``), which must never list a range whole;
- a file name (newlines, escape sequences, bidi overrides, bells): ``parse``, ``list``,
  ``batch``, whose output must carry no control character but newlines and tabs, and show a
  name with a newline escaped.

Each run is judged: exit status in {0, 1, 2}; no exception out of ``main`` (a traceback); a
message naming the input file with status 2; under ``LIMIT_S`` seconds (else a hang, stopped by
an alarm); nothing written when the status is not 0 (``-o`` left absent) and the input never
changed (data lost). ``python bench/fuzz.py --count 10000`` runs the long profile and prints the
table (inputs tried, clean errors, tracebacks, hangs, wrong exit codes, data lost) per kind;
``tests/test_fuzz.py`` runs a short profile in the normal test run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("kernel", "rule", "spec", "journal", "args", "holes", "names")
LIMIT_S = 30.0  # a command that runs longer on one input is a hang

KERNEL_SEEDS = [p.read_bytes() for p in sorted((ROOT / "bench" / "examples").glob("*.cu"))]
RULE_SEEDS = [p.read_bytes() for p in sorted((ROOT / "skills").glob("*.rule"))]
SPEC_KERNEL = (ROOT / "bench" / "examples" / "saxpy.cu").read_bytes()
SPEC_END = SPEC_KERNEL.index(b"*/")
SPEC_SEEDS = [SPEC_KERNEL[:SPEC_END]]  # the block up to its */; the kernel follows unchanged
APPLY_RULE = str(ROOT / "skills" / "fast_math.rule")
APPLY_KERNEL = str(ROOT / "bench" / "examples" / "sigmoid.cu")
SKILLS = str(ROOT / "skills")  # named, so that a run of another checkout lists its own

# what a careless or hostile input holds
TOKENS = [
    b"(", b")", b"{", b"}", b"[", b"]", b";", b",", b"\"", b"'", b"`", b"```", b"\\", b"\t",
    b"\x0b", b"\x0c", b"\x00", b"\x1b", b"\x7f", b"\xef\xbb\xbf", b"\xff", b"\xc3", b"\r\n",
    b"\n", b"*/", b"/*", b"//", b"#define X(a) a\n", b"#pragma unroll\n", b"#include <x.h>\n",
    b"/* klc-spec\n", b"klc-spec", b"!!python/name:os.system", b"<<: {n: 1}", b"&a", b"*a",
    b"- ", b": ", b"? ", b"|", b">", b"1e999", b"-1", b"0", b".nan", b".inf", b"-.inf",
    b"18446744073709551616", b"9**9**9", b"__import__('os')", b"lambda: 1", b"n // 0",
    b"ceil_div(n, 0.1)", b"int(1e999)", b"min(1)", b"(-8)**0.5", b"$X", b"$$$X", b"$_",
    b"?factor", b"not ", b" and ", b" or ", b"guard: ", b"anchor: ", b"rewrite replace: ",
    b"hole factor: int in {1, 2}", b"rule r {", b"__global__", b"__shared__", b"template <int N>",
    b"__syncthreads();", b"for (;;)", b"a" * 300, b"(" * 300, b")" * 300, b"[" * 300,
    b"a+" * 3000, b"\xe2\x80\xae", b"\xf0\x9f\x98\x80",
    b"k" * 100_000,  # a kernel name whose ptxas report crashed NVRTC
]


@st.composite
def edits(draw: st.DrawFn) -> list[tuple[str, float, float, bytes]]:
    """A list of edits: (operation, where in [0, 1), how far, payload)."""
    op = st.sampled_from(["insert", "insert", "insert", "delete", "duplicate", "replace",
                          "random", "truncate", "swap"])
    frac = st.floats(0, 1, exclude_max=True, allow_nan=False)
    payload = st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=8))
    return draw(st.lists(st.tuples(op, frac, frac, payload), min_size=1, max_size=6))


def mutate(seed: bytes, ops: list[tuple[str, float, float, bytes]]) -> bytes:
    data = bytearray(seed)
    for op, a, b, payload in ops:
        n = len(data)
        i = int(a * (n + 1))
        j = min(n, i + 1 + int(b * 64))
        if op == "insert":
            data[i:i] = payload
        elif op == "delete":
            del data[i:j]
        elif op == "duplicate":
            data[j:j] = data[i:j]
        elif op == "replace":
            data[i:j] = payload
        elif op == "random":
            data[i:i + len(payload)] = payload
        elif op == "truncate":
            del data[i:]
        elif op == "swap" and n:
            k = int(b * n)
            lo, hi = sorted((i, k))
            size = min(16, hi - lo)
            if size and hi + size <= n:
                data[lo:lo + size], data[hi:hi + size] = data[hi:hi + size], data[lo:lo + size]
    return bytes(data)


# spec fields set to values the gate must refuse (exit 2): a launch it cannot make, an
# expression it must not evaluate, YAML it must not construct
BAD_FIELDS = [
    ("grid", v) for v in ("[-1]", "[0]", '["n // 0"]', '["9**9**9"]', "[\"__import__('os')\"]",
                          '["ceil_div(n, 0.1)"]', "[100000000000]", '["n.real"]', "[.nan]")
] + [
    ("block", v) for v in ("[0]", "[100000000000]", "[64, 32]", '["(-8)**0.5"]', '["min(1)"]',
                           "[-256]", '["int(1e999)"]')
] + [
    ("shared", v) for v in ("-1", '"int(1e999)"', ".nan", "1e12", '"n[0]"')
] + [
    ("bytes", v) for v in (".nan", ".inf", "-5", '"int(1e999-1e999)"', '"lambda: 1"',
                           '"' + "+".join(["n"] * 1000) + '"', '"(' * 60 + "n" + ')"' * 60)
] + [
    ("flops", v) for v in (".inf", '"(lambda: 1)()"', '"[n]"', "-.inf")
] + [
    ("tolerance", v) for v in ("{rtol: .nan}", "{rtol: -1}", "{<<: {rtol: 0.1}}", "{atol: 2}")
] + [
    ("sizes", v) for v in ("{n: 0}", "{n: 4096, n: 8}", "{n: !!python/name:os.system}",
                           "{n: 1e30}", "{n: -3}", "{n: 18446744073709551616999}")
] + [
    ("kernel", v) for v in ("!!python/name:os.system", "sax\x0bpy", "saxpy; rm")
] + [
    ("timeout_s", v) for v in (".nan", "-1", "1e300")
] + [
    ("options", "[" * 10000 + "]" * 10000),
    ("peak", "fp128"),
] + [
    ("options", v) for v in ("[-1]", "[--pre-include=/etc/passwd]", "[-I/etc]",
                             '["-Xptxas=-o/tmp/x"]', "[-include, /etc/passwd]",
                             "[--include-path=/]", "[-lineinfo=1]", '["-DX\\n=1"]',
                             "[-maxrregcount=99999]", "[-arch=sm_80]")
] + [
    ("shared", v) for v in ('"n ** 0.5"', '"n / 3"', '"n ** -1"')
]


def set_field(block: bytes, name: str, value: str) -> bytes:
    """The spec block with ``name: value`` in place of that field's line (or added)."""
    lines = block.split(b"\n")
    line = f"{name}: {value}".encode()
    for i, ln in enumerate(lines):
        if ln.startswith(name.encode() + b":"):
            lines[i] = line
            return b"\n".join(lines)
    return block.rstrip(b"\n") + b"\n" + line + b"\n"


@st.composite
def inputs(draw: st.DrawFn, kind: str) -> tuple[bytes, int | None]:
    """An input of ``kind`` and the exit status the gate must give it, where one is known
    (the oracle for wrong exit codes): 2 for a spec field set to a value from BAD_FIELDS
    and nothing else changed, 0 for a shipped kernel behind a UTF-8 byte-order mark."""
    seeds = {"kernel": KERNEL_SEEDS, "rule": RULE_SEEDS, "spec": SPEC_SEEDS}[kind]
    seed = draw(st.sampled_from(seeds))
    expect = None
    if kind == "spec" and draw(st.booleans()):
        name, value = draw(st.sampled_from(BAD_FIELDS))
        data, expect = set_field(seed, name, value), 2
    elif kind == "spec" and draw(st.booleans()):  # a second block
        data, expect = seed + SPEC_KERNEL[SPEC_END:] + seed, 2
    elif kind == "kernel" and draw(st.integers(0, 9)) == 0:
        data, expect = b"\xef\xbb\xbf" + seed, 0
    else:
        data = mutate(seed, draw(edits()))
    if kind == "spec":
        data = data + SPEC_KERNEL[SPEC_END:]
    return data, expect


# --------------------------------------------------------------------------------------
# Running one input


class _Hang(Exception):
    pass


@dataclass
class Tally:
    """What happened to the runs of one kind of input."""

    inputs: int = 0
    runs: int = 0
    ok: int = 0  # exit 0 or 1
    clean_errors: int = 0  # exit 2 with one message naming the file
    tracebacks: int = 0
    hangs: int = 0
    wrong_exit: int = 0  # another status, or 2 without the file's name
    data_lost: int = 0  # the input changed, or an output written on failure
    slowest_s: float = 0.0
    examples: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)

    def bad(self, what: str, detail: str) -> None:
        self.kinds[what] += 1
        if len(self.examples) < 12:
            self.examples.append(f"{what}: {detail}")


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


def run_command(argv: list[str], limit_s: float = LIMIT_S) -> tuple[int | None, str, str,
                                                                        str | None, float]:
    """``klc.cli.main(argv)`` here, output captured: (status, stdout, stderr, the exception
    that escaped as text or "hang", seconds)."""
    from klc.cli import main

    out, err = io.StringIO(), io.StringIO()
    escaped = None
    rc = None
    use_alarm = hasattr(signal, "SIGALRM")
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    t0 = time.monotonic()
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, limit_s)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except _Hang:
        escaped = "hang"
    except SystemExit as e:  # argparse
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException as e:
        escaped = "".join(traceback.format_exception_only(type(e), e)).strip()
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue(), err.getvalue(), escaped, time.monotonic() - t0


def commands(kind: str, path: str, out: str) -> list[tuple[list[str], str]]:
    """(argv, the file a status-2 message must name) for one input."""
    if kind == "rule":
        return [(["check", path], path),
                (["apply", path, APPLY_KERNEL, "-o", out], path),
                (["list", "--skills", path, APPLY_KERNEL], path)]
    runs = [(["parse", path], path), (["list", "--skills", SKILLS, path], path)]
    if kind == "kernel":
        runs.append((["apply", APPLY_RULE, path, "-o", out], path))
    runs.append((["gate", path, "--stages", "compile"], path))
    return runs


def judge(kind: str, data: bytes, tally: Tally, workdir: Path, expect: int | None = None
          ) -> None:
    """Run every command of ``kind`` on ``data`` and count what happened. ``expect``: the
    exit status the gate must give (another is a wrong exit code)."""
    suffix = ".rule" if kind == "rule" else ".cu"
    path = workdir / f"input{suffix}"
    out = workdir / "out.cu"
    path.write_bytes(data)
    tally.inputs += 1
    for argv, named in commands(kind, str(path), str(out)):
        with contextlib.suppress(FileNotFoundError):
            out.unlink()
        rc, _, err, escaped, seconds = run_command(argv)
        tally.runs += 1
        tally.slowest_s = max(tally.slowest_s, seconds)
        what = f"{argv[0]} on {data[:60]!r}"
        if escaped == "hang":
            tally.hangs += 1
            tally.bad("hang", what)
        elif escaped is not None:
            tally.tracebacks += 1
            tally.bad("traceback", f"{what}: {escaped.splitlines()[-1][:200]}")
        elif rc not in (0, 1, 2) or (rc == 2 and named not in err):
            tally.wrong_exit += 1
            tally.bad("wrong exit", f"{what}: {rc}: {err.strip()[:200]}")
        elif expect is not None and argv[0] == "gate" and rc != expect:
            tally.wrong_exit += 1
            tally.bad("wrong exit", f"gate gave {rc}, not {expect}, on {data[:200]!r}")
        elif rc == 2:
            tally.clean_errors += 1
        else:
            tally.ok += 1
        if path.read_bytes() != data or (rc not in (0, None) and out.exists()):
            tally.data_lost += 1
            tally.bad("data lost", what)
        if escaped is None and rc == 2 and err.count("Traceback"):
            tally.tracebacks += 1
            tally.bad("traceback in output", what)


def fuzz(kind: str, count: int, seed: int | None = None) -> Tally:
    """``count`` inputs of ``kind``, drawn by hypothesis, each judged; returns the tally."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix=f"klc-fuzz-{kind}-") as tmp:
        workdir = Path(tmp)
        os.environ.setdefault("KLC_CACHE_DIR", str(workdir / "cache"))

        strategy, judge_one = KIND_RUNS.get(kind, (inputs(kind), None))

        @settings(max_examples=count, deadline=None, database=None, derandomize=seed is None,
                  suppress_health_check=list(HealthCheck), phases=[
                      __import__("hypothesis").Phase.generate])
        @given(strategy)
        def run(case: Any) -> None:
            if judge_one is not None:
                judge_one(case, tally, workdir)
            else:
                judge(kind, case[0], tally, workdir, expect=case[1])

        if seed is not None:
            run = __import__("hypothesis").seed(seed)(run)
        run()
    return tally


# --------------------------------------------------------------------------------------
# The kinds that are not a file's bytes: a journal, arguments, hole domains, file names


def _outcome(tally: Tally, what: str, argv: list[str], allowed: tuple[int, ...],
             named: str | None = None, limit_s: float = LIMIT_S) -> tuple[int | None, str, str]:
    """Run ``argv``, count the run, and judge it: no traceback or hang, a status in
    ``allowed`` (another is a wrong exit code), a status-2 message naming ``named`` when
    given. Returns (status, stdout, stderr)."""
    rc, out, err, escaped, seconds = run_command(argv, limit_s)
    tally.runs += 1
    tally.slowest_s = max(tally.slowest_s, seconds)
    if escaped == "hang":
        tally.hangs += 1
        tally.bad("hang", what)
    elif escaped is not None:
        tally.tracebacks += 1
        tally.bad("traceback", f"{what}: {escaped.splitlines()[-1][:200]}")
    elif rc not in allowed or (rc == 2 and named is not None and named not in err):
        tally.wrong_exit += 1
        tally.bad("wrong exit", f"{what}: {rc} (expected {allowed}): {err.strip()[:200]}")
    elif rc == 2:
        tally.clean_errors += 1
    else:
        tally.ok += 1
    if escaped is None and "Traceback" in err:
        tally.tracebacks += 1
        tally.bad("traceback in output", what)
    return rc, out, err


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# -- journals: batch --out --resume on a mutated journal, or a link in its place


def _journal_tree(workdir: Path) -> tuple[Path, Path, list[str], bytes]:
    """A source tree of two shipped kernels, its mirror and the real journal of the batch that
    wrote it (made once per workdir)."""
    src, out = workdir / "jsrc", workdir / "jout"
    argv = ["batch", str(src), "--rule", APPLY_RULE, "--out", str(out), "-j", "1", "-q",
            "--no-compile-check"]
    seed = workdir / "journal.seed"
    if not seed.exists():
        src.mkdir(parents=True)
        for name in ("a.cu", "sub/b.cu"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes(Path(APPLY_KERNEL).read_bytes())
        rc = run_command(argv)[0]
        assert rc == 0, "the journal's seed batch failed"
        seed.write_bytes((out / ".klc-batch.jsonl").read_bytes())
    return src, out, argv, seed.read_bytes()


# JSON values a journal field may be set to (types, sizes and shapes it must survive)
JSON_VALUES = ["null", "true", "0", "-1", "1e999", '""', '"x"', "[]", "{}", '["a"]',
               '{"path": 1}', "18446744073709551616" * 3, "[" * 3000 + "]" * 3000,
               '"' + "a" * 5000 + '"', '{"status": "rewritten"}', '"rewritten"', "1.5",
               '{"rule": 5}', '[{"rule": []}]']
JOURNAL_KEYS = ["config", "key", "phase", "input_sha", "output_sha", "result", "path",
                "status", "applied", "refused", "refused_by", "skipped", "notes", "gate",
                "optimize", "elapsed_s", "reason"]


@st.composite
def journal_inputs(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, float]], Any]:
    """("link", [], None): a link planted as the journal; else ("edit", field edits, byte
    edits): each field edit sets or deletes a key of one line, then the bytes are mutated."""
    if draw(st.integers(0, 9)) == 0:
        return "link", [], None
    fields = draw(st.lists(st.tuples(st.sampled_from(JOURNAL_KEYS),
                                     st.sampled_from([*JSON_VALUES, "<delete>"]),
                                     st.floats(0, 1, exclude_max=True)), max_size=4))
    raw = draw(st.one_of(st.none(), edits()))
    return "edit", fields, raw


def _edit_journal(seed: bytes, fields: list[tuple[str, str, float]], raw: Any) -> bytes:
    lines = seed.split(b"\n")
    for key, value, where in fields:
        i = int(where * len(lines))
        try:
            doc = json.loads(lines[i])
        except (ValueError, RecursionError):  # (an earlier edit nested it deep)
            continue
        if not isinstance(doc, dict):
            continue
        target = doc["result"] if key in ("path", "status", "applied", "refused",
                                          "refused_by", "skipped", "notes", "gate", "optimize",
                                          "elapsed_s", "reason") and isinstance(
                                              doc.get("result"), dict) else doc
        if value == "<delete>":
            target.pop(key, None)
            lines[i] = json.dumps(doc).encode()
        else:
            lines[i] = _set(doc, target, key, value)
    data = b"\n".join(lines)
    return mutate(data, raw) if raw else data


def _set(doc: dict[str, Any], target: dict[str, Any], key: str, value: str) -> bytes:
    """The line with ``target[key]`` set to the JSON text ``value`` (written as text: the
    value may be one json.loads would not give back, such as 1e999 or a deep list)."""
    marker = "\u0000klc-fuzz\u0000"
    target[key] = marker
    return json.dumps(doc).replace(json.dumps(marker), value, 1).encode()


def judge_journal(case: tuple[str, list[tuple[str, str, float]], Any], tally: Tally,
                  workdir: Path) -> None:
    """batch --resume over the mutated journal: status 0 and the whole, right mirror (a line
    it cannot use is skipped and its file done again); for a planted link, status 2 and the
    link's target unchanged. Nothing is written outside the mirror."""
    kind, fields, raw = case
    src, out, argv, seed = _journal_tree(workdir)
    jpath = out / ".klc-batch.jsonl"
    victim = workdir / "victim.txt"
    victim.write_bytes(b"not a journal\n")
    with contextlib.suppress(FileNotFoundError):
        jpath.unlink()
    if kind == "link":
        jpath.symlink_to(victim)
    else:
        jpath.write_bytes(_edit_journal(seed, fields, raw))
    before_src = _snapshot(src)
    tally.inputs += 1
    what = f"batch --resume on a {'link' if kind == 'link' else 'journal'} {fields!r:.120}"
    rc, _, _ = _outcome(tally, what, [*argv, "--resume"], (2,) if kind == "link" else (0,),
                        named=str(jpath))
    expected = Path(APPLY_KERNEL).read_bytes().replace(b"expf(", b"__expf(")
    mirror_ok = kind == "link" or all((out / n).read_bytes() == expected
                                      for n in ("a.cu", "sub/b.cu"))
    if victim.read_bytes() != b"not a journal\n" or _snapshot(src) != before_src \
            or not mirror_ok or rc is None:
        tally.data_lost += 1
        tally.bad("data lost", f"{what}: a file outside the mirror changed, or the mirror "
                  "is wrong")
    with contextlib.suppress(FileNotFoundError):
        jpath.unlink()


# -- arguments: each value with the status it must give


ARG_CASES: list[tuple[str, list[str], tuple[int, ...]]] = [
    *(("-j", ["batch", "{src}", "--rule", "{rule}", "-q", "-j", v], (2,))
      for v in ("0", "-1", "99999999999999999999", "1025", "1e3", "x", "", "1" * 5000)),
    *(("-j", ["batch", "{src}", "--rule", "{rule}", "-q", "-j", v], (0,)) for v in ("1", "2")),
    *(("-j", ["list", "{kernel}", "-j", v], (2,))
      for v in ("0", "99999999999999999999", "-7", "2048")),
    *(("-j", ["list", "{kernel}", "-j", v], (0, 1)) for v in ("1", "3")),
    *(("--gate-timeout", ["batch", "{src}", "--gate", "-q", "--gate-timeout", v], (2,))
      for v in ("-1", "0", "nan", "inf", "-inf", "1e400", "86401", "x", "")),
    *(("--timeout", ["gate", "{kernel}", "--stages", "compile", "--timeout", v], (2,))
      for v in ("-1", "0", "nan", "inf", "1e999", "abc")),
    *(("-o", ["apply", "{rule}", "{kernel}", "-o", v], (2,)) for v in ("", " ", "\t", "  \n")),
    ("--hole", ["apply", "{holes}", "{kernel}", "--hole", "threads=128", "--hole",
                "threads=256"], (2,)),
    ("--hole", ["apply", "{holes}", "{kernel}", "--hole", "?threads=128", "--hole",
                "threads=128"], (2,)),
    ("--hole", ["apply", "{holes}", "{kernel}", "--hole", "threads=" + "9" * 5001], (2,)),
    ("--hole", ["apply", "{holes}", "{kernel}", "--hole", "=1"], (2,)),
]


@st.composite
def arg_inputs(draw: st.DrawFn) -> tuple[str, list[str], tuple[int, ...]]:
    """One argument case; or ``ast --pattern`` nested 1 to 2,000 deep (over 200: status 2),
    or a compile time limit set to a hostile value (status 2)."""
    pick = draw(st.integers(0, 9))
    if pick == 0:
        depth = draw(st.integers(1, 2000))
        opener, closer = draw(st.sampled_from([("(", ")"), ("f(", ")"), ("a[", "]"),
                                               ("{", "}"), ("-(", ")")]))
        pattern = opener * depth + "x" + closer * depth
        return "--pattern", ["ast", "--pattern", pattern], (2,) if depth > 200 else (0, 2)
    if pick == 1:
        value = draw(st.sampled_from(["-1", "0", "nan", "inf", "x", "1e999", "86401"]))
        return "$KLC_COMPILE_TIMEOUT_S=" + value, ["gate", "{kernel}", "--stages",
                                                   "compile"], (2,)
    return draw(st.sampled_from(ARG_CASES))


def judge_args(case: tuple[str, list[str], tuple[int, ...]], tally: Tally,
               workdir: Path) -> None:
    """The command with the value must give the status it must: 2 and a message for a bad
    value (argparse's usage line and error, or klc's one line); nothing written in the
    working folder."""
    option, template, allowed = case
    src = workdir / "asrc"
    if not src.exists():
        src.mkdir()
        (src / "k.cu").write_bytes(Path(APPLY_KERNEL).read_bytes())
    holes = str(ROOT / "skills" / "launch_bounds.rule")
    fill = {"{src}": str(src), "{rule}": APPLY_RULE, "{kernel}": str(src / "k.cu"),
            "{holes}": holes}
    argv = [fill.get(a, a) for a in template]  # (not str.format: a pattern may hold braces)
    before = _snapshot(workdir / "asrc")
    env_key = "KLC_COMPILE_TIMEOUT_S"
    old = os.environ.get(env_key)
    if option.startswith("$"):
        os.environ[env_key] = option.partition("=")[2]
    tally.inputs += 1
    cwd = os.getcwd()
    os.chdir(src)  # (a relative -o would land here)
    try:
        rc, _, err = _outcome(tally, f"{option}: {argv[:8]!r:.160}", argv, allowed)
    finally:
        os.chdir(cwd)
        if old is None:
            os.environ.pop(env_key, None)
        else:
            os.environ[env_key] = old
    if rc == 2 and len([ln for ln in err.splitlines() if "error:" in ln]) != 1:
        tally.wrong_exit += 1
        tally.bad("wrong exit", f"{option}: not one error line: {err[:200]!r}")
    if _snapshot(src) != before:
        tally.data_lost += 1
        tally.bad("data lost", f"{option}: {argv[:8]!r:.160} wrote into the folder")


# -- hole domains


BIG_INTS = st.one_of(st.integers(-(10 ** 60), 10 ** 60), st.integers(0, 10 ** 9),
                     st.sampled_from([0, 1, 2, 10 ** 9, 10 ** 26, 2 ** 63, 2 ** 64 + 1]),
                     st.integers(1, 6000).map(lambda n: int("9" * n) if n <= 4000 else n))


@st.composite
def hole_inputs(draw: st.DrawFn) -> tuple[str, str]:
    """A rule file with one int hole of a hostile domain and default, and a --hole value."""
    def text(v: int) -> str:
        return "9" * v if v > 4000 and v <= 6000 and draw(st.booleans()) else str(v)

    if draw(st.booleans()):
        lo, hi = sorted((draw(BIG_INTS), draw(BIG_INTS)))
        domain = f"{text(lo)}..{text(hi)}"
    else:
        domain = "{" + ", ".join(text(v) for v in draw(st.lists(BIG_INTS, min_size=1,
                                                                max_size=6))) + "}"
    default = draw(st.one_of(st.none(), BIG_INTS.map(text)))
    value = draw(st.one_of(st.none(), BIG_INTS.map(text), st.sampled_from(
        ["", "x", "1.5", "-0", "+7", "0x10", "1" * 5001])))
    rule = ("rule hostile_hole {\n  kind: skill\n  description: \"scale\"\n  context: any\n"
            f"  hole f: int in {domain}" + (f" default {default}" if default else "") + "\n"
            "  anchor: ```\n    expf($X)\n  ```\n  rewrite replace: ```\n"
            "    expf($X * ?f)\n  ```\n}\n")
    return rule, value if value is not None else ""


def judge_holes(case: tuple[str, str], tally: Tally, workdir: Path) -> None:
    """check, apply (with --hole when drawn) and list: statuses 0 to 2, no traceback, under
    the time limit; then search's ranking of the domain, in this process, bounded."""
    rule_text, value = case
    path = workdir / "hole.rule"
    path.write_text(rule_text)
    out = workdir / "hole_out.cu"
    tally.inputs += 1
    for argv in (["check", str(path)],
                 ["apply", str(path), APPLY_KERNEL, "-o", str(out),
                  *(["--hole", f"f={value}"] if value else [])],
                 ["list", "--skills", str(path), APPLY_KERNEL]):
        with contextlib.suppress(FileNotFoundError):
            out.unlink()
        rc, _, _ = _outcome(tally, f"{argv[0]} on {rule_text[90:150]!r}", argv, (0, 1, 2),
                            named=str(path) if argv[0] != "apply" else None)
        if rc not in (0, None) and out.exists():
            tally.data_lost += 1
            tally.bad("data lost", f"{argv[0]} wrote -o and failed")
    from klc.errors import KlcError
    from klc.fill import search
    from klc.rule import load_rules_text

    ranked_values, space_size = search.ranked_values, search.space_size
    bound = getattr(search, "MAX_SEARCHED", 4096)  # (a checkout without it: 4,096)

    try:
        rules = load_rules_text(rule_text, str(path))
    except KlcError:
        return
    tally.runs += 1
    t0 = time.monotonic()
    try:
        r = rules[0]
        values = ranked_values(r, "f", r.holes["f"])
        size = space_size(r)
        if len(values) > max(bound, len(r.holes["f"].values or ())) + 3 \
                or size != len(values):
            tally.wrong_exit += 1
            tally.bad("wrong exit", f"search ranked {len(values)} values of {rule_text[90:150]}")
        else:
            tally.ok += 1
    except Exception as e:
        tally.tracebacks += 1
        tally.bad("traceback", f"search on {rule_text[90:150]!r}: {type(e).__name__}: {e}")
    tally.slowest_s = max(tally.slowest_s, time.monotonic() - t0)


# -- file names


NAME_CHARS = st.one_of(st.sampled_from(["\n", "\r", "\x1b", "\x1b[31m", "\x1b]0;title\x07",
                                        "\x07", "\x08", "\t", "\x0b", "\x7f", "\u202e",
                                        "\u2028", "\x9b", "\u200b", " ", "'", '"', "\\", "$",
                                        "`", "[red]", "%s", ":1:1:", "é"]),
                       st.characters(min_codepoint=1, max_codepoint=0x2FFF,
                                     blacklist_characters="/\x00"))


@st.composite
def name_inputs(draw: st.DrawFn) -> tuple[str, bytes]:
    """A file name with control and format characters, and its bytes (a shipped kernel, or
    something that is not CUDA source, so that the name is in an error)."""
    name = "".join(draw(st.lists(NAME_CHARS, min_size=1, max_size=12)))[:120] + ".cu"
    data = draw(st.sampled_from([Path(APPLY_KERNEL).read_bytes(), b"\0binary\n", b"",
                                 b"__global__ void k( {\n"]))
    return name, data


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def judge_names(case: tuple[str, bytes], tally: Tally, workdir: Path) -> None:
    """parse, list and batch on a file so named: statuses 0 to 2, and what they print holds
    no control or format character but newlines and tabs (a name's ESC, CR or bidi override
    is shown escaped); a name with a newline never appears raw in an error line."""
    name, data = case
    folder = workdir / "names"
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder)
    folder.mkdir()
    try:
        (folder / name).write_bytes(data)
    except OSError:  # a name this file system refuses (too long in bytes)
        return
    tally.inputs += 1
    for argv in (["parse", str(folder / name)], ["list", str(folder)],
                 ["batch", str(folder), "-j", "1", "-q", "--rule", APPLY_RULE]):
        _, out, err = _outcome(tally, f"{argv[0]} on {name!r}", argv, (0, 1, 2))
        bad = _CONTROL.search(out + err)
        if bad or ("\n" in name and name in out + err):
            tally.wrong_exit += 1
            tally.bad("wrong exit", f"{argv[0]} on {name!r}: printed "
                      f"{(bad.group(0) if bad else 'the name raw')!r}")
    if (folder / name).read_bytes() != data:
        tally.data_lost += 1
        tally.bad("data lost", f"the file {name!r} changed")


KIND_RUNS: dict[str, tuple[Any, Any]] = {
    "journal": (journal_inputs(), judge_journal),
    "args": (arg_inputs(), judge_args),
    "holes": (hole_inputs(), judge_holes),
    "names": (name_inputs(), judge_names),
}


_FIELDS = ("inputs", "runs", "ok", "clean_errors", "tracebacks", "hangs", "wrong_exit",
           "data_lost")


def _counts(t: Tally) -> dict[str, float]:
    return {**{k: getattr(t, k) for k in _FIELDS}, "slowest_s": round(t.slowest_s, 2)}


def add(total: Tally, t: Tally) -> None:
    for k in _FIELDS:
        setattr(total, k, getattr(total, k) + getattr(t, k))
    total.slowest_s = max(total.slowest_s, t.slowest_s)
    total.examples += t.examples[: max(0, 12 - len(total.examples))]


def summed(path: Path) -> dict[str, Tally]:
    """The tallies of a --jsonl file, added up per kind."""
    rows: dict[str, Tally] = {}
    for line in path.read_text().splitlines():
        doc = json.loads(line)
        t = Tally(**{k: doc[k] for k in _FIELDS}, slowest_s=doc["slowest_s"],
                  examples=doc["examples"])
        add(rows.setdefault(doc["kind"], Tally()), t)
    return rows


COLUMNS = ("inputs", "runs", "clean errors", "ok (0/1)", "tracebacks", "hangs",
           "wrong exit codes", "data lost", "slowest s")


def table(rows: dict[str, Tally], title: str) -> str:
    lines = [f"### {title}", "", "| kind | " + " | ".join(COLUMNS) + " |",
             "|" + " --- |" * (len(COLUMNS) + 1)]
    for kind, t in rows.items():
        lines.append(f"| {kind} | {t.inputs} | {t.runs} | {t.clean_errors} | {t.ok} | "
                     f"{t.tracebacks} | {t.hangs} | {t.wrong_exit} | {t.data_lost} | "
                     f"{t.slowest_s:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000, help="inputs per kind (default 10000)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="kernel,rule,spec")
    ap.add_argument("--seed", type=int, help="hypothesis seed (default: derandomized)")
    ap.add_argument("--title", default="klc fuzz", help="the table's title")
    ap.add_argument("--chunk", type=int, default=0, metavar="N",
                    help="draw the inputs N at a time, each chunk with its own seed (seed, "
                    "seed + 1, ...), appending each chunk's tally to --jsonl as it ends")
    ap.add_argument("--jsonl", metavar="FILE", help="append each chunk's tally here")
    ap.add_argument("--summarize", metavar="FILE",
                    help="print the table of the tallies in FILE (from --jsonl) and exit")
    args = ap.parse_args(argv)
    if args.summarize:
        rows = summed(Path(args.summarize))
        print(table(rows, args.title))
        return 0
    rows = {}
    for kind in args.kinds.split(","):
        t0 = time.monotonic()
        size = args.chunk or args.count
        total = Tally()
        for i, start in enumerate(range(0, args.count, size)):
            seed = None if args.seed is None else args.seed + i
            t = fuzz(kind, min(size, args.count - start), seed)
            add(total, t)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps({"kind": kind, "seed": seed, **_counts(t),
                                        "examples": t.examples}) + "\n")
        rows[kind] = t = total
        print(f"{kind}: {t.inputs} inputs, {t.runs} runs in {time.monotonic() - t0:.0f} s",
              file=sys.stderr, flush=True)
        for example in t.examples:
            print(f"  {example}", file=sys.stderr)
    print(table(rows, args.title))
    bad = sum(t.tracebacks + t.hangs + t.wrong_exit + t.data_lost for t in rows.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
