"""The compiled rule library on disk (``klc.rule.cache``): a load from the cache gives the
rules and anchors a compile gives; an entry that is damaged, of another key, of another
user's making or made to run code is never used, and is replaced by a compile; a rule file
that changes is compiled again; a load that fails is never stored."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from klc import plugins, site_keys
from klc.match import anchor
from klc.match.anchor import pattern_of
from klc.rule import RuleError, RuleSet, load_rules, rule_to_text
from klc.rule import cache as library

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two skill files in a folder of their own, a cache folder of their own, and a process
    that has loaded no library yet (no memo, no anchors taken from an entry)."""
    plugins.load()
    folder = tmp_path / "rules"
    folder.mkdir()
    for name in ("fast_math.rule", "qualifiers.rule"):
        shutil.copy(ROOT / "skills" / name, folder / name)
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KLC_NO_CACHE", raising=False)
    monkeypatch.setattr(library, "_MEMO", {})
    monkeypatch.setattr(anchor, "_SEEDED", {})
    monkeypatch.setattr(site_keys, "_STORED_FACTS", {})
    return folder


def _entries(lib: Path) -> list[Path]:
    return sorted((lib.parent / "cache" / "rules").glob("*.bin"))


def _texts(rules: object) -> list[str]:
    return [rule_to_text(r) for r in rules]  # type: ignore[attr-defined]


def _fresh(lib: Path, monkeypatch: pytest.MonkeyPatch) -> RuleSet:
    """The library compiled, the cache off."""
    with monkeypatch.context() as m:
        m.setenv("KLC_NO_CACHE", "1")
        return RuleSet.load([str(lib)])


