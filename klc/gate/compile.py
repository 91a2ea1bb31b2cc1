"""Stage 1 of the gate: compile device code with NVRTC (through CuPy's bindings), no GPU needed.

Why NVRTC directly rather than ``cupy.RawModule(code=...)``: RawModule compiles lazily, on the
first ``get_function``, and then loads the module, which needs a GPU. The gate must compile
on a machine without one and report registers and spills there too. So the cubin is made
here with the same library CuPy uses (``cupy_backends.cuda.libs.nvrtc``), with name
expressions so that templated and C++-mangled kernels both work, and the child process loads
that cubin with ``cupy.RawModule(path=...)`` by its lowered name. ``-Xptxas=-v`` makes NVRTC
return ptxas's resource report (registers, spill bytes, stack frame, static shared memory),
which is parsed here: no cuobjdump, no GPU. NVRTC itself runs in a child process with a time
limit (``klc.gate.nvrtc``): a compile that crashes NVRTC or never ends is this file's error.

A kernel file may hold host code (a ``main`` that launches the kernel): NVRTC compiles device
code only, so host functions are blanked (same bytes count, newlines kept, so every line
number in NVRTC's log is still the file's) along with includes of host-only headers, and the
record lists what was removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from klc.cuda.flags import flags_for
from klc.cuda.model import Unit
from klc.errors import KlcError, shown
from klc.fsutil import atomic_write
from klc.gate.headers import angle_includes, shadow_headers

DEFAULT_ARCH = "sm_90"  # the design's target (H100 / H200) when no GPU is there to ask
BASE_OPTIONS = ("-std=c++17", "-Xptxas=-v")
# Headers blanked from the device source: host-only ones (NVRTC has printf and assert built
# in; <algorithm>, <numeric> and <functional> are blanked too, as libcu++'s versions cost
# seconds of NVRTC time and device code seldom uses more of them than std::min and std::max,
# which klc_math.h gives). Standard headers that device code does use (<cmath>, <cstdint>,
# <limits>, <type_traits>, ...) are compiled from klc's shims (klc/nvrtc_include).
HOST_HEADERS = frozenset({
    "cstdio", "stdio.h", "cstdlib", "stdlib.h", "iostream", "vector", "string", "chrono",
    "algorithm", "numeric", "functional", "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h",
    "cstring", "string.h",
    "cassert", "assert.h", "random", "memory", "iomanip", "fstream", "sstream",
    "ctime", "time.h", "map", "unordered_map", "thread", "omp.h", "unistd.h", "sys/time.h",
    "cublas_v2.h", "cublasLt.h", "cudnn.h", "curand.h", "nvtx3/nvToolsExt.h",
    "nvToolsExt.h", "set", "unordered_set", "list", "deque", "queue", "stack", "ostream",
    "istream", "mutex", "optional", "filesystem", "cerrno", "errno.h", "getopt.h",
})
# Umbrella headers NVRTC refuses whose device parts a kernel uses: compiled as klc's shim of
# the same name length that includes those parts (klc/nvrtc_include)
DEVICE_PARTS = {"cub/cub.cuh": "klc_cub.cuh"}
# The warp intrinsics without a mask, which CUDA declares only below compute capability 7.0:
# a file that calls one is compiled with klc_warp_legacy.h pre-included
_LEGACY_WARP_RE = re.compile(rb"\b__(?:shfl(?:_up|_down|_xor)?|any|all|ballot)[ \t]*\(")
_INCLUDE_RE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*", re.M)
_LOG_LINE_RE = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<rest>.*)$")
_PTXAS_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)'")
_PTXAS_PROPS_RE = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED_RE = re.compile(r"Used (\d+) registers")
_PTXAS_SMEM_RE = re.compile(r"(\d+) bytes smem")
_PTXAS_CMEM_RE = re.compile(r"(\d+) bytes cmem\[0\]")
_PTXAS_BARRIERS_RE = re.compile(r"used (\d+) barriers")


def cache_dir() -> Path:
    """Where compiled modules and device figures are kept: ``$KLC_CACHE_DIR`` or
    ``~/.cache/klc``."""
    root = os.environ.get("KLC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "klc")
    return Path(root)


def _nvrtc() -> Any:
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as e:  # pragma: no cover - the package depends on cupy
        raise KlcError(f"cannot load NVRTC through CuPy: {e}") from None
    return nvrtc


def _ask_nvrtc(question: str) -> Any:
    """NVRTC's answer to a question without arguments; the first one loads its shared
    library, which may not be found (the ``nvidia-cuda-nvrtc`` wheel missing, or installed
    in another environment than this Python's): said in one line, not as a traceback."""
    try:
        return getattr(_nvrtc(), question)()
    except KlcError:
        raise
    except Exception as e:  # (cuda.pathfinder's DynamicLibNotFoundError, OSError, ...)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise KlcError(f"NVRTC cannot be loaded: {first}. klc compiles with the "
                       "nvidia-cuda-nvrtc wheel: install klc with its dependencies in this "
                       f"Python environment ({sys.prefix})") from None


