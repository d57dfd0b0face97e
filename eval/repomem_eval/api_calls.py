"""Statements that call the repository's own functions and classes: RepoEval's API holes.

RepoCoder resolves imports fully; this is a lighter, syntax-only approximation that keeps its
intent (the answer depends on an API only this repository defines):

- ``name(...)`` counts when ``name`` is a function or class defined in the same file outside a
  class body, or imported from one of the repository's own modules;
- ``obj.name(...)`` counts when some function, method or class of the repository is called
  ``name`` and either ``obj`` is ``self``/``cls`` or no built-in or common standard-library type
  (files, sockets, threads, paths, ...) has a method of that name: ``d.get(k)`` never counts just
  because the repository defines a ``get``.

Dunder names (``super().__init__(...)``) never count. The hole is the whole simple statement
(expression, return, raise, assert) that starts a line with such a call, possibly several lines.

Other languages (``code_langs``' queries): a code line holds a call ``f(``, ``obj.m(``,
``Foo::new(``, ``new Foo(`` or ``m!(`` whose name (or, for ``Foo::new``, its type) is defined
in another file of the repository's language family and not in the line's own file, and, for a
call on a receiver, is not a method of the standard library's everyday types
(``code_langs.common_methods``). The hole is that one line: statements spread over lines are
common there (builder chains, argument lists), and a line is what the editor completes.
"""

from __future__ import annotations

import collections
import io
import logging
import pathlib
import queue
import re
import socket
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor

from repomem.index.languages import grammar
from repomem_eval.code_langs import FAMILY_OF, calls_query, common_methods, definitions_query
from repomem_eval.sources import SourceFile

# Receivers of these types are everywhere; a repository method that shares a name with one of
# theirs (``close``, ``set``, ``read``) cannot be told apart from them without types.
_COMMON_TYPES: tuple[type, ...] = (
    object, str, bytes, bytearray, int, float, complex, list, tuple, dict, set, frozenset,
    collections.deque, io.TextIOWrapper, io.BufferedRandom, io.BytesIO, io.StringIO,
    socket.socket, threading.Thread, threading.Event, threading.Condition,
    type(threading.Lock()), queue.Queue, re.Pattern, re.Match, pathlib.Path, logging.Logger,
)  # fmt: skip
COMMON_METHODS = frozenset(name for t in _COMMON_TYPES for name in dir(t))
_SELF = frozenset({"self", "cls"})
_STATEMENTS = frozenset(
    {"expression_statement", "return_statement", "raise_statement", "assert_statement"}
)

_DEFINITIONS = """
(function_definition name: (identifier) @name) @def
(class_definition name: (identifier) @name) @def
"""
_CALLS = """
(call function: [
  (identifier) @bare
  (attribute object: (_) @receiver attribute: (identifier) @attr)
]) @call
"""


@dataclass(frozen=True)
class ApiHole:
    """Rows ``start .. end`` (0-based, inclusive) of a file: one statement calling a repo API."""

    file: SourceFile
    start: int
    end: int


@dataclass
class _Definitions:
    everywhere: set[str]  # every def/class name of the repository
    module_level: set[str]  # names importable from a module: top-level defs and classes
    local: dict[tuple[str, ...], set[str]]  # per file: names callable bare (not methods)


def _query(source: str) -> Query:
    return Query(grammar("python"), source)


def _is_method(definition: Node) -> bool:
    parent = definition.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    return (
        parent is not None
        and parent.type == "block"
        and parent.parent is not None
        and parent.parent.type == "class_definition"
    )


def _is_top_level(definition: Node) -> bool:
    parent = definition.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    return parent is not None and parent.type == "module"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def _collect_definitions(files: Sequence[SourceFile]) -> _Definitions:
    query = _query(_DEFINITIONS)
    defs = _Definitions(set(), set(), {})
    for f in files:
        local: set[str] = set()
        for _, caps in QueryCursor(query).matches(f.root):
            name = _text(caps["name"][0])
            if name.startswith("__") and name.endswith("__"):
                continue
            definition = caps["def"][0]
            defs.everywhere.add(name)
            if _is_top_level(definition):
                defs.module_level.add(name)
            if not _is_method(definition):
                local.add(name)
        defs.local[f.parts] = local
    return defs


