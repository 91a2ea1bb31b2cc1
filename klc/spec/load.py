"""Loading a spec block: the composed YAML nodes (``klc.spec.doc``) validated into a ``Spec``,
refusing unknown fields and bad values with the file:line:col of the offending node."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from klc.errors import KlcError, shown, where
from klc.extras import deferred
from klc.spec.doc import (
    HEADER_RE,
    TOP_FIELDS,
    Doc,
    compose,
    expr,
    expr_list,
    find_spec_block,
    items,
    scalar,
)
from klc.spec.expr import ExprError, expr_names, parse_expr
from klc.spec.model import (
    DEFAULT_TIMEOUT_S,
    DTYPE_C_NAMES,
    INIT_KINDS,
    PEAKS,
    ROLES,
    SCALAR_TYPES,
    VECTOR_TYPES,
    ArgSpec,
    Init,
    Spec,
    Tolerance,
    parse_ctype,
)

if TYPE_CHECKING:
    import yaml
else:
    yaml = deferred("yaml")  # (read only where a klc-spec block is)

_ARG_FIELDS = ("name", "type", "shape", "role", "init", "value")
MAX_SIZE = 1 << 40  # a size beyond this is a typo, not a buffer
MAX_SPEC_BYTES = 256 * 1024  # a spec block longer than this is refused (real ones: < 2 KB)


def _sizes(doc: Doc, node: yaml.Node, what: str) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a mapping like {{n: 1048576}}")
    out: dict[str, int] = {}
    for k, v in node.value:
        name = scalar(doc, k, "a size name")
        if not isinstance(name, str) or not name.isidentifier():
            raise KlcError(f"{doc.at(k)}: size name {name!r} is not an identifier")
        if name in out:
            raise KlcError(f"{doc.at(k)}: size {name} given twice in {what}")
        value = scalar(doc, v, f"size {name}")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise KlcError(f"{doc.at(v)}: size {name} must be a positive integer (at most "
                           f"2**40), got {value!r}")
        out[name] = value
    if not out:
        raise KlcError(f"{doc.at(node)}: {what} is empty")
    return out


def _init(doc: Doc, node: yaml.Node) -> Init:
    text = scalar(doc, node, "init")
    if isinstance(text, int | float) and not isinstance(text, bool):
        return Init("constant", (str(text),))
    if not isinstance(text, str):
        raise KlcError(f"{doc.at(node)}: init must be one of {', '.join(INIT_KINDS)}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Name):
        kind, args = tree.id, ()
    elif isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.keywords:
        kind, args = tree.func.id, tuple(ast.unparse(a) for a in tree.args)
    else:
        raise KlcError(f"{doc.at(node)}: init {text!r} is not one of "
                       f"{', '.join(INIT_KINDS)} (e.g. uniform(-1, 1), randint(0, n))")
    if kind not in INIT_KINDS:
        raise KlcError(f"{doc.at(node)}: unknown init {kind!r} (known: {', '.join(INIT_KINDS)})")
    lo, hi = INIT_KINDS[kind]
    if not lo <= len(args) <= hi:
        raise KlcError(f"{doc.at(node)}: init {kind} takes {lo} to {hi} arguments")
    for a in args:
        try:
            parse_expr(a)
        except ExprError as e:
            raise KlcError(f"{doc.at(node)}: init {kind}: {e}") from None
    return Init(kind, args)


def _arg(doc: Doc, node: yaml.Node, index: int) -> ArgSpec:
    what = f"args[{index}]"
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a mapping like "
                       "{name: x, shape: [n], role: in, init: normal}")
    f = items(doc, node, _ARG_FIELDS, what)
    line, col = doc.pos(node.start_mark)
    if "name" not in f:
        raise KlcError(f"{doc.at(node)}: {what} has no name")
    name = scalar(doc, f["name"][1], "name")
    if not isinstance(name, str) or not name.isidentifier():
        raise KlcError(f"{doc.at(f['name'][1])}: argument name {name!r} is not an identifier")
    typ = None
    if "type" in f:
        typ = scalar(doc, f["type"][1], "type")
        if not isinstance(typ, str) or parse_ctype(typ) is None:
            raise KlcError(f"{doc.at(f['type'][1])}: argument {name}: unknown type {typ!r} "
                           f"(known: {', '.join([*SCALAR_TYPES, *VECTOR_TYPES])}, "
                           "with * for a pointer)")
    shape = None
    if "shape" in f:
        shape = expr_list(doc, f["shape"][1], f"shape of {name}", 8)
    role = None
    if "role" in f:
        role = scalar(doc, f["role"][1], "role")
        if role not in ROLES:
            raise KlcError(f"{doc.at(f['role'][1])}: argument {name}: role must be one of "
                           f"{', '.join(ROLES)}, got {role!r}")
        if shape is None:
            raise KlcError(f"{doc.at(f['role'][1])}: argument {name}: a role needs a shape "
                           "(a scalar has a value or an init instead)")
    init = _init(doc, f["init"][1]) if "init" in f else None
    value = expr(doc, f["value"][1], f"value of {name}") if "value" in f else None
    if shape is not None:
        if value is not None:
            raise KlcError(f"{doc.at(f['value'][1])}: argument {name} is a buffer (it has a "
                           "shape); a value is for scalars, use init")
        if role is None:
            raise KlcError(f"{doc.at(node)}: buffer argument {name} needs a role "
                           f"({', '.join(ROLES)})")
        if init is None and role != "out":
            init = Init("normal")
    elif value is not None and init is not None:
        raise KlcError(f"{doc.at(node)}: scalar argument {name}: give a value or an init, "
                       "not both")
    return ArgSpec(name, typ, shape, role, init, value, line, col)


def load_spec(source: bytes, path: str) -> Spec | None:
    """Read the file's spec block; None when it has none, KlcError (file:line:col) if bad.

    The one place spec text is read: whatever the block holds, the outcome is a Spec, None or
    a KlcError naming the file and line (never another exception)."""
    span = find_spec_block(source)
    if span is None:
        return None
    line = source.count(b"\n", 0, span[0]) + 1
    if span[1] - span[0] > MAX_SPEC_BYTES:
        raise KlcError(f"{where(path, line, 1)}: klc-spec block of {span[1] - span[0]} bytes "
                       f"(at most {MAX_SPEC_BYTES})")
    again = HEADER_RE.search(source, span[1])
    if again is not None:
        second = source.count(b"\n", 0, again.start()) + 1
        raise KlcError(f"{where(path, second, 1)}: a second klc-spec block (the first is at "
                       f"line {line}); a file has one")
    try:
        return _load_spec(source, path, span)
    except KlcError:
        raise
    except RecursionError:
        raise KlcError(f"{where(path, line, 1)}: klc-spec nested too deeply") from None
    except (yaml.YAMLError, ArithmeticError, ValueError, TypeError, MemoryError) as e:
        raise KlcError(f"{where(path, line, 1)}: bad klc-spec: {type(e).__name__}: {e}"
                       ) from None


Fields = dict[str, tuple["yaml.Node", "yaml.Node"]]  # field name -> (key node, value node)
Locations = dict[str, tuple[int, int]]


def _load_spec(source: bytes, path: str, span: tuple[int, int]) -> Spec:
    doc = Doc(source, path, span)
    root = compose(doc)
    f = items(doc, root, TOP_FIELDS, "klc-spec")
    loc: Locations = {"": doc.pos(root.start_mark)}
    for key, (_, v) in f.items():
        loc[key] = doc.pos(v.start_mark)
    for key in ("kernel", "sizes", "args", "grid", "block"):
        if key not in f:
            raise KlcError(f"{doc.at(root)}: klc-spec has no {key!r} field")
    kernel = _kernel(doc, f)
    template = _template(doc, f, kernel, loc)
    sizes = _sizes(doc, f["sizes"][1], "sizes")
    spec = Spec(path=path, kernel=kernel.strip(), template=template, sizes=sizes,
                verify_sizes=_verify_sizes(doc, f, sizes), args=_args(doc, f, loc),
                grid=expr_list(doc, f["grid"][1], "grid", 3),
                block=expr_list(doc, f["block"][1], "block", 3),
                shared=expr(doc, f["shared"][1], "shared") if "shared" in f else "0",
                bytes=expr(doc, f["bytes"][1], "bytes") if "bytes" in f else None,
                flops=expr(doc, f["flops"][1], "flops") if "flops" in f else None,
                peak=_peak(doc, f), tolerance=_tolerance(doc, f), timeout_s=_timeout(doc, f),
                options=_options(doc, f), span=span, loc=loc, dtype=_dtype(doc, f, loc))
    if "<" not in spec.kernel:  # else the template's names are known only from the signature
        check_names(spec, {n for n, _ in spec.template})
    return spec


def _kernel(doc: Doc, f: Fields) -> str:
    kernel = scalar(doc, f["kernel"][1], "kernel")
    if not isinstance(kernel, str) or not re.fullmatch(r"[A-Za-z_]\w*(\s*<.*>)?", kernel.strip()):
        raise KlcError(f"{doc.at(f['kernel'][1])}: kernel must be a function name, optionally "
                       f"with template arguments (reduce<256>), got {kernel!r}")
    return kernel


def _template(doc: Doc, f: Fields, kernel: str, loc: Locations) -> tuple[tuple[str, str], ...]:
    template: list[tuple[str, str]] = []
    if "template" not in f:
        return ()
    node = f["template"][1]
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: template must be a mapping like {{BLOCK: 256}}")
    for k, v in node.value:
        tname = scalar(doc, k, "a template parameter")
        if not isinstance(tname, str) or not tname.isidentifier():
            raise KlcError(f"{doc.at(k)}: template parameter {tname!r} is not a name")
        val = scalar(doc, v, f"template argument {tname}")
        if isinstance(val, bool):
            val = "true" if val else "false"
        template.append((tname, str(val)))
        loc[f"template.{tname}"] = doc.pos(v.start_mark)
    if "<" in kernel:
        raise KlcError(f"{doc.at(node)}: give template arguments either in kernel "
                       f"({kernel}) or in template, not both")
    return tuple(template)


def _dtype(doc: Doc, f: Fields, loc: Locations) -> tuple[tuple[str, str], ...]:
    """``dtype: {floatX: bfloat16}``: what element type a name of the source stands for,
    as a dtype name (float32, bfloat16, ...) or a C type the gate knows (float, __half)."""
    if "dtype" not in f:
        return ()
    node = f["dtype"][1]
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: dtype must be a mapping like {{floatX: bfloat16}}")
    out: list[tuple[str, str]] = []
    for k, v in node.value:
        name = scalar(doc, k, "a type name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise KlcError(f"{doc.at(k)}: dtype: {name!r} is not a type name")
        typ = scalar(doc, v, f"the dtype of {name}")
        c_name = DTYPE_C_NAMES.get(typ, typ) if isinstance(typ, str) else None
        parsed = parse_ctype(c_name) if c_name else None
        if parsed is None or parsed[1]:
            raise KlcError(f"{doc.at(v)}: dtype of {name}: unknown element type {typ!r} "
                           f"(known: {', '.join(DTYPE_C_NAMES)}, or a C type: "
                           f"{', '.join([*SCALAR_TYPES, *VECTOR_TYPES])})")
        out.append((name, c_name))
        loc[f"dtype.{name}"] = doc.pos(v.start_mark)
    return tuple(out)


def _verify_sizes(doc: Doc, f: Fields, sizes: dict[str, int]) -> tuple[dict[str, int], ...]:
    verify: list[dict[str, int]] = []
    if "verify_sizes" in f:
        node = f["verify_sizes"][1]
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise KlcError(f"{doc.at(node)}: verify_sizes must be a list of size mappings")
        for item in node.value:
            s = _sizes(doc, item, "a verify size")
            if set(s) != set(sizes):
                raise KlcError(f"{doc.at(item)}: a verify size must set the same names as "
                               f"sizes ({', '.join(sizes)}), got {', '.join(s)}")
            verify.append(s)
    return tuple(verify)


def _args(doc: Doc, f: Fields, loc: Locations) -> tuple[ArgSpec, ...]:
    args_node = f["args"][1]
    if not isinstance(args_node, yaml.SequenceNode):
        raise KlcError(f"{doc.at(args_node)}: args must be a list, one entry per kernel "
                       "parameter in order")
    args = tuple(_arg(doc, n, i) for i, n in enumerate(args_node.value))
    seen: set[str] = set()
    for a, n in zip(args, args_node.value, strict=True):
        if a.name in seen:
            raise KlcError(f"{doc.at(n)}: argument {a.name} listed twice")
        seen.add(a.name)
        loc[f"arg.{a.name}"] = (a.line, a.col)
    return args


def _peak(doc: Doc, f: Fields) -> str:
    peak = "fp32"
    if "peak" in f:
        peak = scalar(doc, f["peak"][1], "peak")
        if peak not in PEAKS:
            raise KlcError(f"{doc.at(f['peak'][1])}: peak must be one of {', '.join(PEAKS)}")
    return peak


def _tolerance(doc: Doc, f: Fields) -> Tolerance | None:
    if "tolerance" not in f:
        return None
    node = f["tolerance"][1]
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: tolerance must be a mapping {{rtol: .., atol: ..}}")
    t = items(doc, node, ("rtol", "atol"), "tolerance")
    vals = {}
    for key in ("rtol", "atol"):
        v = scalar(doc, t[key][1], key) if key in t else 0.0
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 1:
            raise KlcError(f"{doc.at(t[key][1] if key in t else node)}: {key} must be a "
                           "number in [0, 1)")
        vals[key] = float(v)
    return Tolerance(vals["rtol"], vals["atol"])


def _timeout(doc: Doc, f: Fields) -> float:
    if "timeout_s" not in f:
        return DEFAULT_TIMEOUT_S
    timeout = scalar(doc, f["timeout_s"][1], "timeout_s")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
            or not 0 < timeout <= 86400:
        raise KlcError(f"{doc.at(f['timeout_s'][1])}: timeout_s must be a number of seconds "
                       "in (0, 86400]")
    return float(timeout)


# The NVRTC options a spec may give: code generation and macros only, each with the values it
# takes (a regular expression; None: no value). Anything else is refused at load time, with
# the line and column: an option NVRTC does not know (``-1``) would fail every compile with no
# file named, and options that name host files (``--pre-include=/etc/passwd``,
# ``--include-path``) would have NVRTC read, and echo, files the spec has no business with.
_ON_OFF = r"true|false"
SPEC_OPTIONS: dict[str, str | None] = {
    "-std": r"c\+\+(?:11|14|17|20)", "--std": r"c\+\+(?:11|14|17|20)",
    "-D": r"[A-Za-z_]\w{0,127}(?:=[^\x00-\x1f]{0,256})?",
    "--define-macro": r"[A-Za-z_]\w{0,127}(?:=[^\x00-\x1f]{0,256})?",
    "-U": r"[A-Za-z_]\w{0,127}", "--undefine-macro": r"[A-Za-z_]\w{0,127}",
    "-use_fast_math": None, "--use_fast_math": None,
    "-ftz": _ON_OFF, "--ftz": _ON_OFF, "-prec-div": _ON_OFF, "--prec-div": _ON_OFF,
    "-prec-sqrt": _ON_OFF, "--prec-sqrt": _ON_OFF, "-fmad": _ON_OFF, "--fmad": _ON_OFF,
    "-maxrregcount": r"[1-9][0-9]{0,2}", "--maxrregcount": r"[1-9][0-9]{0,2}",
    "-lineinfo": None, "--generate-line-info": None,
    "-restrict": None, "--restrict": None,
    "-extra-device-vectorization": None, "--extra-device-vectorization": None,
    "-default-device": None, "--device-as-default-execution-space": None,
    "-w": None, "--disable-warnings": None,
    "-Xptxas": r"-v|-O[0-3]|--warn-on-spills|-warn-spills|-dlcm=(?:ca|cg|cs)|-dscm=(?:wb|cg|cs|wt)"
               r"|--allow-expensive-optimizations=(?:true|false)",
}


def spec_option_problem(option: str) -> str:
    """Why a spec may not give this NVRTC option ('' when it may)."""
    if option[:2] in ("-D", "-U") and len(option) > 2:  # -DTILE=32, -UNDEBUG
        name, eq, value = option[:2], "=", option[2:]
    else:
        name, eq, value = option.partition("=")
    if name in ("-arch", "--gpu-architecture"):
        return "the arch comes from the device or --arch"
    if name not in SPEC_OPTIONS:
        return ("not an option a spec may give (code generation and macros only: "
                f"{', '.join(o for o in SPEC_OPTIONS if not o.startswith('--'))}; see "
                "docs/spec.md)")
    pattern = SPEC_OPTIONS[name]
    if pattern is None:
        return f"{name} takes no value" if eq else ""
    if not eq:
        return f"{name} needs a value ({name}=...)"
    if not re.fullmatch(pattern, value):
        return f"{name}: value {value!r} is not one klc passes on"
    return ""


def _options(doc: Doc, f: Fields) -> tuple[str, ...]:
    if "options" not in f:
        return ()
    node = f["options"][1]
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
    options = tuple(str(scalar(doc, n, "an option")) for n in nodes)
    for n, o in zip(nodes, options, strict=True):
        problem = spec_option_problem(o)
        if problem:
            raise KlcError(f"{doc.at(n)}: option {shown(o)!r}: {problem}")
    return options


def check_names(spec: Spec, known: set[str]) -> None:
    """Every name an expression uses must be a size or a template parameter: an unknown name
    is a typo the user should hear about now, not at launch on the GPU machine."""
    checks: list[tuple[str, str, str]] = []
    for a in spec.args:
        for e in a.shape or ():
            checks.append((f"arg.{a.name}", e, f"shape of {a.name}"))
        if a.value is not None:
            checks.append((f"arg.{a.name}", a.value, f"value of {a.name}"))
        for e in a.init.args if a.init else ():
            checks.append((f"arg.{a.name}", e, f"init of {a.name}"))
    for key in ("grid", "block"):
        for e in getattr(spec, key):
            checks.append((key, e, key))
    for key in ("shared", "bytes", "flops"):
        e = getattr(spec, key)
        if e is not None:
            checks.append((key, e, key))
    for key, e, what in checks:
        unknown = sorted(expr_names(e) - known - set(spec.sizes))
        if unknown:
            others = sorted(known)
            raise KlcError(f"{spec.where(key)}: {what} refers to unknown size {unknown[0]!r} "
                           f"(sizes: {', '.join(spec.sizes)}"
                           + (f"; template constants: {', '.join(others)}" if others else "")
                           + ")")