@cache
def nvrtc_version() -> str:
    major, minor = _ask_nvrtc("getVersion")
    return f"{major}.{minor}"


@cache
def supported_archs() -> tuple[int, ...]:
    return tuple(int(a) for a in _ask_nvrtc("getSupportedArchs"))


def check_arch(arch: str) -> str:
    """Normalise and validate an arch (``sm_90``, ``90``, ``sm_90a``) against this NVRTC."""
    a = arch.strip().lower()
    if a.startswith("compute_"):
        raise KlcError(f"arch {arch!r}: the gate needs machine code, give sm_XX (compute_XX "
                       "makes PTX only)")
    m = re.fullmatch(r"(?:sm_?)?(\d+)([af]?)", a)
    if m is None:
        raise KlcError(f"arch {arch!r} is not an arch like sm_90 or sm_90a")
    num = int(m.group(1))
    if num not in supported_archs():
        archs = ", ".join(f"sm_{x}" for x in supported_archs())
        raise KlcError(f"arch {arch!r} is not known to NVRTC {nvrtc_version()} "
                       f"(it supports: {archs})")
    return f"sm_{num}{m.group(2)}"


SHIM_DIR = Path(__file__).resolve().parent.parent / "nvrtc_include"
# Which pip package carries which headers (CUDA 13 wheels install under nvidia/cu13/include)
CCCL_PACKAGE = "nvidia-cuda-cccl"
RUNTIME_PACKAGE = "nvidia-cuda-runtime"
CRT_PACKAGE = "nvidia-cuda-crt"
_CCCL_PREFIXES = ("cub/", "thrust/", "cuda/", "nv/")


def _wheel_roots() -> list[Path]:
    """``nvidia/cu13/include`` folders of the installed NVIDIA wheels, in sys.path order."""
    import sys

    seen: list[Path] = []
    for entry in sys.path:
        inc = Path(entry or ".") / "nvidia" / "cu13" / "include"
        if inc.is_dir() and inc.resolve() not in seen:
            seen.append(inc.resolve())
    return seen


@cache
def cuda_include_dirs() -> tuple[str, ...]:
    """CUDA's headers for NVRTC, from pip packages only (never a system toolkit; NVRTC itself
    searches no folder): the runtime and math headers (``cuda_fp16.h``,
    ``cooperative_groups.h``, ``mma.h``, ``crt/``: nvidia-cuda-runtime, nvidia-cuda-crt),
    and CCCL (CUB, Thrust, libcu++'s ``cuda/std``, ``cuda/pipeline``: nvidia-cuda-cccl, under
    ``include/cccl``)."""
    dirs: list[str] = []
    for root in _wheel_roots():
        for d in (root, root / "cccl"):
            marker = "cuda_runtime.h" if d == root else "cuda/std/version"
            if (d / marker).is_file() and str(d) not in dirs:
                dirs.append(str(d))
    return tuple(dirs)


