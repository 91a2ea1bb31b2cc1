"""Build a corpus of real CUDA code from pinned packages of the Python package index.

    python bench/real_corpus.py [--out DIR] [--only NAME ...] [--index URL] [--list]

Each package below ships CUDA sources (``.cu``/``.cuh``) in its sdist or wheel. It is pinned by
exact version, file name and sha256: the file is found through the index's JSON simple API
(PEP 691), downloaded, checked against the pinned hash (a mismatch is an error, exit 2, and
the download is removed), and its CUDA sources together with the headers beside them
(``.h``, ``.hpp``, ``.inl``, ...; so that files find what they include) are unpacked into
``DIR/<package>-<version>/`` (default ``DIR``: ``~/.cache/klc/corpus``). Nothing else of the
archive is kept, and nothing of it belongs in the repository.

``DIR/manifest.json`` lists the packages, their hashes, the corpus files of each (the
``.cu``/``.cuh`` files outside the folders the table skips: vendored copies of other
libraries, kept only as headers) and the include folders a compiler needs;
``DIR/CORPUS`` says in one line how the corpus was made (the benchmarks print it). A second
run downloads nothing: it checks each kept archive's hash and each unpacked tree's digest.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SOURCE_EXTS = (".cu", ".cuh")
HEADER_EXTS = (".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".ipp", ".tcc", ".cuinl")
DEFAULT_INDEX = "https://pypi.org/simple"
MANIFEST = "manifest.json"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    filename: str
    sha256: str
    skip: tuple[str, ...] = ()  # folders (archive paths) whose .cu/.cuh are headers only
    why: str = ""

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


# Pinned: exact version, file and sha256 (as the index publishes it, and as checked here).
PACKAGES: tuple[Package, ...] = (
    Package("flashinfer-python", "0.7.2.post1", "flashinfer_python-0.7.2.post1.tar.gz",
            "af60319898dcfd552ba12a34165b9dd46c0bbd83d48ce665b1df6bd6ae77e9f1",
            skip=("3rdparty/",), why="attention and MoE kernels, header-only templates"),
    Package("nvidia-cutlass", "4.2.0.0", "nvidia_cutlass-4.2.0.0-py3-none-any.whl",
            "f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6",
            why="CUTLASS examples and tools, with the CUTLASS headers"),
    Package("flash-attn", "2.8.3.post2", "flash_attn-2.8.3.post2.tar.gz",
            "d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b",
            skip=("csrc/cutlass/",), why="attention kernels (its CUTLASS copy: headers only)"),
    Package("vllm", "0.33.0", "vllm-0.33.0.tar.gz",
            "f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112",
            why="quantization, attention, layernorm, activation kernels"),
    Package("cupy", "14.2.0", "cupy-14.2.0.tar.gz",
            "cfed725e612178cfbdbf62f4a3a598b60edecbbca718c0d4580c21a16ae4a62c",
            why="CuPy's device headers and runtime-compiled kernels"),
    Package("deepspeed", "0.19.8", "deepspeed-0.19.8.tar.gz",
            "9e491abd0827ea5c389dd702e15e11e13d83d904bac4a20d6c2a4cb37207a9af",
            why="transformer, optimizer and inference kernels"),
    Package("gsplat", "1.5.3", "gsplat-1.5.3.tar.gz",
            "343f080c470e891ba3c697c03bdf0952cb982d1d535fdc24adb23c2cb4fba906",
            why="Gaussian splatting rasterization kernels"),
    Package("mamba-ssm", "2.3.2.post1", "mamba_ssm-2.3.2.post1.tar.gz",
            "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028",
            why="selective scan kernels"),
)


class CorpusError(Exception):
    """A bad input or a failed check: one line, exit 2."""


def default_out() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(root) / "klc" / "corpus"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _get(url: str, accept: str | None = None, timeout: float = 60) -> urllib.request.Request:
    req = urllib.request.Request(url, headers={"User-Agent": "klc-bench/real_corpus"})
    if accept:
        req.add_header("Accept", accept)
    return req


def find_url(pkg: Package, index: str) -> str:
    """The download address of the pinned file, from the index's JSON simple page; the
    index must publish the pinned sha256 for it."""
    page = f"{index.rstrip('/')}/{pkg.name}/"
    try:
        with urllib.request.urlopen(_get(page, SIMPLE_JSON), timeout=60) as r:
            doc = json.load(r)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise CorpusError(f"{page}: cannot read the package's file list: {e}") from None
    for f in doc.get("files", []):
        if f.get("filename") == pkg.filename:
            published = (f.get("hashes") or {}).get("sha256")
            if published and published != pkg.sha256:
                raise CorpusError(f"{pkg.filename}: the index publishes sha256 {published}, "
                                  f"pinned {pkg.sha256} (bench/real_corpus.py)")
            return urllib.parse.urljoin(page, f["url"])
    raise CorpusError(f"{page}: no file {pkg.filename} (pinned version {pkg.version})")


def download(pkg: Package, downloads: Path, index: str) -> Path:
    """The pinned archive, downloaded once into ``downloads`` and checked by hash."""
    target = downloads / pkg.filename
    if target.is_file():
        got = sha256_file(target)
        if got != pkg.sha256:
            raise CorpusError(f"{target}: sha256 {got}, pinned {pkg.sha256}: the kept "
                              "download was changed; delete it to download it again")
        return target
    url = find_url(pkg, index)
    downloads.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=downloads, prefix=pkg.filename + ".")
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(_get(url), timeout=120) as r:
            for block in iter(lambda: r.read(1 << 20), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != pkg.sha256:
            raise CorpusError(f"{url}: sha256 {h.hexdigest()}, pinned {pkg.sha256}: "
                              "the download was removed")
        os.replace(tmp, target)
    except (urllib.error.URLError, OSError) as e:
        raise CorpusError(f"{url}: download failed: {e}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def _members(archive: Path) -> list[tuple[str, bytes]]:
    """(path inside the archive, bytes) of its CUDA sources and headers."""
    out: list[tuple[str, bytes]] = []
    wanted = SOURCE_EXTS + HEADER_EXTS
    if archive.name.endswith(".whl") or archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if not info.is_dir() and info.filename.lower().endswith(wanted):
                    out.append((info.filename, z.read(info)))
        return out
    with tarfile.open(archive, "r:*") as t:
        for m in t.getmembers():
            if m.isfile() and m.name.lower().endswith(wanted):
                f = t.extractfile(m)
                if f is not None:
                    out.append((m.name, f.read()))
    return out


def _relative(name: str, sdist: bool, pkg: Package) -> str | None:
    """The member's path in the unpacked tree (an sdist's top folder dropped); None for an
    unsafe path."""
    p = PurePosixPath(name)
    parts = p.parts
    if sdist and len(parts) > 1:
        parts = parts[1:]
    if not parts or p.is_absolute() or any(x in ("..", "") for x in parts):
        return None
    return "/".join(parts)


def tree_digest(root: Path, files: list[str]) -> str:
    h = hashlib.sha256()
    for rel in files:
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return h.hexdigest()


def include_dirs(names: list[str]) -> list[str]:
    """Folders a compiler searches for this package: its root, and every folder named
    ``include`` (not inside another one), relative to the package's folder."""
    dirs = {"."}
    for rel in names:
        parts = rel.split("/")[:-1]
        for i, part in enumerate(parts):
            if part == "include":
                dirs.add("/".join(parts[:i + 1]))
                break
    return sorted(dirs, key=lambda d: (d != ".", d))


