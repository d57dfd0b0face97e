"""One source file -> its statement-level syntax nodes, definitions, call sites and imports.

Everything is gathered with tree-sitter queries (matched in C), never by walking every syntax
node in Python: that is what keeps indexing a large repository within a few times the bare
parse time.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from tree_sitter import Node, QueryCursor

from repomem.languages import parser
from repomem.queries import QUERIES, file_query

_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})


@dataclass(frozen=True)
class Definition:
    """A function or class definition. Python names are qualified within the module
    (``f``, ``A``, ``A.m``); other languages use the bare name."""

    name: str
    node: int
    is_class: bool


@dataclass(frozen=True)
class CallSite:
    """A call made from statement ``node``. ``parts`` is the dotted callee (Python:
    ``("self", "meth")``, ``("m", "f")``, ``("f",)``; other languages: the bare name);
    ``scope`` is the qualified name of the innermost enclosing Python class, if any."""

    node: int
    parts: tuple[str, ...]
    scope: str | None = None


@dataclass(frozen=True)
class ImportBinding:
    """A Python name bound by an import: ``name`` refers to ``module`` (relative with
    ``level`` leading dots) or, when ``symbol`` is set, to ``symbol`` inside it."""

    name: str
    module: str
    symbol: str | None
    level: int


@dataclass
class ParsedFile:
    path: str
    language: str
    digest: str
    line_len: np.ndarray  # int32, characters per line (trailing whitespace removed)
    node_start: np.ndarray  # int32, first line of each statement node
    node_end: np.ndarray  # int32, last line (inclusive)
    node_parent: np.ndarray  # int32, nearest statement-level ancestor, -1 = the file's root
    line_owner: np.ndarray  # int32, deepest statement node covering each line, -1 = none
    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportBinding] = field(default_factory=list)
    # Python: class qualified name -> dotted base-class expressions
    bases: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return int(self.node_start.size)


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts rows: split on ``\\n``; a final newline ends the last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _last_row(node: Node) -> int:
    end_row, end_col = node.end_point
    return end_row - 1 if end_col == 0 and end_row > node.start_point.row else end_row


def _dotted(node: Node) -> tuple[str, ...] | None:
    """``a.b.c`` as ("a", "b", "c"); None when the chain contains anything but names."""
    parts: list[str] = []
    while node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        obj = node.child_by_field_name("object")
        if attr is None or obj is None:
            return None
        parts.append(attr.text.decode("utf-8", "replace"))
        node = obj
    if node.type != "identifier":
        return None
    parts.append(node.text.decode("utf-8", "replace"))
    return tuple(reversed(parts))


def parse_source(path: str, language: str, text: str, digest: str) -> ParsedFile:
    source = text.encode("utf-8")
    root = parser(language).parse(source).root_node
    lines = split_lines(text)
    line_len = np.fromiter((len(line.rstrip()) for line in lines), dtype=np.int32, count=len(lines))

    found: dict[tuple[int, int, str], Node] = {}
    defs: list[tuple[Node, Node]] = []
    calls: list[tuple[Node, Node]] = []
    imports: list[Node] = []
    for _, caps in QueryCursor(file_query(language)).matches(root):
        if "s" in caps:
            node = caps["s"][0]
            if node.type not in _COMMENT_TYPES:
                found.setdefault((node.start_byte, node.end_byte, node.type), node)
        elif "def" in caps:
            defs.append((caps["def"][0], caps["name"][0]))
        elif "call" in caps:
            calls.append((caps["call"][0], caps["name"][0]))
        elif "imp" in caps:
            imports.append(caps["imp"][0])

    keys = sorted(found, key=lambda k: (k[0], -k[1]))
    n = len(keys)
    starts = np.empty(n, np.int32)
    ends = np.empty(n, np.int32)
    parents = np.full(n, -1, np.int32)
    by_span: dict[tuple[int, int], int] = {}
    stack: list[int] = []
    span_end: list[int] = []
    for i, key in enumerate(keys):
        node = found[key]
        starts[i] = node.start_point.row
        ends[i] = _last_row(node)
        by_span.setdefault((key[0], key[1]), i)
        while stack and span_end[stack[-1]] < key[1]:
            stack.pop()
        if stack:
            parents[i] = stack[-1]
        stack.append(i)
        span_end.append(key[1])

    owner = np.full(len(lines), -1, np.int32)
    for i in range(n):  # pre-order: deeper nodes overwrite their ancestors
        owner[starts[i] : ends[i] + 1] = i

    parsed = ParsedFile(path, language, digest, line_len, starts, ends, parents, owner)

    def node_of(node: Node) -> int:
        i = by_span.get((node.start_byte, node.end_byte))
        if i is None:
            row = node.start_point.row
            i = int(owner[row]) if row < owner.size else -1
        return i

    if language == "python":
        _python_symbols(parsed, defs, calls, imports, node_of)
        return parsed
    for d, name in defs:
        i = node_of(d)
        if i >= 0:
            is_class = "class" in d.type or "struct" in d.type or d.type == "type_spec"
            parsed.definitions.append(Definition(_text(name), i, is_class))
    for call, name in calls:
        i = node_of(call)
        if i >= 0:
            parsed.calls.append(CallSite(i, (_text(name),)))
    return parsed


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def _python_symbols(
    parsed: ParsedFile,
    defs: list[tuple[Node, Node]],
    calls: list[tuple[Node, Node]],
    imports: list[Node],
    node_of: Callable[[Node], int],
) -> None:
    # qualified names and class spans via a containment stack over pre-ordered definitions
    stack: list[tuple[int, str]] = []  # (end_byte, qualname)
    class_spans: list[tuple[int, int, str]] = []
    for d, name_node in sorted(defs, key=lambda dn: (dn[0].start_byte, -dn[0].end_byte)):
        while stack and stack[-1][0] < d.end_byte:
            stack.pop()
        name = _text(name_node)
        qual = f"{stack[-1][1]}.{name}" if stack else name
        is_class = d.type == "class_definition"
        stack.append((d.end_byte, qual))
        i = node_of(d)
        if i >= 0:
            parsed.definitions.append(Definition(qual, i, is_class))
        if is_class:
            class_spans.append((d.start_byte, d.end_byte, qual))
            supers = d.child_by_field_name("superclasses")
            if supers is not None:
                parsed.bases[qual] = [
                    p for c in supers.named_children if (p := _dotted(c)) is not None
                ]

    starts = [start for start, _, _ in class_spans]

    def scope_of(byte: int) -> str | None:
        # spans are pre-ordered: the innermost one holding ``byte`` is the last such before it
        for k in range(bisect.bisect_right(starts, byte) - 1, -1, -1):
            start, end, qual = class_spans[k]
            if byte < end:
                return qual
        return None

    for call, fn in calls:
        parts = _dotted(fn)
        i = node_of(call)
        if parts is not None and i >= 0:
            scope = scope_of(call.start_byte) if parts[0] in ("self", "cls") else None
            parsed.calls.append(CallSite(i, parts, scope))
    for node in imports:
        parsed.imports.extend(_import_bindings(node))


def _import_bindings(node: Node) -> list[ImportBinding]:
    def text(n: Node | None) -> str:
        return n.text.decode("utf-8", "replace") if n is not None else ""

    out: list[ImportBinding] = []
    if node.type == "import_statement":
        for child in node.named_children:
            if child.type == "dotted_name":  # import a.b  -> binds "a" to module a
                full = text(child)
                out.append(ImportBinding(full.split(".")[0], full.split(".")[0], None, 0))
            elif child.type == "aliased_import":  # import a.b as m -> binds m to a.b
                out.append(
                    ImportBinding(
                        text(child.child_by_field_name("alias")),
                        text(child.child_by_field_name("name")),
                        None,
                        0,
                    )
                )
    elif node.type == "import_from_statement":
        mod = node.child_by_field_name("module_name")
        level, module = 0, text(mod)
        if mod is not None and mod.type == "relative_import":
            prefix = next((c for c in mod.children if c.type == "import_prefix"), None)
            level = len(text(prefix))
            module = text(next((c for c in mod.named_children if c.type == "dotted_name"), None))
        for child in node.children_by_field_name("name"):
            if child.type == "dotted_name":
                sym = text(child)
                out.append(ImportBinding(sym, module, sym, level))
            elif child.type == "aliased_import":
                sym = text(child.child_by_field_name("name"))
                out.append(
                    ImportBinding(text(child.child_by_field_name("alias")), module, sym, level)
                )
    return out


def supported(language: str) -> bool:
    return language in QUERIES