def include_dirs(local: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The gate's include path: CUDA's headers (above), the kernel's own folder, then klc's
    shims for the standard headers device code includes (``<cmath>`` with ``M_PI`` and
    ``INFINITY``, ``<cstdint>``, ``<limits>``, ...), last, so that the kernel's own headers
    win."""
    return (*cuda_include_dirs(), *local, str(SHIM_DIR))


def header_package(header: str) -> str | None:
    """The pip package that carries a CUDA header, or None for a header of no CUDA package."""
    h = header.replace("\\", "/")
    if h.startswith(_CCCL_PREFIXES):
        return CCCL_PACKAGE
    if h.startswith("crt/"):
        return CRT_PACKAGE
    if (h.startswith(("cuda_", "cooperative_groups", "sm_", "device_", "vector_", "cuComplex"))
            or h in {"mma.h", "math_constants.h", "math_functions.h", "builtin_types.h",
                     "host_defines.h", "driver_types.h", "library_types.h",
                     "texture_types.h", "surface_types.h", "channel_descriptor.h"}):
        return RUNTIME_PACKAGE
    return None


_MISSING_RE = re.compile(r'(?:cannot|could not) open source file "([^"]+)"')


def missing_header_note(log: str) -> str | None:
    """For NVRTC's "cannot open source file" error, one line saying which header is missing,
    where the gate looked, and what provides it."""
    m = _MISSING_RE.search(log)
    if m is None:
        return None
    header = m.group(1)
    pkg = header_package(header)
    where = ", ".join(include_dirs())
    if pkg is not None:
        return (f"missing header <{header}>: it comes from the pip package {pkg}, which does "
                f"not have it in this environment (searched: {where}); install klc's "
                f"dependencies (pip install -e .) or a {pkg} that has it")
    return (f"missing header <{header}>: no CUDA package has it, and NVRTC has no system "
            "include path; the gate searches the kernel's folder, the CUDA wheels' headers "
            "and klc's shims of the standard headers device code uses (cmath, cstdint, "
            "limits, type_traits, ...; see docs/spec.md)")


@cache
def headers_fingerprint() -> str:
    """The header packages' versions and the shims' bytes, for the compile cache's key: a
    cubin built against other headers is not reused."""
    from importlib import metadata

    h = hashlib.sha256()
    for pkg in (RUNTIME_PACKAGE, CRT_PACKAGE, CCCL_PACKAGE):
        try:
            h.update(f"{pkg}={metadata.version(pkg)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{pkg}=none\0".encode())
    for p in sorted(SHIM_DIR.iterdir()):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


# --------------------------------------------------------------------------------------
# Preparing device source


@dataclass(frozen=True)
class Prepared:
    """Device source for NVRTC: same length and lines as the file, host code blanked."""

    source: bytes
    removed: tuple[str, ...]  # "host function main at 40:1", "#include <cstdio> at 3:1"


def _blank(buf: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if buf[i] not in (0x0A, 0x0D):
            buf[i] = 0x20


def prepare_device_source(unit: Unit) -> Prepared:
    """Blank host functions (they launch kernels, use the runtime API: NVRTC cannot compile
    them) and includes of host-only headers; line numbers stay those of the file."""
    buf = bytearray(unit.source)
    if buf.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark: NVRTC reads it as a token
        _blank(buf, 0, 3)
    removed: list[str] = []
    for f in unit.functions:
        if f.kind == "host" and "constexpr" not in f.specifiers:
            _blank(buf, f.start, f.end)
            line, col = unit.position(f.start)
            removed.append(f"host function {f.name} at {line}:{col}")
    for node, what in _host_declarations(unit):
        _blank(buf, node.start_byte, node.end_byte)
        line, col = unit.position(node.start_byte)
        removed.append(f"{what} {_declared(unit, node)} at {line}:{col}")
    for m in _INCLUDE_RE.finditer(unit.source):
        header = m.group(1).decode("utf-8", "replace")
        if header in HOST_HEADERS:
            _blank(buf, m.start(), m.end())
            line, col = unit.position(m.start())
            removed.append(f"#include <{header}> at {line}:{col}")
        elif header in DEVICE_PARTS:  # (the same length: every column stays the file's)
            buf[m.start(1):m.end(1)] = DEVICE_PARTS[header].encode()
            line, col = unit.position(m.start())
            removed.append(f"#include <{header}> at {line}:{col} (compiled as its device "
                           f"headers, {DEVICE_PARTS[header]})")
    return Prepared(bytes(buf), tuple(removed))


_DEVICE_STORAGE_RE = re.compile(rb"\b(__device__|__constant__|__managed__|__shared__|const|"
                                rb"constexpr|typedef)\b")
_DEVICE_FUNCTION_RE = re.compile(rb"\b(__device__|__global__|constexpr)\b")


def _host_declarations(unit: Unit) -> list[tuple[Any, str]]:
    """The namespace-scope declarations of host code, which NVRTC refuses and device code
    cannot use: variables without ``__device__``/``__constant__``/``__managed__`` that are
    not ``const`` (``unsigned long long rng_seed;``, ``float* d_buf = nullptr;``), and
    prototypes of host functions (``void launch(float* y, int n);``). A declaration that
    defines a type is kept."""
    found = []
    stack = list(unit.root.named_children)
    while stack:
        n = stack.pop()
        if n.type == "namespace_definition":
            body = n.child_by_field_name("body")
            stack.extend(body.named_children if body is not None else ())
            continue
        if n.type != "declaration":
            continue
        declarators = n.children_by_field_name("declarator")
        kind = n.child_by_field_name("type")
        if not declarators or (kind is not None and kind.child_by_field_name("body")
                               is not None):
            continue
        head = unit.source[n.start_byte:declarators[0].start_byte]
        functions = [_is_function(d) for d in declarators]
        if all(functions):
            if _DEVICE_FUNCTION_RE.search(head) is None:
                found.append((n, "host function declaration"))
        elif not any(functions) and _DEVICE_STORAGE_RE.search(head) is None:
            found.append((n, "host variable"))
    return sorted(found, key=lambda f: f[0].start_byte)


def _is_function(d: Any) -> bool:
    while d is not None and d.type in ("pointer_declarator", "reference_declarator",
                                       "init_declarator"):
        d = d.child_by_field_name("declarator")
    return d is not None and d.type == "function_declarator"


def _declared(unit: Unit, n: Any) -> str:
    names = []
    for d in n.children_by_field_name("declarator"):
        while d is not None and d.type != "identifier" and d.child_by_field_name(
                "declarator") is not None:
            d = d.child_by_field_name("declarator")
        names.append(unit.text(d) if d is not None else "?")
    return ", ".join(names)


# --------------------------------------------------------------------------------------
# Compiling


@dataclass
class Resources:
    """ptxas's report for one entry function."""

    registers: int | None = None
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    static_smem: int = 0
    const_mem: int = 0
    barriers: int = 0


@dataclass
class CompileResult:
    ok: bool
    arch: str
    options: tuple[str, ...]
    key: str  # sha256 of source + options + name expressions + NVRTC version
    cached: bool
    log: str  # NVRTC's log as it came (for the record)
    error: str | None = None  # the log with lines mapped to the file, when it failed
    cubin_path: str | None = None
    lowered: dict[str, str] = field(default_factory=dict)  # name expression -> mangled name
    resources: dict[str, Resources] = field(default_factory=dict)  # by name expression
    resources_source: str = "ptxas -v (NVRTC -Xptxas=-v), no GPU needed"
    removed: tuple[str, ...] = ()
    include: tuple[str, ...] = ()  # the -I folders, in order

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "arch": self.arch, "options": list(self.options), "key": self.key,
            "cached": self.cached, "error": self.error, "cubin": self.cubin_path,
            "lowered": self.lowered,
            "resources": {k: vars(v) for k, v in self.resources.items()},
            "resources_source": self.resources_source, "removed_host_code": list(self.removed),
            "include": list(self.include), "nvrtc": nvrtc_version(),
        }


