"""Recipes: a lineage's steps in forward order, replayed as one move.

A walk often passes through steps that are neutral or even slower on their own but lead to
a faster kernel: a GEMM's loop over k split into tiles (slower alone) is what a shared-memory
tile needs, and the tile is what the float4 cooperative loads need. A greedy optimizer that
keeps only faster single steps never crosses such a valley. ``klc learn`` therefore also
writes ``recipes.yaml`` beside the skills: for each walk, its skills in forward order (naive
to expert), each with the hole values the step had and the times the walk measured before
and after it.

``klc optimize`` replays a recipe from the current kernel (``replay``): it starts at the
first skill of the recipe that applies, applies the skills one after another with their
observed hole values (guards checked at every step, one site per step as the walk did: the
one that starts as the walk's site did, else one whose first line has its shape, else the
tightest; all sites for a skill that changes the launch), and stops at the first structural
skill that
does not apply (a qualifier or an attribute that does not apply, `const` that the code
already has, is passed over: the rest of the walk does not depend on it). Of the versions it
reached, the one the walk measured fastest is the candidate, gated like any
other (one trial); the recipe is kept only if that candidate verifies and is faster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.reverse import Learned
    from klc.rule import Rule

RECIPES_FILE = "recipes.yaml"


@dataclass
class RecipeStep:
    skill: str
    holes: dict[str, str]
    before_us: float | None  # the walk's time of the version the skill starts from
    after_us: float | None  # ... and of the version it gives
    # the first line of the code the skill took in the walk (spacing aside): a replay prefers
    # the site that starts so (the rows loop a walk unrolled, not the window loop inside it)
    site: str | None = None


@dataclass
class Recipe:
    family: str
    expert: str
    device: str
    steps: list[RecipeStep] = field(default_factory=list)


def build(learned: list[Learned]) -> list[Recipe]:
    """One recipe per walk, its skills in forward order (the walk's last step first)."""
    from klc.reverse import observed_holes

    by_walk: dict[str, list[tuple[int, RecipeStep]]] = {}
    meta: dict[str, tuple[str, str, str]] = {}
    for item in learned:
        for o in item.observations:
            key = str(o.directory)
            data = o.lineage
            meta[key] = (str(data.get("family", Path(key).parent.name)),
                         str(data.get("expert", "")), str(data.get("device") or ""))

            def us(v: dict[str, Any]) -> float | None:
                ms = v.get("median_ms")
                return round(ms * 1000, 2) if isinstance(ms, (int, float)) else None

            step = RecipeStep(item.rule.name, observed_holes(item.inverse, o.step),
                              us(o.version), us(o.before), _site_line(o.directory, o.step))
            by_walk.setdefault(key, []).append((int(o.step["index"]), step))
    out = []
    for key in sorted(by_walk):
        family, expert, device = meta[key]
        steps = [s for _, s in sorted(by_walk[key], key=lambda t: -t[0])]
        out.append(Recipe(family, expert, device, steps))
    return out


def _site_line(directory: Path, step: dict[str, Any]) -> str | None:
    """The first line, spacing aside, of the code the forward skill takes: the one site of
    the walk's step where the pass's change starts in the simpler version (None where the
    step had several sites, or its version is not there)."""
    sites = step.get("sites") or []
    at, name = (sites[0].get("new_offset") if len(sites) == 1 else None), step.get("to")
    path = Path(directory) / str(name) if name else None
    if not isinstance(at, int) or path is None or not path.is_file():
        return None
    return first_line(path.read_bytes(), at) or None


def first_line(source: bytes, start: int) -> str:
    """The text from ``start`` to the end of its line, spacing aside."""
    end = source.find(b"\n", start)
    return " ".join(source[start:end if end >= 0 else len(source)].decode(
        "utf-8", "replace").split())


# C++ keywords and built-in types keep their spelling in a line's shape; other names and
# numbers do not (a loop bound `ROWS` in the walk's expert is `4` in another kernel)
_KEYWORDS = frozenset({
    "for", "while", "do", "if", "else", "return", "break", "continue", "switch", "case",
    "int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "void",
    "auto", "const", "size_t", "pragma", "unroll", "__syncthreads", "__shared__"})
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFuUlL]*|\S")


def line_shape(line: str) -> tuple[str, ...]:
    """The tokens of a line with every name (but keywords and built-in types) and every
    number read as one placeholder: the first lines of the same code in two kernels that
    name their constants and variables differently have one shape."""
    return tuple(t if t in _KEYWORDS or not (t[0].isalnum() or t[0] == "_") else "_"
                 for t in _TOKEN.findall(line))


