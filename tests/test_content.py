"""klc.content: the one content hash of bytes and of a JSON document (what the gate's
caches, the batch's journal and the findings' fingerprints key on)."""

from __future__ import annotations

import hashlib

from klc.content import json_sha256, sha256


def test_the_hash_of_bytes_is_their_sha256() -> None:
    assert sha256(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert sha256(b"a") != sha256(b"b")


def test_a_json_document_hashes_by_its_content_not_its_key_order() -> None:
    a = {"cubin": "ab", "launch": {"grid": [1, 2, 1], "block": [256, 1, 1]}, "args": [1]}
    b = {"args": [1], "launch": {"block": [256, 1, 1], "grid": [1, 2, 1]}, "cubin": "ab"}
    assert json_sha256(a) == json_sha256(b)
    assert json_sha256(a) != json_sha256({**a, "args": [2]})
    # the bytes hashed are the canonical JSON text: caches written before keep their keys
    text = '{"args": [1], "cubin": "ab", "launch": {"block": [256, 1, 1], "grid": [1, 2, 1]}}'
    assert json_sha256(a) == hashlib.sha256(text.encode()).hexdigest()
    assert json_sha256(["digest", "apply", None]) == sha256(b'["digest", "apply", null]')