def parse_ptxas(log: str) -> dict[str, Resources]:
    """Per mangled entry name, the resources ptxas reported (``-Xptxas=-v``)."""
    out: dict[str, Resources] = {}
    current: Resources | None = None
    for line in log.splitlines():
        m = _PTXAS_ENTRY_RE.search(line)
        if m:
            current = out.setdefault(m.group(1), Resources())
            continue
        if current is None:
            continue
        if m := _PTXAS_PROPS_RE.search(line):
            current.stack_frame, current.spill_stores, current.spill_loads = map(int, m.groups())
        if m := _PTXAS_USED_RE.search(line):
            current.registers = int(m.group(1))
            if s := _PTXAS_SMEM_RE.search(line):
                current.static_smem = int(s.group(1))
            if c := _PTXAS_CMEM_RE.search(line):
                current.const_mem = int(c.group(1))
            if b := _PTXAS_BARRIERS_RE.search(line):
                current.barriers = int(b.group(1))
    return out


def map_log(log: str, program: str, path: str, source: bytes) -> str:
    """Rewrite NVRTC's ``prog(12): error: ...`` lines as ``path:12:col: error: ...``, the
    column read off the caret line NVRTC prints under the quoted source."""
    lines = log.splitlines()
    out: list[str] = []
    src_lines = source.decode("utf-8", "replace").splitlines()
    i = 0
    while i < len(lines):
        m = _LOG_LINE_RE.match(lines[i])
        if m and m.group("file") == program:
            lineno = int(m.group("line"))
            col = None
            # NVRTC follows a diagnostic with the source line and a caret line
            if i + 2 < len(lines) and lines[i + 2].strip() == "^":
                caret = lines[i + 2].index("^")
                quoted = lines[i + 1]
                if 0 < lineno <= len(src_lines):
                    real = src_lines[lineno - 1]
                    shift = len(quoted) - len(quoted.lstrip()) - (len(real) - len(real.lstrip()))
                    col = caret - shift + 1
            loc = f"{shown(path)}:{lineno}" + (f":{col}" if col and col > 0 else "")
            out.append(f"{loc}: {m.group('rest')}")
            if 0 < lineno <= len(src_lines):
                out.append(f"    {src_lines[lineno - 1].rstrip()}")
                if col and col > 0:
                    out.append("    " + " " * (col - 1) + "^")
            i += 3 if col else 1
            continue
        if lines[i].strip():
            out.append(lines[i])
        i += 1
    return "\n".join(out)