def _site_rank(walk_site: str | None, line: str) -> tuple[bool, bool]:
    """How far a site's first line is from the walk's: (not the same line, not the same
    shape); (False, False) where the walk recorded no site."""
    if walk_site is None:
        return False, False
    if line == walk_site:
        return False, False
    return True, line_shape(line) != line_shape(walk_site)


def _any_loop(rule: Rule) -> bool:
    """Whether the rule's anchor (or a branch of it) is a loop of any header and body (``for
    ($INIT; $COND; $STEP) $BODY``), as the compiled pattern says: a ``for`` whose every part
    is a metavariable. It applies to every loop of a kernel, and only the walk's site tells
    which one the walk took."""
    from klc.match import pattern_of

    pattern = pattern_of(rule)
    for branch in pattern.alternatives or (pattern,):
        if branch.is_sequence or branch.root_type != "for_statement" \
                or len(branch.elements) != 1 or branch.elements[0].alts:
            continue
        parts = branch.elements[0].children
        if all(c.metavar is not None or (not c.children and not c.alts and c.seq is None
                                         and c.text in ("for", "(", ")")) for c in parts):
            return True
    return False


def _site_within(walk_site: str, code: bytes) -> bool:
    """Whether a line of ``code`` ends as the walk's site line does, or in its shape (the
    site is where the walk's change started, which may be inside a line the match starts
    before: `y = blockIdx.y ...` of `int y = blockIdx.y ...`)."""
    want = line_shape(walk_site)
    for raw in code.decode("utf-8", "replace").splitlines():
        line = " ".join(raw.split())
        if line.endswith(walk_site) or line_shape(line)[-len(want):] == want:
            return True
    return False


def to_yaml(recipes: list[Recipe]) -> str:
    head = ("# klc learn: each walk's skills in forward order (naive -> expert), with the hole\n"
            "# values of its steps and the times the walk measured (us). klc optimize replays\n"
            "# them (klc/recipes.py). Do not edit by hand: run `klc learn` again.\n")
    data = [{"family": r.family, "expert": r.expert, "device": r.device,
             "steps": [{"skill": s.skill, "holes": s.holes, "before_us": s.before_us,
                        "after_us": s.after_us, **({"site": s.site} if s.site else {})}
                       for s in r.steps]} for r in recipes]
    return head + yaml.safe_dump(data, sort_keys=False, width=100)


def write(learned: list[Learned], out_dir: str | Path) -> Path:
    from klc.fsutil import atomic_write

    path = Path(out_dir) / RECIPES_FILE
    atomic_write(path, to_yaml(build(learned)).encode())
    return path


def load(dirs: list[Path]) -> list[Recipe]:
    """The recipes of the given skill folders (a folder without recipes.yaml has none)."""
    out: list[Recipe] = []
    for d in dirs:
        path = Path(d) / RECIPES_FILE
        if not path.is_file():
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
            for r in data:
                steps = [RecipeStep(str(s["skill"]), {str(k): str(v) for k, v in
                                                      (s.get("holes") or {}).items()},
                                    s.get("before_us"), s.get("after_us"),
                                    str(s["site"]) if s.get("site") else None)
                         for s in r["steps"]]
                out.append(Recipe(str(r["family"]), str(r.get("expert", "")),
                                  str(r.get("device", "")), steps))
        except (yaml.YAMLError, KeyError, TypeError) as e:
            raise KlcError(f"{path}: not a recipes file written by klc learn ({e})") from None
    return out


def launch_only(rule: Rule) -> bool:
    """Whether every edit of the rule is to the launch (a block or grid extent), none to
    the code: a step of geometry alone, which a replay may pass over."""
    return bool(rule.edits) and all(e.changes_launch for e in rule.edits)


@dataclass
class Replay:
    """What replaying a recipe from one kernel reached."""

    recipe: Recipe
    start: int  # index of the first step applied
    end: int  # index of the checkpoint (the walk's fastest version reached), inclusive
    source: bytes  # the kernel at the checkpoint
    gain: float  # the walk's time before ``start`` over its time after ``end``

    @property
    def label(self) -> str:
        s = self.recipe.steps
        return (f"lineage {self.recipe.family}: {s[self.start].skill} .. {s[self.end].skill} "
                f"({self.end - self.start + 1} skills)")


