"""The batch driver: plan, walk, resume, run the executor, write each result atomically,
then journal it (see :mod:`klc.batch`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.batch.config import (
    _HELD,
    ERROR,
    MODES,
    REWRITTEN,
    SOURCE_SUFFIXES,
    TMP_SUFFIX,
    WRITE_MODES,
    BatchConfig,
    BatchOptions,
    BatchSummary,
    FileResult,
    check_gate_stages,
)
from klc.batch.journal import Journal, _done_before, _sweep_temporaries
from klc.batch.local import LocalExecutor, discover_gpus
from klc.batch.ray import RayExecutor
from klc.batch.walk import Source, _excluded, _inside, plan_sources
from klc.batch.worker import _read, _rules_for, _sha, optimizer
from klc.content import json_sha256
from klc.errors import KlcError, shown
from klc.interrupts import sigint_guard

if TYPE_CHECKING:
    pass

# The driver


def make_executor(options: BatchOptions, config: BatchConfig) -> LocalExecutor | RayExecutor:
    if options.executor == "ray":
        return RayExecutor(options.address, jobs=options.jobs)
    if options.executor != "local":
        raise KlcError(f"--executor {options.executor}: expected local or ray")
    gpus = options.gpus
    if gpus is None:
        gpus = discover_gpus() if (config.gate or config.optimize) else []
    return LocalExecutor(options.jobs, gpus)


def run_batch(config: BatchConfig, options: BatchOptions,
              on_start: Callable[[int], None] | None = None,
              on_result: Callable[[FileResult], None] | None = None) -> BatchSummary:
    """Run a batch; returns every file's result. Problems with the batch itself (rules, an
    output folder inside an input, no such input) raise KlcError before any file is
    touched; problems with a file are that file's result. ``on_start(total)`` is called
    once the files are known, ``on_result`` for each file as it finishes (progress)."""
    t0 = time.monotonic()
    if options.mode not in MODES:
        raise KlcError(f"unknown batch mode {options.mode!r}")
    if options.resume and options.mode not in WRITE_MODES:
        raise KlcError("--resume continues a batch that writes files: give --out DIR or "
                       "--in-place")
    if options.jobs < 1:
        raise KlcError(f"-j {options.jobs}: give at least one job")
    _rules_for(config)  # a rule file that fails to load stops everything here
    if options.executor == "local":  # (a Ray cluster's GPUs are on its nodes: each file's
        check_gate_stages(config)  # gate refuses a stage it cannot run, klc.batch.worker)
    if config.optimize:
        optimizer()
    sources, results = plan_sources(options)
    executor = make_executor(options, config)
    executor.start()
    with sigint_guard():  # a second Ctrl-C must not break the cleanup of the first
        try:
            if isinstance(executor, LocalExecutor) and sources:
                executor.prefork(config, want_diff=options.mode == "diff" or options.diffs,
                                 send_unchanged=options.mode == "out")
            return _drive(config, options, executor, sources, results, t0, on_start,
                          on_result)
        finally:
            executor.stop()


def _drive(config: BatchConfig, options: BatchOptions, executor: LocalExecutor | RayExecutor,
           sources: list[Source], results: list[FileResult], t0: float,
           on_start: Callable[[int], None] | None,
           on_result: Callable[[FileResult], None] | None) -> BatchSummary:
    walk_failures = len(results)
    digest = config.digest()
    mode_digest = json_sha256(
        [digest, options.mode, os.path.realpath(options.out_dir) if options.out_dir else None]
    )[:24]
    summary = BatchSummary(results, digest, executor=executor.name, jobs=options.jobs)
    if isinstance(executor, LocalExecutor):
        summary.gpus = len(executor.gpus) if (config.gate or config.optimize) else 0
    journal: Journal | None = None
    jpath = options.journal_path()
    todo = sources
    if jpath is not None:
        journal = Journal(jpath, mode_digest)
        if options.out_dir:
            Path(options.out_dir).mkdir(parents=True, exist_ok=True)
        entries = journal.read() if options.resume else {}
        if options.resume and not entries:
            summary.notes.append(
                f"{jpath}: no journal of this configuration (rules, options, output) to resume "
                "from; every file is done" if journal.other == 0 else
                f"{jpath}: the journal was written by another configuration (rules, options or "
                "output changed); every file is done again")
        if journal.unreadable:
            summary.notes.append(
                f"{shown(jpath)}: {journal.unreadable} line(s) are not journal entries (torn by "
                "a kill, or edited: a field missing or of the wrong type); skipped, those files "
                "are done again")
        journal.open(fresh=not options.resume)
        if options.resume:
            _sweep_temporaries(os.path.dirname(s.dest) for s in sources if s.dest)
            todo = []
            for src in sources:
                prior = _done_before(entries.get(src.real), src, options.mode, journal)
                if prior is None:
                    todo.append(src)
                else:
                    results.append(prior)
                    summary.resumed += 1
    if on_start is not None:
        on_start(len(sources) + walk_failures)
    if on_result is not None:
        for r in list(summary.results):
            on_result(r)

    def finished(src: Source, res: FileResult) -> None:
        if options.mode in WRITE_MODES and res.output is not None:
            _write(src, res, options.mode, journal, options.out_dir)
        if journal is not None:
            journal.append({"key": src.real, "phase": "done", "input_sha": res.input_sha,
                            "output_sha": res.output_sha, "result": res.to_json()})
        res.output = res.original = None
        results.append(res)
        if on_result is not None:
            on_result(res)

    writer = _Writer(finished)
    try:
        run_config = share_budget(config, executor, todo, summary) if config.optimize \
            else config
        executor.run(run_config, todo, writer.put,
                     want_diff=options.mode == "diff" or options.diffs,
                     send_unchanged=options.mode == "out")
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        writer.close()  # what was handed over is complete: it is written, then journaled
        if journal is not None:
            journal.close()
    if isinstance(executor, RayExecutor):
        summary.gpus = executor.gpus if (config.gate or config.optimize) else 0
    if options.mode == "out" and not summary.interrupted:
        copied, unchanged, skipped = copy_rest(options)
        note = (f"copied {copied} other file(s) of the tree (headers, build files) into "
                f"{options.out_dir}" + (f", {unchanged} already there" if unchanged else ""))
        if copied or unchanged:
            summary.notes.append(note)
        # a file of the tree that is not in the mirror leaves it incomplete: a failure
        summary.copy_failures = skipped
    held = _HELD.get(config.digest())
    if held:
        summary.notes.append(
            f"not applied without --gate: {', '.join(held)} (they change results; name them "
            "with --rule FILE or --only NAME to apply them ungated)")
    summary.results.sort(key=lambda r: r.path)
    summary.elapsed_s = time.monotonic() - t0
    return summary


def share_budget(config: BatchConfig, executor: LocalExecutor | RayExecutor,
                 todo: list[Source], summary: BatchSummary) -> BatchConfig:
    """``--optimize``: one budget of gate trials shared between the files by headroom
    (``klc.optimize.headroom.split_budget``). A first pass gates each original against
    itself (``klc.optimize.probe``: optimize's own baseline run, so the second pass finds it
    in the gate cache) for its % of SOL; the trials it spent come out of the budget, and the
    rest is split, more to the files further from the speed-of-light floor. The budget is
    ``total_budget`` (``--total-budget``; less what resumed files spent) or ``budget`` per
    file (``--budget``, default the optimizer's) times the files to do. Where no file's
    headroom could be measured (no GPU, no spec) and no total was given, each file keeps the
    per-file budget. Returns the configuration of the second pass (``budget_by_file``)."""
    from dataclasses import replace

    try:
        from klc.optimize import OptimizeOptions, probe  # noqa: F401  (the optimizer's probe)
        from klc.optimize.headroom import split_budget
    except ImportError:  # an optimizer without a probe: each file its own budget
        return config
    opts = dict(config.optimize_options)
    if not todo:
        return config
    defaults = OptimizeOptions()
    per_file = int(opts.get("budget") or defaults.budget)
    target = float(opts.get("target_sol") or defaults.target_sol)
    explicit = opts.get("total_budget")
    if explicit is not None:
        done = sum(int((r.optimize or {}).get("trials_used") or 0) for r in summary.results)
        total = max(0, int(explicit) - done)
    else:
        total = per_file * len(todo)
    found: dict[str, dict[str, Any]] = {}

    def keep(src: Source, res: FileResult) -> None:
        found[src.path] = dict((res.optimize or {}).get("probe") or {})

    # local workers without a GPU measure nothing (unless the options force the GPU mode):
    # no first pass, no process started for it
    blind = isinstance(executor, LocalExecutor) and not executor.gpus \
        and opts.get("gpu") is not True
    if not blind:
        executor.run(replace(config, optimize_options=(*config.optimize_options,
                                                       ("probe", True))),
                     todo, keep, want_diff=False, send_unchanged=False)
    pct = {s.path: found.get(s.path, {}).get("pct_of_sol") for s in todo}
    spent = sum(int(p.get("spent") or 0) for p in found.values())
    if explicit is None and all(v is None for v in pct.values()):
        return config
    shares = split_budget(max(0, total - spent), pct, target)
    most = max(shares, key=lambda f: (shares[f], f))
    where = f"{pct[most]:.0f}% of SOL" if pct[most] is not None else "headroom unknown"
    summary.notes.append(
        f"--optimize: {total} gate trials shared by headroom: {spent} gated the originals "
        f"(their % of SOL), {sum(shares.values())} split over {len(todo)} file(s); the most, "
        f"{shares[most]}, to {most} ({where}); "
        f"{sum(1 for v in shares.values() if v == 0)} file(s) got none")
    return replace(config, optimize_options=(
        *config.optimize_options, ("budget_by_file", tuple(sorted(shares.items())))))


def copy_rest(options: BatchOptions) -> tuple[int, int, list[str]]:
    """``--out``: copy the files of each input folder that are not CUDA sources (headers,
    ``CMakeLists.txt``, data) into the mirror, so that the output tree builds as the input
    does. The walk is the batch's: hidden folders and ``--exclude`` globs are skipped, links
    are followed once (a loop is not entered again), only regular files are copied, each
    atomically (temporary file, fsync, rename) and only when the mirror's copy differs
    (size and modification time). A destination whose folder resolves outside the output
    folder (a link planted there) is refused, not followed. Returns (copied, already there,
    what was not copied and why)."""
    import filecmp

    from klc.fsutil import atomic_write

    assert options.out_dir is not None
    multi = len(options.roots) > 1
    copied = unchanged = 0
    skipped: list[str] = []
    for root in options.roots:
        if not os.path.isdir(root):
            continue
        base = os.path.join(options.out_dir, os.path.basename(os.path.normpath(root))) \
            if multi else options.out_dir
        seen: set[tuple[int, int]] = set()
        for folder, dirs, files in os.walk(root, followlinks=True):
            try:
                st = os.stat(folder)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            rel_dir = os.path.relpath(folder, root)
            rel_dir = "" if rel_dir == "." else rel_dir
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _excluded(
                f"{rel_dir}/{d}" if rel_dir else d, d, options.exclude))
            for name in sorted(files):
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if name.endswith(SOURCE_SUFFIXES) or name.endswith(TMP_SUFFIX) \
                        or _excluded(rel, name, options.exclude):
                    continue
                src = os.path.join(folder, name)
                dest = os.path.join(base, rel)
                if not os.path.isfile(src):
                    skipped.append(f"{src}: not a regular file (or a broken link)")
                    continue
                if not _inside(os.path.dirname(dest), options.out_dir):  # before any mkdir
                    skipped.append(f"{dest}: its folder leads outside {options.out_dir}")
                    continue
                try:
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    if os.path.isfile(dest) and not os.path.islink(dest) \
                            and filecmp.cmp(src, dest, shallow=True):
                        unchanged += 1
                        continue
                    with open(src, "rb") as fin:  # (links out, non-regular targets refused)
                        atomic_write(dest, fin, inside=options.out_dir)
                    shutil.copystat(src, dest)  # mode, and the times the next run compares
                    copied += 1
                except KlcError as e:
                    skipped.append(str(e))
                except OSError as e:
                    skipped.append(f"{dest}: {e.strerror or e}")
    return copied, unchanged, skipped


class _Writer:
    """The driver's one writing thread: files and journal lines in the order results
    arrive, so that the fsyncs overlap the work instead of stalling it. A Ctrl-C reaches the
    main thread only; ``close`` then finishes what was handed over, never half a write."""

    def __init__(self, handle: Callable[[Source, FileResult], None]) -> None:
        import queue
        import threading

        self._handle = handle
        self._queue: queue.Queue[tuple[Source, FileResult] | None] = queue.Queue(maxsize=512)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="klc-batch-writer",
                                        daemon=True)
        try:
            self._thread.start()
        except RuntimeError as e:  # "can't start new thread": a limit on threads
            raise KlcError(f"cannot start the batch's writing thread ({e}: a limit on "
                           "processes or threads); nothing was written: give a smaller -j"
                           ) from None

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._error is None:
                try:
                    self._handle(*item)
                except BaseException as e:  # re-raised on the main thread by close()
                    self._error = e

    def put(self, src: Source, res: FileResult) -> None:
        if self._error is not None:
            self.close()
        self._queue.put((src, res))

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def _write(src: Source, res: FileResult, mode: str, journal: Journal | None,
           out_dir: str | None = None) -> None:
    """Write one result atomically. In place, the file must still hold the bytes that were
    read (else someone changed it meanwhile: it is left alone, and that is the result), and
    have no other hard link. With --out, nothing is written (not even a folder made) where a
    symbolic link already in the output folder leads out of it."""
    from klc.fsutil import atomic_write

    assert src.dest is not None and res.output is not None
    try:
        if mode == "in_place":
            if res.status != REWRITTEN:
                return
            if _sha(_read(src.dest)) != res.input_sha:
                res.status, res.output_sha = ERROR, ""
                res.reason = f"{shown(src.path)}: changed on disk during the batch; left as it is"
                return
            if journal is not None:
                journal.append({"key": src.real, "phase": "begin", "input_sha": res.input_sha,
                                "output_sha": res.output_sha, "result": res.to_json()})
        elif out_dir is not None:
            real, root = os.path.realpath(src.dest), os.path.realpath(out_dir)
            if os.path.commonpath([real, root]) != root:
                raise KlcError(f"{shown(src.dest)}: a symbolic link in the output folder leads "
                               f"out of it (to {shown(real)}); not written")
            os.makedirs(os.path.dirname(src.dest) or ".", exist_ok=True)
        else:
            os.makedirs(os.path.dirname(src.dest) or ".", exist_ok=True)
        atomic_write(src.dest, res.output, in_place=mode == "in_place",
                     inside=out_dir if mode != "in_place" else None)
    except (KlcError, OSError) as e:
        res.status, res.output_sha = ERROR, ""
        res.reason = str(e) if isinstance(e, KlcError) else f"{shown(src.dest)}: cannot write: {e}"


def iter_failures(summary: BatchSummary) -> Iterator[FileResult]:
    return (r for r in summary.results if r.failed)
