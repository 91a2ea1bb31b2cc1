"""bench/real_corpus.py against a package index served on 127.0.0.1 (the PEP 691 JSON page and
the archive), with archives made here."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench import real_corpus as rc  # noqa: E402

KERNEL = b"#include \"tiny/util.h\"\n__global__ void k(float* x) { x[0] = twice(1.0f); }\n"


def _archive() -> bytes:
    members = {
        "tiny-1.0/src/k.cu": KERNEL,
        "tiny-1.0/src/k.cuh": b"__device__ float half_of(float v) { return v / 2; }\n",
        "tiny-1.0/include/tiny/util.h": b"__device__ inline float twice(float v) "
                                        b"{ return 2 * v; }\n",
        "tiny-1.0/third/vendored.cu": b"__global__ void v() {}\n",
        "tiny-1.0/README.txt": b"not CUDA\n",
        "tiny-1.0/../escape.cu": b"__global__ void e() {}\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Index:
    """A package index on 127.0.0.1: /simple/tiny/ (JSON, a relative file address) and the
    archive; ``hashes`` is what the page publishes, ``body`` what the file holds."""

    def __init__(self, body: bytes, published: str | None) -> None:
        self.body, self.published, self.downloads = body, published, 0
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/simple/tiny/":
                    f = {"filename": "tiny-1.0.tar.gz", "url": "../../files/tiny-1.0.tar.gz",
                         "hashes": {"sha256": index.published} if index.published else {}}
                    data, kind = json.dumps({"files": [f]}).encode(), rc.SIMPLE_JSON
                elif self.path == "/files/tiny-1.0.tar.gz":
                    index.downloads += 1
                    data, kind = index.body, "application/octet-stream"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def archive() -> tuple[bytes, str]:
    data = _archive()
    return data, hashlib.sha256(data).hexdigest()


def _pkg(sha: str) -> rc.Package:
    return rc.Package("tiny", "1.0", "tiny-1.0.tar.gz", sha, skip=("third/",))


def test_downloads_checks_and_unpacks_then_only_verifies(tmp_path: Path, archive) -> None:
    data, sha = archive
    index = Index(data, sha)
    try:
        out = tmp_path / "corpus"
        said: list[str] = []
        manifest = rc.build(out, [_pkg(sha)], index.url, log=said.append)
        tree = out / "tiny-1.0"
        assert (tree / "src" / "k.cu").read_bytes() == KERNEL
        assert (tree / "include" / "tiny" / "util.h").is_file()
        assert (tree / "third" / "vendored.cu").is_file()  # a header of the tree, not a file
        assert not (tree / "README.txt").exists()
        assert not list(tmp_path.rglob("escape.cu"))
        (entry,) = manifest["packages"]
        assert entry["files"] == ["src/k.cu", "src/k.cuh"]
        assert entry["include"] == [".", "include"]
        assert entry["sha256"] == sha and manifest["n_files"] == 2
        assert json.loads((out / "manifest.json").read_text()) == manifest
        assert (out / "CORPUS").read_text().startswith("bench/real_corpus.py: 2 .cu/.cuh files")
        assert index.downloads == 1

        said.clear()
        assert rc.build(out, [_pkg(sha)], index.url, log=said.append) == manifest
        assert said == ["tiny-1.0: verified (2 files)"] and index.downloads == 1

        (tree / "src" / "k.cu").write_bytes(b"changed")
        said.clear()
        rc.build(out, [_pkg(sha)], index.url, log=said.append)
        assert said[0] == "tiny-1.0: the unpacked tree changed: unpacking it again"
        assert (tree / "src" / "k.cu").read_bytes() == KERNEL and index.downloads == 1
    finally:
        index.close()


def test_a_hash_that_is_not_the_pinned_one_is_refused(tmp_path: Path, archive) -> None:
    data, sha = archive
    wrong = "0" * 64
    index = Index(data, sha)  # the index publishes the true hash: the pin is wrong
    try:
        with pytest.raises(rc.CorpusError, match=f"publishes sha256 {sha}, pinned {wrong}"):
            rc.build(tmp_path / "a", [_pkg(wrong)], index.url)
        assert index.downloads == 0
        index.published = None  # nothing published: the download itself is checked
        with pytest.raises(rc.CorpusError, match=f"sha256 {sha}, pinned {wrong}: the "
                                                 "download was removed"):
            rc.build(tmp_path / "b", [_pkg(wrong)], index.url)
        assert index.downloads == 1
        assert not list((tmp_path / "b" / ".downloads").iterdir())
        assert not (tmp_path / "b" / "tiny-1.0").exists()
    finally:
        index.close()


def test_command_line_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert rc.main(["--only", "no-such-package"]) == 2
    assert "no pinned package no-such-package" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert rc.main(["--out", str(tmp_path / "file"), "--only", "gsplat"]) == 2
    assert "not a folder" in capsys.readouterr().err
    # an index that does not answer: one line, nothing unpacked
    assert rc.main(["--out", str(tmp_path / "c"), "--only", "gsplat",
                    "--index", "http://127.0.0.1:9/simple"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("real_corpus: http://127.0.0.1:9/simple/gsplat/: cannot read")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c" / "gsplat-1.5.3").exists()


def test_the_pins_are_exact() -> None:
    names = [p.name for p in rc.PACKAGES]
    assert len(set(names)) == len(names) >= 4
    for p in rc.PACKAGES:
        assert len(p.sha256) == 64 and int(p.sha256, 16) >= 0
        assert p.version in p.filename.replace("_", "-") or p.version in p.filename
