"""Fuzz klc's commands with mutated kernels, rules and spec blocks.

Each input is a seed (a shipped kernel, a skill file, a kernel's klc-spec block) mutated by a
list of edits that hypothesis draws: delete, duplicate or swap a slice, insert a token from a
hostile dictionary (control bytes, a byte-order mark, comment ends, YAML tags and merge keys,
huge and NaN numbers, deep nesting...), overwrite bytes at random, truncate. Every input is run
in this process through ``klc.cli.main``:

- a kernel: ``parse``, ``list``, ``apply`` (a skill, to ``-o``), ``gate --stages compile``;
- a rule file: ``check``, ``apply`` (the rule on a shipped kernel, to ``-o``), ``list --skills``;
- a spec block (in a shipped kernel): ``parse``, ``list``, ``gate --stages compile``.

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
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("kernel", "rule", "spec")
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

        @settings(max_examples=count, deadline=None, database=None, derandomize=seed is None,
                  suppress_health_check=list(HealthCheck), phases=[
                      __import__("hypothesis").Phase.generate])
        @given(inputs(kind))
        def run(case: tuple[bytes, bool]) -> None:
            judge(kind, case[0], tally, workdir, expect=case[1])

        if seed is not None:
            run = __import__("hypothesis").seed(seed)(run)
        run()
    return tally


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
