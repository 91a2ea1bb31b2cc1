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
# layer and those below it. Keys are modules or packages of klc; a module belongs to the
# longest key that names it or a package above it.
LAYERS: list[tuple[str, ...]] = [
    ("klc", "klc.errors", "klc.fsutil", "klc.extras", "klc.interrupts", "klc.safe_eval",
     "klc.content"),
    ("klc.cuda", "klc.spec"),
    ("klc.rule",),
    ("klc.match", "klc.analysis"),
    ("klc.guards", "klc.site_keys"),
    ("klc.edits",),
    ("klc.plugins",),
    ("klc.pipeline", "klc.rewrite"),
    ("klc.gate",),
    # the drivers, in sub-layers: what every driver reads,
    ("klc.measurements", "klc.golden", "klc.findings", "klc.report", "klc.spec_draft",
     "klc.fill.shape", "klc.fill.card"),
    # learning: lineage -> reverse -> recipes,
    ("klc.lineage", "klc.explain"),
    ("klc.reverse", "klc.round_trip"),
    ("klc.recipes",),
    # optimizing: trial -> fill -> loop (the loop replays the recipes learning wrote),
    ("klc.fill.trial",),
    ("klc.fill",),
    ("klc.optimize",),
    # and batch on top
    ("klc.batch",),
    ("klc.plots", "klc.htmlreport", "klc.api", "klc.commands", "klc.cli", "klc.__main__"),
]
# the driver sub-layers by name, each chain from the bottom (held by
# test_driver_sub_layers_are_ordered)
SUB_LAYERS = {
    "learning": ("klc.lineage", "klc.reverse", "klc.recipes"),
    "optimizing": ("klc.fill.trial", "klc.fill", "klc.optimize"),
    "batch": ("klc.batch",),
}
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
    """The LAYERS key a module belongs to: the longest that is it or a package above it
    (klc.fill.shape, klc.fill.search -> klc.fill); a module no key names, its package."""
    parts = module.split(".")
    for n in range(len(parts), 1, -1):  # (never "klc" for klc.<something>)
        if ".".join(parts[:n]) in RANK:
            return ".".join(parts[:n])
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


def test_driver_sub_layers_are_ordered() -> None:
    for name, chain in SUB_LAYERS.items():
        ranks = [RANK[m] for m in chain]
        assert ranks == sorted(set(ranks)), f"{name}: {chain} are not in rising layers"
    assert RANK["klc.batch"] > max(RANK[m] for c in SUB_LAYERS.values() for m in c
                                   if m != "klc.batch")
    assert _layer_of("klc.fill.shape") == "klc.fill.shape"
    assert _layer_of("klc.fill.trial") == "klc.fill.trial"
    assert _layer_of("klc.fill.search") == "klc.fill"
    assert _layer_of("klc.nowhere") == "klc.nowhere"  # unplaced, so the layer test names it


# what rewrites or compiles a kernel: the trial below the fillers does, for them
REWRITES = ("klc.pipeline", "klc.rewrite", "klc.edits", "klc.gate", "klc.spec",
            "klc.cuda.parse")


def _runtime_targets(module: str) -> set[str]:
    """The klc modules a module loads when it runs (its ``if TYPE_CHECKING:`` imports,
    which name types only, left out)."""
    tree = ast.parse(MODULES[module].read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and ast.unparse(node.test).endswith("TYPE_CHECKING")
                   for stmt in node.body for n in ast.walk(stmt)}
    return {t for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            and id(node) not in typing_only for t in _targets(module, node)} - {module}


def test_the_fillers_only_propose_values() -> None:
    """A filler proposes hole values; the rewrite and the compile of each proposal are the
    trial's (klc.fill.trial, the sub-layer below the fillers), and the gate's trials are the
    loop's."""
    fillers = [m for m in MODULES if _layer_of(m) == "klc.fill" and m != "klc.fill"]
    assert {"klc.fill.search", "klc.fill.llm"} <= set(fillers)
    reach = {m: sorted(t for t in _runtime_targets(m) if t.startswith(REWRITES))
             for m in fillers}
    assert {m: r for m, r in reach.items() if r} == {}
    assert {"klc.pipeline", "klc.gate.compile"} <= _runtime_targets("klc.fill.trial")


# --------------------------------------------------------------------------------------
# Explicit wiring: what the rule loader needs from the layers above it comes from
# klc.plugins, by plain imports; no module imports klc code by a string, and no module
# changes another module's state when it is imported.


