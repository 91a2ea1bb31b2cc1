"""Front-end speed and robustness over a folder of CUDA sources.

    python bench/parse_bench.py [DIR] [--repeat 3]
    python bench/parse_bench.py [DIR] --count [--every 10]   # instructions, by valgrind

Parses every .cu/.cuh under DIR (default: the front end's test corpus) in the same run, the
columns interleaved: a bare tree-sitter-cuda parse of the bytes; klc's front end
(``parse_bytes``: the masking/recovery step, the query pass); the front end with the model
``klc parse`` prints; and ``klc parse`` itself, in text and with ``--json`` (the command's own
function, ``klc.commands.parse.show``, fed the bytes, its output and messages sent to a null
sink). Each column is timed in CPU seconds of this process (``time.process_time``: the work
is single-threaded, and on a shared machine the CPU time moves far less than the wall
clock), the runs of the columns interleaved and the best of ``--repeat`` kept. It prints the
files, megabytes, files/s and MB/s, each column's time as a ratio to the bare parse (target
for the front end and for the command: at most 1.5x), the share of files left with zero
syntax errors (and how many had errors before the recovery step), the share of __global__
kernels that are analyzable, and whether libclang was loaded (it must not be: facts are
built only when asked). Reading the files is not timed. It prints; it asserts nothing.

``--count`` counts each column's instructions instead, the steadiest figure to compare two
commits by: one process under valgrind's callgrind reads every ``--every``-th file (10th
when not given), runs every column once (imports, compiled queries), then each once more,
and only those runs are counted, one count per column.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.callgrind import count_calls  # noqa: E402

DEFAULT_DIR = REPO / "tests" / "data" / "frontend"


def collect(root: Path) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The readable sources under ``root`` and the messages of those refused."""
    from klc.cuda.parse import SOURCE_SUFFIXES, read_source
    from klc.errors import KlcError

    files, refused = [], []
    for p in sorted(root.rglob("*")):
        if p.suffix in SOURCE_SUFFIXES and p.is_file():
            try:
                files.append((str(p), read_source(p)))
            except KlcError as e:
                refused.append(str(e))
    return files, refused


