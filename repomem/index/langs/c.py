"""C and C++: names resolve through the ``#include`` graph, linkage and C++ scopes.

What a file sees is what its translation unit sees: its own definitions, then those of the
files it includes, transitively (``MAX_INCLUDE_DEPTH`` levels, ``MAX_INCLUDED`` files). A quoted
include is looked up beside the including file first; any include then by its path's tail
among the repository's files (``<linux/list.h>`` is ``include/linux/list.h``), which stands
for the include directories of a build: a directory named ``include`` wins a tie, then the
file nearest the includer; where its whole path names none, its path less its first directory
(``_inner``: a library's includes through its own folder's name). An include found nowhere
(``<stdio.h>``) is the system's.

A function declared by a prototype (in a header the file includes, or in the file) is one
entity with its definition: the call resolves to the one definition with external linkage
(the declaring header's namesake ``.c``/``.cc`` when there are several), else to the
prototype. ``static`` definitions and those in an anonymous namespace are seen only by their
own translation unit. A name neither defined nor declared where the file can see it resolves
to the repository's only definition of it (a guess, labelled so), never one in a test for code
outside tests and never a name the C library owns.

C++ definitions are qualified by their namespaces and classes (``ns.Class.method``; an out of
line ``void Class::method()`` is the class's; a ``namespace n {`` that a syntax error leaves
as loose tokens, as in a buffer cut before its closing braces, still scopes what follows it).
A name is looked up from the innermost scope out (at a cursor outside any definition, the
namespaces the lines open), then through ``using namespace`` and ``using``-declarations, and,
as argument-dependent lookup would, in the namespaces of the file's ``using``-declarations
(``using ns::Allocator;`` then ``execute(&alloc)``); ``obj.m()``/``p->m()``
through the declared type of ``obj`` (a parameter or a local; at the cursor, also a field
of the enclosing class, or one its constructor's member initialiser or an inline method's
``m = p;`` types by the parameter it takes), ``this->m()`` and a bare ``m()`` in a method
through the class and its bases; an alias ``using T = U;`` has ``U``'s members
(``ParsedFile.bases``). A class template's type parameter that defaults to a named type
(``typename SAX = json_sax_dom_parser<B>``) is that type in its fields and aliases; any other
template parameter types nothing (its members are not guessed).

Besides includes, ``ParsedFile.imports`` carries the facts of linkage and members, one
``ImportBinding`` each, tied to its statement node:

* ``#include "p"`` / ``#include <p>``: ``("", p, None, QUOTED / ANGLE)``;
* ``using namespace n;``: ``("", n, None, USING)``; ``using n::x;``: ``("x", "n.x", "x",
  USING)``; ``namespace a = n;``: ``("a", "n", None, USING)``;
* a definition with internal linkage: ``("", "", qualified name, LOCAL)``; a prototype:
  ``("", "", qualified name, DECLARED)``; a macro: ``("", "", name, MACRO)``; a class's field:
  ``("", type, "Class.field", FIELD)``; a function (definition or prototype) whose first
  parameter is of a named type, ``T *p`` or ``struct T *p``: ``("", T, qualified name,
  RECEIVER)``. Such functions are C's methods (``cmark_node_get_url(cmark_node *node)``);
  ``CFamily.receiver_functions`` lists those a file sees for the variables near a cursor.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from posixpath import basename, dirname, normpath, splitext
from typing import TYPE_CHECKING, NamedTuple
from weakref import WeakKeyDictionary, ref

from tree_sitter import QueryCursor

from repomem.index.langs import Language, is_test
from repomem.index.languages import grammar
from repomem.index.names import PerFile, Recent
from repomem.index.parsing import CallSite, Definition, ImportBinding

if TYPE_CHECKING:
    from tree_sitter import Node

    from repomem.index.parsing import ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

# ImportBinding.level of each fact (see the module doc)
ANGLE, QUOTED, USING, LOCAL, DECLARED, FIELD, MACRO, RECEIVER = 0, 1, 2, -1, -2, -3, -4, -5

MAX_INCLUDE_DEPTH = 6
MAX_INCLUDED = 96
_MAX_BASES = 4
#: a header the file includes and uses nothing of yet offers all its definitions as likely
#: next (``CFamily.pending_definitions``) where it has at most this many
PENDING_HEADER = 6
#: ``CFamily.included_definitions`` reads the headers of at most this many definitions: a
#: project's helper headers (psutil's ``_psutil_common.h``: 40, brotli's ``platform.h``: 65),
#: not a system of headers as large as the Linux kernel's, whose thousands of definitions a
#: cursor would rank by their calls
INCLUDED_HEADER = 96
#: ``CFamily.next_declarations`` lists at most this many of a header's source's functions
NEXT_DECLARED = 4
_HEADERS = frozenset({".h", ".hh", ".hpp", ".hxx"})
_SOURCES = (".c", ".cc", ".cpp", ".cxx")

_DECLARATORS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "array_declarator",
        "init_declarator",
    }
)
_TYPES = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})
_SCOPED = frozenset({"class_specifier", "struct_specifier", "union_specifier"})
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
# an include guard's macro is no definition anyone asks for
_GUARDS = ("_H", "_H_", "_H__", "_HPP", "_HPP_", "_INCLUDED", "_INCLUDED_")
_SMART = frozenset({"unique_ptr", "shared_ptr", "weak_ptr", "optional", "reference_wrapper"})
_BY_POINTER = frozenset(
    {
        "pointer_declarator",
        "abstract_pointer_declarator",
        "reference_declarator",
        "abstract_reference_declarator",
    }
)


class _FileTables(NamedTuple):
    """One file's C/C++ tables, made from its parse when first read."""

    includes: list[tuple[str, int]]
    signature: str  # its includes, as a key
    fields: dict[str, tuple[str, ...]]
    usings: list[tuple[str, str, int]]
    # a type's name -> the file's functions whose first parameter is one, in source order
    receivers: dict[str, list[str]]


_NO_FILE = _FileTables([], "", {}, [], {})
_NO_KINDS: dict[int, int] = {}


# an include as ``CFamily._visible`` walks it: the keys it tries (their namespace written)
# and the file it names (None: none of the repository's)
_Edge = tuple[tuple[str, ...], str | None]


@dataclass
class _Tables:
    """One resolver's C/C++ tables."""

    files: PerFile[_FileTables]
    # what files see (``CFamily._visible``): file -> (included file -> order, keys tried,
    # their namespace written as ``Resolver.note_key`` writes it)
    visible: Recent[tuple[dict[str, int], list[str]]]
    # each file's includes as ``_visible`` walks them (``_edges``)
    edges: Recent[list[_Edge]]
    # each file's linkage facts by definition node (``_kinds``), apart from ``files``: the
    # headers a file's includes reach are read for their includes alone
    kinds: PerFile[dict[int, int]]
    # path tail ("list.h", "linux/list.h", ...) -> files ending so
    tails: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # cleared whenever a file comes or goes: what includes resolve to (by the including
    # file's directory, the include as written and its kind), and ``visible``
    generation: int = 0
    found: dict[tuple[str, str, int], str | None] = field(default_factory=dict)
    noted: tuple[int, str] = (0, "")
    # the last cursor's ``_own_includes``: (its parse, its lines, generation, what they were)
    own: tuple[ref[ParsedFile], list[str], int, list[tuple[str, int]]] | None = None

    def of(self, path: str) -> _FileTables:
        """``path``'s own tables (empty ones for a file not indexed)."""
        return self.files.get(path, _NO_FILE)


def _file_tables(pf: ParsedFile) -> _FileTables:
    includes = [(b.module, b.level) for b in pf.imports if b.level in (ANGLE, QUOTED)]
    fields: dict[str, tuple[str, ...]] = {}
    usings: list[tuple[str, str, int]] = []
    receivers: dict[str, list[str]] = defaultdict(list)
    for b, node in zip(pf.imports, pf.import_nodes, strict=True):
        if b.level == FIELD:
            fields[b.symbol or ""] = tuple(b.module.split("."))
        elif b.level == USING:
            usings.append((b.name, b.module, node))
        elif b.level == RECEIVER:
            receivers[b.module].append(b.symbol or "")
    return _FileTables(includes, _signature(includes), fields, usings, dict(receivers))


def _kinds(pf: ParsedFile) -> dict[int, int]:
    """A definition node's linkage fact (LOCAL, DECLARED, MACRO) for the name resolution
    reads there (``Resolver.qualnames``: the node's last definition's), keyed by the node:
    keyed by node and name, it held every fact's name, and took 1.04 MB for 300 of the Linux
    kernel's headers (0.43 MB now), five times the rest of their tables."""
    names, nodes, _ = pf.definition_columns()
    named = dict(zip(nodes, names, strict=True))
    kinds: dict[int, int] = {}
    for b, node in zip(pf.imports, pf.import_nodes, strict=True):
        if b.level in (LOCAL, DECLARED, MACRO) and (b.symbol or "") == named.get(node, ""):
            kinds[node] = b.level
    return kinds