def _string_imports(tree: ast.AST) -> list[int]:
    """Lines of calls that import by name: importlib.import_module, __import__."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("import_module", "__import__"):
                lines.append(node.lineno)
    return lines


# optional third-party packages (ray, matplotlib, ...) are imported by name where a command
# needs one: klc.extras, the one place, says which extra to install when one is missing
STRING_IMPORTS_ALLOWED = {"klc.extras"}


def test_no_module_imports_by_a_string() -> None:
    found = [f"{m}:{line}" for m, p in MODULES.items() if m not in STRING_IMPORTS_ALLOWED
             for line in _string_imports(ast.parse(p.read_text()))]
    assert found == []


_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "clear",
                       "pop", "remove", "discard", "__setitem__"})


def _import_time_mutations(tree: ast.Module) -> list[str]:
    """Statements at a module's top level (``if`` and ``try`` blocks included) that change
    an imported object: an attribute or item assigned on an imported name, a mutating method
    called on one, or a klc registry's ``register``/``install`` called (``os.register_at_fork``
    is the interpreter's, for the module's own state)."""
    imported: set[str] = set()
    from_klc: set[str] = set()
    body: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.If, ast.Try)):
            todo[:0] = [*node.body, *getattr(node, "orelse", []),
                        *[s for h in getattr(node, "handlers", []) for s in h.body],
                        *getattr(node, "finalbody", [])]
            continue
        body.append(node)
        if isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {a.asname or a.name for a in node.names}
            if (node.module or "").startswith("klc"):
                from_klc |= {a.asname or a.name for a in node.names}
        if isinstance(node, ast.Import):
            from_klc |= {(a.asname or a.name).split(".")[0] for a in node.names
                         if a.name.startswith("klc")}

    def root(expr: ast.expr) -> str:
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else ""

    found = []
    for node in body:
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and root(t) in imported:
                found.append(f"{node.lineno}: {ast.unparse(t)} assigned")
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and root(f) in imported:
                found.append(f"{node.lineno}: {ast.unparse(f)}() called")
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name.startswith(("register", "install")) and (root(f) or name) in from_klc:
                found.append(f"{node.lineno}: {name}() called")
    return found


def test_the_mutation_finder_finds_planted_wiring() -> None:
    planted = ast.parse(
        "from klc.analysis import constants\n"
        "from klc.rule.registry import HOOKS, EDIT_KINDS, register_edit\n"
        "import klc.match.pattern as pattern\n"
        "constants.block_extent = len\n"
        "HOOKS.check_call = len\n"
        "EDIT_KINDS['x'] = 1\n"
        "pattern.ISO_HOOKS.append(len)\n"
        "if True:\n"
        "    register_edit('x', len, len)\n"
        "LOCAL = {}\n"
        "LOCAL['y'] = 2\n"
        "import os\n"
        "os.register_at_fork(after_in_child=len)\n")
    assert [f.split(":")[0] for f in _import_time_mutations(planted)] == [
        "4", "5", "6", "7", "9"]


def test_no_module_changes_another_when_imported() -> None:
    found = [f"{m}:{f}" for m, p in MODULES.items()
             for f in _import_time_mutations(ast.parse(p.read_text()))]
    assert found == []


def test_the_plugins_name_every_kind_and_family() -> None:
    """Every rewrite kind of the grammar has its EditKind; every module of klc/edits that
    defines kinds, and every module of klc/guards that declares predicates, is listed."""
    import re

    import klc.plugins as plugins
    from klc.guards import PREDICATES
    from klc.guards.registry import PREDICATE_ATTR

    grammar = (ROOT / "grammar" / "rule.lark").read_text()
    keywords = set(re.findall(r"->\s*(\w+)_edit\b", grammar))
    kinds = plugins.edit_kinds()
    assert keywords and keywords <= set(kinds), sorted(keywords - set(kinds))
    defining = {m for m, p in MODULES.items() if m.startswith("klc.edits.")
                and re.search(r"^KINDS = ", p.read_text(), re.M)}
    assert defining == {m.__name__ for m in plugins.EDIT_KIND_MODULES}
    declaring = {m for m, p in MODULES.items() if m.startswith("klc.guards.")
                 and re.search(r"^@predicate\(", p.read_text(), re.M)}
    assert declaring == {m.__name__ for m in plugins.GUARD_FAMILIES}
    declared = {getattr(v, PREDICATE_ATTR).name for m in plugins.GUARD_FAMILIES
                for v in vars(m).values() if hasattr(v, PREDICATE_ATTR)}
    assert declared == set(PREDICATES) and len(PREDICATES) > 80


def test_rules_load_only_once_the_plugins_are_installed(tmp_path: Path) -> None:
    import subprocess
    import sys

    rule = ROOT / "skills" / "launch_bounds.rule"
    probe = ("from klc.errors import KlcError\n"
             "from klc.rule import load_rules\n"
             f"try:\n    load_rules({str(rule)!r})\n"
             "except KlcError as e:\n    print('refused:', e)\n"
             "import klc.plugins\n"
             "print('after import:', 'refused' if klc.plugins.load.cache_info().currsize == 0"
             " else 'loaded')\n"
             "klc.plugins.load()\n"
             f"print('after load:', len(load_rules({str(rule)!r})), 'rules')\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert "refused: the rule loader has no rewrite kinds" in out
    assert "after import: refused" in out  # importing klc.plugins installed nothing
    assert "after load: 0 rules" not in out and "after load:" in out


def test_no_package_imports_a_private_name_of_the_analyses() -> None:
    """What the guards, the fillers and the drafter read of ``klc.analysis`` has a public
    name: no module outside it imports one of its underscore names."""
    found = []
    for m, p in MODULES.items():
        if m.startswith("klc.analysis"):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "klc.analysis"):
                found += [f"{m}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []


def test_the_architecture_page_numbers_the_layers_as_layers_does() -> None:
    """Each row of docs/architecture.md's layer table ("| 13-15 | optimizing | ...") names,
    in its modules column, every module or package of the LAYERS it numbers."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows: dict[int, str] = {}
    for m in re.finditer(r"^\| (\d+)(?:-(\d+))? \| [^|]+ \| ([^|]+) \|", text, re.M):
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        for i in range(lo, hi + 1):
            rows[i] = m.group(3)
    assert sorted(rows) == list(range(len(LAYERS)))
    missing = []
    for i, layer in enumerate(LAYERS):
        for key in layer:
            if key == "klc":
                continue
            rel = key.removeprefix("klc.").replace(".", "/")
            name = f"`{rel}/`" if (PKG / rel).is_dir() else f"`{rel}.py`"
            if name not in rows[i]:
                missing.append(f"{i}: {name}")
    assert missing == []