def replay(recipe: Recipe, source: bytes, path: str, rules: dict[str, Rule],
           min_gain: float = 0.05, holes_at: dict[int, dict[str, str]] | None = None
           ) -> Replay | None:
    """Apply the recipe's skills in order from the first that applies; return the reached
    version the walk measured fastest, when the walk measured it faster than where the
    replay started by more than ``min_gain``; else None. ``holes_at``: hole values that
    replace the walk's at step i (a coarsening factor tried above the walk's:
    ``klc.optimize.climb``)."""
    from klc.cuda.parse import parse_bytes
    from klc.fill.shape import block_holes, fresh_value, launch_anchors, site_holes
    from klc.pipeline import apply_rules, apply_site, find_sites, spec_of
    from klc.rule.fresh import declared_idents, required_fresh
    from klc.rule.reach import structural

    steps = recipe.steps
    cur = source
    reached: list[tuple[int, bytes]] = []
    start = None
    for i, step in enumerate(steps):
        rule = rules.get(step.skill)
        if rule is None:
            if start is None:
                continue
            break
        unit = parse_bytes(cur, path)
        try:
            spec = spec_of(unit)
            holes = {k: v for k, v in step.holes.items() if k in rule.holes}
            holes.update((holes_at or {}).get(i, {}))
            found = find_sites(unit, [rule], holes, spec)
            if found:  # the walk's block, not its factors, at this kernel; and the holes
                # its own launch fixes (a tile of 32 on a 32 x 32 block), not the walk's
                anchors = launch_anchors(rule, found[0], spec) if block_holes(rule) else {}
                anchors = {**site_holes(rule, found[0].match, spec), **anchors}
                if anchors and any(holes.get(k) != v for k, v in anchors.items()):
                    holes.update(anchors)
                    found = find_sites(unit, [rule], holes, spec)
            if found:  # a name the walk declared that this kernel already uses (its own
                # `acc`): the first fresh variant, as the search filler proposes it
                strict = required_fresh(rule.guard)
                fresh = {k: fresh_value(found[0], str(holes[k]), k in strict)
                         for k in declared_idents(rule) if k in holes}
                if any(holes[k] != v for k, v in fresh.items()):
                    holes.update(fresh)
                    found = find_sites(unit, [rule], holes, spec)
            ok = [s for s in found if s.ok]
            if start is None and step.site is not None and _any_loop(rule):
                # a first step whose anchor takes any loop (an unroll) applies where the
                # walk's did, or the replay starts later: an unroll of the window loops is not
                # the walk's unroll of the rows loops that a kernel already has (the recipe of
                # a lineage that continues another)
                ok = [s for s in ok if _site_within(step.site, unit.source[
                    s.match.start:s.match.end])]
            if not ok:
                if start is None or not structural(rule) or launch_only(rule):
                    continue  # (a qualifier or an attribute the code may already have, as
                    # `const` on an input: the walk's later steps do not depend on it; a
                    # block shape the kernel need not reach, as a 16 x 16 block grown to
                    # the 32 x 32 a kernel launches already: the later steps' guards judge
                    # its own shape)
                break
            sites = None if rule.changes_launch else sorted(
                ok, key=lambda s: (*_site_rank(step.site, first_line(unit.source,
                                                                      s.match.start)),
                                   s.match.end - s.match.start, s.match.start))
            # one site, as the walk did: the one that starts as the walk's did (or, in
            # another kernel, whose first line has its shape: `rr < 4` for the walk's
            # `rr < ROWS`), then the tightest match (an anchor that starts with a $$$ run
            # matches at several starts; the walk's is the one that binds the least); a
            # skill that changes the launch at all its sites at once
        except KlcError:
            break
        new = None
        for site in (sites if sites is not None else [None]):
            try:
                out = apply_rules(unit, [rule], holes, spec) if site is None \
                    else apply_site(unit, site, holes, spec)
            except KlcError:
                continue
            if out.changed and not parse_bytes(out.source, path).problems:
                new = out.source
                break
        if new is None:
            break
        cur = new
        start = i if start is None else start
        reached.append((i, cur))
    if start is None or not reached:
        return None
    before = steps[start].before_us
    timed = [(steps[i].after_us, i, src) for i, src in reached if steps[i].after_us]
    if not before or not timed:
        return None
    best_us, end, src = min(timed, key=lambda t: (t[0], -t[1]))
    if best_us * (1 + min_gain) >= before:
        return None
    return Replay(recipe, start, end, src, before / best_us)