class CFamily(Language):
    namespace = "c"
    calls_by_name = True
    # an include names no function: what the next line calls was mostly called further up
    # (API tasks whose definition is among the first 10 cards, names from 40 lines / 120: lz4
    # 18.8 / 23.2%, llama.cpp 23.0 / 28.0%; 0.4 ms more per cursor)
    name_lines = 120
    file_callees = 8
    name_families = 4
    successors = 2
    # C++ (C's functions have no class): all 13 methods of nlohmann JSON's SAX handler
    other_methods = 16
    other_methods_all = True

    def __init__(self) -> None:
        self._tables: WeakKeyDictionary[Resolver, _Tables] = WeakKeyDictionary()
        # (lines, locals, scope) of the cursor whose names are being resolved
        self._cursor: tuple[list[str] | None, dict[str, tuple[str, ...]], str] = (None, {}, "")

    # ---- parse time ----------------------------------------------------------------------
    def extract(
        self,
        parsed: ParsedFile,
        source: bytes,
        root: Node,
        defs: list[tuple[Node, Node]],
        def_nodes: list[int],
        calls: list[tuple[Node, Node]],
        call_nodes: list[int],
    ) -> None:
        _Extractor(parsed, source, root).run(defs, def_nodes, calls, call_nodes)

    # ---- tables --------------------------------------------------------------------------
    def tables(self, r: Resolver) -> _Tables:
        t = self._tables.get(r)
        if t is None:
            t = self._tables[r] = _Tables(
                r.per_file(_file_tables), r.recent(), r.recent(), r.per_file(_kinds)
            )
        return t

    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        self.enter(r, path)

    def enter(self, r: Resolver, path: str) -> None:
        """A file's tails; its own tables are made from its parse when first read."""
        t = self.tables(r)
        for tail in _tails(path):
            t.tails[tail].add(path)
        t.files.forget(path)
        t.kinds.forget(path)
        self._changed(t)

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        t = self.tables(r)
        for tail in _tails(path):
            t.tails[tail].discard(path)
        t.files.forget(path)
        t.kinds.forget(path)
        self._changed(t)

    @staticmethod
    def _changed(t: _Tables) -> None:
        t.generation += 1
        t.found.clear()
        t.visible.clear()
        t.edges.clear()

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        """A definition's name once per definition, twice when it has external linkage (a
        prototype's or a macro's once, a static's not at all), so that a change of linkage
        alone changes the count; the file's path tails and its includes."""
        kinds = {
            (node, name): k
            for b, node in zip(pf.imports, pf.import_nodes, strict=True)
            if (k := b.level) in (LOCAL, DECLARED, MACRO) and (name := b.symbol or "")
        }
        for d in pf.definitions:
            last = d.name.rsplit(".", 1)[-1]
            kind = kinds.get((d.node, d.name))
            if kind is None:
                yield last
            if kind != LOCAL:
                yield last
        yield from (f"h:{tail}" for tail in _tails(path))
        includes = [(b.module, b.level) for b in pf.imports if b.level in (ANGLE, QUOTED)]
        yield f"i:{path}:{_signature(includes)}"
        for d in pf.definitions:
            if d.is_class:
                yield f"b:{d.name}:{_bases_key(pf.bases.get(d.name, []))}"

    def moved(self, old: ParsedFile, new: ParsedFile) -> dict[int, int]:
        """The definitions of each name (``by_name``'s key) that kept their number, order,
        qualified names, kinds and linkage, and so resolve as they did (``_pick`` reads
        their order, ``_first_of_one_file`` the least node, ``kinds`` and ``qualnames``
        each node), only at other nodes; a node several names' definitions share must be
        shared by the same ones after, in the same order (``qualnames``: the last one's)."""
        (before, at_before), (after, at_after) = _definitions(old), _definitions(new)
        paired = {
            name: list(zip(nodes, now[1], strict=True))
            for name, (facts, nodes) in before.items()
            if (now := after.get(name)) is not None
            and now[0] == facts
            and now[1] != nodes
            and _ranks(now[1]) == _ranks(nodes)
        }
        while True:
            pairs = {pair for name_pairs in paired.values() for pair in name_pairs}
            to_new, to_old = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
            clean = {
                name: name_pairs
                for name, name_pairs in paired.items()
                if all(
                    to_new[a] == to_old[b] == 1
                    and at_before[a] == at_after[b]
                    and all(n.rsplit(".", 1)[-1] in paired for n in at_before[a])
                    for a, b in name_pairs
                )
            }
            if len(clean) == len(paired):
                return {a: b for a, b in pairs if a != b}
            paired = clean

    # ---- includes ------------------------------------------------------------------------
    def _visible(self, r: Resolver, path: str) -> dict[str, int]:
        """The files ``path``'s includes bring in, transitively (breadth first: file ->
        order), noting what that read when a resolution is under way."""
        t = self.tables(r)
        hit = t.visible.get(path)
        if hit is None:
            ns = self.namespace
            order: dict[str, int] = {}
            keys = [f"{ns}:i:{path}:{t.of(path).signature}"]
            frontier = [path]
            for _ in range(MAX_INCLUDE_DEPTH):
                nxt = []
                for g in frontier:
                    for tried, target in _edges(self, r, t, g):
                        keys.extend(tried)
                        if target is None or target == path or target in order:
                            continue
                        if len(order) >= MAX_INCLUDED:
                            break
                        order[target] = len(order)
                        keys.append(f"{ns}:i:{target}:{t.of(target).signature}")
                        nxt.append(target)
                frontier = nxt
            hit = t.visible[path] = (order, keys)
        trying = r._trying  # noqa: SLF001 - note the include graph once per resolution
        if trying is not None and t.noted != (id(trying), path):
            t.noted = (id(trying), path)
            trying.update(hit[1])  # as ``note_key`` notes each, its namespace written
        return hit[0]

    # ---- resolution ----------------------------------------------------------------------
    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        found = self._resolve(r, path, call.parts, call.scope or "", ())
        return None if found is None else found[0]

    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        pf = r.files.get(path)
        if pf is None:
            return None
        cursor = len(lines) - 1
        cached = self._cursor  # one cursor's names come one after another
        if cached[0] is not lines:
            start = _function_start(pf, cursor)
            scope = _cursor_scope(pf, lines, cursor)
            cached = self._cursor = (lines, _declared(lines[start : cursor + 1]), scope)
        _, declared, scope = cached
        if len(parts) == 1 and parts[0] in declared:
            return None  # a local or a parameter, whatever else is so named
        how = ""
        if len(parts) > 1 and parts[0] in declared:
            typed = declared[parts[0]]
            if not typed:
                return None  # of a type the language owns
            parts = (*typed, *parts[1:])
            how = f"receiver typed {'::'.join(typed)}, "
        elif len(parts) > 1 and parts[0] != "this" and scope and pf.language == "cpp":
            typed = _field_type(self.tables(r), r, scope, parts[0])
            if typed is not None:
                parts = (*typed, *parts[1:])
                how = f"field typed {'::'.join(typed)}, "
        found = self._resolve(r, path, parts, scope, ())
        if found is None:
            return None
        return found[0], how + found[1]

    def receiver_functions(
        self, r: Resolver, path: str, lines: list[str], types: int
    ) -> list[tuple[Target, list[Target]]]:
        """Query time: the named types of up to ``types`` variables (locals and parameters of
        the function at the end of ``lines``), the most recently named first, each as its
        definition with the functions whose first parameter is one that the file's
        translation unit sees (its own, then its includes' breadth first; one per name):
        C's methods, which the next line chooses from when it passes the variable on. Nothing
        is recorded as a dependency."""
        pf = r.files.get(path)
        if pf is None or types <= 0:
            return []
        cursor = len(lines) - 1
        start = _function_start(pf, cursor)
        declared = _declared(lines[start : cursor + 1])
        scope = _cursor_scope(pf, lines, cursor)
        t = self.tables(r)
        files = [path, *self._visible(r, path)]
        out: list[tuple[Target, list[Target]]] = []
        seen: set[tuple[str, ...]] = set()
        for row in range(cursor, start - 1, -1):
            code = _code(lines[row])
            for m in reversed(list(_VARIABLE.finditer(code))):
                typed = declared.get(m.group())
                if not typed or typed in seen:
                    continue
                seen.add(typed)
                functions = _taking(r, t, files, ".".join(typed))
                found = self._resolve(r, path, typed, scope, ()) if functions else None
                if found is not None:
                    out.append((found[0], functions))
                    if len(out) >= types:
                        return out
        return out

    def in_scope(self, r: Resolver, path: str, lines: list[str]) -> list[tuple[Target, int]]:
        """C++: the class of the method around the cursor (``_method_class``)."""
        pf = r.files.get(path)
        return [] if pf is None else _method_class(self, r, pf, path, lines)

    def pending_definitions(
        self, r: Resolver, path: str, lines: list[str]
    ) -> list[tuple[Target, int]]:
        """The small headers' definitions (``_unused_headers``)."""
        pf = r.files.get(path)
        return [] if pf is None else _unused_headers(self, r, pf, path, lines)

    def next_declarations(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """A header's next declarations (``_next_declarations``)."""
        pf = r.files.get(path)
        return [] if pf is None else _next_declarations(self, r, pf, path, lines)

    def included_definitions(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The headers' helpers (``_helper_definitions``)."""
        pf = r.files.get(path)
        return [] if pf is None else _helper_definitions(self, r, pf, path, lines)

    def _resolve(
        self,
        r: Resolver,
        path: str,
        parts: tuple[str, ...],
        scope: str,
        seen: tuple[str, ...],
    ) -> tuple[Target, str] | None:
        """(definition, how) of a name written in ``path`` inside ``scope`` (the qualified
        name of the enclosing namespace, class or method's class)."""
        name = parts[-1]
        if not parts[0] or (len(parts) == 1 and self.reserved(name)) or parts[0] == "std":
            return None
        head = list(parts[:-1])
        if head and head[0] == "this":
            head = scope.split(".") if scope else []
            if not head:
                return None
            return self._method(r, path, ".".join(head), name, seen)
        t = self.tables(r)
        usings = t.of(path).usings
        r.note_key(self.namespace, name)
        candidates = r.by_name.get((self.namespace, name), ())
        if not head and not scope and not usings:  # all of C's names; C++'s at file level
            return self._pick(r, path, list(candidates), fallback=True) if candidates else None
        prefixes = _prefixes(scope)
        for alias, target, _ in usings:
            if head and head[0] == alias and alias:
                head = [*target.split("."), *head[1:]]
                break
            if not head and alias == name and alias:
                return self._qualified(r, path, target, "using")
        for alias, target, _ in usings:
            if not alias:
                prefixes.append(target)
        if not candidates:
            return None
        unseen: list[Target] = []  # the innermost scope's definitions the file does not see
        for prefix in prefixes:
            want = ".".join([*([prefix] if prefix else []), *head, name])
            hits = [c for c in candidates if r.qualnames[c[0]].get(c[1]) == want]
            if hits:
                found = self._pick(r, path, hits, fallback=False)
                if found is not None:
                    return found
                unseen = unseen or hits
            if head:  # a method a class inherits
                cls = ".".join([*([prefix] if prefix else []), *head])
                if self._is_class(r, cls):
                    found = self._method(r, path, cls, name, seen)
                    if found is not None:
                        return found
        # the only definition so named in a scope around the cursor, though the includes
        # do not show it (written ``<lib/x.h>`` in a repository holding ``x.h`` at its root)
        found = self._pick(r, path, unseen, fallback=True) if unseen else None
        if found is not None or head:  # a receiver's member of an unknown type: not guessed
            return found
        hits = [c for c in candidates if r.qualnames[c[0]].get(c[1]) == name]
        found = self._pick(r, path, hits, fallback=True) if hits else None
        if found is not None:
            return found
        # argument-dependent lookup, as far as the file shows it: the namespaces whose types
        # its using-declarations bring in (``using ns::Allocator;``, then ``execute(&alloc)``)
        for ns in dict.fromkeys(u.rpartition(".")[0] for a, u, _ in usings if a and "." in u):
            found = self._qualified(r, path, f"{ns}.{name}", f"namespace {ns.replace('.', '::')}")
            if found is not None:
                return found
        return None

    def _qualified(self, r: Resolver, path: str, qual: str, how: str) -> tuple[Target, str] | None:
        name = qual.rsplit(".", 1)[-1]
        r.note_key(self.namespace, name)
        hits = [
            c
            for c in r.by_name.get((self.namespace, name), ())
            if r.qualnames[c[0]].get(c[1]) == qual
        ]
        found = self._pick(r, path, hits, fallback=False) if hits else None
        return None if found is None else (found[0], f"{how}, {found[1]}")

    def _is_class(self, r: Resolver, qual: str) -> bool:
        last = qual.rsplit(".", 1)[-1]
        r.note_key(self.namespace, last)
        return any(
            r.qualnames[p].get(node) == qual and qual in r.classes[p]
            for p, node in r.by_name.get((self.namespace, last), ())
        )

    def _method(
        self, r: Resolver, path: str, cls: str, name: str, seen: tuple[str, ...]
    ) -> tuple[Target, str] | None:
        """Method ``name`` of class ``cls`` or of its bases (breadth of ``_MAX_BASES``)."""
        if cls in seen or len(seen) > _MAX_BASES:
            return None
        found = self._qualified(r, path, f"{cls}.{name}", f"member of {cls.replace('.', '::')}")
        if found is not None:
            return found
        last = cls.rsplit(".", 1)[-1]
        for p, node in r.by_name.get((self.namespace, last), ()):
            if r.qualnames[p].get(node) != cls:
                continue
            bases = r.files[p].bases.get(cls, [])
            r.note_key(self.namespace, f"b:{cls}:{_bases_key(bases)}")
            for base in bases:
                outer = cls.rpartition(".")[0]
                base_cls = self._class_of(r, path, base, outer)
                if base_cls is not None:
                    found = self._method(r, path, base_cls, name, (*seen, cls))
                    if found is not None:
                        return found
        return None

    def _class_of(self, r: Resolver, path: str, parts: tuple[str, ...], scope: str) -> str | None:
        """The qualified name of the class ``parts`` names from ``scope``."""
        for prefix in _prefixes(scope):
            qual = ".".join([*([prefix] if prefix else []), *parts])
            if self._is_class(r, qual):
                return qual
        return None

    def _pick(
        self, r: Resolver, path: str, hits: list[Target], *, fallback: bool
    ) -> tuple[Target, str] | None:
        """One of the definitions of a name: a macro the file sees (the preprocessor replaces
        the name before anything else reads it), the file's own definition, else one it
        includes, else the definition of a prototype it sees, else that prototype; with
        ``fallback``, the only definition of the repository (not the C library's, not a
        test's, not a static, not one another file's prototype declares). Several
        definitions in one file are one function's alternatives under ``#if``: the first
        stands for them."""
        t = self.tables(r)
        visible = self._visible(r, path)
        outside_tests = not is_test(path)
        kept = [c for c in hits if not (outside_tests and c[0] != path and is_test(c[0]))]
        seen = [c for c in kept if c[0] == path or c[0] in visible]  # in the file or its includes
        others = [c for c in kept if c[0] != path and c[0] not in visible]
        macros: list[Target] = []  # macros the file sees
        own: Target | None = None
        plain: list[Target] = []  # definitions the file sees
        declared: list[Target] = []  # prototypes it sees
        for p, node in seen:
            kind = t.kinds.get(p, _NO_KINDS).get(node)  # type: ignore[union-attr]
            if kind == DECLARED:
                declared.append((p, node))
            elif kind == MACRO:
                macros.append((p, node))
            elif p == path:
                own = own or (p, node)
            else:
                plain.append((p, node))
        if macros:
            best = min(macros, key=lambda c: -1 if c[0] == path else visible[c[0]])
            return best, "macro" if best[0] == path else f"macro included from {best[0]}"
        if own is not None:
            return own, "this file"
        if plain:
            best = min(plain, key=lambda c: visible[c[0]])
            return best, f"included from {best[0]}"
        if declared:
            elsewhere, _ = _unseen(t, others)
            declared.sort(key=lambda c: -1 if c[0] == path else visible[c[0]])
            if len(elsewhere) > 1:  # the declaring header's namesake beside it, if one is
                # (several headers each declaring it beside its own: the first included)
                for header, _ in declared:
                    found = [c for c in elsewhere if splitext(c[0])[0] == splitext(header)[0]]
                    if found:
                        elsewhere = _first_of_one_file(found)
                        break
            if len(elsewhere) > 1:
                stems = {_stem(p) for p, _ in declared}
                elsewhere = _first_of_one_file([c for c in elsewhere if _stem(c[0]) in stems])
            if len(elsewhere) == 1:
                return elsewhere[0], f"declared in {declared[0][0]}"
            return declared[0], "prototype"
        name = r.qualnames[hits[0][0]][hits[0][1]].rsplit(".", 1)[-1]
        if not fallback or self.reserved(name):
            return None
        if name in _CPP_STD and r.files[path].language == "cpp":
            return None  # C++ code calling ``find`` or ``push_back`` calls the standard library's
        elsewhere, unseen = _unseen(t, others)
        # a type is seen through includes; one that is not is some other program's
        elsewhere = [c for c in elsewhere if r.qualnames[c[0]][c[1]] not in r.classes[c[0]]]
        # a prototype declaring it elsewhere than beside that definition declares another
        # unit's (psutil's platforms: arch/bsd/proc.h is not arch/osx/proc.c's)
        if len(elsewhere) == 1 and all(
            splitext(p)[0] == splitext(elsewhere[0][0])[0] for p, _ in unseen
        ):
            return elsewhere[0], "the only definition so named (a guess)"
        if not elsewhere and len(unseen) == 1:
            return unseen[0], "the only prototype so named (a guess)"
        return None

    def reserved(self, name: str) -> bool:
        return name in RESERVED


def _include(r: Resolver, t: _Tables, path: str, written: str, level: int) -> str | None:
    """The repository file an include of ``path`` names, or None (a system header): the
    same from every file of a directory, found once for it (``_nearest`` reads every
    file the include's tail names: the whole Linux kernel's ``asm/`` headers, one per
    architecture, were read again for each includer)."""
    folder = dirname(path)
    key = (folder, written, level)
    if key in t.found:
        return t.found[key]
    found = None
    if level == QUOTED:
        beside = normpath(f"{folder}/{written}") if folder else normpath(written)
        if beside in r.files:
            found = beside
    if found is None:
        tail = normpath(written)
        if not tail.startswith("../"):
            found = _nearest(folder, t.tails.get(tail, ()))
        inner = _inner(tail)
        if found is None and inner is not None:
            found = _nearest(folder, t.tails.get(inner, ()))
    t.found[key] = found
    return found


def _inner(tail: str) -> str | None:
    """An include's path less its first directory, where a directory and a file remain
    (``nlohmann/detail/macro_scope.hpp``: ``detail/macro_scope.hpp``): a library's own
    includes name its folder, which a repository of that folder's contents does not have
    (an installed header-only library); never a lone file (``sys/types.h`` is not a
    repository's ``types.h``)."""
    if tail.startswith("../") or tail.count("/") < 2:
        return None
    return tail.split("/", 1)[1]


def _edges(c: CFamily, r: Resolver, t: _Tables, path: str) -> list[_Edge]:
    """``path``'s includes as ``CFamily._visible`` reads them, made once while no file comes
    or goes (and kept while read): each file's walk reads the same headers' includes again,
    and made their keys and found their files each time."""
    made = t.edges.get(path)
    if made is None:
        made = []
        ns, folder = c.namespace, dirname(path)
        for written, level in t.of(path).includes:
            tried: tuple[str, ...] = (f"{ns}:h:{normpath(written)}",)
            if level == QUOTED and folder:
                tried = (f"{ns}:h:{normpath(f'{folder}/{written}')}", *tried)
            inner = _inner(normpath(written))
            if inner is not None:
                tried = (*tried, f"{ns}:h:{inner}")
            made.append((tried, _include(r, t, path, written, level)))
        t.edges[path] = made
    return made


def _method_class(
    c: CFamily, r: Resolver, pf: ParsedFile, path: str, lines: list[str]
) -> list[tuple[Target, int]]:
    """``CFamily.in_scope`` of the file ``pf`` at the end of ``lines``: in C++, the class of
    the out-of-line method around the cursor (``void X::m() {``) where another file defines
    it, as near as the method's first row or the names read (``name_lines``): a bare call
    or a field in the body is the class's member, which the class's card shows and the
    buffer does not."""
    if pf.language != "cpp":
        return []
    cursor = len(lines) - 1
    method = _method_at(pf, cursor)
    if method is None:
        return []
    owner, row = method
    found = c._qualified(r, path, owner, "class") if c._is_class(r, owner) else None  # noqa: SLF001
    if found is None or found[0][0] == path:
        return []
    return [(found[0], max(row, cursor - c.name_lines))]


def _unused_headers(
    c: CFamily, r: Resolver, pf: ParsedFile, path: str, lines: list[str]
) -> list[tuple[Target, int]]:
    """``CFamily.pending_definitions`` of the file ``pf`` at the end of ``lines``: the
    definitions of each project header the file includes itself, above the cursor, that
    declares at most ``PENDING_HEADER`` and none the code above names (``fast_log.h`` for
    ``FastLog2``, ``_psutil_posix.h`` for ``psutil_getpagesize``): a file includes a small
    header for what it is about to call. Not the file's own header (``foo.h`` of ``foo.c``,
    which declares what the file defines)."""
    text: str | None = None
    out: list[tuple[Target, int]] = []
    for header, row in _own_includes(c, r, pf, path, lines):
        defs = r.defs[header]
        if len(defs) > PENDING_HEADER:
            continue
        if text is None:  # (an include names its header, whose definitions it may name)
            kept = (ln for ln in lines[:-1] if "#" not in ln or not _INCLUDE_LINE.match(ln))
            text = "\n".join(kept)
        if not any(_written(text, qual.rsplit(".", 1)[-1]) for qual in defs):
            out.extend(((header, n), row) for n in defs.values())
    return out


def _helper_definitions(
    c: CFamily, r: Resolver, pf: ParsedFile, path: str, lines: list[str]
) -> list[Target]:
    """``CFamily.included_definitions`` of the file ``pf`` at the end of ``lines``: the
    functions and macros of each project header the file includes itself above the cursor
    (not its own header), up to ``INCLUDED_HEADER`` per header, whatever the code names: a
    file includes a header for the helpers it calls, the project's own (psutil's
    ``NoSuchProcess`` after ``#include "_psutil_common.h"``), which the next line may call
    though no line above does. Types and their members are left out (the code names a type,
    or a value of one, before it uses one)."""
    out: list[Target] = []
    for header, _ in _own_includes(c, r, pf, path, lines):
        defs = r.defs[header]
        if len(defs) <= INCLUDED_HEADER:
            classes = r.classes[header]
            out.extend(
                (header, n)
                for q, n in defs.items()
                if q not in classes and q.rpartition(".")[0] not in classes
            )
    return out


def _next_declarations(
    c: CFamily, r: Resolver, pf: ParsedFile, path: str, lines: list[str]
) -> list[Target]:
    """``CFamily.next_declarations`` of the header ``pf`` at the end of ``lines``, outside
    any function's body: up to ``NEXT_DECLARED`` functions with external linkage of the
    scope at the cursor (a namespace, a class) that the header's source (its namesake
    ``.c``/``.cc``/``.cpp``, beside it or nearest) defines and no code line above names,
    those after the last one the lines above name first: a header declares its source's
    functions, mostly in their order (``vm.h`` declares ``jsonnet_vm_execute_multi``, then
    ``jsonnet_vm_execute_stream``, as ``vm.cpp`` defines them)."""
    stem, ext = splitext(path)
    if ext not in _HEADERS:
        return []
    cursor = len(lines) - 1
    t = c.tables(r)
    around = _innermost(pf, cursor)
    own_kinds = t.kinds.get(path, _NO_KINDS)  # type: ignore[union-attr]
    if around is not None and not around[1].is_class and own_kinds.get(around[1].node) != DECLARED:
        return []  # in a function's body (a prototype has none)
    named = [p for e in _SOURCES for p in t.tails.get(f"{basename(stem)}{e}", ())]
    source = next((f"{stem}{e}" for e in _SOURCES if f"{stem}{e}" in r.files), None)
    source = source or _nearest(dirname(path), named)
    if source is None:
        return []
    spf = r.files[source]
    kinds = t.kinds.get(source, _NO_KINDS)  # type: ignore[union-attr]
    scope = _cursor_scope(pf, lines, cursor)
    defs = sorted(
        (int(spf.node_start[d.node]), d.name.rsplit(".", 1)[-1], d.node)
        for d in spf.definitions
        if not d.is_class
        and kinds.get(d.node) not in (LOCAL, DECLARED, MACRO)
        and d.name.rpartition(".")[0] == scope
    )
    text = _code("\n".join(lines[:cursor]))
    written = [_written(text, name) for _, name, _ in defs]
    last = max((i for i, w in enumerate(written) if w), default=-1)
    order = [*range(last + 1, len(defs)), *range(last + 1)]
    return [(source, defs[i][2]) for i in order if not written[i]][:NEXT_DECLARED]


def _own_includes(
    c: CFamily, r: Resolver, pf: ParsedFile, path: str, lines: list[str]
) -> list[tuple[str, int]]:
    """The project headers with definitions that the file ``pf`` includes itself above the
    cursor (the end of ``lines``), each with its include's row; not the file's own header
    (``foo.h`` of ``foo.c``, which declares what the file defines). Read once per cursor:
    its pending headers and its helpers both ask (each walk read every fact of the file)."""
    t = c.tables(r)
    last = t.own
    if last is not None and last[0]() is pf and last[1] is lines and last[2] == t.generation:
        return last[3]
    cursor = len(lines) - 1
    out = []
    for b, node in zip(pf.imports, pf.import_nodes, strict=True):
        row = int(pf.node_start[node]) if 0 <= node < pf.n_nodes else cursor
        if b.level not in (ANGLE, QUOTED) or row >= cursor:
            continue
        header = _include(r, t, path, b.module, b.level)
        if header is not None and r.defs.get(header) and _stem(header) != _stem(path):
            out.append((header, row))
    t.own = (ref(pf), lines, t.generation, out)
    return out


_INCLUDE_LINE = re.compile(r"\s*#\s*include\b")


def _written(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as a whole word (in a comment too: a header whose
    definition a comment names is taken as used, the cheap side; reading the buffer's code
    alone took 15 ms per cursor in a 2,000-line file, and a regular expression bounded by
    look-arounds 1 ms a name)."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not _word(text[at - 1])) and (end == len(text) or not _word(text[end])):
            return True
        at = text.find(name, end)
    return False


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _field_type(t: _Tables, r: Resolver, scope: str, name: str) -> tuple[str, ...] | None:
    """The declared type of field ``name`` of the class ``scope`` (or a class it is nested
    in), from the file that defines the class."""
    while scope:
        last = scope.rsplit(".", 1)[-1]
        for p, node in r.by_name.get((CFamily.namespace, last), ()):
            if r.qualnames[p].get(node) == scope:
                typed = t.of(p).fields.get(f"{scope}.{name}")
                if typed is not None:
                    return typed
        scope = scope.rpartition(".")[0]
    return None


def _taking(r: Resolver, t: _Tables, files: list[str], typed: str) -> list[Target]:
    """The functions of ``files`` whose first parameter is a ``typed``, one per name."""
    names: set[str] = set()
    out: list[Target] = []
    for f in files:
        for qual in t.of(f).receivers.get(typed, ()):
            node = r.defs[f].get(qual)
            if node is not None and qual not in names:
                names.add(qual)
                out.append((f, node))
    return out


def _unseen(t: _Tables, others: list[Target]) -> tuple[list[Target], list[Target]]:
    """Of the definitions a file does not see (``CFamily._pick``'s), those with external
    linkage (one file's ``#if`` alternatives as the first) and the prototypes; read only
    where the file sees no definition: a name many files define (a static helper's, in
    the Linux kernel's drivers) had every call of it decode each such file's parse."""
    elsewhere: list[Target] = []
    unseen: list[Target] = []
    for p, node in others:
        kind = t.kinds.get(p, _NO_KINDS).get(node)  # type: ignore[union-attr]
        if kind == DECLARED:
            unseen.append((p, node))
        elif kind != LOCAL:
            elsewhere.append((p, node))
    return _first_of_one_file(elsewhere), unseen


def _prefixes(scope: str) -> list[str]:
    """``a.b.C`` -> ["a.b.C", "a.b", "a", ""]: where a name is looked up, innermost first."""
    out = []
    while scope:
        out.append(scope)
        scope = scope.rpartition(".")[0]
    out.append("")
    return out


def _definitions(
    pf: ParsedFile,
) -> tuple[dict[str, tuple[list[tuple[str, bool, int | None]], list[int]]], dict[int, list[str]]]:
    """A file's definitions by ``by_name``'s key, in their order: (qualified name, class,
    kind) of each and their nodes; and the qualified names of the definitions at each node."""
    kinds = {
        (node, b.symbol or ""): b.level
        for b, node in zip(pf.imports, pf.import_nodes, strict=True)
        if b.level in (LOCAL, DECLARED, MACRO)
    }
    groups: dict[str, tuple[list[tuple[str, bool, int | None]], list[int]]] = {}
    at: dict[int, list[str]] = defaultdict(list)
    for d in pf.definitions:
        key = d.name.rsplit(".", 1)[-1]
        facts, nodes = groups.setdefault(key, ([], []))
        facts.append((d.name, d.is_class, kinds.get((d.node, d.name))))
        nodes.append(d.node)
        at[d.node].append(d.name)
    return groups, at


def _ranks(nodes: list[int]) -> list[int]:
    """Each node's place among the distinct ``nodes``: their order, ties included."""
    order = {n: i for i, n in enumerate(sorted(set(nodes)))}
    return [order[n] for n in nodes]


def _tails(path: str) -> Iterator[str]:
    parts = path.split("/")
    for i in range(len(parts)):
        yield "/".join(parts[i:])


def _signature(includes: list[tuple[str, int]]) -> str:
    return format(zlib.crc32("\n".join(f"{lv}{m}" for m, lv in includes).encode()), "08x")


def _bases_key(bases: list[tuple[str, ...]]) -> str:
    return ",".join(".".join(b) for b in bases)


def _first_of_one_file(found: list[Target]) -> list[Target]:
    """Definitions all in one file are that file's ``#if`` alternatives: the first stands."""
    if len(found) > 1 and len({p for p, _ in found}) == 1:
        return [min(found, key=lambda c: c[1])]
    return found


def _stem(path: str) -> str:
    return splitext(basename(path))[0]


def _nearest(folder: str, candidates: Iterable[str]) -> str | None:
    """Of the files an include's tail names, the one a build would find: under a directory
    named ``include`` first, then sharing the most directories with the includer's
    ``folder``."""
    best, best_key = None, None
    here = folder.split("/") if folder else []
    for c in candidates:
        dirs = c.split("/")[:-1]
        common = 0
        for a, b in zip(here, dirs, strict=False):
            if a != b:
                break
            common += 1
        key = ("include" not in dirs, -common, len(dirs), c)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


# ---- query time: the cursor's scope and the declarations before it --------------------------
def _innermost(pf: ParsedFile, row: int) -> tuple[int, Definition] | None:
    """(first row, definition) of the innermost definition of the index's parse around
    ``row`` (one a buffer cut before its end leaves unclosed included)."""
    best: tuple[int, Definition] | None = None
    for d in pf.definitions:
        start, end = int(pf.node_start[d.node]), int(pf.node_end[d.node])
        holds = start <= row and (end >= row or end >= pf.line_owner.size - 1)
        if holds and (best is None or start >= best[0]):
            best = (start, d)
    return best


def _scope_at(pf: ParsedFile, row: int) -> str:
    """The scope of the innermost C++ definition around ``row``: a method's class, a class,
    a function's namespace."""
    best = _innermost(pf, row)
    if best is None:
        return ""
    return best[1].name if best[1].is_class else best[1].name.rpartition(".")[0]


def _method_at(pf: ParsedFile, row: int) -> tuple[str, int] | None:
    """(its class's qualified name, its first row) of the method (``X::m``) that is the
    innermost definition around ``row``, else None."""
    best = _innermost(pf, row)
    if best is None or best[1].is_class or "." not in best[1].name:
        return None
    return best[1].name.rpartition(".")[0], best[0]


def _cursor_scope(pf: ParsedFile, lines: list[str], row: int) -> str:
    """The C++ scope names are looked up from at ``row``: the innermost definition's
    (``_scope_at``), else the namespaces the lines open around it (code between definitions,
    or a function the parse does not hold yet, in a buffer cut before its closing braces)."""
    if pf.language != "cpp":
        return ""
    return _scope_at(pf, row) or _open_namespaces(lines[: row + 1])


def _open_namespaces(lines: list[str]) -> str:
    """The dotted namespaces open at the end of ``lines`` (an anonymous one as ``_qual`` names
    it), read from their code alone."""
    stack: list[str | None] = []  # per open brace: the scope it opens, None for any other
    code = _code("\n".join(lines))
    for m in _BRACES.finditer(code):
        if m[0] == "}":
            if stack:
                stack.pop()
        elif m[0].startswith("namespace"):
            outer = next((s for s in reversed(stack) if s is not None), "")
            name = (m["ns"] or "").replace("::", ".").replace(" ", "")
            stack.append(_qual(outer, name))
        else:
            stack.append(None)
    return next((s for s in reversed(stack) if s is not None), "")


_BRACES = re.compile(r"\bnamespace(?:\s+(?P<ns>[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*))?\s*\{|[{}]")
# strings and comments in one pass, whichever starts first (``/* don't */`` opens no
# character literal)
_NOT_CODE = re.compile(r""""(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/""", re.S)


def _code(text: str) -> str:
    """``text`` with its strings and character literals emptied and its comments blanked
    (``_NOT_CODE``: an apostrophe in a comment opens no literal that would hide code)."""
    return _NOT_CODE.sub(lambda m: " " if m[0][0] == "/" else '""', text)


def _function_start(pf: ParsedFile, row: int) -> int:
    """The first row of the function around ``row`` as the index parsed it (its parameters
    and locals are declared from there; ``_NEAR`` rows up at least, as the buffer may have
    changed since), or ``_LOOKBACK`` rows up."""
    floor, near = max(0, row - _LOOKBACK), max(0, row - _NEAR)
    if row >= pf.line_owner.size:
        return floor
    functions = {d.node for d in pf.definitions if not d.is_class}
    node = int(pf.line_owner[row])
    while node >= 0 and node not in functions:
        node = int(pf.node_parent[node])
    return min(near, max(floor, int(pf.node_start[node]))) if node >= 0 else floor


_DECLARATION = re.compile(
    r"(?:^|[(,;{}])[ \t]*(?:(?:const|static|struct|class|union|enum|register|volatile)\s+)*"
    r"(?P<type>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)(?P<args><[^;(){}=<>]*>)?(?:\s+const)?"
    r"(?:\s*[*&]+\s*|\s+)(?P<var>[A-Za-z_]\w*)\s*(?=[;,=)\[{]|\((?![^)]*\)\s*[{;]))",
    re.M,
)
# a variable's name as written (not a member after ``.``/``->``, not a call)
_VARIABLE = re.compile(r"(?<![\w.>])[A-Za-z_]\w*\b(?!\s*\()")
_LOOKBACK = 200
_NEAR = 40


def _declared(lines: list[str]) -> dict[str, tuple[str, ...]]:
    """``var -> type`` of the parameters and locals declared in ``lines`` (the last
    declaration wins); a type the language owns maps to ``()``."""
    out: dict[str, tuple[str, ...]] = {}
    block = _code("\n".join(lines))
    for m in _DECLARATION.finditer(block):
        typ = m["type"].replace(" ", "")
        if typ in _NOT_TYPES:
            continue
        if typ.rsplit("::", 1)[-1] in _SMART and m["args"]:
            typ = m["args"].strip("<> ").split(",")[0].strip()
        parts = tuple(p for p in typ.split("::") if p)
        out[m["var"]] = () if not parts or parts[0] == "std" or parts[-1] in RESERVED else parts
    return out


# ---- parse time ---------------------------------------------------------------------------
# a named tuple made without its Python-level constructor (~0.1 us rather than ~0.2 a
# field tuple): the extraction makes one or two per definition and one per call
_new = tuple.__new__


class _Extractor:
    """One file's definitions, calls and facts from the file query's matches; C++ names are
    qualified by a sweep over the definitions and calls in source order."""

    def __init__(self, parsed: ParsedFile, source: bytes, root: Node) -> None:
        self.pf = parsed
        self.source = source
        self.root = root
        self.cpp = parsed.language == "cpp"
        # a class template's type parameters that default to a named type, by the class
        self.defaults: dict[str, dict[str, tuple[str, ...]]] = {}

    def run(
        self,
        defs: list[tuple[Node, Node]],
        def_nodes: list[int],
        calls: list[tuple[Node, Node]],
        call_nodes: list[int],
    ) -> None:
        if not self.cpp:
            for (d, name), i in zip(defs, def_nodes, strict=True):
                if i >= 0:
                    self._c_definition(d, name, i, "", local=False, member=False)
            for (_, name), i in zip(calls, call_nodes, strict=True):
                if i >= 0:
                    self.pf.calls.append(_new(CallSite, (i, (_text(name),), None)))
            return
        self._cpp(defs, def_nodes, calls, call_nodes)

    def _fact(self, node: int, name: str, module: str, symbol: str | None, level: int) -> None:
        self.pf.imports.append(_new(ImportBinding, (name, module, symbol, level)))
        self.pf.import_nodes.append(node)

    def _define(self, name: str, node: int, is_class: bool) -> None:
        self.pf.definitions.append(_new(Definition, (name, node, is_class)))

    def _c_definition(
        self, d: Node, name: Node, i: int, prefix: str, *, local: bool, member: bool
    ) -> str | None:
        """A definition, prototype, type, macro or include (C, or C++ in ``prefix``, file-local
        or a class member); a function's qualified name."""
        kind = d.type
        if kind == "preproc_include":
            written = _text(name)
            quoted = name.type == "string_literal"
            self._fact(i, "", written.strip('"<> \t'), None, QUOTED if quoted else ANGLE)
            return None
        if kind in ("preproc_def", "preproc_function_def"):
            macro = _text(name)
            if kind == "preproc_function_def" or not macro.endswith(_GUARDS):
                self._define(macro, i, False)
                self._fact(i, "", "", macro, MACRO)
            return None
        if kind in _TYPES:
            qual = _qual(prefix, _text(name))
            self._define(qual, i, True)
            if local:
                self._fact(i, "", "", qual, LOCAL)
            return None
        if kind == "type_definition":
            # ``typedef struct {...} T, *PT;`` is one statement, which names one definition
            # (a node has one name): the first, ``T``
            first = d.child_by_field_name("declarator")
            if first is not None and name.start_byte != first.start_byte:
                return None
            leaf = _leaf(name)
            if leaf is not None and leaf.type == "type_identifier":
                self._define(_qual(prefix, _text(leaf)), i, True)
            return None
        path = _descent(name)
        leaf = path[-1] if path else None
        parts = _name_parts(leaf) if leaf is not None else None
        if path is None or leaf is None or not parts:
            return None
        qual = _qual(prefix, ".".join(parts))
        static = not member and _has_static(self.source, d.start_byte, leaf.start_byte)
        receiver = None if member else _receiver_type(path)
        if kind == "function_definition":
            self._define(qual, i, False)
            if static or local:
                self._fact(i, "", "", qual, LOCAL)
            if receiver is not None:
                self._fact(i, "", receiver, qual, RECEIVER)
            return qual
        if not static:  # a prototype (a static one only forward-declares the file's own)
            self._define(qual, i, False)
            self._fact(i, "", "", qual, LOCAL if local else DECLARED)
            if receiver is not None:
                self._fact(i, "", receiver, qual, RECEIVER)
        return None

    def _cpp(
        self,
        defs: list[tuple[Node, Node]],
        def_nodes: list[int],
        calls: list[tuple[Node, Node]],
        call_nodes: list[int],
    ) -> None:
        """Definitions and calls in source order under a stack of scopes (namespaces,
        classes, functions), each entry (end byte, qualified prefix, file-local, class)."""
        events: list[tuple[int, int, int, int]] = []  # (start, -end, 0 def/1 call/2 ns, index)
        for k, (d, _) in enumerate(defs):
            events.append((d.start_byte, -d.end_byte, 0, k))
        for k, (c, _) in enumerate(calls):
            events.append((c.start_byte, -c.end_byte, 1, k))
        loose = _loose_namespaces(self.root) if self.root.has_error else []
        for k, (start, end, _) in enumerate(loose):
            events.append((start, -end, 2, k))
        events.sort()
        stack: list[tuple[int, str, bool, bool]] = []
        classes: dict[tuple[int, int], tuple[str, int]] = {}  # span -> (name, node)
        receivers: list[tuple[int, int, Node]] = []  # (call index, byte, ``x.m`` expression)
        for start, neg_end, what, k in events:
            while stack and stack[-1][0] <= start:
                stack.pop()
            prefix, local, in_class = stack[-1][1:] if stack else ("", False, False)
            if what == 2:
                label = loose[k][2]
                stack.append((-neg_end, _qual(prefix, label or ""), local or label is None, False))
                continue
            if what == 1:
                call, name = calls[k]
                i = call_nodes[k]
                if i < 0:
                    continue
                parts = self._callee(name)
                if parts is None:
                    continue
                if parts[0] == "\0":  # a receiver to type: done below, by locals
                    receivers.append((len(self.pf.calls), call.start_byte, name))
                    parts = ("", parts[1])
                self.pf.calls.append(CallSite(i, parts, prefix))
                continue
            d, name = defs[k]
            i = def_nodes[k]
            kind = d.type
            if kind == "namespace_definition":
                ns = d.child_by_field_name("name")
                label = _text(ns).replace("::", ".").replace(" ", "") if ns is not None else ""
                stack.append((-neg_end, _qual(prefix, label), local or ns is None, False))
                continue
            if i < 0:
                continue
            if kind in ("using_declaration", "namespace_alias_definition"):
                self._using(d, name, i)
                continue
            if kind == "alias_declaration":
                self._alias(d, _qual(prefix, _text(name)), i)
                continue
            if kind in _SCOPED:
                label = ".".join(_name_parts(name) or (_text(name),))
                qual = _qual(prefix, label)
                self._define(qual, i, True)
                if local:
                    self._fact(i, "", "", qual, LOCAL)
                self._header(d, qual)
                classes[(d.start_byte, d.end_byte)] = (qual, i)
                stack.append((-neg_end, qual, local, True))
                continue
            function = self._c_definition(d, name, i, prefix, local=local, member=in_class)
            if function is not None:
                # the function's calls are looked up from its class (a method) or namespace
                stack.append((-neg_end, function.rpartition(".")[0], local, False))
        if receivers:
            self._type_receivers(receivers)
        if classes:
            self._fields(classes)
            # in the order of their nodes, as a splice keeps them
            order = sorted(range(len(self.pf.imports)), key=self.pf.import_nodes.__getitem__)
            self.pf.imports = [self.pf.imports[k] for k in order]
            self.pf.import_nodes = [self.pf.import_nodes[k] for k in order]

    def _callee(self, name: Node) -> tuple[str, ...] | None:
        kind = name.type
        if kind == "identifier":
            return (_text(name),)
        if kind in (
            "qualified_identifier",
            "template_function",
            "type_identifier",
            "template_type",
        ):
            return _name_parts(name)
        if kind == "field_expression":
            member = name.child_by_field_name("field")
            obj = name.child_by_field_name("argument")
            if member is None or obj is None or member.type != "field_identifier":
                return None
            if obj.type == "this":
                return ("this", _text(member))
            if obj.type == "identifier":
                return ("\0", _text(member))
            return None
        return None

    def _type_receivers(self, receivers: list[tuple[int, int, Node]]) -> None:
        """``x.m()``/``x->m()``: ``x``'s declared type, from the parameters and locals in
        scope at the call; unknown, the call keeps ``x`` (a field: resolved at the cursor)."""
        locals_: dict[str, list[tuple[int, int, int, tuple[str, ...]]]] = defaultdict(list)
        for _, caps in QueryCursor(_locals_query()).matches(self.root):
            decl, var = caps["decl"][0], caps["var"][0]
            typed = _type_parts(caps["type"][0])
            scope = decl.parent if decl.type == "declaration" else _function_of(decl)
            if typed is None or scope is None:
                continue
            locals_[_text(var)].append((decl.start_byte, scope.end_byte, scope.start_byte, typed))
        for k, byte, expr in receivers:
            obj = expr.child_by_field_name("argument")
            member = expr.child_by_field_name("field")
            assert obj is not None and member is not None
            var = _text(obj)
            best = None
            for declared_at, scope_end, scope_start, typed in locals_.get(var, ()):
                if declared_at < byte < scope_end and (best is None or scope_start >= best[0]):
                    best = (scope_start, typed)
            call = self.pf.calls[k]
            parts = (*best[1], _text(member)) if best is not None else (var, _text(member))
            self.pf.calls[k] = call._replace(parts=parts)

    def _fields(self, classes: dict[tuple[int, int], tuple[str, int]]) -> None:
        """Each class's fields with their declared types (``FIELD`` facts); a field the
        class body does not declare (a buffer cut above the declarations, which C++ writes
        last) is typed by the constructor parameter its member initialiser takes
        (``oa(std::move(adapter))``), else by the parameter an inline method's body assigns
        it (``sax = sax_;``)."""
        declared: set[str] = set()
        for _, caps in QueryCursor(_fields_query()).matches(self.root):
            cls = _member_of(classes, caps["decl"][0])
            if cls is None:
                continue
            key = f"{cls[0]}.{_text(caps['var'][0])}"
            declared.add(key)
            typed = self._defaulted(cls[0], _type_parts(caps["type"][0]))
            if typed is not None:
                self._fact(cls[1], "", ".".join(typed), key, FIELD)
        for _, caps in QueryCursor(_initialisers_query()).matches(self.root):
            cls = _member_of(classes, caps["ctor"][0])
            if cls is None:
                continue
            params = _parameter_types(caps["params"][0])
            for init in caps["inits"][0].named_children:
                member = init.named_child(0) if init.type == "field_initializer" else None
                given = _initialised_from(init)
                key = f"{cls[0]}.{_text(member)}" if member is not None else ""
                typed = params.get(given) if given else None
                if typed and key not in declared:
                    declared.add(key)
                    self._fact(cls[1], "", ".".join(typed), key, FIELD)
        for _, caps in QueryCursor(_assignments_query()).matches(self.root):
            cls = _member_of(classes, caps["method"][0])
            if cls is None:
                continue
            params = _parameter_types(caps["params"][0])
            member = _text(caps["member"][0])
            typed = self._defaulted(cls[0], params.get(_text(caps["given"][0])))
            key = f"{cls[0]}.{member}"
            if typed and member not in params and key not in declared:
                declared.add(key)
                self._fact(cls[1], "", ".".join(typed), key, FIELD)

    def _alias(self, d: Node, qual: str, node: int) -> None:
        """``using T = Named<...>;``, a class whose base is the type it names
        (``std::shared_ptr<P<C>>`` names ``P``): ``T``'s members are that type's."""
        self._define(qual, node, True)
        written = d.child_by_field_name("type")
        typed = written.child_by_field_name("type") if written is not None else None
        parts = _type_parts(typed) if typed is not None else None
        parts = self._defaulted(qual.rpartition(".")[0], parts)
        if parts:
            self.pf.bases[qual] = [parts]

    def _defaulted(self, cls: str, typed: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """``typed``, or the type that the parameter of class template ``cls`` it names
        defaults to (``SAX`` of ``template<.., typename SAX = json_sax_dom_parser<B>>``):
        what the template is used with unless told otherwise, and none of its members can
        be met through a bare parameter."""
        if typed is None or len(typed) != 1:
            return typed
        return self.defaults.get(cls, {}).get(typed[0], typed)

    def _header(self, d: Node, qual: str) -> None:
        """What class ``d``'s header declares of its types: its bases, and the defaults of
        the template parameters it is declared with."""
        self.defaults[qual] = _template_defaults(d)
        clause = next((c for c in d.named_children if c.type == "base_class_clause"), None)
        if clause is None:
            return
        bases = [
            parts
            for c in clause.named_children
            if c.type != "access_specifier" and (parts := _name_parts(c))
        ]
        if bases:
            self.pf.bases[qual] = bases

    def _using(self, d: Node, name: Node, i: int) -> None:
        """``using namespace n;``, ``using n::x;`` and ``namespace a = n;`` (for the file)."""
        if d.type == "namespace_alias_definition":
            target = d.named_children[-1]
            if target.start_byte != name.start_byte:
                self._fact(i, _text(name), _text(target).replace("::", "."), None, USING)
            return
        dotted = _text(name).replace("::", ".").replace(" ", "").lstrip(".")
        if any(c.type == "namespace" for c in d.children):
            self._fact(i, "", dotted, None, USING)
        else:
            last = dotted.rsplit(".", 1)[-1]
            self._fact(i, last, dotted, last, USING)


def _loose_namespaces(root: Node) -> list[tuple[int, int, str | None]]:
    """``namespace a::b {`` left as loose tokens of an ERROR node, as in a file cut before
    its closing brace (a buffer being written): (start byte, end byte, dotted name, None
    when anonymous) of each, up to its ``}`` among the same tokens, else to the error's end;
    its definitions and calls are then qualified as the whole file's are."""
    out: list[tuple[int, int, str | None]] = []
    todo = [root]
    while todo:
        node = todo.pop()
        children = node.children
        todo.extend(c for c in children if c.has_error)
        if node.type != "ERROR":
            continue
        braces: list[tuple[int, str | None] | None] = []  # open ``{``: a namespace's or not
        pending: tuple[int, str | None] | None = None  # ``namespace [name]`` before its ``{``
        for c in children:
            kind = c.type
            if kind == "namespace":
                pending = (c.start_byte, None)
            elif pending is not None and kind in _NAMESPACE_NAMES:
                pending = (pending[0], _text(c).replace("::", ".").replace(" ", ""))
            elif kind == "{":
                braces.append(pending)
                pending = None
            else:
                pending = None
                if kind == "}" and braces and (opened := braces.pop()) is not None:
                    out.append((opened[0], c.end_byte, opened[1]))
        out.extend((b[0], node.end_byte, b[1]) for b in braces if b is not None)
    return out


_NAMESPACE_NAMES = frozenset({"namespace_identifier", "nested_namespace_specifier", "identifier"})


def _has_static(source: bytes, start: int, end: int) -> bool:
    """Whether the word ``static`` is in ``source[start:end]``: what ``re``'s ``\\bstatic\\b``
    finds searched from ``start`` to ``end`` (the byte before ``start`` is read, the one at
    ``end`` is not), by ``bytes.find``, which ``re`` took ~20 ns a byte to do."""
    at = source.find(b"static", start, end)
    while at >= 0:
        before = source[at - 1 : at] if at > 0 else b""
        after = source[at + 6 : at + 7] if at + 6 < end else b""
        if not (before.isalnum() or before == b"_" or after.isalnum() or after == b"_"):
            return True
        at = source.find(b"static", at + 1, end)
    return False


def _qual(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def _leaf(node: Node) -> Node | None:
    """The name under a declarator (pointers, parentheses, a function's parameters)."""
    path = _descent(node)
    return path[-1] if path else None


def _descent(node: Node) -> list[Node] | None:
    """The declarators from ``node`` down to the name under them, the name last (``_leaf``):
    the way back up from the name, which ``_receiver_type`` walks, without asking each node
    for its parent (tree-sitter finds a parent by a walk down from the root)."""
    path = [node]
    for _ in range(16):
        if node.type not in _DECLARATORS:
            return path
        inner = node.child_by_field_name("declarator")
        if inner is None:
            return None
        if node.type == "parenthesized_declarator" or inner.type == "parenthesized_declarator":
            return None  # a pointer to a function, not a function
        node = inner
        path.append(node)
    return None


def _name_parts(node: Node) -> tuple[str, ...] | None:
    """``a::b<T>::c`` as ("a", "b", "c"); an operator or a destructor as written."""
    kind = node.type
    if kind in ("identifier", "field_identifier", "type_identifier", "namespace_identifier"):
        return (_text(node),)
    if kind in ("destructor_name", "operator_name"):
        return (_text(node).replace(" ", ""),)
    if kind in ("qualified_identifier", "template_function", "template_type", "template_method"):
        text = _text(node)
        while "<" in text:
            stripped = _TEMPLATE_ARGS.sub("", text)
            if stripped == text:
                return None
            text = stripped
        parts = tuple(p.strip() for p in text.split("::"))
        return (
            parts
            if all(p.isidentifier() or p.startswith(("~", "operator")) for p in parts if p)
            and parts[-1]
            else None
        )
    return None


def _type_parts(node: Node) -> tuple[str, ...] | None:
    """A declared type as a dotted name (``std::unique_ptr<ns::Foo>`` is ``ns.Foo``)."""
    kind = node.type
    if kind == "template_type":
        base = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        if base is not None and _text(base) in _SMART and args is not None:
            first = next((a for a in args.named_children), None)
            inner = first.child_by_field_name("type") if first is not None else None
            return _type_parts(inner) if inner is not None else None
        return _type_parts(base) if base is not None else None
    if kind == "qualified_identifier":
        inner = node.child_by_field_name("name")
        scope = node.child_by_field_name("scope")
        if (
            inner is not None
            and inner.type == "template_type"
            and scope is not None
            and _text(scope) == "std"
        ):
            return _type_parts(inner)  # ``std::unique_ptr<T>``: its first argument's
    if kind in ("type_identifier", "qualified_identifier"):
        parts = _name_parts(node)
        if not parts or parts[0] == "std" or parts[-1] in RESERVED:
            return None
        return parts
    return None


def _receiver_type(path: list[Node]) -> str | None:
    """The named type of the first parameter of the function whose name ends ``path`` (a
    ``_descent``) when it is passed by pointer or reference (``T`` of ``T *p``, ``const
    struct T *p``, ``ns::T &p``; dotted in C++): the value a C method works on. None for a
    built-in type, a value passed by copy (``bufsize_t len``), an empty list, or a name that
    declares no function."""
    node: Node | None = path[-1]
    for step in range(16):
        if node is None or node.type == "function_declarator":
            break
        # the name's parents up the descent, then above its top
        k = len(path) - 2 - step
        node = path[k] if k >= 0 else node.parent
        if node is not None and node.type not in _DECLARATORS:
            return None
    if node is None or node.type != "function_declarator":
        return None
    params = node.child_by_field_name("parameters")
    first = params.named_child(0) if params is not None and params.named_child_count else None
    if first is None or first.type not in (
        "parameter_declaration",
        "optional_parameter_declaration",
    ):
        return None
    declarator = first.child_by_field_name("declarator")
    if declarator is None or declarator.type not in _BY_POINTER:
        return None
    typ = first.child_by_field_name("type")
    if typ is not None and typ.type in ("struct_specifier", "union_specifier", "enum_specifier"):
        typ = typ.child_by_field_name("name")
    parts = _type_parts(typ) if typ is not None else None
    return ".".join(parts) if parts else None


def _template_defaults(d: Node) -> dict[str, tuple[str, ...]]:
    """The type parameters of the template declaring class ``d`` that default to a named
    type: ``{"SAX": ("json_sax_dom_parser",)}``."""
    template = d.parent
    params = template.child_by_field_name("parameters") if template is not None else None
    if template is None or template.type != "template_declaration" or params is None:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for p in params.named_children:
        name, default = p.child_by_field_name("name"), p.child_by_field_name("default_type")
        if p.type == "optional_type_parameter_declaration" and name and default:
            parts = _type_parts(default)
            if parts:
                out[_text(name)] = parts
    return out


def _member_of(
    classes: dict[tuple[int, int], tuple[str, int]], member: Node
) -> tuple[str, int] | None:
    """The class (``classes``' entry) whose body holds ``member``: a field's declaration, a
    constructor."""
    body = member.parent
    owner = body.parent if body is not None else None
    return None if owner is None else classes.get((owner.start_byte, owner.end_byte))


def _parameter_types(params: Node) -> dict[str, tuple[str, ...]]:
    """A parameter list's names -> their named types (``T a``, ``T *a``, ``const T &a``)."""
    out: dict[str, tuple[str, ...]] = {}
    for decl in params.named_children:
        if decl.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        typ, name = decl.child_by_field_name("type"), decl.child_by_field_name("declarator")
        while name is not None and name.type in _BY_POINTER:
            name = next((c for c in name.named_children if c.type != "type_qualifier"), None)
        parts = _type_parts(typ) if typ is not None else None
        if parts and name is not None and name.type == "identifier":
            out[_text(name)] = parts
    return out


def _initialised_from(init: Node) -> str | None:
    """The parameter a member initialiser takes whole: ``m(p)``, ``m{p}``,
    ``m(std::move(p))``."""
    args = init.named_child(1) if init.named_child_count == 2 else None
    arg = args.named_child(0) if args is not None and args.named_child_count == 1 else None
    if arg is not None and arg.type == "call_expression":
        callee, inner = arg.child_by_field_name("function"), arg.child_by_field_name("arguments")
        written = _text(callee).replace(" ", "") if callee is not None else ""
        if written != "std::move" and not written.startswith("std::forward<"):
            return None
        if inner is None or inner.named_child_count != 1:
            return None
        arg = inner.named_child(0)
    return _text(arg) if arg is not None and arg.type == "identifier" else None


def _function_of(node: Node) -> Node | None:
    for _ in range(6):
        parent = node.parent
        if parent is None:
            return None
        if parent.type == "function_definition":
            return parent
        node = parent
    return None


_LOCALS = """
(parameter_declaration type: (_) @type declarator: [
    (identifier) @var
    (pointer_declarator declarator: (identifier) @var)
    (reference_declarator (identifier) @var)]) @decl
(declaration type: (_) @type declarator: [
    (identifier) @var
    (init_declarator declarator: [
        (identifier) @var
        (pointer_declarator declarator: (identifier) @var)
        (reference_declarator (identifier) @var)])
    (pointer_declarator declarator: (identifier) @var)
    (reference_declarator (identifier) @var)]) @decl
"""
_FIELDS = """
(field_declaration type: (_) @type declarator: [
    (field_identifier) @var
    (pointer_declarator declarator: (field_identifier) @var)
    (reference_declarator (field_identifier) @var)]) @decl
"""


_INITIALISERS = """
(function_definition
    declarator: (function_declarator parameters: (parameter_list) @params)
    (field_initializer_list) @inits) @ctor
"""

# a statement of an inline method's body assigning a parameter to a member
_ASSIGNMENTS = """
(function_definition
    declarator: (function_declarator parameters: (parameter_list) @params)
    body: (compound_statement (expression_statement (assignment_expression
        left: [(identifier) @member
               (field_expression argument: (this) field: (field_identifier) @member)]
        operator: "="
        right: (identifier) @given)))) @method
"""


def _assignments_query():  # noqa: ANN202
    return _query("assignments", _ASSIGNMENTS)


def _initialisers_query():  # noqa: ANN202
    return _query("initialisers", _INITIALISERS)


def _locals_query():  # noqa: ANN202 - a tree_sitter.Query, compiled once
    return _query("locals", _LOCALS)


def _fields_query():  # noqa: ANN202
    return _query("fields", _FIELDS)


_QUERIES: dict[str, object] = {}


def _query(key: str, text: str):  # noqa: ANN202
    from tree_sitter import Query

    q = _QUERIES.get(key)
    if q is None:
        q = _QUERIES[key] = Query(grammar("cpp"), text)
    return q


# ---- the language's own names ---------------------------------------------------------------
_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic
_Generic _Noreturn _Static_assert _Thread_local bool true false NULL defined
"""
_CPP_KEYWORDS = """
alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl
concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete
dynamic_cast explicit export friend mutable namespace new noexcept not not_eq nullptr
operator or or_eq private protected public reinterpret_cast requires static_assert
static_cast template this thread_local throw try typeid typename using virtual wchar_t xor
xor_eq override final std
"""
_C_TYPES = """
size_t ssize_t ptrdiff_t intptr_t uintptr_t intmax_t uintmax_t off_t pid_t uid_t gid_t
mode_t time_t clock_t wchar_t wint_t int8_t int16_t int32_t int64_t uint8_t uint16_t
uint32_t uint64_t FILE va_list jmp_buf sig_atomic_t fpos_t div_t ldiv_t errno_t socklen_t
bool max_align_t nullptr_t
"""
# the C library and POSIX functions and macros most code calls
_LIBC = """
printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf scanf fscanf sscanf
puts fputs fgets gets putc fputc getc fgetc putchar getchar ungetc fopen fclose fread
fwrite fflush fseek ftell rewind feof ferror clearerr perror remove rename tmpfile fileno
malloc calloc realloc free aligned_alloc abort exit atexit _Exit getenv setenv unsetenv
system qsort bsearch abs labs llabs div atoi atol atoll atof strtol strtoul strtoll strtoull
strtod strtof rand srand memcpy memmove memset memcmp memchr strcpy strncpy strcat strncat
strcmp strncmp strchr strrchr strstr strlen strnlen strdup strndup strtok strerror strspn
strcspn strpbrk strcoll strxfrm isalpha isdigit isalnum isspace isupper islower isxdigit
ispunct isprint iscntrl tolower toupper assert errno offsetof va_start va_end va_arg
va_copy setjmp longjmp signal raise time clock difftime mktime localtime gmtime strftime
sqrt pow exp log log10 sin cos tan floor ceil fabs fmod round open close read write lseek
stat fstat lstat mmap munmap fork execv execvp waitpid pipe dup dup2 unlink mkdir rmdir
getpid sleep usleep nanosleep pthread_create pthread_join pthread_mutex_lock
pthread_mutex_unlock pthread_mutex_init pthread_mutex_destroy select poll socket bind
listen accept connect send recv sendto recvfrom getaddrinfo freeaddrinfo ioctl fcntl
EXIT_SUCCESS EXIT_FAILURE EOF SEEK_SET SEEK_CUR SEEK_END stdin stdout stderr CHAR_BIT
INT_MAX INT_MIN UINT_MAX LONG_MAX SIZE_MAX
"""
RESERVED: frozenset[str] = frozenset((_C_KEYWORDS + _CPP_KEYWORDS + _C_TYPES + _LIBC).split())
# the C++ standard library's functions and its containers', strings' and smart pointers'
# methods that code most calls: never guessed to be the repository's only one so named
_CPP_LIBRARY = """
push_back pop_back emplace_back push_front pop_front emplace_front emplace push pop front back
begin end rbegin rend cbegin cend size empty clear insert erase find count at data reserve
resize capacity shrink_to_fit swap substr c_str length append compare contains lower_bound
upper_bound equal_range get reset release sort stable_sort copy copy_if fill transform
accumulate min max min_element max_element move forward make_pair make_tuple make_shared
make_unique any_of all_of none_of remove remove_if unique reverse distance advance next prev
to_string getline
"""
_CPP_STD: frozenset[str] = frozenset(_CPP_LIBRARY.split())
# words that can stand before a name without declaring it
_NOT_TYPES = frozenset(
    {
        *("return", "else", "goto", "case", "sizeof", "typedef", "do", "new", "delete"),
        *("throw", "co_return", "co_yield", "co_await", "using", "namespace", "template"),
        *("typename", "operator", "friend", "public", "private", "protected"),
    }
)

LANGUAGE = CFamily()
