"""The shape of the package, as docs/architecture.md draws it: layers that import only
downward, no import circle (imports inside functions and under TYPE_CHECKING count: deferring
an import hides a circle, it does not remove it), no module over 800 lines, no function over
100, every package installed, and no docstring citing a file the repository lacks."""

from __future__ import annotations

import ast
import re
import tokenize
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "klc"

# The layers, from the bottom (docs/architecture.md, "Layers"). A module may import its own
# layer and those below it. Keys are top-level modules or packages of klc.
LAYERS: list[tuple[str, ...]] = [
    ("klc", "klc.errors", "klc.fsutil", "klc.extras", "klc.interrupts", "klc.safe_eval"),
    ("klc.cuda", "klc.spec"),
    ("klc.rule",),
    ("klc.match", "klc.analysis"),
    ("klc.guards",),
    ("klc.edits",),
    ("klc.pipeline",),
    ("klc.gate",),
    ("klc.lineage", "klc.reverse", "klc.recipes", "klc.optimize", "klc.fill", "klc.batch",
     "klc.spec_draft", "klc.golden", "klc.findings", "klc.measurements", "klc.report"),
    ("klc.plots", "klc.htmlreport", "klc.api", "klc.commands", "klc.cli", "klc.__main__"),
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The klc modules an import statement loads (``from klc.x import y``: klc.x.y when that
    is a module, else klc.x)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".")
            if MODULES[module].name != "__init__.py":
                here = here[:-1]
            here = here[:len(here) - (node.level - 1)]
            base = ".".join([*here, base] if base else here)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("klc"):
            yield name


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module] |= set(_targets(module, node)) - {module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _layer_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_the_cycle_finder_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_every_module_has_a_layer_and_imports_only_downward() -> None:
    unplaced = sorted({_layer_of(m) for m in MODULES} - set(RANK))
    assert unplaced == [], f"add these to LAYERS and docs/architecture.md: {unplaced}"
    upward = [f"{m} -> {t}" for m, targets in sorted(_graph().items()) for t in sorted(targets)
              if RANK[_layer_of(t)] > RANK[_layer_of(m)]]
    assert upward == []


def test_no_module_over_800_lines_and_no_function_over_100() -> None:
    big = [f"{m}: {n} lines" for m, p in MODULES.items()
           if (n := len(p.read_text().splitlines())) > 800]
    long = [f"{m}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
            for m, p in MODULES.items() for node in ast.walk(ast.parse(p.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > 100]
    assert big == [] and long == []


def test_every_package_is_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert packages - listed == set()


def _prose(path: Path) -> Iterator[str]:
    """A module's docstrings and comments."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                yield doc
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type == tokenize.COMMENT:
                yield tok.string


def test_no_shim_is_left_and_no_docstring_cites_a_missing_file() -> None:
    shims = [m for m, p in MODULES.items() if "SHIM(issue" in p.read_text()]
    assert shims == []
    cited = re.compile(r"(?<![\w{/.])((?:[\w-]+/)*[A-Za-z][\w-]*\.(?:md|rule|lark|cu|py|h))\b")
    missing = []
    for m, p in MODULES.items():
        for text in _prose(p):
            for name in set(cited.findall(text)):
                stem = Path(name).stem
                if "/" not in name and not (name.endswith(".md") and stem.isupper()
                                            and len(stem) > 1):
                    continue  # a bare file name (kernel.cu, report.md) is an example or an
                    # output; a cite is a path (docs/spec.md) or a capitalised name (DESIGN.md)
                candidates = [ROOT / name, ROOT / "docs" / name, p.parent / name, PKG / name]
                if not any(c.exists() for c in candidates):
                    missing.append(f"{m}: {name}")
    assert missing == []