def unpack(pkg: Package, archive: Path, out: Path) -> dict[str, object]:
    """Unpack the archive's sources and headers into ``out/<folder>`` (atomically: a
    temporary folder renamed), and return the package's manifest entry."""
    sdist = not archive.name.endswith((".whl", ".zip"))
    members = []
    for name, data in _members(archive):
        rel = _relative(name, sdist, pkg)
        if rel is not None:
            members.append((rel, data))
    members.sort()
    files = [rel for rel, _ in members if rel.lower().endswith(SOURCE_EXTS)
             and not any(rel.startswith(s) for s in pkg.skip)]
    if not files:
        raise CorpusError(f"{archive}: no .cu/.cuh files in it")
    tmp = Path(tempfile.mkdtemp(dir=out, prefix=f".{pkg.folder}."))
    try:
        for rel, data in members:
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        digest = tree_digest(tmp, files)
        final = out / pkg.folder
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"name": pkg.name, "version": pkg.version, "folder": pkg.folder,
            "archive": pkg.filename, "sha256": pkg.sha256, "why": pkg.why,
            "skipped_folders": list(pkg.skip), "files": files,
            "n_files": len(files), "n_headers": len(members) - len(files),
            "include": include_dirs([rel for rel, _ in members]), "tree_sha256": digest}


