"""Finding a file's klc-spec block and reading its YAML into nodes that remember their
file line:column, so that every refusal names the place (the first of the two loading steps;
``klc.spec.load`` validates the nodes)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError, where
from klc.extras import deferred
from klc.spec.expr import ExprError, parse_expr

if TYPE_CHECKING:
    import yaml
else:
    yaml = deferred("yaml")  # (read only where a klc-spec block is)

HEADER_RE = re.compile(rb"/\*[ \t]*klc-spec\b")
TOP_FIELDS = ("kernel", "template", "sizes", "verify_sizes", "args", "grid", "block", "shared",
              "bytes", "flops", "peak", "tolerance", "timeout_s", "options", "dtype")


def find_spec_block(source: bytes) -> tuple[int, int] | None:
    """Byte span ``[start, end)`` of the ``/* klc-spec ... */`` comment, or None."""
    m = HEADER_RE.search(source)
    if m is None:
        return None
    end = source.find(b"*/", m.end())
    if end < 0:
        return m.start(), len(source)  # unterminated: load_spec reports it
    return m.start(), end + 2


class Doc:
    """The YAML text of a spec block and the mapping of its positions back to the file."""

    def __init__(self, source: bytes, path: str, span: tuple[int, int]):
        self.path = path
        self.source = source
        start, end = span
        header_end = source.find(b"\n", start)
        first_line = source.count(b"\n", 0, start) + 1
        if not source[start:end].endswith(b"*/"):
            raise KlcError(f"{where(path, first_line, 1)}: klc-spec block is not closed "
                           "with */")
        if header_end < 0 or header_end > end - 2:
            raise KlcError(f"{where(path, first_line, 1)}: put the spec's YAML on the lines "
                           "after '/* klc-spec' and close the block with '*/' on its own line")
        rest = source[HEADER_RE.match(source, start).end():header_end]  # type: ignore[union-attr]
        if rest.strip():
            raise KlcError(f"{where(path, first_line, 1)}: put nothing after 'klc-spec' on its "
                           "line; the YAML starts on the next line")
        self.yaml_start = header_end + 1  # byte offset of the YAML text
        self.first_line = first_line + 1  # file line of YAML line 0
        self.text = source[self.yaml_start:end - 2].decode("utf-8", "replace")

    def pos(self, mark: yaml.Mark | None) -> tuple[int, int]:
        if mark is None:
            return self.first_line, 1
        return self.first_line + mark.line, mark.column + 1

    def at(self, node: yaml.Node | None) -> str:
        line, col = self.pos(node.start_mark if node is not None else None)
        return where(self.path, line, col)

    def byte_span(self, node: yaml.Node) -> tuple[int, int]:
        """The file byte span of a scalar node (YAML marks count characters)."""
        a = len(self.text[: node.start_mark.index].encode())
        b = len(self.text[: node.end_mark.index].encode())
        return self.yaml_start + a, self.yaml_start + b


# libyaml's loader (PyYAML's C extension) where it is built: the pure-Python one took 2.6 ms
# of a 3 KB kernel file's 7 ms listing. Both give the same nodes and marks; on bad YAML the
# pure one composes again, for its messages say more ("found character '\\t' that cannot
# start any token", where libyaml leaves out which character).
_FAILED = object()


def compose(doc: Doc) -> yaml.MappingNode:
    root = _FAILED if _fast_loader() is None else _compose_fast(doc.text)
    if root is _FAILED:
        root = _compose_pure(doc)
    if not isinstance(root, yaml.MappingNode):
        raise KlcError(f"{doc.at(root)}: klc-spec must be a mapping of fields "
                       f"({', '.join(TOP_FIELDS)})")
    return root


def _fast_loader() -> Any:
    return getattr(yaml, "CSafeLoader", None)  # (asked where a block is: yaml loads then)


def _compose_fast(text: str) -> object:
    loader = _fast_loader()(text)
    try:
        return loader.get_single_node()
    except yaml.YAMLError:
        return _FAILED
    finally:
        loader.dispose()


def _compose_pure(doc: Doc) -> object:
    loader = None
    try:
        loader = yaml.SafeLoader(doc.text)  # (its reader refuses control characters)
        return loader.get_single_node()
    except yaml.MarkedYAMLError as e:
        line, col = doc.pos(e.problem_mark)
        raise KlcError(f"{where(doc.path, line, col)}: bad YAML in klc-spec: {e.problem}"
                       ) from None
    except yaml.YAMLError as e:
        raise KlcError(f"{doc.at(None)}: bad YAML in klc-spec: {e}") from None
    except RecursionError:
        raise KlcError(f"{doc.at(None)}: bad YAML in klc-spec: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def scalar(doc: Doc, node: yaml.Node, what: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a single value")
    # a constructor alone: a whole SafeLoader per scalar (reader, scanner, parser) cost more
    # than the document's composition
    try:
        return yaml.constructor.SafeConstructor().construct_object(node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as e:  # a !!tag it refuses
        problem = getattr(e, "problem", None) or str(e)
        raise KlcError(f"{doc.at(node)}: {what}: {problem}") from None


def items(doc: Doc, node: yaml.MappingNode, known: tuple[str, ...], what: str
           ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for k, v in node.value:
        key = scalar(doc, k, "a field name")
        if key not in known:
            raise KlcError(f"{doc.at(k)}: unknown field {key!r} in {what} "
                           f"(known: {', '.join(known)})")
        if key in out:
            raise KlcError(f"{doc.at(k)}: field {key!r} given twice in {what}")
        out[key] = (k, v)
    return out


def expr(doc: Doc, node: yaml.Node, what: str) -> str:
    v = scalar(doc, node, what)
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        raise KlcError(f"{doc.at(node)}: {what} must be a number or an expression")
    text = str(v)
    try:
        parse_expr(text)
    except ExprError as e:
        hint = ""
        if isinstance(node, yaml.ScalarNode) and not node.style and \
                text.count("(") != text.count(")"):
            hint = " (an expression with a comma inside a [...] list must be quoted)"
        raise KlcError(f"{doc.at(node)}: {what}: {e}{hint}") from None
    return text


def expr_list(doc: Doc, node: yaml.Node, what: str, max_len: int) -> tuple[str, ...]:
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    if not 1 <= len(items) <= max_len:
        raise KlcError(f"{doc.at(node)}: {what} needs 1 to {max_len} values, got {len(items)}")
    return tuple(expr(doc, n, what) for n in items)