def best_times(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """The fastest of ``repeat`` runs of each function in CPU seconds of this process, the
    runs interleaved, so that a burst of load on the machine does not fall on one side of the
    comparison only."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - t0)
    return best


COLUMNS = ("bare", "front", "model", "text", "json")
NAMES = {"bare": "bare tree-sitter parse", "front": "klc front end",
         "model": "front end + model", "text": "klc parse (text output)",
         "json": "klc parse --json"}
def count(root: Path, every: int) -> int:
    """Each column's instructions (``--count``), by valgrind's callgrind (``bench.callgrind``):
    one process, which reads the files, runs every column once, then runs each once more
    counted."""
    got = count_calls([__file__, str(root), "--every", str(every), "--counted"], len(COLUMNS),
                      "parse_bench")
    if got is None:
        return 2
    counts, printed = got
    by = dict(zip(COLUMNS, counts, strict=True))
    print(f"directory                 {root}  (every {every}th file: {printed.strip()})")
    print("counted                   instructions (valgrind's callgrind), one run of each")
    for c in COLUMNS:
        print(f"{NAMES[c]:<24}  {by[c]:>15,}  {by[c] / by['bare']:.2f}x the bare parse")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", metavar="DIR", help="folder of .cu/.cuh files")
    ap.add_argument("--dir", dest="dir_opt", metavar="DIR", help="same as DIR")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each (best is kept)")
    ap.add_argument("--count", action="store_true",
                    help="count each column's instructions under valgrind's callgrind")
    ap.add_argument("--every", type=int, metavar="N",
                    help="only every N-th file (sorted by path); --count: 10 when not given")
    ap.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)  # (--count's)
    args = ap.parse_args(argv)
    root = Path(args.dir or args.dir_opt or DEFAULT_DIR)
    if not root.is_dir():
        print(f"parse_bench: {root}: not a directory", file=sys.stderr)
        return 2
    if args.every is None:
        args.every = 10 if args.count else 1
    if args.every < 1 or args.repeat < 1:
        print("parse_bench: --every and --repeat take a number of 1 or more", file=sys.stderr)
        return 2
    if args.count and not args.counted:
        return count(root, args.every)

    from klc.commands.parse import show
    from klc.cuda.parse import parse_bytes
    from klc.cuda.syntax import parser

    files, refused = collect(root)
    files = files[::args.every]
    if not files:
        print(f"parse_bench: {root}: no readable .cu/.cuh files", file=sys.stderr)
        return 2
    sources = [data for _, data in files]
    mb = sum(map(len, sources)) / 1e6

    # each result is dropped at once, as ``klc parse`` does file by file: keeping a thousand
    # models alive would time Python's garbage collector walking them, not the front end
    def bare() -> None:
        p = parser()
        for s in sources:
            p.parse(s)

    def front() -> None:
        for path, s in files:
            parse_bytes(s, path)

    def model() -> None:  # what ``klc parse`` prints: the functions, launches and the rest
        for path, s in files:
            parse_bytes(s, path).unanalyzable  # noqa: B018 (builds the model)

    def command(as_json: bool) -> Callable[[], None]:
        """``klc parse`` itself (``--json`` or text), its output and messages to a null
        sink: the command's own function, fed the bytes already read."""
        def timed() -> None:
            with open(os.devnull, "w") as null, redirect_stdout(null), redirect_stderr(null):
                show((parse_bytes(s, path) for path, s in files), as_json=as_json)
        return timed

    text, as_json = command(False), command(True)
    bare(), front(), model(), text(), as_json()  # warm up: imports, query compilation, caches
    if args.counted:  # each column once more, counted (--count runs this under valgrind)
        for fn in (bare, front, model, text, as_json):
            sys.call_tracing(fn, ())
        print(f"{len(files)} files, {mb:.2f} MB")
        return 0
    t_bare, t_front, t_model, t_text, t_json = best_times(
        [bare, front, model, text, as_json], args.repeat)

    raw_errors = sum(1 for s in sources if parser().parse(s).root_node.has_error)
    units = [parse_bytes(s, path) for path, s in files]
    clean = sum(1 for u in units if not u.problems)
    modeled = sum(len(u.kernels) for u in units)
    broken = sum(len(u.unanalyzable) for u in units)
    not_analyzable_modeled = sum(1 for u in units for k in u.kernels if not k.analyzable)
    analyzable = modeled - not_analyzable_modeled
    kernels = analyzable + broken
    n = len(files)

    rows = [
        ("directory", str(root) + (f"  (every {args.every}th file)" if args.every > 1 else "")),
        ("timing", f"process CPU time, best of {args.repeat}, the columns interleaved"),
        ("files", f"{n}" + (f" (+{len(refused)} refused: not source text)" if refused else "")),
        ("megabytes", f"{mb:.2f}"),
        ("bare tree-sitter parse", f"{t_bare:.3f} s  {n / t_bare:8.1f} files/s  "
                                   f"{mb / t_bare:6.2f} MB/s"),
        ("klc front end", f"{t_front:.3f} s  {n / t_front:8.1f} files/s  "
                          f"{mb / t_front:6.2f} MB/s"),
        ("front end / bare parse", f"{t_front / t_bare:.2f}x  (target <= 1.5x)"),
        ("front end + model", f"{t_model:.3f} s  {n / t_model:8.1f} files/s  "
                              f"{t_model / t_bare:.2f}x the bare parse"),
        ("klc parse (text output)", f"{t_text:.3f} s  {n / t_text:8.1f} files/s  "
                                    f"{t_text / t_bare:.2f}x the bare parse  (target <= 1.5x)"),
        ("klc parse --json", f"{t_json:.3f} s  {n / t_json:8.1f} files/s  "
                             f"{t_json / t_bare:.2f}x the bare parse  (target <= 1.5x)"),
        ("files with zero syntax errors", f"{clean}/{n} = {100 * clean / n:.1f}%  "
                                          f"(before recovery: {n - raw_errors}/{n})"),
        ("__global__ kernels analyzable", f"{analyzable}/{kernels} = "
                                          f"{100 * analyzable / max(kernels, 1):.1f}%"),
        ("libclang loaded", "yes" if "clang.cindex" in sys.modules else "no"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    for u in units:
        for bad in u.unanalyzable:
            print(f"  not analyzable: {u.path}:{bad.line}:{bad.col}: {bad.name}: {bad.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