def _again(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process would start: nothing in memory."""
    monkeypatch.setattr(library, "_MEMO", {})
    monkeypatch.setattr(anchor, "_SEEDED", {})
    monkeypatch.setattr(site_keys, "_STORED_FACTS", {})


def test_a_load_from_the_cache_is_the_load_compiled(lib: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = _fresh(lib, monkeypatch)
    assert not _entries(lib)  # (KLC_NO_CACHE: nothing written)
    first = RuleSet.load([str(lib)])
    [entry] = _entries(lib)
    _again(monkeypatch)
    stamp = entry.stat().st_mtime_ns
    cached = RuleSet.load([str(lib)])
    assert entry.stat().st_mtime_ns == stamp  # read, not written again
    assert list(cached.rules) == list(fresh.rules) == list(first.rules)
    assert _texts(cached.rules) == _texts(fresh.rules)
    assert [r.location for r in cached.rules] == [r.location for r in fresh.rules]
    # the anchors came from the entry, and are what the matcher compiles
    assert anchor._SEEDED
    seeded = [pattern_of(r) for r in cached.rules]
    monkeypatch.setattr(anchor, "_SEEDED", {})
    assert seeded == [pattern_of(r) for r in fresh.rules]
    # and so did what the listing reads of each rule, the facts a rule gives when asked
    stored = site_keys._STORED_FACTS
    assert set(stored) >= set(cached.rules)
    assert all(stored[r] is site_keys.rule_facts(r) for r in cached.rules)
    assert [stored[r] for r in cached.rules] == [site_keys._rule_facts(r) for r in fresh.rules]
    assert any(stored[r].parameter_target for r in cached.rules)  # (qualifiers.rule's)
    # one file (klc apply's load) is an entry of its own
    one = lib / "fast_math.rule"
    assert load_rules(one) == [r for r in fresh.rules if r.path == str(one)]
    assert len(_entries(lib)) == 2


def test_the_stored_anchors_share_their_equal_nodes() -> None:
    """An isomorphism's spellings repeat the anchor's subtrees: the table the cache stores
    (``anchor.compiled_anchors``) holds each node once, equal to what was compiled, and
    matches as it does."""
    from klc.cuda.parse import parse_bytes
    from klc.match import find_matches
    from klc.match.pattern import PNode

    plugins.load()
    rules = list(RuleSet.load([str(ROOT / "skills" / f) for f in (
        "fast_math.rule", "grid_stride.rule", "block_reduce.rule", "elementwise.rule")]).rules)
    table = anchor.compiled_anchors(rules)
    nodes: dict[int, PNode] = {}

    def walk(p: PNode) -> None:
        if id(p) not in nodes:
            nodes[id(p)] = p
            for c in (*p.children, *p.alts):
                walk(c)

    for q in table.values():
        for b in (q, *q.alternatives):
            for e in b.elements:
                walk(e)
    assert len(set(nodes.values())) == len(nodes)  # (no two equal nodes)
    compiled = {what: anchor._compiled(*what) if not what[0] or isinstance(what[0], str)
                else anchor._alternation(*what) for what in table}
    assert table == compiled
    code = (b"__global__ void k(const float* x, float* y, int n) {\n"
            b"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            b"  if (i < n) { y[i] = expf(x[i]) + sqrtf(x[i]); }\n}\n")
    for what, q in table.items():
        unit = parse_bytes(code, "k.cu")
        assert [(m.start, m.end) for m in find_matches(q, unit)] == [
            (m.start, m.end) for m in find_matches(compiled[what], parse_bytes(code, "k.cu"))]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "other key",
                                    "bad seal", "not rules", "writable by others"])
def test_a_damaged_entry_is_compiled_again(lib: Path, monkeypatch: pytest.MonkeyPatch,
                                           damage: str) -> None:
    fresh = _fresh(lib, monkeypatch)
    RuleSet.load([str(lib)])
    [entry] = _entries(lib)
    good = entry.read_bytes()
    key = entry.stem
    if damage == "truncated":
        entry.write_bytes(good[:len(good) // 2])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(4096))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "other key":
        entry.write_bytes(good.replace(key.encode(), b"0" * 64, 1))
    elif damage == "bad seal":
        entry.write_bytes(good[:-10] + bytes(10))
    elif damage == "not rules":
        library.write_entry(lib.parent / "cache", key, ((1, 2, 3), {}))
    else:
        entry.chmod(0o666)
    assert entry.read_bytes() != good or damage == "writable by others"
    _again(monkeypatch)
    got = RuleSet.load([str(lib)])
    assert _texts(got.rules) == _texts(fresh.rules)
    assert library.read_entry(lib.parent / "cache", key) is not None  # written again whole


class _Runs:
    """An object whose unpickling would run a command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def test_an_entry_that_would_run_code_is_refused(lib: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry sealed as the cache seals it, whose payload names another callable than a
    klc class: not unpickled, nothing run, compiled again."""
    fresh = _fresh(lib, monkeypatch)
    RuleSet.load([str(lib)])
    [entry] = _entries(lib)
    marker = lib.parent / "ran"
    library.write_entry(lib.parent / "cache", entry.stem, _Runs(marker))
    assert b"system" in entry.read_bytes()
    with pytest.raises(pickle.UnpicklingError):  # (what the loader says of it)
        payload = entry.read_bytes().split(b"\n", 3)[3]
        library._KlcOnly(__import__("io").BytesIO(payload)).load()
    _again(monkeypatch)
    assert _texts(RuleSet.load([str(lib)]).rules) == _texts(fresh.rules)
    assert not marker.exists()


def test_a_changed_rule_file_is_compiled_again(lib: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    RuleSet.load([str(lib)])
    path = lib / "fast_math.rule"
    text = path.read_text()
    assert "rule precise_exp_to_fast " in text
    path.write_text(text.replace("rule precise_exp_to_fast ", "rule exp_renamed ", 1))
    _again(monkeypatch)
    names = [r.name for r in RuleSet.load([str(lib)]).rules]
    assert "exp_renamed" in names and "precise_exp_to_fast" not in names
    assert len(_entries(lib)) == 2


def test_a_load_that_fails_is_not_stored(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (lib / "zz_broken.rule").write_text("rule broken {\n  kind: skill\n}\n")
    with pytest.raises(RuleError) as e:
        RuleSet.load([str(lib)])
    assert "zz_broken.rule" in str(e.value)
    assert RuleSet.load([str(lib)], strict=False).errors
    assert not _entries(lib)


def test_an_unwritable_cache_folder_leaves_the_load_uncached(
        lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = lib.parent / "cache"
    blocker.write_text("a file where the folder would be")
    fresh = _fresh(lib, monkeypatch)
    assert _texts(RuleSet.load([str(lib)]).rules) == _texts(fresh.rules)


def test_the_command_lists_the_same_from_the_cache(tmp_path: Path) -> None:
    """Two ``klc list`` processes, the second reading the library from the entry the first
    wrote: the same listing."""
    env = {**os.environ, "KLC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("KLC_NO_CACHE", None)
    cmd = [sys.executable, "-m", "klc", "list", "--all", "--tree-only",
           str(ROOT / "bench" / "examples")]
    first = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, timeout=300)
    [entry] = (tmp_path / "cache" / "rules").glob("*.bin")
    stamp = entry.stat().st_mtime_ns
    shutil.rmtree(tmp_path / "cache" / "list")  # (each file listed again, not read back)
    second = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, timeout=300)
    assert entry.stat().st_mtime_ns == stamp
    assert first.returncode == second.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert first.stdout.count(b"\n") > 20


def test_an_entry_is_for_the_vocabulary_it_was_compiled_against(
        lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loader given other rewrite kinds or predicates does not take the library compiled
    with the first ones from the cache: it compiles it again, into an entry of its own."""
    from dataclasses import replace

    from klc.rule import registry

    RuleSet.load([str(lib)])
    assert len(_entries(lib)) == 1
    full = registry.installed()
    narrowed = replace(full, predicates=full.predicates - {"const_safe"})
    monkeypatch.setattr(registry, "_INSTALLED", [narrowed])
    _again(monkeypatch)
    RuleSet.load([str(lib)])
    assert len(_entries(lib)) == 2


def test_the_cache_keeps_the_libraries_written_last(lib: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(library, "MAX_ENTRIES", 2)
    path = lib / "fast_math.rule"
    text = path.read_text()
    written = []
    for i in range(4):  # four versions of the folder, one entry each
        path.write_text(text + f"\n// version {i}\n")
        _again(monkeypatch)
        before = set(_entries(lib))
        RuleSet.load([str(lib)])
        [new] = set(_entries(lib)) - before
        written.append(new.name)
    assert [e.name for e in _entries(lib)] == sorted(written[2:])  # the two written last
    _again(monkeypatch)
    stamps = [e.stat().st_mtime_ns for e in _entries(lib)]
    RuleSet.load([str(lib)])  # the last version: read back, nothing written
    assert [e.stat().st_mtime_ns for e in _entries(lib)] == stamps