def compile_unit(unit: Unit, *, arch: str, name_expressions: tuple[str, ...] = (),
                 options: tuple[str, ...] = (), use_cache: bool = True) -> CompileResult:
    """Compile a unit's device code for ``arch`` (host code blanked, see the module doc)."""
    prepared = prepare_device_source(unit)
    local = os.path.dirname(os.path.abspath(unit.path)) if unit.path != "<memory>" else None
    # the command's -I/-D and the file's compile_commands.json entry (klc.cuda.flags)
    flags = flags_for(unit.path)
    search = (*((local,) if local else ()), *flags.include)
    # the project's headers with their host code blanked, searched first (klc.gate.headers)
    shadow, names = shadow_headers(unit.source, unit.path, search, cache_dir(),
                                   lambda u: prepare_device_source(u).source, HOST_HEADERS)
    result = compile_source(angle_includes(prepared.source, names), unit.path, arch=arch,
                            name_expressions=name_expressions,
                            options=(*options, *(o for o in flags.compiler_options()
                                                 if not o.startswith("-I"))),
                            include=(*((shadow,) if shadow else ()), *search),
                            use_cache=use_cache)
    result.removed = prepared.removed
    return result


def compile_source(source: bytes, path: str, *, arch: str,
                   name_expressions: tuple[str, ...] = (), options: tuple[str, ...] = (),
                   include: tuple[str, ...] = (), use_cache: bool = True) -> CompileResult:
    """Compile device source with NVRTC; results are cached on disk by the hash of source,
    options, name expressions and NVRTC version. A compile error is a result (``ok`` false,
    ``error`` the log with file:line:col), a bad option or arch a KlcError."""
    arch = check_arch(arch)
    inc = include_dirs(include)
    # nvcc's implicit cuda_runtime.h brings the host's <math.h> (M_PI, INFINITY) into every
    # file: klc_math.h (in the shims' folder) is pre-included for the same effect
    opts = (f"-arch={arch}", *BASE_OPTIONS, *options, *(f"-I{d}" for d in inc),
            "--pre-include=klc_math.h",
            *(("--pre-include=klc_warp_legacy.h",) if _LEGACY_WARP_RE.search(source) else ()))
    h = hashlib.sha256()
    for part in (source, *opts, "\0", *name_expressions, nvrtc_version(),
                 headers_fingerprint()):
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    shown_opts = (f"-arch={arch}", *BASE_OPTIONS, *options)
    cdir = cache_dir() / "modules"
    meta_path, cubin_path = cdir / f"{key}.json", cdir / f"{key}.cubin"
    if use_cache and meta_path.is_file() and cubin_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
            return CompileResult(
                ok=True, arch=arch, options=shown_opts, key=key, cached=True, log=meta["log"],
                include=inc,
                cubin_path=str(cubin_path), lowered=meta["lowered"],
                resources=_resources_by_name(parse_ptxas(meta["log"]), meta["lowered"]))
        except (OSError, ValueError, KeyError):
            pass  # a damaged entry: compile again and overwrite it

    from klc.gate.nvrtc import VERBOSE_PTXAS, compile_program

    program = os.path.basename(path) or "kernel.cu"
    reply = compile_program(source.decode("utf-8", "replace"), program, opts,
                            name_expressions)
    if reply.failure:  # the child timed out or crashed: this file's error, not klc's
        return CompileResult(ok=False, arch=arch, options=shown_opts, key=key, cached=False,
                             log="", error=f"{shown(path)}: {reply.failure}", include=inc)
    if not reply.ok:
        log = reply.log
        if reply.invalid_option:
            raise KlcError(f"{shown(path)}: NVRTC {nvrtc_version()} refused the options "
                           f"{' '.join(shown_opts)}: {log.strip()}")
        mapped = map_log(log, program, path, source) or f"{shown(path)}: {reply.error}"
        note = missing_header_note(log)
        if note:
            mapped = _note_after_first_line(mapped, note)
        return CompileResult(ok=False, arch=arch, options=shown_opts, key=key,
                             cached=False, log=log, error=mapped, include=inc)
    log, lowered, cubin = reply.log, reply.lowered, reply.cubin
    if VERBOSE_PTXAS not in reply.options:  # (its report crashed NVRTC: see klc.gate.nvrtc)
        return CompileResult(ok=True, arch=arch, options=shown_opts, key=key, cached=False,
                             log=log, cubin_path=_keep_cubin(cdir, key, cubin),
                             lowered=lowered, include=inc,
                             resources_source=f"none: {reply.note}")
    cdir.mkdir(parents=True, exist_ok=True)
    atomic_write(cubin_path, cubin)
    atomic_write(meta_path, json.dumps({"log": log, "lowered": lowered}).encode())
    return CompileResult(ok=True, arch=arch, options=shown_opts, key=key, cached=False, log=log,
                         cubin_path=str(cubin_path), lowered=lowered, include=inc,
                         resources=_resources_by_name(parse_ptxas(log), lowered))


def _keep_cubin(cdir: Path, key: str, cubin: bytes) -> str:
    """A cubin compiled without ptxas's report: kept for the run (the child loads it), not
    cached as a whole entry (its record would lack the resource figures)."""
    cdir.mkdir(parents=True, exist_ok=True)
    path = cdir / f"{key}.noreport.cubin"
    atomic_write(path, cubin)
    return str(path)


def _note_after_first_line(text: str, note: str) -> str:
    """The missing-header note goes on the error's first line (the one a report shows), as
    ``file:line:col: catastrophic error: cannot open source file "x" (missing header ...)``."""
    first, sep, rest = text.partition("\n")
    return f"{first} ({note}){sep}{rest}"


def _resources_by_name(by_mangled: dict[str, Resources], lowered: dict[str, str]
                       ) -> dict[str, Resources]:
    """Key resources by name expression where one maps to the entry, else by mangled name."""
    back = {v: k for k, v in lowered.items()}
    return {back.get(m, m): r for m, r in by_mangled.items()}
