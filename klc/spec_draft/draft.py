"""Drafting one kernel's klc-spec block, stage by stage (``_Drafter``): read the kernel, its
signature and its host launch; find the sizes and their values; bound each buffer's index
into its shape, role and init; take the launch geometry; write the block."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from klc.cuda.model import Function, Param, Unit
from klc.spec import MAX_BLOCK, MAX_GRID, MAX_THREADS, CType, default_verify_sizes, parse_ctype
from klc.spec.aliases import resolve_name, resolve_param
from klc.spec.launch import balanced
from klc.spec_draft.exprs import (
    clean_shape,
    evaluate_or_none,
    quote,
    resolve_free,
    subst,
    tidy,
)
from klc.spec_draft.host import Host, float_value, host_launch
from klc.spec_draft.kernel import (
    DEFAULT_BLOCK,
    Access,
    DraftError,
    Kernel,
    Unknown,
    guess_geometry,
    read_guards,
    same_position,
    thread_vars,
)

_FUNCTIONS = {"ceil_div", "min", "max", "abs", "int", "sqrt", "exp", "log", "pow", "fabs"}
TARGET_ELEMENTS = 1 << 24  # the largest buffer at the drafted profiling sizes
LOOP_SIZE = 64  # a size that bounds a per-thread loop
RANGE_SIZE = 1024  # the range of values an index buffer holds

Ranges = dict[str, tuple[str, str]]  # free variable -> (lowest, highest) expression
Env = dict[str, int]
Sample = tuple[dict[str, int], Env]  # size values and the environment they give


@dataclass
class Draft:
    """A drafted spec block: its text (the whole ``/* klc-spec ... */`` comment), what each
    field was guessed from, and what could not be found (TODO)."""

    kernel: str
    text: str
    guessed: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    host_launch: bool = False


BOM = b"\xef\xbb\xbf"


def with_block(source: bytes, block: str) -> bytes:
    """The file with a drafted block at its top (after a UTF-8 byte-order mark, which must
    stay the file's first bytes)."""
    if source.startswith(BOM):
        return BOM + block.encode() + source[len(BOM):]
    return block.encode() + source


def draft_spec(unit: Unit, kernel: str | None = None) -> Draft:
    """Draft the klc-spec block of one kernel of ``unit`` (the package doc says how)."""
    try:
        return _draft(unit, kernel)
    except Unknown as e:
        raise DraftError(f"{unit.path}: klc spec init cannot read an expression of the "
                         f"kernel ({e}); write the spec by hand (docs/spec.md)") from None


def _draft(unit: Unit, kernel: str | None) -> Draft:
    d = _Drafter(unit, _pick_kernel(unit, kernel))
    d.read_kernel()
    d.read_signature()
    d.read_host_launch()
    d.find_sizes()
    d.read_buffers()
    d.read_launch()
    return d.draft()


def _pick_kernel(unit: Unit, kernel: str | None) -> Function:
    kernels = list(unit.kernels)
    if not kernels:
        raise DraftError(f"{unit.path}: no __global__ kernel in the file")
    if kernel is None:
        if len(kernels) > 1:
            raise DraftError(f"{unit.path}: {len(kernels)} kernels ("
                             f"{', '.join(k.name for k in kernels)}): name one with --kernel")
        fn = kernels[0]
    else:
        found = next((k for k in kernels if k.name == kernel), None)
        if found is None:
            raise DraftError(f"{unit.path}: no kernel {kernel!r} (kernels: "
                             f"{', '.join(k.name for k in kernels)})")
        fn = found
    if fn.template_params:
        raise DraftError(f"{unit.where(fn.start)}: {fn.name} is a template: klc spec init "
                         "drafts plain kernels (write template: {...} by hand, docs/spec.md)")
    return fn


class _Drafter:
    """What one draft has found so far; each stage reads what the ones before it found."""

    def __init__(self, unit: Unit, fn: Function):
        self.unit, self.fn = unit, fn
        self.k = Kernel(unit, fn)
        self.guessed: list[str] = []
        self.todo: list[str] = []
        self.ranges: Ranges = {}
        self.sig: list[tuple[Param, CType, bool]] = []  # (parameter, type, is a buffer)
        self.host: Host | None = None
        self.sizes: dict[str, int] = {}
        self.param_value: dict[str, str] = {}  # size parameter -> its value expression
        self.size_params: list[str] = []
        self.loop_bounded: set[str] = set()
        self.range_sizes: dict[str, tuple[str, int]] = {}  # index buffer -> (size or "", value)
        self.same_place: dict[str, str] = {}  # index buffer -> bound of the loop it stands for
        self.shapes: dict[str, list[str]] = {}
        self.roles: dict[str, str] = {}
        self.inits: dict[str, str] = {}
        self.grid: list[str] = []
        self.block: list[str] = []
        self.shared: str | None = None
        self.dtypes: tuple[tuple[str, str], ...] = ()
        self.float_values: dict[str, float] = {}
        self.float_free: dict[str, str] = {}  # what only a float argument reads: why

    # -- the kernel -------------------------------------------------------------------------

    def read_kernel(self) -> None:
        """Guards, thread indices, accesses, and the free variables' ranges: loops, guarded
        thread indices, the thread index within a block."""
        k = self.k
        guards = read_guards(k)
        self.tvars = thread_vars(k, guards)
        k.keep = {tv.name for tv in self.tvars if tv.extent is not None}
        self.todo = k.collect_accesses()
        self.grid_guess, self.block_guess, self.why_geometry = guess_geometry(k, self.tvars)
        self.block_dims = ([int(b) for b in self.block_guess] if self.block_guess
                           else [DEFAULT_BLOCK])
        for var, (start, bound, op) in k.loops.items():
            try:
                lo = k.expr(start) if start is not None else "0"
                hi = k.expr(bound)
            except Unknown:
                continue
            if op in (">", ">="):  # counting down from its start to just above the bound
                self.ranges[var] = (hi if op == ">=" else f"({hi} + 1)", lo)
            else:
                self.ranges[var] = (lo, hi if op == "<=" else f"({hi} - 1)")
        for tv in self.tvars:
            if tv.extent is not None:
                self.ranges[tv.name] = ("0", f"({tv.extent} - 1)")
        for axis, b in zip("xyz", self.block_dims, strict=False):
            self.ranges[f"_threadIdx_{axis}"] = ("0", str(b - 1))

    def read_signature(self) -> None:
        """Each parameter's element type as the compiler sees it (typedefs, ``using``
        aliases, macros, headers through -I: klc.spec.aliases)."""
        for p in self.fn.params:
            got = resolve_param(self.unit, self.fn.name, p.name, p.type, self.dtypes)
            if got is None:
                raise DraftError(f"{self.unit.where(p.start)}: parameter {p.name} has type "
                                 f"{p.type!r}, which the gate cannot make data for (with "
                                 "-I/-D for the headers and switches that define it, the "
                                 "compiler's view is used)")
            (ct, depth, _const), how = got
            if how:
                self.guessed.append(f"args.{p.name}: {p.type.strip()} is {ct.c_name} ({how})")
            self.sig.append((p, ct, depth > 0 or p.array))

    def read_host_launch(self) -> None:
        """The host launch, usable where its grid and block can be read (module doc of
        ``klc.spec_draft.host``); sizes it cannot find a value for are chosen later."""
        host = host_launch(self.unit, self.fn.name,
                           [None if ptr else p.name for p, _, ptr in self.sig],
                           self.sizeof_type)
        if host is None:
            return
        if host.unreadable or len(host.args) != len(self.sig):
            self.guessed.append(f"the launch at {host.where} is not used: " + (
                "klc cannot read " + "; ".join(host.unreadable) if host.unreadable else
                "its arguments do not match the parameters"))
            return
        self.host = host
        self.guessed.extend(host.notes)
        for axis, _b in zip("xyz", host.block, strict=False):
            self.ranges[f"_threadIdx_{axis}"] = ("0", f"(_blockDim_{axis} - 1)")
        for axis, _g in zip("xyz", host.grid, strict=False):
            self.ranges[f"_blockIdx_{axis}"] = ("0", f"(_gridDim_{axis} - 1)")
        dims = [evaluate_or_none(b, dict(host.sizes)) for b in host.block]
        if all(d is not None and d > 0 for d in dims):
            self.block_dims = [int(d) for d in dims if d is not None]

    def sizeof_type(self, name: str) -> CType | None:
        """A type name the spec model does not know, as the compiler resolves it."""
        return resolve_name(self.unit, name, self.dtypes)

    # -- the sizes --------------------------------------------------------------------------

    def find_sizes(self) -> None:
        """Which integer parameters are sizes, the ranges of data-dependent indices, and
        every size's value (the host's, or chosen)."""
        k, ranges = self.k, self.ranges
        int_scalars = [p.name for p, ct, ptr in self.sig
                       if not ptr and not ct.dtype.startswith("float")
                       and ct.dtype != "bool" and ct.dtype != "bfloat16"]
        texts = [a.index for a in k.accesses] + [r for lo_hi in ranges.values() for r in lo_hi]
        texts += [tv.extent for tv in self.tvars if tv.extent]
        self.size_params = [n for n in int_scalars
                            if any(re.search(rf"\b{n}\b", t) for t in texts)]
        self.loop_bounded = {n for n in self.size_params
                             if any(re.search(rf"\b{n}\b", hi) for v, (_, hi) in ranges.items()
                                    if v in k.loops)}
        self._data_ranges()
        host = self.host
        if host is not None:
            self.sizes = dict(host.sizes)
            self.param_value = {p.name: host.args[i] for i, (p, _, _) in
                                enumerate(self.sig) if i < len(host.args)}
        else:
            self.param_value = {n: n for n in self.size_params}
        for name, value in self.range_sizes.values():
            if name:
                self.sizes[name] = value
        if host is not None:  # float arguments as numbers; sizes only they used go
            self._float_args(host)
        if host is not None and host.free:
            free = list(host.free)
            looped = {f for f in free if any(self.param_value.get(p, "").strip("() ") == f
                                             for p in self.loop_bounded)}
            chosen = _choose_sizes(free, looped, self.k, ranges, self.corners, self.env_for,
                                   self.sizes)
            self.sizes.update(chosen)
            for f in free:
                what = ("it bounds a per-thread loop" if f in looped and len(free) > 1 else
                        "the largest buffer is about 2^24 elements")
                self.guessed.append(f"sizes.{f}: {self.sizes[f]} ({host.free[f]}; chosen "
                                    f"so that {what})")
        if host is None:
            self.sizes = {**_choose_sizes(self.size_params, self.loop_bounded, k, ranges,
                                          self.corners, self.env_for, self.sizes), **self.sizes}
            for n in self.size_params:
                self.guessed.append(f"sizes.{n}: {self.sizes[n]} (" + (
                    "bounds a per-thread loop" if n in self.loop_bounded
                    and len(self.size_params) > 1
                    else f"the largest buffer about {TARGET_ELEMENTS} elements") + ")")
        for buf, (name, value) in self.range_sizes.items():
            if name:
                self.guessed.append(f"sizes.{name}: {value} (the range of the values of {buf}, "
                                    "which index another buffer)")

    def _float_args(self, host: Host) -> None:
        """A float argument the file gives a value (``1.0f / sqrtf(HS)``) is a number in the
        spec; host sizes that only such arguments use are no sizes of the spec."""
        self.float_values: dict[str, float] = {}
        for p, ct, ptr in self.sig:
            if ptr or not (ct.dtype.startswith("float") or ct.dtype == "bfloat16"):
                continue
            text = self.param_value.get(p.name, "")
            names = set(re.findall(r"\b[A-Za-z_]\w*\b", text)) - _FUNCTIONS
            if names <= set(host.sizes):
                number = float_value(text, dict(host.sizes))
                if number is not None:
                    self.float_values[p.name] = number
        used: set[str] = set()
        for t in [*host.grid, *host.block, *([host.shared] if host.shared else []),
                  *(v for n, v in self.param_value.items() if n not in self.float_values)]:
            used |= set(re.findall(r"\b[A-Za-z_]\w*\b", t))
        for n in [n for n in self.sizes if n in host.sizes and n not in used]:
            del self.sizes[n]
        for n in [n for n in host.free if n not in used]:  # only a float's: no size
            self.float_free[n] = host.free.pop(n)

    def _data_ranges(self) -> None:
        """The range of an index read from a buffer: a loop's where it indexes in the same
        place (``row[labels[r]]`` beside ``row[c]``), an 8-bit type's, or a new size."""
        k, ranges = self.k, self.ranges
        for var, buf in k.data_index.items():
            ct = next(c for p, c, _ in self.sig if p.name == buf)
            w = same_position(var, k, ranges)
            if w is not None:  # row[labels[r]] beside row[c], c < classes: in [0, classes)
                ranges[var] = ranges[w]
                hi = ranges[w][1]
                m = re.fullmatch(r"\((.*) - 1\)", hi)
                self.same_place[buf] = tidy(m.group(1) if m and balanced(m.group(1)) else
                                            f"{hi} + 1")
            elif ct.dtype in ("uint8", "int8", "bool"):
                self.range_sizes[buf] = ("", 256 if ct.dtype == "uint8" else 128)
                ranges[var] = ("0", str(self.range_sizes[buf][1] - 1))
            else:
                target = next((a.buffer for a in k.accesses if f"_v_{buf}" in a.index), buf)
                name = f"{target}_rows"
                self.range_sizes[buf] = (name, RANGE_SIZE)
                ranges[var] = ("0", f"({name} - 1)")

    def env_for(self, values: dict[str, int]) -> Env | None:
        """The names an index may use at these size values; None where a size parameter's
        value cannot be evaluated."""
        env: Env = dict(values)
        for axis, b in zip("xyz", [*self.block_dims, 1, 1], strict=False):
            env[f"_blockDim_{axis}"] = b
        if self.host is not None:  # the launch's geometry at these sizes
            for key, dims in (("_blockDim", self.host.block), ("_gridDim", self.host.grid)):
                for axis, d in zip("xyz", [*dims, "1", "1"], strict=False):
                    v = evaluate_or_none(d, values)
                    if v is None or v < 1:
                        return None
                    env[f"{key}_{axis}"] = v
            block = [env[f"_blockDim_{a}"] for a in "xyz"]
            if block[0] * block[1] * block[2] > MAX_THREADS or \
                    any(b > m for b, m in zip(block, MAX_BLOCK, strict=True)) or \
                    any(env[f"_gridDim_{a}"] > m for a, m in zip("xyz", MAX_GRID, strict=True)):
                return None  # no launch at these sizes: the sizes are too large
        for p in self.size_params:
            v = evaluate_or_none(self.param_value.get(p, p), values)
            if v is None:
                return None
            env[p] = v
        return env

    def corners(self, expr: str, env: Env) -> tuple[int | None, str]:
        """The largest value of ``expr`` over the corners of its free variables' ranges,
        and the expression at that corner (None where a corner cannot be evaluated)."""
        ranges = self.ranges
        free = [v for v in ranges if re.search(rf"\b{re.escape(v)}\b", expr)]
        best, best_expr = None, expr
        for choice in itertools.product((0, 1), repeat=len(free)):
            sub = {}
            e2 = dict(env)
            ok = True
            for v, c in zip(free, choice, strict=True):
                r = resolve_free(ranges[v][c], ranges, env)
                val = evaluate_or_none(r, e2)
                if val is None:
                    ok = False
                    break
                e2[v] = val
                sub[v] = r
            got = evaluate_or_none(expr, e2) if ok else None
            if got is None:  # a corner that cannot be evaluated (too large): no bound at all
                return None, expr
            if best is None or got > best:
                best, best_expr = got, subst(expr, sub)
        return best, best_expr

    # -- the buffers ------------------------------------------------------------------------

    def read_buffers(self) -> None:
        """Each buffer's role, shape and init."""
        env0 = self.env_for(self.sizes)
        if env0 is None:
            raise DraftError(f"{self.unit.where(self.fn.start)}: cannot evaluate the sizes of "
                             f"{self.fn.name}")
        samples = self._samples()
        for p, _ct, ptr in self.sig:
            if not ptr:
                continue
            acc = [a for a in self.k.accesses if a.buffer == p.name]
            self.roles[p.name] = _role(p, acc)
            if not acc:
                self.todo.append(f"{self.unit.where(p.start)}: buffer {p.name} is never "
                                 f"indexed in {self.fn.name}: its shape is unknown")
                self.shapes[p.name] = ["TODO"]
                continue
            if not self._shape(p, acc, samples, env0):
                continue
            self._init(p)
        if self.roles:
            self.guessed.append("args.*.role: " + ", ".join(f"{n} {r}" for n, r in
                                                            self.roles.items())
                                + " (const-ness and writes)")

    def _samples(self) -> list[Sample]:
        """Size values near the drafted ones (so that their order of magnitude, k << n,
        holds), odd, even and mixed: a shape like 2 * (d // 2) shows itself."""
        rnd = random.Random(1)
        samples = []
        for parity in (1, 0, None):
            vals = {}
            for n in self.sizes:
                v = self.sizes[n] + rnd.randrange(1, 38)
                if self.host is not None:  # a grid of ceil_div(n, 1024) must move too
                    v += rnd.randrange(1, 38) * (self.sizes[n] // 64)
                if parity is not None and v % 2 != parity:
                    v += 1
                vals[n] = v
            env = self.env_for(vals)
            if env is not None:
                samples.append((vals, env))
        return samples

    def _largest(self, use: list[Access], env: Env) -> tuple[int, str] | None:
        best = None
        for a in use:
            got, text = self.corners(a.index, env)
            if got is not None and (best is None or got > best[0]):
                best = (got, text)
        return best

    def _shape(self, p: Param, acc: list[Access], samples: list[Sample], env0: Env) -> bool:
        """The buffer's shape: its largest index + 1, as the simplest expression of the
        sizes equal to it at every sample, else as computed; False where it has no bound."""
        use = [a for a in acc if a.write] if self.roles[p.name] == "out" else acc
        targets = []
        for vals, env in samples:
            best = self._largest(use, env)
            if best is None:
                break
            targets.append((vals, best[0] + 1))
        best0 = self._largest(use, env0)
        if best0 is None or len(targets) < len(samples):
            self.todo.append(f"{self.unit.where(acc[0].node.start_byte)}: cannot bound the "
                             f"index of {p.name}: {self.k.text(acc[0].node)}")
            self.shapes[p.name] = ["TODO"]
            return False
        # the drafted sizes are a target too: a shape that fits the samples alone (128 for
        # every sample of a launch of ceil_div(size, 64) blocks) may miss them (size 64)
        targets.append((dict(self.sizes), best0[0] + 1))
        raw = best0[1]
        if self.host is not None:  # the kernel's size parameters as the host's expressions
            raw = subst(raw, self._host_values())
            raw = subst(raw, {f"_{key}_{axis}": d for key, dims in
                              (("gridDim", self.host.grid), ("blockDim", self.host.block))
                              for axis, d in zip("xyz", [*dims, "1", "1"], strict=False)})
        clean = clean_shape(targets, list(self.sizes))
        fits = clean is not None and all(
            evaluate_or_none(" * ".join(f"({d})" for d in clean), vals) == t
            for vals, t in targets)
        if not fits and self.host is not None:  # one element per thread, or per block
            clean = next(([tidy(c)] for c in self._launch_extents()
                          if all(evaluate_or_none(c, vals) == t for vals, t in targets)), None)
            fits = clean is not None
        if fits and clean is not None:
            self.shapes[p.name] = clean
            self.guessed.append(f"args.{p.name}.shape: {clean} (the largest index + 1 of "
                                f"{self.k.text(use[0].node)})")
        else:  # (a vector type's shape counts vectors, as the index does)
            self.shapes[p.name] = [tidy(f"{raw} + 1")]
            self.guessed.append(f"args.{p.name}.shape: the largest index + 1 of "
                                f"{self.k.text(use[0].node)}, as computed")
        return True

    def _launch_extents(self) -> list[str]:
        """The launch's thread and block counts as expressions of the sizes (x, then x * y),
        which an unguarded index spans: ``N // 256 * 256``, ``N // 256``."""
        assert self.host is not None
        g = [tidy(x) for x in self.host.grid if tidy(x) != "1"]
        b = [tidy(x) for x in self.host.block if tidy(x) != "1"]
        out = []
        for dims in ([*g, *b], g, [*g[:1], *b[:1]], g[:1]):
            if dims:
                out.append(" * ".join(d if re.fullmatch(r"[\w.]+", d) else f"({d})"
                                      for d in dims))
        return out

    def _host_values(self) -> dict[str, str]:
        return {q: self.param_value[q] for q in self.size_params
                if q in self.param_value and self.param_value[q] != q}

    def _init(self, p: Param) -> None:
        if p.name in self.same_place:
            bound = self.same_place[p.name]
            if self.host is not None:
                bound = tidy(subst(bound, self._host_values()))
            self.inits[p.name] = f"randint(0, {bound})"
            self.guessed.append(f"args.{p.name}.init: its values index where a loop variable "
                                f"does, so they range over [0, {bound})")
        elif p.name in self.range_sizes:
            name, value = self.range_sizes[p.name]
            self.inits[p.name] = f"randint(0, {name or value})"
        elif self.roles[p.name] != "out":
            self.inits[p.name] = "normal"

    # -- the launch and the block -----------------------------------------------------------

    def read_launch(self) -> None:
        """Grid, block and shared memory: the host's launch, else the guarded thread index."""
        unit, fn = self.unit, self.fn
        if self.host is not None:
            self.grid, self.block, self.shared = self.host.grid, self.host.block, \
                self.host.shared
            self.guessed.append(f"grid, block: the launch at {self.host.where}")
        elif self.grid_guess is None:
            self.todo.append(f"{unit.where(fn.start)}: no guarded thread index (like "
                             "`int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n)`) in "
                             f"{fn.name}: grid and block are unknown")
            self.grid, self.block = ["TODO"], ["TODO"]
        else:
            self.grid, self.block = self.grid_guess, self.block_guess
            self.guessed.append(f"grid, block: {self.why_geometry}")
        dynamic = next((sh for sh in fn.shared if sh.extern), None)
        if dynamic is not None and not (self.shared and self.shared.strip() not in ("0", "")):
            self.todo.append(f"{unit.where(dynamic.start)}: {fn.name} uses dynamic shared "
                             f"memory (extern __shared__ {dynamic.name}) and no launch in the "
                             "file says how much: give shared: (bytes)")
            self.shared = "TODO"

    def draft(self) -> Draft:
        """The block's text, with what was guessed and what is left TODO."""
        host, sizes = self.host, self.sizes
        fixed = not sizes and host is not None
        if fixed:  # a launch of fixed size: one size, the largest buffer's, verified as is
            self._fixed_size()
        lines = ["/* klc-spec", f"kernel: {self.fn.name}"]
        lines.append("sizes: {" + ", ".join(f"{n}: {v}" for n, v in sizes.items()) + "}"
                     + (("  # from the host code" + ("; guessed where marked below"
                                                    if host.free else ""))
                        if host else "  # guessed: see below"))
        if fixed:
            lines.append("verify_sizes: [{" + ", ".join(f"{n}: {v}" for n, v in sizes.items())
                         + "}]  # the launch is fixed: verified at its one size")
        else:
            lines.extend(self._verify_sizes())
        lines.append("args:" if self.sig else "args: []")
        for p, ct, ptr in self.sig:
            lines.append(self._arg_line(p, ct, ptr))
        lines.append(f"grid: [{', '.join(quote(tidy(g)) for g in self.grid)}]")
        lines.append(f"block: [{', '.join(quote(tidy(b)) for b in self.block)}]")
        if self.shared and self.shared.strip() not in ("0", ""):
            lines.append(f"shared: {quote(tidy(self.shared))}")
        lines.append("# klc spec init drafted this block; review it, then remove this line.")
        for g in self.guessed:
            lines.append(f"# guessed: {g}")
        for t in self.todo:
            lines.append(f"# TODO: {t}")
        lines.append("*/")
        return Draft(self.fn.name, "\n".join(lines) + "\n", self.guessed, self.todo, sizes,
                     host is not None)

    def _verify_sizes(self) -> list[str]:
        """The gate's default verify sizes where each gives a launch and buffers (a size that
        is a shift count, ``1 << power``, may not: verify then runs at the sizes that do, or
        at the profiling sizes); nothing where all of them do."""
        sizes = self.sizes
        block_x = evaluate_or_none(self.block[0], dict(sizes)) if self.block else None
        if not sizes or block_x is None or any("TODO" in g for g in self.grid):
            return []
        defaults = default_verify_sizes(dict(sizes), block_x)

        def valid(vs: dict[str, int]) -> bool:
            exprs = [*self.grid, *(d for dims in self.shapes.values() for d in dims)]
            return all((evaluate_or_none(e, vs) or 0) >= 1 for e in exprs)

        good = [vs for vs in defaults if valid(vs)]
        if len(good) == len(defaults):
            return []
        keep = good or [dict(sizes)]
        bad = next(vs for vs in defaults if not valid(vs))
        self.guessed.append(f"verify_sizes: the gate's default {bad} gives an empty grid or "
                            "buffer, so verify_sizes lists those that do")
        return ["verify_sizes: [" + ", ".join(
            "{" + ", ".join(f"{n}: {v}" for n, v in vs.items()) + "}" for vs in keep) + "]"]

    def _fixed_size(self) -> None:
        """Sizes for a launch that has none (every extent a constant): ``n``, the largest
        buffer's element count, which the shapes equal to it then name."""
        counts = [int(d[0]) for d in self.shapes.values() if len(d) == 1 and d[0].isdigit()]
        n = max(counts, default=1)
        self.sizes["n"] = n
        for name, dims in self.shapes.items():
            if dims == [str(n)]:
                self.shapes[name] = ["n"]
        self.guessed.append(f"sizes.n: {n}, the largest buffer (every extent of the launch "
                            "is a constant)")

    def _arg_line(self, p: Param, ct: CType, ptr: bool) -> str:
        host, name = self.host, p.name
        if ptr:
            shape = ", ".join(quote(d) for d in self.shapes[name])
            entry = f"  - {{name: {name}, shape: [{shape}], role: {self.roles[name]}"
            if name in self.inits:
                entry += f", init: {quote(self.inits[name])}"
            return entry + "}"
        if name in self.param_value and name in (self.size_params if host is None else
                                                 self.param_value):
            value = self.param_value[name]
            if host is not None and name in self.float_values:
                number = self.float_values[name]
                if number is not None:
                    shown = f"{number:.9g}"
                    why = "" if tidy(value) == shown else f": {tidy(value).replace('//', '/')}"
                    return (f"  - {{name: {name}, value: {shown}}}  # from the "
                            f"launch{why}")
            unknown = [n for n in re.findall(r"\b[A-Za-z_]\w*\b", value)
                       if n in self.float_free]
            if host is not None and unknown:
                self.guessed.append(f"args.{name}: uniform(0.5, 2)")
                return (f"  - {{name: {name}, init: \"uniform(0.5, 2)\"}}  # guessed: "
                        f"{self.float_free[unknown[0]]}")
            if host is not None and name not in self.size_params and \
                    evaluate_or_none(value, dict(self.sizes)) is None:
                self.guessed.append(f"args.{name}: uniform(0.5, 2)")
                return (f"  - {{name: {name}, init: \"uniform(0.5, 2)\"}}  # guessed: "
                        f"the launch passes {value}, which klc cannot evaluate")
            if host is not None and name not in self.size_params:
                return f"  - {{name: {name}, value: {quote(tidy(value))}}}  # from the launch"
            return f"  - {{name: {name}, value: {quote(tidy(value))}}}"
        if ct.dtype.startswith("float") or ct.dtype == "bfloat16":
            self.guessed.append(f"args.{name}: uniform(0.5, 2)")
            return (f"  - {{name: {name}, init: \"uniform(0.5, 2)\"}}  # guessed: any "
                    "value in range")
        self.guessed.append(f"args.{name}: 3 (an integer that bounds nothing)")
        return f"  - {{name: {name}, value: 3}}  # guessed: not a size"


def _role(p: Param, acc: list[Access]) -> str:
    """``in`` for a const (in the spec's sense) or never written buffer; else ``inout``
    where it is read too, ``out`` where only written."""
    written = any(a.write for a in acc)
    parsed = parse_ctype(p.type)
    if p.const or (parsed is not None and parsed[2]) or not written:
        return "in"
    return "inout" if any(a.read for a in acc) else "out"


def _choose_sizes(size_params: list[str], loop_bounded: set[str], k: Kernel,
                  ranges: Ranges, corners: Callable[[str, Env], tuple[int | None, str]],
                  env_for: Callable[[dict[str, int]], Env | None],
                  fixed: dict[str, int]) -> dict[str, int]:
    """Values for the sizes: a loop bound 64 (when there are other sizes), the others one
    value, the largest that keeps every buffer at or under TARGET_ELEMENTS. Where one value
    for all gives no launch (``dim // heads`` threads), sizes are also tried 8, 64 and 512
    times smaller than the largest, preferring a launch of at least 64 threads a block."""
    if not size_params:
        return {}
    loop = {n for n in loop_bounded if len(size_params) > 1}
    if loop == set(size_params):
        loop = set()
    free = [n for n in size_params if n not in loop]
    shifts = list(itertools.product((0, 3, 6, 9), repeat=len(free))) if len(free) <= 3 \
        else [(0,) * len(free)]
    shifts.sort(key=sum)
    fallback: dict[str, int] = {}
    for e in range(24, 0, -1):
        for ks in shifts:
            if any(e - s < 0 for s in ks):
                continue
            vals = {**fixed, **{n: LOOP_SIZE for n in loop},
                    **{n: 1 << (e - s) for n, s in zip(free, ks, strict=True)}}
            env = env_for(vals)
            if env is None or not _fits(k, ranges, corners, env):
                continue
            chosen = {n: vals[n] for n in size_params}
            threads = env.get("_blockDim_x", 1) * env.get("_blockDim_y", 1) * \
                env.get("_blockDim_z", 1)
            if threads >= 64 or "_gridDim_x" not in env:
                return chosen
            fallback = fallback or chosen
        if fallback:
            return fallback
    return {n: 1024 for n in size_params}


def _fits(k: Kernel, ranges: Ranges, corners: Callable[[str, Env], tuple[int | None, str]],
          env: Env) -> bool:
    """Every buffer bounded and at most TARGET_ELEMENTS, every range not empty."""
    biggest = 0
    for a in k.accesses:
        got, _ = corners(a.index, env)
        if got is None:
            return False
        biggest = max(biggest, got + 1)
    for var, (_, hi) in ranges.items():
        if var.startswith("_v_"):
            continue
        x = evaluate_or_none(resolve_free(hi, ranges, env), env)
        if x is not None and x < 0:
            return False
    return 0 < biggest <= TARGET_ELEMENTS
