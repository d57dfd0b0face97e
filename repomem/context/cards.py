"""Definition cards: what a model needs to call a function or class correctly, in a few lines.

Signatures suffice where bodies do not fit (HCP, STALL+, R2C2): a card shows a function's
decorators and its ``def`` line(s) exactly as written (parameters, annotations, defaults, the
return annotation), the first paragraph of its docstring; a class its header, docstring
paragraph, constructor signature and public methods one line each (a skeleton: when a
class has more than ``MAX_METHODS``, the ones the repository calls most, listed in source
order); a module-level constant its assignment line. Cards are cut from the index's parse (statement
spans) and the file's current lines, so no parsing happens at query time and a card is as
current as the index the editor keeps updated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from repomem.index.parsing import Definition, ParsedFile

# At most this many lines of a signature (a def with one parameter per line), of a docstring
# paragraph, and methods in a class skeleton.
MAX_SIGNATURE_LINES = 12
MAX_DOC_LINES = 3
MAX_METHODS = 10

_DOC_OPEN = re.compile(r"""^[rRbBuU]{0,2}("{3}|'{3}|"|')""")
_CONSTANT = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Card:
    """A definition as the prompt shows it: ``path`` and 0-based ``line`` of its ``def`` or
    ``class`` line (or assignment), its qualified ``name``, its ``kind`` (function, class or
    constant), the card's ``text`` and the 0-based ``def`` lines of the methods a class
    skeleton lists (their signatures are shown too)."""

    path: str
    line: int
    name: str
    kind: str
    text: str
    methods: tuple[int, ...] = ()

    @property
    def header(self) -> str:
        """The ``def``/``class``/assignment line, stripped (decorators skipped): what marks
        this definition in any text that shows it."""
        lines = [line.strip() for line in self.text.splitlines()]
        return next((line for line in lines if not line.startswith("@")), "")


def definition_card(
    path: str,
    pf: ParsedFile,
    lines: list[str],
    definition: Definition,
    calls: Mapping[int, int] | None = None,
) -> Card:
    """The card of one of ``pf``'s definitions (``lines``: the file's current lines;
    ``calls``: how often the repository calls each of the file's definition nodes, which
    picks a large class's skeleton methods)."""
    if definition.is_class:
        public = public_methods(pf, definition)
        methods = skeleton_methods(public, calls or {})
        text = _class_text(pf, lines, definition, methods, len(public) - len(methods))
        starts = tuple(_def_line(pf, m) for m in methods)
        return Card(path, _def_line(pf, definition), definition.name, "class", text, starts)
    text = _head(pf, lines, definition.node)
    return Card(path, _def_line(pf, definition), definition.name, "function", _dedent(text))


def constant_card(path: str, pf: ParsedFile, lines: list[str], name: str) -> Card | None:
    """The assignment line of a module-level ``name``, if the file has one."""
    top = (pf.node_parent == -1).nonzero()[0]
    for node in top.tolist():
        row = int(pf.node_start[node])
        match = _CONSTANT.match(lines[row]) if row < len(lines) else None
        if match is not None and match.group(1) == name:
            end = min(int(pf.node_end[node]), row + MAX_SIGNATURE_LINES - 1)
            return Card(path, row, name, "constant", "\n".join(lines[row : end + 1]))
    return None


def _def_line(pf: ParsedFile, definition: Definition) -> int:
    return int(pf.node_start[definition.node])


def _decorated_start(pf: ParsedFile, lines: list[str], node: int) -> int:
    """Where a definition's decorators begin: its parent statement when that is the
    decorated definition wrapping it (same end, earlier start, an ``@`` line first)."""
    start = int(pf.node_start[node])
    parent = int(pf.node_parent[node])
    if parent < 0 or pf.node_end[parent] != pf.node_end[node]:
        return start
    first = int(pf.node_start[parent])
    return first if first < start and lines[first].lstrip().startswith("@") else start


def _signature(lines: list[str], start: int, end: int, python: bool) -> list[str]:
    """The definition's header lines: Python's up to the one that closes every bracket and
    ends with ``:``; the C family's up to the body's ``{`` (left out) or a closing ``;``."""
    depth = 0
    last = min(end, start + MAX_SIGNATURE_LINES - 1, len(lines) - 1)
    for row in range(start, last + 1):
        code = lines[row].split("#", 1)[0] if python else lines[row]
        depth += sum(code.count(c) for c in "([") - sum(code.count(c) for c in ")]")
        if depth > 0:
            continue
        if python and code.rstrip().endswith(":"):
            return lines[start : row + 1]
        if not python and "{" in code:
            head = lines[row][: lines[row].index("{")].rstrip()
            return [*lines[start:row], *([head] if head.strip() else [])]
        if not python and code.rstrip().endswith(";"):
            return lines[start : row + 1]
    return lines[start : last + 1]


def _docstring(lines: list[str], start: int, end: int) -> list[str]:
    """The first paragraph of the docstring opening at the first code line from ``start``."""
    row = start
    while row <= end and row < len(lines) and not lines[row].strip():
        row += 1
    if row > end or row >= len(lines):
        return []
    first = lines[row].strip()
    opened = _DOC_OPEN.match(first)
    if opened is None:
        return []
    quote = opened.group(1)
    out = [lines[row]]
    if first.count(quote) >= 2 and len(first) > len(opened.group(0)):
        return out  # a one-line docstring
    for r in range(row + 1, min(end + 1, len(lines), row + MAX_DOC_LINES)):
        line = lines[r]
        if quote in line:
            out.append(line)
            return out
        if not line.strip():
            break
        out.append(line)
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    out.append(f"{indent}...{quote}")
    return out


def _head(pf: ParsedFile, lines: list[str], node: int) -> list[str]:
    """Decorators, the header and (Python) the docstring's first paragraph of a definition."""
    start, end = int(pf.node_start[node]), int(pf.node_end[node])
    python = pf.language == "python"
    head = _signature(lines, start, end, python)
    text = lines[_decorated_start(pf, lines, node) : start] + head
    if python:
        text += _docstring(lines, start + len(head), end)
    return text


def public_methods(pf: ParsedFile, definition: Definition) -> list[Definition]:
    """A class's own public methods (and constructor), in source order."""
    prefix = definition.name + "."
    return [
        d
        for d in pf.definitions
        if d.name.startswith(prefix)
        and "." not in d.name[len(prefix) :]
        and _public(d.name[len(prefix) :])
    ]


def skeleton_methods(methods: list[Definition], calls: Mapping[int, int]) -> list[Definition]:
    """The ``methods`` a class's skeleton lists, in source order: all of them up to
    ``MAX_METHODS``; beyond, the constructor and the ones called most (the next line more
    likely calls a popular method than the tenth in source order), ties in source order."""
    if len(methods) <= MAX_METHODS:
        return methods
    order = sorted(
        range(len(methods)),
        key=lambda i: (not methods[i].name.endswith(".__init__"), -calls.get(methods[i].node, 0)),
    )
    return [methods[i] for i in sorted(order[:MAX_METHODS])]


def _class_text(
    pf: ParsedFile, lines: list[str], definition: Definition, methods: list[Definition], more: int
) -> str:
    text = _head(pf, lines, definition.node)
    python = pf.language == "python"
    for method in methods:
        sig = _signature(
            lines, int(pf.node_start[method.node]), int(pf.node_end[method.node]), python
        )
        if not sig:
            continue
        indent = sig[0][: len(sig[0]) - len(sig[0].lstrip())]
        text.append(
            indent
            + _SPACES.sub(" ", " ".join(s.strip() for s in sig))
            + (" ..." if python else ";")
        )
    if more > 0:
        text.append(f"    # ... {more} more methods")
    return _dedent(text)


def _public(name: str) -> bool:
    return name == "__init__" or name == "__call__" or not name.startswith("_")


def _dedent(lines: list[str]) -> str:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines)
