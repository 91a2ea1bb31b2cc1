"""``klc list`` over many files: which rules apply where, file by file, in worker processes.

Each worker loads the rules once and parses each file once; a result is plain JSON (the
``site_json`` of every site), so that nothing but text crosses a process boundary. Results
come back in the order of the files, whatever the number of workers.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from klc.batch.list_cache import ListCache, code_digest, default_dir, digest
from klc.batch.walk import walk
from klc.errors import KlcError, where
from klc.interrupts import tune_gc


class SiteRow(NamedTuple):
    """What ``klc list`` prints of a site (the rest is the rule's: its location, intent,
    verdict and holes): a few plain values, cheap to make and to send between processes."""

    rule: str
    line: int
    col: int
    function: str
    applicable: bool
    why_not: str
    # the hole values the site's geometry fixes, a line each: "tile=32\nt=unsigned char"
    fixed: str = ""
    # the rules that rewrite this site's code the same way, folded into it (klc list)
    also: tuple[str, ...] = ()


@dataclass
class FileListing:
    """The sites of one file (every one with ``all``; else the applicable ones), or why the
    file could not be listed: as JSON (``site_json``), or as rows for the text listing."""

    path: str
    sites: list[dict[str, Any]] = field(default_factory=list)
    refused: int = 0  # matches whose context or guards failed
    error: str = ""
    rows: list[SiteRow] = field(default_factory=list)
    # the listing as the text command prints it, made in the worker (``render``): styled
    # pieces for a terminal, or the plain text for a pipe or a file
    pieces: list[tuple[str, str]] = field(default_factory=list)
    text: str = ""
    n_rules: int = 0
    # syntax problems left after recovery (file:line:col: ...): the rest of the file is
    # listed, and the command exits 2 as ``klc parse`` does for the same file
    problems: list[str] = field(default_factory=list)


_STATE: dict[str, Any] = {}


def _init(rule_paths: list[str], tree_only: bool, show_all: bool,
          json_sites: bool = True, render: str = "", refused: bool = True,
          cache: ListCache | None = None) -> None:
    """A worker's (or this process's) state for listing: the rules (a forked worker has its
    parent's, loaded and compiled), the options, the result cache."""
    from klc import plugins
    from klc.rule import RuleSet

    if _STATE.get("rule_paths") != rule_paths:
        plugins.load()
        _STATE["rules"] = list(RuleSet.load(rule_paths).rules)
        _STATE["rule_paths"] = list(rule_paths)
    _STATE["clang"] = not tree_only
    _STATE["all"] = show_all
    _STATE["refused"] = show_all or refused
    _STATE["json"] = json_sites
    _STATE["render"] = render
    _STATE["cache"] = cache
    _STATE.pop("info", None)
    tune_gc()


def _rules_digest(rules: list[Any]) -> bytes:
    """What a listing reads of the rules: their files' bytes, the measurements beside them
    (a card's verdict), the names in order, and what the listing prints of each."""
    parts: list[bytes] = []
    folders: dict[str, None] = {}
    for path in dict.fromkeys(str(r.path) for r in rules):
        parts += [path.encode(), _read(path)]
        folders.setdefault(os.path.dirname(path))
    for folder in folders:
        parts.append(_read(os.path.join(folder, "measurements.json")))
    parts += [" ".join(r.name for r in rules).encode(),
              json.dumps(_rule_info(), sort_keys=True).encode()]
    return digest(parts).encode()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b"\0<none>"


def _open_cache(cache: ListCache | bool | None, options: tuple[object, ...]
                ) -> ListCache | None:
    """The result cache for this run: ``True`` for the default folder (None where it is
    turned off), a ``ListCache`` folder whose key context is made for these rules and
    options, or None."""
    if cache is None or cache is False:
        return None
    root = default_dir() if cache is True else cache.root
    if root is None:
        return None
    context = digest((_rules_digest(_STATE["rules"]), repr(options).encode(),
                      code_digest().encode()))
    return ListCache(root, context)


def _load(rule_paths: list[str]) -> None:
    """Load (and so check) the rules and compile their anchors in this process, before any
    worker is forked: the workers start with them."""
    from klc import plugins
    from klc.match import pattern_of
    from klc.rule import RuleSet

    plugins.load()
    rules = list(RuleSet.load(rule_paths).rules)  # a broken rule stops everything before any file
    for r in rules:
        pattern_of(r)
    _STATE["rules"] = rules
    _STATE["rule_paths"] = list(rule_paths)


def _to_json(listing: FileListing) -> dict[str, Any]:
    return {"path": listing.path, "sites": listing.sites, "refused": listing.refused,
            "error": listing.error, "rows": [list(r) for r in listing.rows],
            "pieces": [list(p) for p in listing.pieces], "text": listing.text,
            "n_rules": listing.n_rules, "problems": listing.problems}


def _from_json(data: dict[str, Any]) -> FileListing:
    """``_to_json``'s inverse; KeyError, TypeError or ValueError on anything else."""
    listing = FileListing(
        str(data["path"]), list(data["sites"]), int(data["refused"]), str(data["error"]),
        [SiteRow(*r) for r in data["rows"]], [(str(a), str(b)) for a, b in data["pieces"]],
        str(data["text"]), int(data["n_rules"]), [str(p) for p in data["problems"]])
    if not all(isinstance(s, dict) for s in listing.sites):
        raise TypeError("a site is not an object")
    return listing


def list_file(path: str, look: bool = True) -> FileListing:
    """One file's listing: from the result cache when it holds one for these bytes (and
    rules, options, klc), else made and stored. ``look`` off: the cache is known to lack
    it (a worker's file: ``list_paths`` looked)."""
    listing, source, key = _stored(path, look)
    if listing is not None:
        return listing
    listing = _list_source(path, source)
    store = _STATE.get("cache")
    if store is not None and not listing.error:
        store.put(key, _to_json(listing))
    return listing


def _stored(path: str, look: bool = True) -> tuple[FileListing | None, bytes, str]:
    """A file's listing where it needs no listing (the result cache holds it, ``look``, or
    the file cannot be read: said in the listing), else None; the file's bytes and its
    cache key."""
    from klc.cuda.parse import read_source

    try:
        source = read_source(path)
    except KlcError as e:
        return FileListing(path, error=str(e)), b"", ""
    store = _STATE.get("cache")
    if store is None:
        return None, source, ""
    key = store.key(path, source)
    data = store.get(key) if look else None
    if data is not None:
        try:
            listing = _from_json(data)
        except (KeyError, TypeError, ValueError):
            listing = None  # (an entry of another layout: made again)
        if listing is not None and listing.path == path:
            return listing, source, key
    return None, source, key


def _list_source(path: str, source: bytes) -> FileListing:
    from klc.cuda.parse import parse_bytes

    try:
        unit = parse_bytes(source, path)
    except KlcError as e:
        return FileListing(path, error=str(e))
    try:
        return _list_unit(path, unit)
    finally:
        # the memo's answers refer to the unit: let go now, and the unit with it. The file's
        # tree (C memory the collector does not weigh) is then freed at once, unless cycles
        # still hold it (a libclang cursor's objects, a closure of a rule's code): such
        # units are collected every few, which keeps the peak to a few trees. A collection
        # walks everything made since the library was loaded: it is not run for nothing
        unit.memo.clear()
        held = weakref.ref(unit)
        del unit
        if held() is not None:
            _STATE["held"] = count = _STATE.get("held", 0) + 1
            if count % _COLLECT_EVERY == 0:
                gc.collect()


_COLLECT_EVERY = 8


def _list_unit(path: str, unit: Any) -> FileListing:
    from klc.pipeline import find_sites, spec_of
    from klc.report import site_json

    spec_problems = []
    try:
        try:
            spec = spec_of(unit)
        except KlcError as e:  # a broken spec block: said, and the guards that read it
            spec = None        # fail closed (apply and optimize refuse the file)
            spec_problems.append(f"{e} (the klc-spec block is not read: the guards that "
                                 "need it fail closed)")
        sites = find_sites(unit, _STATE["rules"], None, spec, clang=_STATE["clang"],
                           refused=_STATE.get("refused", True))
    except KlcError as e:
        return FileListing(path, error=str(e))
    shown = [s for s in sites if s.ok or _STATE["all"]]
    refused = sum(1 for s in sites if not s.ok)
    problems = [p.describe(unit.path) for p in unit.problems] + spec_problems
    if _STATE.get("json", True):
        return FileListing(path, [site_json(s) for s in shown], refused, problems=problems)
    position = unit.position
    rows = [SiteRow(s.rule.name, *position(s.match.start), s.function_name, s.ok, s.reason,
                    "\n".join(f"{k}={v}" for k, v in s.holes.items()))
            for s in shown]
    listing = FileListing(path, refused=refused, rows=rows, n_rules=len(_STATE["rules"]),
                          problems=problems)
    render = _STATE.get("render", "")
    if render and rows:
        pieces = render_pieces(path, rows, _rule_info())
        listing.rows = []
        if render == "plain":  # (a pipe: the parent writes it as it is)
            listing.text = "".join(piece for piece, _ in pieces).rstrip() + "\n"
        else:
            listing.pieces = pieces
    return listing


# a learned card's verdict (klc.reverse); a slower skill is "when not" knowledge
_VERDICTS = {"faster": ("measured faster", ""), "neutral": ("measured neutral", ""),
             "slower": ("when not: measured slower", "red"),
             "unmeasured": ("not measured yet", "")}


def _rule_info() -> dict[str, tuple[str, str, str, str]]:
    """What a row does not carry, by rule: its location, intent, verdict words and holes."""
    info = _STATE.get("info")
    if info is None:
        info = _STATE["info"] = {
            r.name: (r.location, (r.card.intent or r.description) + (
                " (changes results: see the card's precision)" if r.card.precision else ""),
                r.card.verdict or "", " ".join(f"?{h}" for h in r.holes))
            for r in _STATE["rules"]}
    return info  # type: ignore[no-any-return]


def render_pieces(path: str, rows: list[SiteRow], info: dict[str, tuple[str, str, str, str]]
                  ) -> list[tuple[str, str]]:
    """A file's listing as (text, style) pieces: the location (green when the rule applies,
    yellow when not), the rule in bold, its verdict, location and holes, then its intent or
    why not."""
    pieces: list[tuple[str, str]] = []
    add = pieces.append
    for s in rows:
        location, intent, verdict, holes = info[s.rule]
        if s.fixed:  # ?tile=32: the value this site's launch gives the hole
            # a value with a space (an enum's "unsigned char") is quoted
            fixed = {k: f'"{v}"' if " " in v else v
                     for k, v in (kv.split("=", 1) for kv in s.fixed.split("\n"))}
            holes = " ".join(f"{h}={fixed[h[1:]]}" if h[1:] in fixed else h
                             for h in holes.split())
        loc = where(path, s.line, s.col)
        fn = f" in {s.function}" if s.function else ""
        words = _VERDICTS.get(verdict)
        if s.applicable:
            add((loc, "green"))
            add((f"{fn}: ", ""))
            add((s.rule, "bold"))
            if words:
                add((" ", ""))
                add((f"({words[0]})", words[1]))
            add((f" ({location}) {holes}".rstrip() + "\n", ""))
            if intent:
                add((f"    {intent}\n", ""))
            if s.also:
                add((f"    the same rewrite: {', '.join(s.also)}\n", "dim"))
        else:
            add((loc, "yellow"))
            add((f"{fn}: {s.rule}", ""))
            if words:
                add((" ", ""))
                add((f"({words[0]})", words[1]))
            add((f" ({location}) ", ""))
            add(("not applicable", "red"))
            add((f"\n    why not: {s.why_not}\n", ""))
    return pieces


def _chunk(paths: list[str]) -> list[FileListing]:
    return [list_file(p, look=False) for p in paths]  # (``list_paths`` looked)


def kernel_files(roots: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The .cu/.cuh files under the roots (a file named as a root is taken as is), and
    ``(path, why)`` for what could not be walked."""
    found, problems = walk(roots)
    return [path for _root, path, _rel in found], problems


def list_paths(paths: list[str], rule_paths: list[str], *, show_all: bool = False,
               tree_only: bool = False, jobs: int | None = 1, json_sites: bool = True,
               render: str = "", cache: ListCache | bool | None = True
               ) -> Iterator[FileListing]:
    """Every file's listing, in the order of ``paths``; ``jobs`` worker processes (1: in this
    process; None: as many as the files' bytes pay for, ``auto_jobs``). Rules are loaded
    (and checked) before any file is read. ``json_sites``: each
    site as ``site_json`` (else as a ``SiteRow``, in ``rows``). ``render`` ("styled" or
    "plain", with ``json_sites`` off): the worker renders the rows as ``klc list`` prints
    them, into ``pieces`` or ``text`` (then ``rows`` is left empty). ``cache``: the result
    cache (``klc.batch.list_cache``; True: the default folder, None: none). With workers,
    what the cache holds is read here, and only the other files are given to them.

    Without ``show_all``, the refused matches are judged only as far as they need to be to
    know they are refused (``find_sites(refused=False)``): ``refused`` then counts them only
    when one file is listed (the command says how many a file without sites had)."""
    _load(rule_paths)
    refused = show_all or len(paths) == 1
    options = (tree_only, show_all, refused, json_sites, render)
    store = _open_cache(cache, options)
    initargs = (rule_paths, tree_only, show_all, json_sites, render, refused, store)
    _init(*initargs)  # (this process lists what no worker is given)
    if jobs == 1:
        for p in paths:
            yield list_file(p)
        return
    known: dict[int, FileListing] = {}  # what needs no listing: from the cache, or unread
    todo: list[int] = []
    for i, p in enumerate(paths):
        listing = _stored(p)[0] if store is not None else None
        if listing is not None:
            known[i] = listing
        else:
            todo.append(i)
    given = [paths[i] for i in todo]
    workers = min(jobs if jobs is not None else auto_jobs(given), len(given), cpus())
    listed = _in_workers(given, workers, initargs) if workers > 1 else map(list_file, given)
    for i in range(len(paths)):  # (in the order of ``paths``: ``listed`` gives ``todo``'s)
        yield known.pop(i) if i in known else next(listed)


# the source bytes that pay for a worker process: a worker's start (the fork, its first
# task) costs about what listing 0.4 MB does, and the files are shared out by their bytes
BYTES_PER_WORKER = 512 * 1024


def auto_jobs(paths: Sequence[str]) -> int:
    """How many workers list ``paths`` soonest: one per ``BYTES_PER_WORKER`` of their
    source, at least one, at most one per CPU this process may run on. One where workers
    are not forked by default (macOS: a forked process may crash in a system library;
    ``-j N`` still asks for them)."""
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return 1
    return max(1, min(cpus(), sum(map(_size, paths)) // BYTES_PER_WORKER))


def cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _in_workers(paths: list[str], jobs: int, initargs: tuple[Any, ...]
                ) -> Iterator[FileListing]:
    """The listings of ``paths`` made by ``jobs`` forked worker processes, yielded in the
    order of ``paths``. The workers start with what this process loaded (the rules, their
    anchors, the queries the front end runs: ``_warm``), and take the files largest first,
    in chunks of about the same size (``_chunks``), so that they finish together."""
    from concurrent.futures import ProcessPoolExecutor

    _warm()
    chunks = _chunks(paths, jobs)
    done: dict[int, FileListing] = {}
    ready = 0  # the next index of ``paths`` to yield
    with ProcessPoolExecutor(jobs, mp_context=_fork_context(), initializer=_init,
                             initargs=initargs) as pool:
        work = pool.map(_chunk, [[paths[i] for i in c] for c in chunks])
        for indices, results in zip(chunks, work, strict=True):
            done.update(zip(indices, results, strict=True))
            while ready in done:
                yield done.pop(ready)
                ready += 1


def _chunks(paths: list[str], jobs: int) -> list[list[int]]:
    """The indices of ``paths`` in chunks for ``jobs`` workers: the largest files first (a
    large file taken last would leave one worker busy alone at the end), each chunk about
    1/24 of a worker's share of the bytes (a file larger than that alone), at most 16 files
    (a task's cost, a pickle each way, is spread over a few files; the small ones at the end
    keep every worker busy to the end)."""
    sizes = [_size(p) for p in paths]
    order = sorted(range(len(paths)), key=lambda i: -sizes[i])  # (stable: ties in order)
    target = max(1, sum(sizes) // (jobs * 24))
    chunks: list[list[int]] = []
    chunk: list[int] = []
    weight = 0
    for i in order:
        chunk.append(i)
        weight += sizes[i]
        if weight >= target or len(chunk) >= 16:
            chunks.append(chunk)
            chunk, weight = [], 0
    if chunk:
        chunks.append(chunk)
    return chunks


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # (listed as an error, at once)


def _warm() -> None:
    """Compile, before the workers are forked, the query the front end runs on every file
    (the per-type index: its common types and the kinds the library's anchors start at),
    import the modules a listing runs, read the rules' facts and number their runs'
    statements (``klc.match.find.run_elements``): each worker would do it again. What few
    files need (the model's query of a tree with a MISSING token) is left to the worker that
    meets one: the time before the fork is time no worker lists in."""
    import klc.pipeline
    import klc.report  # (imported by the first listing of each worker)
    from klc.cuda.build import index_query
    from klc.match import pattern_of
    from klc.match.find import anchor_words, run_elements
    from klc.site_keys import rule_facts, rule_plans

    plans = rule_plans(_STATE["rules"], _STATE.get("refused", True), klc.pipeline._scope)
    index_query(anchor_words([p.pattern for p in plans if p.target is None]).kinds)
    for r in _STATE["rules"]:
        rule_facts(r)
        klc.pipeline.device_only_names(r)
        pattern = pattern_of(r)
        for branch in pattern.alternatives or (pattern,):
            if branch.is_sequence:
                run_elements(branch)


def loaded_rules() -> list[Any]:
    """The rules the last ``list_paths`` loaded (and checked) in this process, for a caller
    that renders rows itself."""
    return list(_STATE.get("rules", ()))


def _fork_context() -> Any:
    """Fork where the platform has it: the workers start with the rules loaded and their
    anchors compiled (``_load``), paying no start cost per worker."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)
