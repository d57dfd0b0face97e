"""Python types as the repository's code declares them, read at query time from the index's
lines: what a function returns (its return annotation), what a class's attributes hold
(``self.x = Foo(...)``, ``self.x: Foo``, ``self.x = param`` with ``param: Foo``, a class-level
``x: Foo``, ``self.x = self.make()`` with ``make`` annotated), through the class's bases.

The context engine uses them to follow a receiver's attributes and calls to the definition a
dotted name at the cursor refers to (``app.config.from_envvar``: ``app`` is a ``Flask``, whose
``config`` is what ``make_config`` returns, a ``Config``). Only what the code writes down is
read: an attribute assigned twice with different types, an annotation naming a union of two
classes or a container, an unannotated function, has no type. Read per class and function
from the file's current parse, so the answers change as the index does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from repomem.index.parsing import ParsedFile
from repomem.index.resolve import PYTHON_NS

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex

#: a class: (file, qualified name)
Owner = tuple[str, str]

#: how many attribute, base and return-type steps one lookup may take
MAX_STEPS = 8

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
# ``self.x: T = ...``, ``self.x = value`` (one target), class-level ``x: T``; the name
# taken whole (``\w++``: what follows a shorter one is a word character, which nothing after
# it matches): a test's ``self.assertEqual(...)`` lines, most of its classes' bodies, then
# fail at once instead of after giving the name back a character at a time (4x faster)
_SELF_ATTR = re.compile(
    r"^[ \t]+self\.(?P<name>\w++)[ \t]*(?::[ \t]*(?P<annot>[^=\n]+?))?[ \t]*"
    r"(?:=(?!=)[ \t]*(?P<value>.*))?$"
)
_CLASS_ATTR = re.compile(r"^[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*:[ \t]*(?P<annot>[^=\n]+)")
_CALL = re.compile(rf"(?P<callee>{_DOTTED})[ \t]*\(")
_NAME_ONLY = re.compile(r"[A-Za-z_]\w*")
_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+\w+")
_RETURNS = re.compile(r"->\s*(?P<annot>.+?)\s*:\s*(?:#.*)?$")
# an annotated parameter: every one is tried (the lookahead consumes none of its text), so
# the first whose name is a given one is what a pattern made for that name would find,
# without compiling one per name
_PARAMETER = re.compile(r"[(,]\s*(?=(?P<name>\w+)\s*:\s*(?P<annot>[^=,)]+))")
# wrappers whose first argument is the value's type
_WRAPPERS = frozenset({"Optional", "ClassVar", "Final", "Annotated", "InitVar"})


def annotation_type(text: str) -> tuple[str, ...] | None:
    """The one class an annotation names, as dotted parts: ``Foo``, ``mod.Foo``, ``"Foo"``,
    ``Optional[Foo]``, ``Foo | None``, ``Foo[int]``; None for a union of two types, a
    literal, or nothing readable. (A container, ``list[Foo]``, names ``list``.)"""
    text = text.strip().strip("'\"").strip()
    while True:
        head, _, inner = text.partition("[")
        if not inner or head.strip().rsplit(".", 1)[-1] not in _WRAPPERS:
            break
        text = _first_argument(inner.rsplit("]", 1)[0]).strip().strip("'\"").strip()
    options = [p.strip().strip("'\"").strip() for p in _top_level(text, "|")]
    options = [p for p in options if p != "None"]
    if len(options) != 1:
        return None
    head = options[0].split("[", 1)[0].strip()
    if not re.fullmatch(_DOTTED, head):
        return None
    return tuple(head.split("."))


def _top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _first_argument(text: str) -> str:
    return _top_level(text, ",")[0]


class PythonTypes:
    """Types read from one index's Python files, cached while a file's parse is the same
    object (an update replaces it)."""

    def __init__(self) -> None:
        self._members: dict[Owner, tuple[ParsedFile, dict[str, list[tuple[str, str]]]]] = {}
        self._returns: dict[tuple[str, int], tuple[ParsedFile, str | None]] = {}

    def returns(self, index: RepoIndex, path: str, node: int) -> Owner | None:
        """The class a function (``path``'s definition ``node``) is annotated to return."""
        annot = self._return_annotation(index, path, node)
        if annot is None:
            return None
        parts = annotation_type(annot)
        if parts is None:
            return None
        if parts[-1] == "Self":
            qual = index.resolver.qualnames[path].get(node, "")
            owner = qual.rsplit(".", 1)[0] if "." in qual else None
            return (path, owner) if owner in index.resolver.classes.get(path, ()) else None
        return self.class_named(index, path, parts)

    def class_named(self, index: RepoIndex, path: str, parts: tuple[str, ...]) -> Owner | None:
        """The repository class a dotted name means at module level of ``path``."""
        found = index.resolver.definition(path, parts)
        if found is None or found[1] not in index.resolver.classes.get(found[0], ()):
            return None
        return found

    def attribute(self, index: RepoIndex, owner: Owner, name: str, steps: int = 0) -> Owner | None:
        """The class an attribute of ``owner``'s instances holds, as the class or one of its
        bases assigns or annotates it; None where it is not written down, or written down as
        two different classes."""
        if steps > MAX_STEPS:
            return None
        path, cls = owner
        found: set[Owner] = set()
        for kind, text in self._attributes(index, owner).get(name, ()):
            hit = self._value_type(index, path, cls, kind, text, steps + 1)
            if hit is None:
                return None  # one assignment of another type (or of none known)
            found.add(hit)
        if len(found) == 1:
            return found.pop()
        if found:
            return None
        pf = index.parse(path)
        for base in pf.bases.get(cls, ()) if pf is not None else ():
            base_owner = self.class_named(index, path, base)
            if base_owner is not None and base_owner != owner:
                hit = self.attribute(index, base_owner, name, steps + 1)
                if hit is not None:
                    return hit
        return None

    def _value_type(
        self, index: RepoIndex, path: str, cls: str, kind: str, text: str, steps: int
    ) -> Owner | None:
        if kind == "annot":
            parts = annotation_type(text)
            return self.class_named(index, path, parts) if parts is not None else None
        call = _CALL.match(text)
        if call is None:
            return None
        callee = tuple(call["callee"].split("."))
        if callee[0] == "self" and len(callee) == 2:
            found = index.resolver.definition(path, callee, cls)
        else:
            found = index.resolver.definition(path, callee)
        if found is None:
            return None
        if found[1] in index.resolver.classes.get(found[0], ()):
            return found
        node = index.resolver.defs[found[0]].get(found[1])
        return self.returns(index, found[0], node) if node is not None else None

    def _attributes(self, index: RepoIndex, owner: Owner) -> dict[str, list[tuple[str, str]]]:
        """Attribute name -> what its assignments and annotations in the class's body say:
        ("annot", annotation) or ("value", the assigned expression)."""
        path, cls = owner
        pf = index.parse(path)
        if pf is None:
            return {}
        hit = self._members.get(owner)
        if hit is not None and hit[0] is pf:
            return hit[1]
        node = index.resolver.defs.get(path, {}).get(cls)
        out: dict[str, list[tuple[str, str]]] = {}
        if node is not None:
            lines = index.file_lines(path)
            start, end = int(pf.node_start[node]), int(pf.node_end[node])
            body_indent: str | None = None
            method = -1  # the row of the last ``def`` of the class's body
            # the body read at once: a line at a time decodes each apart (``Lines``)
            for row, line in _read_rows(lines[start + 1 : end + 1], start + 1):
                m = _SELF_ATTR.match(line) if "self." in line else None  # it needs "self."
                if m is not None:
                    if m["annot"]:
                        out.setdefault(m["name"], []).append(("annot", m["annot"]))
                    elif m["value"] is not None and m["value"].strip() != "None":
                        value = m["value"].strip()
                        if _NAME_ONLY.fullmatch(value):
                            annot = _parameter_annotation(lines, method, value)
                            entry = ("annot", annot) if annot else ("value", value)
                        else:
                            entry = ("value", value)
                        out.setdefault(m["name"], []).append(entry)
                    continue
                stripped = line.lstrip()
                if not stripped or stripped.startswith(("#", "@")):
                    continue
                indent = line[: len(line) - len(stripped)]
                if body_indent is None:
                    body_indent = indent
                if stripped.startswith(("def ", "async def ")) and indent == body_indent:
                    method = row
                elif indent == body_indent:
                    c = _CLASS_ATTR.match(line)
                    if c is not None and not c["annot"].lstrip().startswith(("=", ":")):
                        out.setdefault(c["name"], []).append(("annot", c["annot"]))
        if len(self._members) >= 4096:
            self._members.clear()
        self._members[owner] = (pf, out)
        return out

    def _return_annotation(self, index: RepoIndex, path: str, node: int) -> str | None:
        pf = index.parse(path)
        if pf is None or not 0 <= node < pf.n_nodes:
            return None
        hit = self._returns.get((path, node))
        if hit is not None and hit[0] is pf:
            return hit[1]
        lines = index.file_lines(path)
        start = int(pf.node_start[node])
        header = _header(lines, start)
        m = _RETURNS.search(header) if header is not None else None
        annot = m["annot"] if m is not None else None
        if len(self._returns) >= 8192:
            self._returns.clear()
        self._returns[(path, node)] = (pf, annot)
        return annot


def _read_rows(body: list[str], first: int) -> Iterator[tuple[int, str]]:
    """The rows of a class's ``body`` (from row ``first``) that ``_attributes`` acts on: each
    one up to its first line of code other than an attribute of ``self`` (whose indentation
    is the body's), then only those that may assign one or are indented as the body, found
    by one search: a large class's other lines (its methods' bodies, a test's
    ``self.assert...`` calls) were read one at a time to no effect (a 1,500-line test class
    took ~0.7 ms)."""
    for k, line in enumerate(body):
        yield first + k, line
        stripped = line.lstrip()
        if not stripped or stripped.startswith(("#", "@")):
            continue
        if "self." in line and _SELF_ATTR.match(line):
            continue
        indent = line[: len(line) - len(stripped)]
        # a line's start is found as its ``\n``: a pattern led by ``^`` is tried at every
        # character
        rest = "\n" + "\n".join(body[k + 1 :])
        pattern = rf"\n(?:[ \t]+self\.\w++[ \t]*+(?:[:=]|(?=\n)|\Z)|{re.escape(indent)}(?=\S))"
        at, row = 0, first + k
        for m in re.finditer(pattern, rest):
            row += rest.count("\n", at, m.start() + 1)
            at = m.start() + 1
            yield row, body[row - first]
        return


def _header(lines: Sequence[str], row: int) -> str | None:
    """A ``def``'s header from its line on (decorators above skipped), one line, or None."""
    for r in range(row, min(row + 8, len(lines))):
        if _DEF.match(lines[r]):
            row = r
            break
    else:
        return None
    parts = []
    for r in range(row, min(row + 30, len(lines))):
        text = lines[r].split("#", 1)[0].rstrip() if "#" in lines[r] else lines[r].rstrip()
        parts.append(text.strip())
        if text.endswith(":") and _balanced(" ".join(parts)):
            return " ".join(parts)
    return None


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def _parameter_annotation(lines: Sequence[str], row: int, name: str) -> str | None:
    """The annotation of parameter ``name`` of the method defined at ``row`` (-1: none)."""
    header = _header(lines, row) if row >= 0 else None
    if header is None:
        return None
    for found in _PARAMETER.finditer(header):
        if found["name"] == name:
            return found["annot"].strip()
    return None


# ------------------------------------------------------------------------ pytest fixtures
# ``@pytest.fixture``, ``@pytest.fixture(scope=...)``, ``@fixture`` (imported from pytest)
_FIXTURE = re.compile(r"^[ \t]*@[ \t]*(?:pytest[ \t]*\.[ \t]*)?fixture\b")
# ``@pytest.mark.parametrize("a, b", ...)`` / ``(("a", "b"), ...)``: its parameters are no
# fixtures
_PARAMETRIZE = re.compile(r"^[ \t]*@[ \t]*(?:pytest[ \t]*\.[ \t]*)?mark[ \t]*\.[ \t]*parametrize\b")
_QUOTED = re.compile(r"""(['"])(.*?)\1""")
# what a generator fixture's return annotation wraps: the value it yields is the first
# argument
_GENERATORS = frozenset(
    {"Iterator", "Iterable", "Generator", "AsyncIterator", "AsyncIterable", "AsyncGenerator"}
)
_RETURN = re.compile(r"^[ \t]+(?:return|yield)[ \t]+(?!from\b)(?P<value>.+?)[ \t]*(?:#.*)?$")
_VALUE_CALL = re.compile(rf"^(?P<callee>{_DOTTED})[ \t]*\(")


def decorators(pf: ParsedFile, lines: Sequence[str], node: int) -> list[str]:
    """The decorator lines of a definition (its parent statement wraps it when decorated:
    the same end, an earlier start)."""
    start = int(pf.node_start[node])
    parent = int(pf.node_parent[node])
    if parent < 0 or pf.node_end[parent] != pf.node_end[node]:
        return []
    return lines[int(pf.node_start[parent]) : start]


def is_fixture(pf: ParsedFile, lines: Sequence[str], node: int) -> bool:
    return any(_FIXTURE.match(line) for line in decorators(pf, lines, node))


def parametrized(pf: ParsedFile, lines: Sequence[str], node: int) -> set[str]:
    """The parameters ``@pytest.mark.parametrize`` decorators of a test give values."""
    names: set[str] = set()
    rows = decorators(pf, lines, node)
    for i, line in enumerate(rows):
        if _PARAMETRIZE.match(line):
            text = " ".join(rows[i : i + 3]).split("parametrize", 1)[1].lstrip(" \t(")
            first = text[:1]
            if first in "\"'":
                quoted = _QUOTED.match(text)
                found = [quoted[2]] if quoted else []
            else:  # a tuple or list of names, up to its closing bracket
                found = [
                    m[2] for m in _QUOTED.finditer(text.split(")" if first == "(" else "]")[0])
                ]
            names.update(n.strip() for f in found for n in f.split(",") if n.strip())
    return names


def parameters(lines: Sequence[str], row: int) -> list[str]:
    """The parameter names of the ``def`` at ``row`` (``*args``, ``**kw`` as ``args``, ``kw``)."""
    header = _header(lines, row)
    if header is None or "(" not in header:
        return []
    inner = header.split("(", 1)[1].rsplit(")", 1)[0]
    out = []
    for part in _top_level(inner, ","):
        name = part.split(":", 1)[0].split("=", 1)[0].strip().lstrip("*").strip()
        if _NAME_ONLY.fullmatch(name):
            out.append(name)
    return out


def fixture(
    index: RepoIndex, path: str, name: str, test_class: str | None
) -> tuple[str, int] | None:
    """The pytest fixture ``name`` a test (or fixture) of ``path`` receives, by pytest's own
    lookup: one its class defines (``test_class``), else the module, else the ``conftest.py``
    of the test's directory, then of each directory above it, the nearest first. Plugins and
    fixtures renamed with ``@pytest.fixture(name=...)`` are not read."""
    found = index.resolver.by_name.get((PYTHON_NS, name))
    if not found:
        return None
    qualnames = index.resolver.qualnames
    places = [(path, f"{test_class}.{name}")] if test_class else []
    places.append((path, name))
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    while True:
        places.append((f"{folder}/conftest.py" if folder else "conftest.py", name))
        if not folder:
            break
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
    rank = {place: i for i, place in enumerate(places)}
    best: tuple[int, tuple[str, int]] | None = None
    for target in found:
        at = rank.get((target[0], qualnames[target[0]].get(target[1], "")))
        if at is None or (best is not None and at >= best[0]):
            continue
        pf = index.parse(target[0])
        if pf is not None and is_fixture(pf, index.file_lines(target[0]), target[1]):
            best = (at, target)
    return None if best is None else best[1]


def fixture_value(
    lines: Sequence[str], pf: ParsedFile, node: int, qual: str
) -> tuple[str, int] | None:
    """What a fixture (``pf``'s definition ``node`` named ``qual``) gives its tests, as
    written: its return annotation (a generator's first type argument) as ("class", text), or
    the value its last ``return``/``yield`` hands out, ("value", row) with the row of that
    statement; None where neither is read."""
    row = int(pf.node_start[node])
    header = _header(lines, row)
    returns = _RETURNS.search(header) if header is not None else None
    if returns is not None:
        annot = returns["annot"].strip()
        head, _, inner = annot.partition("[")
        if head.strip().rsplit(".", 1)[-1] in _GENERATORS and inner:
            annot = _first_argument(inner.rsplit("]", 1)[0])
        return ("class", annot)
    nested = [(int(pf.node_start[d.node]), int(pf.node_end[d.node])) for d in pf.members(qual)]
    end = min(int(pf.node_end[node]), len(lines) - 1)
    for r in range(end, row, -1):
        if _RETURN.match(lines[r]) and not any(a <= r <= b for a, b in nested):
            return ("value", r)
    return None


def value_expression(line: str) -> tuple[str, tuple[str, ...]] | None:
    """A ``return``/``yield`` line's value: ("call", callee) or ("name", (name,))."""
    m = _RETURN.match(line)
    if m is None:
        return None
    value = m["value"]
    call = _VALUE_CALL.match(value)
    if call is not None:
        return ("call", tuple(call["callee"].split(".")))
    if _NAME_ONLY.fullmatch(value):
        return ("name", (value,))
    return None