def repository_modules(files: Iterable[SourceFile]) -> set[str]:
    """First components of the import paths the repository's files are reachable by.

    A file's import path starts at the highest directory that still has an ``__init__.py``
    (so ``src/pkg/mod.py`` imports as ``pkg.mod``); a file outside any package is its own
    top-level module.
    """
    paths = {f.parts for f in files}
    modules: set[str] = set()
    for parts in paths:
        top = len(parts) - 1
        while top > 0 and (*parts[:top], "__init__.py") in paths:
            top -= 1
        name = parts[top]
        modules.add(name[:-3] if name.endswith(".py") else name)
    return modules


def _imported_names(f: SourceFile, modules: set[str], defs: _Definitions) -> set[str]:
    """Local names a file binds to the repository's module-level functions and classes."""
    names: set[str] = set()
    for stmt in f.root.children:
        if stmt.type != "import_from_statement":
            continue
        module = stmt.child_by_field_name("module_name")
        if module is None:
            continue
        if module.type != "relative_import" and _text(module).split(".")[0] not in modules:
            continue
        if any(child.type == "wildcard_import" for child in stmt.children):
            names |= defs.module_level
            continue
        for item in stmt.children_by_field_name("name"):
            if item.type == "aliased_import":
                original = item.child_by_field_name("name")
                alias = item.child_by_field_name("alias")
                if (
                    original is not None
                    and alias is not None
                    and _text(original) in defs.module_level
                ):
                    names.add(_text(alias))
            elif _text(item) in defs.module_level:
                names.add(_text(item))
    return names


def _enclosing_statement(node: Node) -> Node | None:
    """The simple statement directly inside a block or module that contains ``node``."""
    while node.parent is not None and node.parent.type not in ("block", "module"):
        node = node.parent
    return node if node.type in _STATEMENTS else None


def find_api_holes(files: Sequence[SourceFile]) -> list[ApiHole]:
    """All statements of ``files`` that begin a line with a call of a repository API, in file
    and line order, one hole per statement (per line outside Python)."""
    python = [f for f in files if f.language == "python"]
    others = [f for f in files if f.language != "python"]
    return (_python_holes(python) if python else []) + (_code_holes(others) if others else [])


def _python_holes(files: Sequence[SourceFile]) -> list[ApiHole]:
    defs = _collect_definitions(files)
    modules = repository_modules(files)
    query = _query(_CALLS)
    holes: list[ApiHole] = []
    for f in files:
        bare_ok = defs.local[f.parts] | _imported_names(f, modules, defs)
        rows: dict[int, int] = {}
        for _, caps in QueryCursor(query).matches(f.root):
            call = caps["call"][0]
            if "bare" in caps:
                ok = _text(caps["bare"][0]) in bare_ok
            else:
                name = _text(caps["attr"][0])
                ok = name in defs.everywhere and (
                    name not in COMMON_METHODS or _text(caps["receiver"][0]) in _SELF
                )
            if not ok:
                continue
            stmt = _enclosing_statement(call)
            if stmt is None:
                continue
            row = stmt.start_point.row
            if (
                row == 0
                or call.start_point.row != row
                or stmt.start_point.column != f.indent_bytes(row)
            ):
                continue
            rows[row] = stmt.end_point.row
        holes.extend(ApiHole(f, start, end) for start, end in sorted(rows.items()))
    return holes


def _code_holes(files: Sequence[SourceFile]) -> list[ApiHole]:
    defined: dict[tuple[str, ...], set[str]] = {}
    definers: dict[tuple[str, str], set[tuple[str, ...]]] = collections.defaultdict(set)
    for f in files:
        names = {
            _text(caps["name"][0])
            for _, caps in QueryCursor(definitions_query(f.language)).matches(f.root)
        }
        defined[f.parts] = names
        for name in names:
            definers[(FAMILY_OF[f.language], name)].add(f.parts)
    holes: list[ApiHole] = []
    for f in files:
        family = FAMILY_OF[f.language]
        everyday = common_methods(f.language)

        def elsewhere(name: str, f: SourceFile = f, family: str = family) -> bool:
            return name not in defined[f.parts] and bool(definers[(family, name)] - {f.parts})

        rows: set[int] = set()
        for _, caps in QueryCursor(calls_query(f.language)).matches(f.root):
            name = _text(caps["name"][0])
            row = caps["call"][0].start_point.row
            if row in rows or row == 0 or not f.is_code_line(row):
                continue
            if "scope" in caps:
                scope = re.sub(r"<.*", "", _text(caps["scope"][0])).split("::")[-1]
                ok = elsewhere(scope) or (name not in everyday and elsewhere(name))
            else:
                common = "member" in caps and name in everyday
                ok = not common and elsewhere(name)
            if ok:
                rows.add(row)
        holes.extend(ApiHole(f, row, row) for row in sorted(rows))
    return holes