def read_manifest(out: Path) -> dict[str, object]:
    try:
        return json.loads((out / MANIFEST).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise CorpusError(f"{out / MANIFEST}: unreadable manifest: {e}") from None


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build(out: Path, packages: list[Package], index: str, log=print) -> dict[str, object]:
    """Download, check and unpack the packages (those already unpacked are only checked);
    write the manifest and CORPUS. Returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    old = read_manifest(out)
    entries = {e["name"]: e for e in old.get("packages", [])}
    downloads = out / ".downloads"
    for pkg in packages:
        t0 = time.perf_counter()
        archive = download(pkg, downloads, index)
        entry = entries.get(pkg.name)
        folder = out / pkg.folder
        if entry and entry.get("sha256") == pkg.sha256 and folder.is_dir():
            try:
                same = tree_digest(folder, entry["files"]) == entry["tree_sha256"]
            except OSError:
                same = False
            if same:
                log(f"{pkg.folder}: verified ({entry['n_files']} files)")
                continue
            log(f"{pkg.folder}: the unpacked tree changed: unpacking it again")
        entries[pkg.name] = unpack(pkg, archive, out)
        log(f"{pkg.folder}: {entries[pkg.name]['n_files']} .cu/.cuh files, "
            f"{entries[pkg.name]['n_headers']} headers ({time.perf_counter() - t0:.1f} s)")
    order = [p.name for p in PACKAGES]
    listed = sorted(entries.values(), key=lambda e: order.index(e["name"])
                    if e["name"] in order else len(order))
    manifest = {"made_by": "bench/real_corpus.py", "index": index, "packages": listed,
                "n_files": sum(e["n_files"] for e in listed)}
    _write_atomic(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    how = (f"bench/real_corpus.py: {manifest['n_files']} .cu/.cuh files of "
           f"{len(listed)} pinned packages ("
           + ", ".join(f"{e['folder']} {e['n_files']}" for e in listed) + ")")
    _write_atomic(out / "CORPUS", how + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="the corpus folder (default ~/.cache/klc/corpus)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=None,
                    help="only these packages (by name)")
    ap.add_argument("--index", default=DEFAULT_INDEX, help="the package index's simple API")
    ap.add_argument("--list", action="store_true", help="print the pinned packages and stop")
    args = ap.parse_args(argv)
    if args.list:
        for p in PACKAGES:
            print(f"{p.name}=={p.version}  {p.filename}  sha256:{p.sha256}  {p.why}")
        return 0
    packages = list(PACKAGES)
    if args.only:
        known = {p.name: p for p in PACKAGES}
        bad = [n for n in args.only if n not in known]
        if bad:
            print(f"real_corpus: no pinned package {', '.join(bad)} "
                  f"(pinned: {', '.join(known)})", file=sys.stderr)
            return 2
        packages = [known[n] for n in args.only]
    out = (args.out or default_out()).expanduser()
    if out.exists() and not out.is_dir():
        print(f"{out}: not a folder", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        manifest = build(out, packages, args.index)
    except CorpusError as e:
        print(f"real_corpus: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"real_corpus: {e.filename or out}: {e.strerror or e}", file=sys.stderr)
        return 2
    except (tarfile.TarError, zipfile.BadZipFile, io.UnsupportedOperation) as e:
        print(f"real_corpus: a damaged archive: {e}", file=sys.stderr)
        return 2
    print(f"{out}: {manifest['n_files']} .cu/.cuh files of {len(manifest['packages'])} "
          f"packages ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
