"""``klc list`` lists what it listed before its fast paths, byte for byte.

``tests/data/listing/digests.json`` holds, for every kernel of the repository (bench/lineages,
bench/examples, tests/data/frontend), the number of sites, of applicable ones and a digest of
the ``--all --format json`` sites of the file, as the engine listed them before the prefilters,
the applicable-only evaluation and the result cache (skills with libclang; passes with
``--tree-only``). When a rule or a kernel changes on purpose, remake the file with
``python tests/commands/test_listing_identity.py`` and look at the diff.

Beside it, the fast paths are compared with the plain ones on the same kernels: a listing
without ``--all`` is the applicable sites of the ``--all`` listing (it judges only what can
apply), and a listing from the result cache is the listing made afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from klc.batch.listing import kernel_files, list_paths  # noqa: E402

DIGESTS = ROOT / "tests" / "data" / "listing" / "digests.json"
KERNELS = ["bench/lineages", "bench/examples", "tests/data/frontend"]
LIBRARIES = {"skills": (["skills"], False), "passes --tree-only": (["passes"], True)}


def _paths() -> list[str]:
    """The kernels, relative to the repository root (the working folder: the paths and
    the reasons that quote them read as the command's, run from there)."""
    paths, problems = kernel_files(KERNELS)
    assert not problems
    return paths


def _sites(library: str, paths: list[str], **kw: object) -> dict[str, list[dict[str, object]]]:
    rules, tree_only = LIBRARIES[library]
    out: dict[str, list[dict[str, object]]] = {}
    for listing in list_paths(paths, rules, tree_only=tree_only, **kw):  # type: ignore[arg-type]
        assert not listing.error, listing.error
        out[listing.path] = listing.sites
    return out


def digests(sites: dict[str, list[dict[str, object]]]) -> dict[str, str]:
    out = {}
    for path, found in sites.items():
        if not found:
            continue
        h = hashlib.sha256()
        for s in found:
            h.update(json.dumps(s, sort_keys=True).encode() + b"\n")
        out[path] = f"{len(found)} {sum(1 for s in found if s['applicable'])} " \
                    f"{h.hexdigest()[:16]}"
    return out


@pytest.fixture(scope="module")
def paths() -> Iterator[list[str]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        yield _paths()


@pytest.fixture(scope="module")
def listed(paths: list[str], tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, dict[str, list[dict[str, object]]]]:
    """Every library's ``--all`` listing, made afresh (no cache)."""
    return {lib: _sites(lib, paths, show_all=True, cache=None) for lib in LIBRARIES}


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_listing_is_the_listing_of_the_recorded_engine(
        library: str, listed: dict[str, dict[str, list[dict[str, object]]]]) -> None:
    expected = json.loads(DIGESTS.read_text())[library]
    got = digests(listed[library])
    differ = sorted(p for p in set(expected) | set(got) if expected.get(p) != got.get(p))
    assert not differ, f"{len(differ)} files list otherwise, e.g. " + "; ".join(
        f"{p}: {expected.get(p)} -> {got.get(p)}" for p in differ[:5])


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_applicable_listing_is_the_applicable_part_of_the_whole(
        library: str, paths: list[str],
        listed: dict[str, dict[str, list[dict[str, object]]]]) -> None:
    fast = _sites(library, paths, show_all=False, cache=None)
    whole = {p: [s for s in found if s["applicable"]] for p, found in listed[library].items()}
    assert fast == whole
    assert sum(len(v) for v in fast.values()) > 100  # (the kernels do hold applicable sites)


def main() -> None:
    os.chdir(ROOT)
    paths = _paths()
    data = {lib: digests(_sites(lib, paths, show_all=True, cache=None)) for lib in LIBRARIES}
    DIGESTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {DIGESTS}: " + ", ".join(f"{k}: {len(v)} files" for k, v in data.items()))


if __name__ == "__main__":
    main()


def test_cached_listing_is_the_listing_made_afresh(tmp_path: Path) -> None:
    """A second run reads every file's listing from the cache, as it was made; a changed
    file is listed again; a damaged entry is a miss, made and written again; every listing
    mode keys its own entries."""
    from klc.batch.list_cache import ListCache

    work = tmp_path / "k"
    work.mkdir()
    for name in ("saxpy.cu", "sigmoid.cu", "reduce_sum.cu"):
        (work / name).write_bytes((ROOT / "bench" / "examples" / name).read_bytes())
    paths = sorted(str(p) for p in work.iterdir())
    store = ListCache(tmp_path / "cache", "")
    rules = [str(ROOT / "skills")]

    def run(**kw: object) -> list[tuple[str, list[dict[str, object]], str, int]]:
        return [(lst.path, lst.sites, lst.text, lst.refused)
                for lst in list_paths(paths, rules, tree_only=True, **kw)]  # type: ignore[arg-type]

    fresh = run(show_all=True, cache=None)
    assert run(show_all=True, cache=store) == fresh  # made and stored
    entries = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == len(paths)
    stamps = [e.stat().st_mtime_ns for e in entries]
    assert run(show_all=True, cache=store) == fresh  # read back
    assert [e.stat().st_mtime_ns for e in entries] == stamps  # (nothing written again)
    # a text listing is another entry, and reads back as made
    text = run(json_sites=False, render="plain", cache=None)
    assert run(json_sites=False, render="plain", cache=store) == text
    assert run(json_sites=False, render="plain", cache=store) == text
    assert any(t for _, _, t, _ in text)
    # damaged entries: truncated, not JSON, another layout
    entries = sorted((tmp_path / "cache").rglob("*.json"))
    entries[0].write_bytes(entries[0].read_bytes()[:40])
    entries[1].write_bytes(b"\xff\x00 not json")
    entries[2].write_text('{"key": "x", "listing": []}')
    assert run(show_all=True, cache=store) == fresh
    assert run(json_sites=False, render="plain", cache=store) == text
    for e in entries[:3]:
        json.loads(e.read_bytes())  # written again whole
    assert not list((tmp_path / "cache").rglob("*.klc-tmp"))  # (each written whole, renamed)
    # the cache folder removed while the process runs: its entries are written again
    shutil.rmtree(tmp_path / "cache")
    assert run(show_all=True, cache=store) == fresh
    assert len(list((tmp_path / "cache").rglob("*.json"))) == len(paths)
    # a cache folder that cannot be written: the run is listed, uncached
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # (root writes anywhere)
            assert run(show_all=True, cache=ListCache(locked / "c", "")) == fresh
            assert not list(locked.iterdir())
    finally:
        locked.chmod(0o700)
    # a changed file is listed again
    changed = Path(paths[0])
    changed.write_bytes(changed.read_bytes().replace(b"__global__", b"__global__ ", 1))
    assert run(show_all=True, cache=store) == run(show_all=True, cache=None)


def test_listing_in_workers_is_the_listing_in_one_process(paths: list[str]) -> None:
    """``-j 2``: the same listings, in the order of the files."""
    some = paths[::8]
    one = [(lst.path, lst.sites) for lst in list_paths(some, ["skills"], tree_only=True,
                                                        cache=None)]
    two = [(lst.path, lst.sites) for lst in list_paths(some, ["skills"], tree_only=True,
                                                        cache=None, jobs=2)]
    assert one == two
    assert sum(len(s) for _, s in one) > 10


def test_workers_are_given_only_what_the_cache_lacks(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers, the listings the cache holds (and the files that cannot be read) are
    made in this process; the workers list the rest, and the listings come in the order of
    the files, as one process lists them. Where the cache holds every file, no worker is
    started at all."""
    from klc.batch import listing as listing_mod
    from klc.batch.list_cache import ListCache

    work = tmp_path / "k"
    work.mkdir()
    for name in ("saxpy.cu", "sigmoid.cu", "reduce_sum.cu"):
        (work / name).write_bytes((ROOT / "bench" / "examples" / name).read_bytes())
    (work / "saxpy_copy.cu").write_bytes((work / "saxpy.cu").read_bytes())
    paths = [*sorted(str(p) for p in work.iterdir()), str(work / "gone.cu")]
    store = ListCache(tmp_path / "cache", "")
    rules = [str(ROOT / "skills")]

    def run(**kw: object) -> list[tuple[str, list[dict[str, object]], str]]:
        return [(lst.path, lst.sites, lst.error)
                for lst in list_paths(paths, rules, tree_only=True, **kw)]  # type: ignore[arg-type]

    fresh = run(cache=None)
    assert "gone.cu" in fresh[-1][2] and sum(len(s) for _, s, _ in fresh) > 2
    given: list[list[str]] = []
    real = listing_mod._in_workers

    def spy(todo: list[str], jobs: int, initargs: tuple[object, ...]) -> Iterator[object]:
        given.append(list(todo))
        return real(todo, jobs, initargs)

    monkeypatch.setattr(listing_mod, "_in_workers", spy)
    monkeypatch.setattr(listing_mod, "cpus", lambda: 2)
    # two files in the cache: the workers are given the other two (the unreadable one is
    # said here)
    cached = [(lst.path, lst.sites, lst.error) for lst in list_paths(
        paths[:2], rules, tree_only=True, cache=store)]
    assert cached == fresh[:2]
    assert run(cache=store, jobs=2) == fresh
    assert given == [paths[2:4]]
    # every file in the cache: no worker
    given.clear()
    assert run(cache=store, jobs=2) == fresh
    assert given == []


def test_auto_jobs_follow_the_bytes_and_the_cpus(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``jobs=None``: one worker per ``BYTES_PER_WORKER`` of source, one at least, at most
    one per CPU; a few small files are listed in this process; one on macOS."""
    from klc.batch import listing as listing_mod

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform: one process, whatever the bytes")
    step = listing_mod.BYTES_PER_WORKER
    files = []
    for i, size in enumerate((100, step, step, step // 2, 3 * step)):
        f = tmp_path / f"f{i}.cu"
        f.write_bytes(b"\n" * size)
        files.append(str(f))
    monkeypatch.setattr(listing_mod, "cpus", lambda: 4)
    assert listing_mod.auto_jobs(files[:1]) == 1
    assert listing_mod.auto_jobs(files[:2]) == 1  # (one worker's bytes: no second one)
    assert listing_mod.auto_jobs(files[:3]) == 2
    assert listing_mod.auto_jobs(files[:4]) == 2
    assert listing_mod.auto_jobs(files) == 4  # (5.5 workers' bytes, 4 CPUs)
    assert listing_mod.auto_jobs([str(tmp_path / "missing.cu")]) == 1
    monkeypatch.setattr(listing_mod, "cpus", lambda: 1)
    assert listing_mod.auto_jobs(files) == 1
    monkeypatch.setattr(listing_mod, "cpus", lambda: 4)
    monkeypatch.setattr(listing_mod.sys, "platform", "darwin")  # (no fork by default)
    assert listing_mod.auto_jobs(files) == 1


def test_auto_jobs_list_small_files_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``jobs=None`` on a few kernels: no worker is started, and the listing is the
    listing of ``jobs=1``."""
    from klc.batch import listing as listing_mod

    some = [str(ROOT / "bench" / "examples" / n) for n in ("saxpy.cu", "sigmoid.cu")]

    def refuse(*_: object) -> None:
        raise AssertionError("a worker was started for two small files")

    one = [(lst.path, lst.sites) for lst in list_paths(some, ["skills"], tree_only=True,
                                                        cache=None)]
    monkeypatch.setattr(listing_mod, "_in_workers", refuse)
    auto = [(lst.path, lst.sites) for lst in list_paths(some, ["skills"], tree_only=True,
                                                         cache=None, jobs=None)]
    assert auto == one and any(s for _, s in one)
