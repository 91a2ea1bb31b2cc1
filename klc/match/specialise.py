"""Python code made per pattern node (``_specialise``): the matcher's one-to-one case with the
pattern's kinds, counts and tokens written in as constants."""

from __future__ import annotations

from typing import Any

from klc.match.model import Binding
from klc.match.pattern import _IGNORED_TOKENS, PNode

# the code made so far, compiled, by its text
_CODE: dict[str, Any] = {}
_MAX_CODE = 4096


# a pattern node's code is made once the node has been tried this many times: most nodes of
# a library are tried a few times in a run, and compiling code for them costs more than the
# generic matcher does
HOT = 32
_TRIED: dict[int, tuple[PNode, int]] = {}


def fast_of(p: PNode) -> Any:
    """The code made for ``p`` (``_specialise``; False where there is none), made on its
    ``HOT``-th try; None before (the generic matcher, which gives the same verdict and
    bindings)."""
    fast = p.fast
    if fast is not None:
        return fast
    held = _TRIED.get(id(p))
    tries = held[1] + 1 if held is not None and held[0] is p else 1
    if tries < HOT:
        _TRIED[id(p)] = (p, tries)
        return None
    _TRIED.pop(id(p), None)
    return _specialise(p)


def _specialise(p: PNode) -> Any:
    """Python code that does what ``_Matcher.generic`` does for ``p``, with the pattern's
    kinds, counts and tokens written in as constants and its one-to-one children inline, in
    the same order (shape, then ``plan``: tokens, structure, metavariables), so that the
    same bindings come out; kept on the node (``PNode.fast``). False for what it does not
    cover (a leaf, a metavariable, a node with a ``$$$`` run among its children): those go
    to the generic matcher, as do such children of a covered node.

    Only the pattern's own values go into the code, each as a named constant (never as
    source text); the code is made once per pattern node."""
    if p.metavar is not None or p.seq is not None or not p.children or not p.plain:
        object.__setattr__(p, "fast", False)
        return False
    consts: dict[str, Any] = {"Binding": Binding, "_IG": _IGNORED_TOKENS}
    lines = ["def fast(t0, b, m):", "    src = m.source"]
    names = iter(range(1, 1 << 30))

    def const(value: Any) -> str:
        name = f"c{next(names)}"
        consts[name] = value
        return name

    def emit(q: PNode, var: str, ind: str) -> None:
        n = len(q.children)
        tag = next(names)
        kids, ks = f"kids{tag}", [f"k{tag}_{i}" for i in range(n)]
        lines.append(f"{ind}if {var}.type != {const(q.type)}:")
        lines.append(f"{ind}    return False")
        lines.append(f"{ind}{kids} = {var}.children")
        # all children significant when they are as many as the pattern's and none is
        # missing (an error below marks every ancestor); else the significant ones
        lines.append(f"{ind}if len({kids}) != {n} or {var}.has_error:")
        lines.append(f"{ind}    {kids} = m.significant({var})")
        lines.append(f"{ind}    if len({kids}) != {n}:")
        lines.append(f"{ind}        return False")
        lines.append(f"{ind}{', '.join(ks)}, = {kids}")
        shaped = set()
        for i, type_ in q.shape:
            shaped.add(i)
            lines.append(f"{ind}if {ks[i]}.type != {const(type_)}:")
            lines.append(f"{ind}    return False")
        for i, how, pc in q.plan:
            k = ks[i]
            if how == 1:
                if pc.type == "statement":
                    lines.append(f"{ind}if not ({k}.type.endswith('statement') or {k}.type in "
                                 f"('declaration', 'compound_statement')):")
                    lines.append(f"{ind}    return False")
                if pc.kinds is not None and i not in shaped:
                    lines.append(f"{ind}if {k}.type not in {const(pc.kinds)}:")
                    lines.append(f"{ind}    return False")
                if i not in shaped:  # (the unfiltered children may hold a comment)
                    lines.append(f"{ind}if {k}.type in _IG:")
                    lines.append(f"{ind}    return False")
                if pc.metavar == "_":
                    continue
                name = const(pc.metavar)
                old = f"old{tag}_{i}"
                lines.append(f"{ind}{old} = b.get({name})")
                lines.append(f"{ind}if {old} is None:")
                lines.append(f"{ind}    b[{name}] = Binding({name}, {k}.start_byte, {k}.end_byte, "
                             f"None, ({k},), src)")
                lines.append(f"{ind}elif not m.same({old}, {k}.start_byte, {k}.end_byte):")
                lines.append(f"{ind}    return False")
            elif how == 0:
                raw = f"raw{tag}_{i}"
                lines.append(f"{ind}if {k}.child_count and m.significant({k}):")
                lines.append(f"{ind}    return False")
                lines.append(f"{ind}{raw} = src[{k}.start_byte:{k}.end_byte]")
                lines.append(f"{ind}if {raw} != {const(pc.raw)} and {const(pc.text)} != "
                             f"' '.join({raw}.decode('utf-8', 'replace').split()):")
                lines.append(f"{ind}    return False")
            elif pc.metavar is None and pc.seq is None and pc.children and pc.plain:
                emit(pc, k, ind)
            else:
                lines.append(f"{ind}if not m.node({const(pc)}, {k}, b):")
                lines.append(f"{ind}    return False")

    emit(p, "t0", "    ")
    lines.append("    return True")
    text = "\n".join(lines)
    code = _CODE.get(text)
    if code is None:  # (the code depends on the node's shape, its values are constants:
        # nodes of one shape share it, compiled once)
        if len(_CODE) >= _MAX_CODE:
            _CODE.clear()
        code = _CODE[text] = compile(text, "<anchor node>", "exec")
    scope: dict[str, Any] = {}
    exec(code, consts, scope)
    fast = scope["fast"]
    object.__setattr__(p, "fast", fast)
    return fast
