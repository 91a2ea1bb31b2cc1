"""Materialise the frozen set of third-party expert kernels into the ignored cache.

    python bench/experts/materialize.py [--manifest bench/experts/manifest.yaml]
        [--corpus ~/.cache/klc/corpus] [--out ~/.cache/klc/experts] [--only NAME ...]
        [--check]

Each entry of the manifest names a package of the pinned corpus (bench/real_corpus.py), a
file in it and the pieces to take out of it: the kernel, the device functions, macros,
types and constants it needs (``take``: names in the entry's file; ``file:NAME`` for a piece
of another file of the package; ``NAME#k`` the k-th definition of that name, 0-based, for
overloads and explicit specialisations). The script writes ``OUT/<name>/expert.cu``: the
manifest's ``prelude`` lines (includes and namespace aliases the pieces need), the pieces
in the order given, verbatim, and a klc-spec block built from the manifest's ``spec``
(template arguments, sizes, arguments, launch). ``OUT/<name>/SOURCE`` records where the
pieces came from and their sha256. Nothing of it belongs in the repository: the cache is
outside it.

``--check`` compiles every materialised expert with NVRTC (klc's gate, compile stage) and
prints one line per expert. Exit 2 on a bad manifest, a missing corpus or a piece not
found (one line, naming the entry).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_MANIFEST = HERE / "manifest.yaml"
ENTRY_KEYS = {"name", "category", "package", "version", "file", "kernel", "take", "prelude",
              "spec", "note"}
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)


class ManifestError(Exception):
    """A bad manifest entry or a corpus that does not hold what it names: one line."""


def default_cache() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(root) / "klc"


@dataclass(frozen=True)
class Expert:
    name: str
    category: str
    package: str
    version: str
    file: str
    kernel: str
    take: tuple[str, ...]
    prelude: tuple[str, ...]
    spec: dict
    note: str = ""

    @property
    def folder(self) -> str:
        return f"{self.package}-{self.version}"


def load_manifest(path: Path) -> list[Expert]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ManifestError(f"{path}{at}: not YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("experts"), list):
        raise ManifestError(f"{path}: a manifest is a mapping with a list 'experts'")
    out: list[Expert] = []
    seen: set[str] = set()
    for i, e in enumerate(doc["experts"]):
        where = f"{path}: experts[{i}]"
        if not isinstance(e, dict):
            raise ManifestError(f"{where}: an entry is a mapping")
        unknown = sorted(set(e) - ENTRY_KEYS)
        if unknown:
            raise ManifestError(f"{where}: unknown field {unknown[0]!r} (known: "
                                f"{', '.join(sorted(ENTRY_KEYS))})")
        for key in ("name", "category", "package", "version", "file", "kernel", "take",
                    "spec"):
            if key not in e:
                raise ManifestError(f"{where}: no {key!r}")
        name = str(e["name"])
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise ManifestError(f"{where}: name {name!r} is not lower_snake_case")
        if name in seen:
            raise ManifestError(f"{where}: name {name!r} given twice")
        seen.add(name)
        if not isinstance(e["take"], list) or not e["take"]:
            raise ManifestError(f"{where} ({name}): take must be a non-empty list")
        if not isinstance(e["spec"], dict) or "kernel" not in e["spec"]:
            raise ManifestError(f"{where} ({name}): spec must be a mapping with a kernel")
        out.append(Expert(name, str(e["category"]), str(e["package"]), str(e["version"]),
                          str(e["file"]), str(e["kernel"]),
                          tuple(str(t) for t in e["take"]),
                          tuple(str(p) for p in e.get("prelude") or ()), e["spec"],
                          str(e.get("note", ""))))
    return out


# --------------------------------------------------------------------------------------
# Finding the pieces in a file


def _parser():
    from klc.cuda.syntax import parser

    return parser()


_PIECE_TYPES = {"function_definition", "template_declaration", "declaration",
                "type_definition", "struct_specifier", "class_specifier", "alias_declaration",
                "enum_specifier"}


def _piece_name(node) -> str | None:
    """The name a top-level piece defines: a function's, a type's, a variable's."""
    if node.type == "template_declaration":
        inner = next((c for c in node.named_children if c.type in _PIECE_TYPES), None)
        return _piece_name(inner) if inner is not None else None
    if node.type in ("struct_specifier", "class_specifier", "enum_specifier"):
        n = node.child_by_field_name("name")
        return n.text.decode() if n is not None else None
    if node.type == "alias_declaration":
        n = node.child_by_field_name("name")
        return n.text.decode() if n is not None else None
    if node.type == "type_definition":
        d = node.child_by_field_name("declarator")
        return d.text.decode().strip() if d is not None else None
    if node.type in ("function_definition", "declaration"):
        if node.type == "declaration":
            spec = node.child_by_field_name("type")
            if spec is not None and spec.type in ("struct_specifier", "class_specifier") \
                    and node.child_by_field_name("declarator") is None:
                return _piece_name(spec)
        d = node.child_by_field_name("declarator")
        while d is not None and d.type not in ("identifier", "field_identifier",
                                               "template_function", "qualified_identifier",
                                               "destructor_name", "operator_name"):
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                nxt = next((c for c in d.named_children if c.type in (
                    "function_declarator", "identifier", "template_function",
                    "init_declarator", "qualified_identifier", "pointer_declarator",
                    "reference_declarator", "array_declarator")), None)
            d = nxt
        if d is None:
            return None
        if d.type == "template_function":
            d = d.child_by_field_name("name")
        return d.text.decode().split("::")[-1] if d is not None else None
    return None


