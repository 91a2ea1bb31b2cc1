"""Batch rewriting of kernel trees: walk, rewrite in parallel, journal, resume, scale out.

    config = BatchConfig.from_paths(["skills"])          # rules read (and checked) once
    summary = run_batch(config, BatchOptions(roots=["src"], mode="out", out_dir="src.klc"))

The package, one module per stage: ``config`` (BatchConfig, BatchOptions, FileResult,
BatchSummary), ``walk``, ``worker`` (one file), ``local`` and ``ray`` (the executors),
``journal``, ``run`` (the driver: ``run_batch``), and ``listing`` (``klc list`` over many
files, in the same worker processes' style). Imports go one way: config <- walk <- worker <-
local, ray <- journal <- run; listing reads walk only.

The stages, in order:

1. plan    - load the rules (a rule file that fails to load stops the batch before any file
             is touched), check hole values, refuse an ``--out`` inside an input tree;
2. walk    - ``.cu``/``.cuh`` files under the roots, sorted, symbolic links followed but never
             round a loop, a file reached twice processed once, ``--exclude`` globs honoured;
3. resume  - with ``--resume``, files the journal records as done for this configuration and
             these input bytes are taken from the journal, not redone;
4. work    - each file, in worker processes (``LocalExecutor``) or Ray tasks
             (``RayExecutor``): read, parse once, apply the rules (or run the forward
             optimizer), gate the candidate against the original. A worker never raises on
             a bad file: it returns a ``FileResult`` whose status says what happened;
5. write   - on the driver only, as results stream back: each file written atomically
             (temporary file + fsync + rename), then one fsync'd line appended to the
             journal. An interrupted batch (Ctrl-C, SIGKILL) thus leaves every file either as
             it was or completely rewritten, and the journal says which.

Workers receive paths (Ray tasks: file bytes, so no shared file system is assumed) and send
back results; each worker process loads the rules once (from their text, carried in the
configuration) and parses each file once. The driver does every write, so a result is on
disk before the journal says so.

The journal is JSON lines. Every line carries the digest of the run's configuration (rule
texts, rule names, holes, gate and optimize options, output mode and folder), the file's
absolute path and the SHA-256 of its input bytes and of the bytes the run leaves for it. With
``--in-place`` a ``begin`` line (with the bytes about to be written) precedes the write and a
``done`` line follows it, so that resume can tell a completed write from one that never
happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# ``walk`` is both a submodule and its function: imported here, the name is the function (as a
# submodule imported later would leave it the module)
from klc.batch.walk import Source, check_out_dir, plan_sources, walk

if TYPE_CHECKING:
    from klc.batch.config import (
        ACCEPTED_GATE_VERDICTS,
        ERROR,
        FAILED,
        GATE_FAILED,
        JOURNAL_NAME,
        MAX_REFUSED,
        MODES,
        PARSE_FAILED,
        REFUSED,
        REWRITTEN,
        SLOWER_MARGIN,
        SOURCE_SUFFIXES,
        STATUSES,
        SUMMARY_LABELS,
        TMP_SUFFIX,
        UNCHANGED,
        WRITE_MODES,
        BatchConfig,
        BatchOptions,
        BatchSummary,
        FileResult,
        check_gate_stages,
    )
    from klc.batch.journal import Journal
    from klc.batch.local import MAX_CHUNK, LocalExecutor, chunks, discover_gpus
    from klc.batch.ray import RayExecutor
    from klc.batch.run import copy_rest, iter_failures, make_executor, run_batch
    from klc.batch.worker import (
        WorkerState,
        compile_check,
        gate_result,
        optimizer,
        process_bytes,
        process_path,
        unified_diff,
    )

# where each other name of the package lives: a submodule is imported on the first use of one
# of its names (``klc list`` imports ``klc.batch.listing`` and none of the batch driver's modules)
_WHERE = {
    **dict.fromkeys(("ACCEPTED_GATE_VERDICTS", "ERROR", "FAILED", "GATE_FAILED",
                     "JOURNAL_NAME", "MAX_REFUSED", "MODES", "PARSE_FAILED", "REFUSED",
                     "REWRITTEN", "SLOWER_MARGIN", "SOURCE_SUFFIXES", "STATUSES",
                     "SUMMARY_LABELS", "TMP_SUFFIX", "UNCHANGED", "WRITE_MODES", "BatchConfig",
                     "BatchOptions", "BatchSummary", "FileResult", "check_gate_stages"),
                    "config"),
    "Journal": "journal",
    **dict.fromkeys(("MAX_CHUNK", "LocalExecutor", "chunks", "discover_gpus"), "local"),
    "RayExecutor": "ray",
    **dict.fromkeys(("copy_rest", "iter_failures", "make_executor", "run_batch"), "run"),
    **dict.fromkeys(("WorkerState", "compile_check", "gate_result", "optimizer",
                     "process_bytes", "process_path", "unified_diff"), "worker"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'klc.batch' has no attribute {name!r}")
    value = getattr(_module(where), name)
    globals()[name] = value
    return value


def _module(where: str) -> Any:
    """The submodule, imported (plain imports: no module is imported by a string)."""
    if where == "config":
        from klc.batch import config as module
    elif where == "journal":
        from klc.batch import journal as module
    elif where == "local":
        from klc.batch import local as module
    elif where == "ray":
        from klc.batch import ray as module
    elif where == "run":
        from klc.batch import run as module
    else:
        from klc.batch import worker as module
    return module


__all__ = [
    "ACCEPTED_GATE_VERDICTS", "ERROR", "FAILED", "GATE_FAILED", "JOURNAL_NAME", "MAX_CHUNK",
    "MAX_REFUSED", "MODES", "PARSE_FAILED", "REFUSED", "REWRITTEN", "SLOWER_MARGIN",
    "SOURCE_SUFFIXES", "STATUSES", "SUMMARY_LABELS", "TMP_SUFFIX", "UNCHANGED", "WRITE_MODES",
    "BatchConfig", "BatchOptions", "BatchSummary", "FileResult", "Journal", "LocalExecutor",
    "RayExecutor", "Source", "WorkerState", "check_gate_stages", "check_out_dir", "chunks",
    "compile_check",
    "copy_rest", "discover_gpus", "gate_result", "iter_failures", "make_executor", "optimizer",
    "plan_sources", "process_bytes", "process_path", "run_batch", "unified_diff", "walk",
]