def pieces(source: bytes) -> dict[str, list[tuple[int, int]]]:
    """{name: [(start, end) byte spans of each definition, in file order]}: top-level
    functions, templates, types and variables (inside namespaces and ``extern "C"`` too),
    and ``#define`` macros with their continuation lines."""
    tree = _parser().parse(source)
    found: dict[str, list[tuple[int, int]]] = {}

    def visit(node) -> None:
        for c in node.named_children:
            if c.type in ("namespace_definition", "linkage_specification"):
                body = c.child_by_field_name("body")
                if body is not None:
                    visit(body)
                continue
            if c.type in ("declaration_list", "preproc_if", "preproc_ifdef", "preproc_else",
                          "preproc_elif"):
                visit(c)
                continue
            if c.type in _PIECE_TYPES:
                name = _piece_name(c)
                if name:
                    found.setdefault(name, []).append((c.start_byte, c.end_byte))

    visit(tree.root_node)
    for m in _DEFINE.finditer(source):
        end = m.end()
        while True:
            nl = source.find(b"\n", end)
            if nl < 0:
                end = len(source)
                break
            if source[nl - 1:nl] == b"\\":
                end = nl + 1
                continue
            end = nl
            break
        found.setdefault(m.group(1).decode(), []).append((m.start(), end))
    return found


def _take(expert: Expert, root: Path) -> tuple[list[bytes], list[str]]:
    texts: list[bytes] = []
    record: list[str] = []
    cache: dict[str, tuple[bytes, dict[str, list[tuple[int, int]]]]] = {}
    for item in expert.take:
        rel, _, name = item.rpartition(":") if ":" in item else ("", "", item)
        rel = rel or expert.file
        name, _, idx = name.partition("#")
        path = root / rel
        if rel not in cache:
            try:
                data = path.read_bytes()
            except OSError as e:
                raise ManifestError(f"{expert.name}: {path}: cannot read: "
                                    f"{e.strerror or e}") from None
            cache[rel] = (data, pieces(data))
        data, found = cache[rel]
        spans = found.get(name)
        if not spans:
            raise ManifestError(f"{expert.name}: {rel} defines no {name!r}")
        k = int(idx) if idx else 0
        if k >= len(spans):
            raise ManifestError(f"{expert.name}: {rel} has {len(spans)} definitions of "
                                f"{name!r}, not #{k}")
        a, b = spans[k]
        text = data[a:b]
        texts.append(text)
        line = data.count(b"\n", 0, a) + 1
        record.append(f"{rel}:{line} {name}#{k} sha256 {hashlib.sha256(text).hexdigest()[:16]}")
    return texts, record


def spec_block(spec: dict) -> str:
    return "/* klc-spec\n" + yaml.safe_dump(spec, sort_keys=False, width=100,
                                             default_flow_style=None) + "*/\n"


def render(expert: Expert, corpus: Path) -> tuple[bytes, str]:
    """The expert file's bytes and its SOURCE record."""
    root = corpus / expert.folder
    if not root.is_dir():
        raise ManifestError(f"{expert.name}: {root}: not in the corpus (run "
                            "bench/real_corpus.py)")
    texts, record = _take(expert, root)
    head = spec_block(expert.spec)
    head += (f"// {expert.name}: {expert.package} {expert.version}, {expert.file}, kernel "
             f"{expert.kernel} (bench/experts/manifest.yaml); materialised, not for the "
             "repository\n")
    body = "\n".join(expert.prelude) + ("\n\n" if expert.prelude else "")
    body += "\n\n".join(t.decode("utf-8", "replace").rstrip() for t in texts) + "\n"
    source = (head + body).encode()
    src = "\n".join([f"{expert.package}=={expert.version} {expert.file}", *record]) + "\n"
    return source, src


def _atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def materialize(experts: list[Expert], corpus: Path, out: Path) -> list[Path]:
    written = []
    for e in experts:
        source, record = render(e, corpus)
        d = out / e.name
        _atomic(d / "expert.cu", source)
        _atomic(d / "SOURCE", record.encode())
        written.append(d / "expert.cu")
    return written


def check(paths: list[Path]) -> int:
    from klc.errors import KlcError
    from klc.gate import gate

    bad = 0
    for p in paths:
        try:
            rec = gate(p.read_bytes(), str(p), stages=("compile",)).to_json()
            ok, why = rec["verdict"] in ("passed", "compiled"), str(rec.get("reason"))
        except KlcError as e:
            ok, why = False, str(e)
        bad += not ok
        print(f"{p.parent.name:32} {'ok' if ok else 'FAILED'}"
              + ("" if ok else f": {' '.join(why.split())[:300]}"))
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    ap.add_argument("--corpus", type=Path, default=None,
                    help="the unpacked corpus (default ~/.cache/klc/corpus)")
    ap.add_argument("--out", type=Path, default=None,
                    help="where the experts go (default ~/.cache/klc/experts)")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME")
    ap.add_argument("--check", action="store_true", help="compile each with NVRTC")
    ap.add_argument("--json", action="store_true", help="print the written paths as JSON")
    args = ap.parse_args(argv)
    corpus = (args.corpus or default_cache() / "corpus").expanduser()
    out = (args.out or default_cache() / "experts").expanduser()
    try:
        experts = load_manifest(args.manifest)
        if args.only:
            names = {e.name for e in experts}
            bad = [n for n in args.only if n not in names]
            if bad:
                raise ManifestError(f"{args.manifest}: no expert {bad[0]!r}")
            experts = [e for e in experts if e.name in args.only]
        if not corpus.is_dir():
            raise ManifestError(f"{corpus}: no corpus here (run bench/real_corpus.py)")
        paths = materialize(experts, corpus, out)
    except ManifestError as e:
        print(f"materialize: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([str(p) for p in paths]))
    else:
        print(f"{out}: {len(paths)} experts")
    if args.check:
        return 1 if check(paths) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
