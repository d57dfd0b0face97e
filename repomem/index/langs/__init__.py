"""Name resolution per language family, through each language's own module system.

Python's resolution lives in ``repomem.index.resolve`` (it came first and the resolver's
tables are shaped by it). Every other family has one module here, named after it
(``typescript`` for JavaScript/TypeScript/TSX, ``java``, ``go``, ``rust``, ``c`` for C and
C++), holding a :class:`Language` that

* reads at parse time what resolution needs from the syntax tree (``extract``: qualified
  definitions, call sites, imports as ``ImportBinding``s, bases, the package), so that it is
  saved with the index and re-read only for files that changed;
* keeps its own tables over the resolver's files (``add``/``remove``: packages, paths,
  exports);
* resolves a call site for the code graph (``resolve_call``) and a dotted name written at
  the cursor for the definition cards (``resolve_name``), recording what it read through
  the resolver (``Resolver.note_lookup``/``note_key``) so that an edit re-resolves exactly the
  files whose resolution it can change;
* says which names are the language's own (``reserved``: keywords, built-in types, names its
  standard library owns), which never resolve to a repository definition.

A family without a module resolves as :class:`ByName` does: a definition in the same file,
else the only definition of that name in the family, never one in a test file for a caller
outside tests.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from repomem.index.queries import NAMESPACE

if TYPE_CHECKING:
    from tree_sitter import Node

    from repomem.index.parsed import CallSite, ImportBinding, ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

#: language -> the module of its family
MODULES: dict[str, str] = {
    "javascript": "typescript",
    "typescript": "typescript",
    "tsx": "typescript",
    "java": "java",
    "go": "go",
    "rust": "rust",
    "c": "c",
    "cpp": "c",
}


#: ``Language.siblings``: how many lines into a method's body the cursor may be
SIBLING_LINES = 6
#: at most this many implementations are read, the nearest by path first (of a few times
#: as many candidates: a query never reads every class or ``impl`` of a large repository)
MAX_SIBLINGS = 16


class Language:
    """One language family's resolution; the base class is the by-name fallback."""

    #: the resolver's ``by_name`` namespace of the family
    namespace: str = ""
    #: whether a call's resolution looks up its last name in ``by_name`` (a build finds
    #: the ids of a file's called names at once: ``Names.prefetch``)
    calls_by_name: bool = False
    #: whether ``a::b`` paths are names as written at the cursor (one part ``"a::b"`` of
    #: the dotted name ``resolve_name`` gets), rather than two names ``a`` and ``b``
    scoped_names: bool = False
    #: how many lines before the cursor the definition cards take names from (0: the
    #: context engine's default)
    name_lines: int = 0
    #: how many of the definitions in other files that the cursor's file already calls (the
    #: most called first) are candidates for the cards, named or not in the last lines: the
    #: next line mostly calls what the file calls elsewhere (0: none)
    file_callees: int = 0
    #: when this many methods of one type of another file are candidates, the type's card
    #: stands for them: its skeleton lists them, and others of its members, in less room than
    #: their cards take (0: never)
    group_members: int = 0
    #: how many of the family of a function or macro that the lines above name (``family``)
    #: its card lists beside it (0: none)
    name_families: int = 0
    #: a function or macro named this many lines above the cursor at most lists its family:
    #: one named further up says less about the next line, and each list takes card room
    #: from other definitions (C: ``BrotliBitReaderRestoreState`` 19 lines below its
    #: ``SaveState``)
    family_lines: int = 24
    #: how many of the other methods of the type of a method that the lines above call
    #: its card names (0: none)
    other_methods: int = 0
    #: whether that card names all the type's methods, those the code calls too, for a method
    #: called anywhere in the names' lines (``name_lines``), not only in the last
    #: ``family_lines``: C++'s receivers are often a class of handlers called one after
    #: another, whose calls' cards a function of many calls ranks out (``sax->end_array()``
    #: 25 lines below ``sax->start_array(``)
    other_methods_all: bool = False
    #: what the listing of ``included_definitions``' most called says they are
    helpers_heading: str = "most called of the headers included above, not named here:"
    #: how many of what follows the other calls of a definition the last lines call its card
    #: lists (``definitions._Finder._add_successors``)
    successors: int = 0
    #: whether ``in_scope``'s definitions are the types of receivers the last lines bind and
    #: the code does not use yet, carded first as Python's are (rather than what the
    #: enclosing types reach, ranked as any other)
    fresh_in_scope: bool = False
    #: how many receivers' types ``receiver_functions`` cards first (the nearest first)
    receiver_types: int = 1
    #: what a type's card says the definitions ``receiver_functions`` gives it are (empty:
    #: the functions taking one first)
    receiver_heading: str = ""
    #: how many of them the card names on the heading's line (0: it declares
    #: ``cards.MAX_METHODS`` of them, a line each)
    receiver_names: int = 0
    #: whether those the lines above write come first rather than last (Java: the next
    #: line on a variable just declared repeats what the code above called on another)
    receiver_written_first: bool = False
    #: whether the file's imports not named near the cursor are ranked by how often the
    #: file's resolved calls reach them (or their members), rather than by the import's line
    rank_imports_by_use: bool = False
    #: whether ``value_members`` can list any: the cursor reads no declaration's line for a
    #: language that never does
    value_members_listed: bool = False
    #: whether a member of a call's result the lines above write (``decoder(in).Decode(``)
    #: is a name, ``decoder.Decode``: the resolution types a function by its declared
    #: result, as it types ``x := decoder(in)``
    call_chains: bool = False
    #: what a card says ``value_members``' names are
    value_heading: str = "// its type's members:"

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
        """Fill ``parsed``'s definitions, calls (and, where the family has them, imports,
        import nodes, bases and package) from the file query's matches; ``def_nodes`` and
        ``call_nodes`` are their statement nodes (-1: outside every statement)."""
        from repomem.index.parsed import CallSite, Definition

        for (d, name), i in zip(defs, def_nodes, strict=True):
            if i >= 0:
                is_class = "class" in d.type or "struct" in d.type or d.type == "type_spec"
                parsed.definitions.append(Definition(_text(name), i, is_class))
        for (_, name), i in zip(calls, call_nodes, strict=True):
            if i >= 0:
                parsed.calls.append(CallSite(i, (_text(name),)))

    def parser_view(self, source: bytes) -> bytes:
        """A file's bytes as the grammar is shown them, every offset and row the file's (a
        wrapper the grammar cannot see through, blanked): the file's own by default."""
        return source

    def warm_up(self, language: str) -> None:
        """Compile now what ``extract`` needs for ``language`` (its own queries), so that the
        processes a build forks to parse inherit it."""

    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        """Enter a file into the family's own tables (the resolver's are already set)."""

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        """Take a file out of the family's own tables."""

    def enter(self, r: Resolver, path: str) -> None:
        """Enter a file of a loaded index (``r.files[path]`` is its saved parse, decoded
        when read): as ``add`` by default; a family whose tables of a file are made from its
        parse when first read enters its path alone, so that a load decodes no parse."""
        self.add(r, path, r.files[path])

    def settings(self, root: Path, paths: Iterable[str]) -> object | None:
        """What resolution reads outside the indexed files (a ``tsconfig.json``), for the
        family's files ``paths`` of the repository at ``root``: read when the index is built
        and saved with it (``Resolver.settings``), so that updates resolve as the build did.
        JSON-serialisable; None: nothing."""
        return None

    def moved(self, old: ParsedFile, new: ParsedFile) -> dict[int, int]:
        """Old node -> new node of the definitions of a file that only moved between two of
        its parses (lines above them changed): a call into one of them resolves to its new
        node, and its callers follow it without being resolved again. None by default: a
        definition at another node counts as a new one (``Resolver.dependents``)."""
        return {}

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        """The keys (``note_key``) a file answers: when they differ between two versions of
        the file (counted: a key given twice differs from one given once), the files that
        tried them are resolved again."""
        return (d.name for d in pf.definitions)

    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        """The definition a call site of ``path`` refers to, or None."""
        return self._by_name(r, path, call.parts[-1])

    def imported(self, r: Resolver, path: str, binding: ImportBinding) -> str | None:
        """The repository file an import of ``path`` reads (the code graph's import edges,
        ``IndexConfig.import_weight``), or None."""
        return None

    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        """Query time: (definition, how it resolved) for a dotted name written at the end of
        ``lines`` (the buffer up to the cursor's line, which may be newer than the index's
        copy of ``path``), or None. Nothing is recorded as a dependency."""
        found = self._by_name(r, path, parts[-1])
        if found is None:
            return None
        return found, "this file" if found[0] == path else "unique name"

    def in_scope(self, r: Resolver, path: str, lines: list[str]) -> list[tuple[Target, int]]:
        """Query time: definitions the code at the end of ``lines`` reaches without naming
        them (the members of the enclosing class's supertypes), each with the 0-based row
        that brings it into scope, nearest first. Nothing is recorded as a dependency."""
        return []

    def value_members(self, r: Resolver, path: str, node: int, line: str) -> list[Target]:
        """Query time: the members of the class or interface the top-level value ``node`` of
        ``path`` declares, its declaration's first line being ``line``, where its card shows
        that line alone (an object of functions): what a use of it calls; or those a type
        gets from elsewhere that its card does not show (Go's embedded types' methods).
        Nothing is recorded as a dependency."""
        return []

    def package_functions(self, r: Resolver, path: str, target: Target) -> list[Target]:
        """Query time: the functions another file (``path``) calls through the module
        qualifier of ``target``, a module-level function of another module, other than
        ``target`` (Go's exported functions of an imported package): what the next line may
        call after ``pkg.F``, as another method after one of a type. Nothing is recorded
        as a dependency."""
        return []

    def fresh_types(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """Query time: the repository types of the variables the last lines before the
        cursor bind (a method's parameters, a local) that no code uses yet, nearest first:
        the next line is likely to call their members, which no line names yet."""
        return []

    def siblings(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """Query time, where the cursor is at most ``SIBLING_LINES`` lines into a method's
        body: the other implementations of what that method implements (the same method of
        the enclosing class's supertypes' other subtypes, of the trait's other ``impl``
        blocks), whose calls are what the body being written is likely to call."""
        return []

    def next_declarations(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """Query time, in a file that declares what another defines (C's header, outside any
        function): the definitions it is likely to declare next, which no line names yet;
        none elsewhere."""
        return []

    def receiver_functions(
        self, r: Resolver, path: str, lines: list[str], types: int
    ) -> list[tuple[Target, list[Target]]]:
        """Query time, for a language whose methods are free functions taking the value first
        (C): the types of up to ``types`` variables near the end of ``lines``, each with the
        functions that take one; none elsewhere."""
        return []

    def receiver_key(self, qual: str) -> str:
        """The name by which one of ``receiver_functions``' definitions (its qualified
        name) is ranked: whether the code writes it, what it shares with the last one
        called."""
        return qual

    def pending_imports(self, pf: ParsedFile, lines: list[str]) -> set[str]:
        """Query time: the names the file (``pf``; ``lines``, the buffer up to the cursor)
        imports as values that its code does not use yet: imported to be used below, so
        likely by the next lines. Their cards come right after the fresh ones (empty: the
        import's line ranks it)."""
        return set()

    def pending_definitions(
        self, r: Resolver, path: str, lines: list[str]
    ) -> list[tuple[Target, int]]:
        """Query time: the definitions of the modules the file takes whole (C's ``#include``)
        that its code, ``lines`` up to the cursor, uses nothing of yet, each with the 0-based
        row of its import: included to be used below, as ``pending_imports``' names are.
        Nothing is recorded as a dependency."""
        return []

    def included_definitions(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """Query time: the definitions of the modules the file takes whole (C's project
        headers), whatever its code names, which the context ranks by how much the repository
        calls them: the project's helpers the next line may call. Nothing is recorded as a
        dependency."""
        return []

    def forwarder(self, lines: list[str]) -> str:
        """Query time: the name of the method whose body the cursor has just begun
        (``SIBLING_LINES`` lines at most), where a wrapper's method forwards to its field's
        method of that name or one it begins (Rust's ``fn retain`` calling
        ``self.core.retain_in_order(``), which a type's card lists first; empty by default."""
        return ""

    def subject(self, lines: list[str]) -> list[str]:
        """Query time: the words of what the test around the end of ``lines`` is named for
        (Go's ``func TestContextClientIP(``: ``Context``, ``Client``, ``IP``), whose methods a
        type's card lists first; none outside a test."""
        return []

    def family(self, name: str) -> list[str]:
        """The starts of a function's or macro's name that its family may share, longest
        first: the definitions of its file so named are an API's siblings (``_init``,
        ``_update``, ``_final``), which the next line calls one after another
        (``name_families``: the longest start other definitions share is the family's). By
        default (C's) up to each ``_`` from the last, two parts at least (``DNS_HEADER_``,
        ``crypto_onetimeauth_poly1305_``), and a name without one by its words
        (``camel_starts``: ``BrotliBitReader`` of ``BrotliBitReaderSaveState``)."""
        if "_" not in name.strip("_"):
            return camel_starts(name)
        out = []
        end = name.rfind("_")
        while end > 0 and not name.startswith("_"):
            prefix = name[: end + 1]
            if sum(1 for part in prefix.split("_") if part) < 2:  # ``ares__`` is no family
                break
            out.append(prefix)
            end = name.rfind("_", 0, end)
        return out

    def reserved(self, name: str) -> bool:
        """Whether ``name`` is the language's own (keyword, built-in type, standard library)."""
        return False

    def offers(self, binding: ImportBinding) -> bool:
        """Query time: whether an import of the cursor's file is a candidate of its own (not
        one only comments name)."""
        return True

    def types_only(self, binding: ImportBinding) -> bool:
        """Query time: whether an import binds a type alone (TypeScript's ``import type``),
        which the next line does not call."""
        return False

    def _by_name(self, r: Resolver, path: str, name: str) -> Target | None:
        r.note_key(self.namespace, name)
        local = r.defs[path].get(name)
        if local is not None:
            return path, local
        found = r.by_name.get((self.namespace, name), [])
        if len(found) != 1 or (is_test(found[0][0]) and not is_test(path)):
            return None
        return found[0]


def read_settings(root: Path, languages: Mapping[str, str]) -> dict[str, object]:
    """Every family's ``Language.settings`` for the repository's files (``languages``: each
    one's language, by path), by namespace."""
    by_family: dict[Language, list[str]] = {}
    for path, language in languages.items():
        if language in MODULES:
            by_family.setdefault(for_language(language), []).append(path)
    out = {}
    for lang, paths in by_family.items():
        found = lang.settings(root, paths)
        if found is not None:
            out[lang.namespace] = found
    return out


# a name's words: ``Brotli``, ``Bit``; ``scan``, ``Follows``; ``HTTP``, ``Server``; ``Utf8``
WORDS = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")


def camel_starts(name: str) -> list[str]:
    """The starts of a name in words (``scanFollowsTrue``: ``scanFollows``), less one word
    and more, two words at least, longest first; none for a name with a ``.`` (a method)."""
    if "." in name:
        return []
    words = WORDS.findall(name)
    ends = [len("".join(words[:k])) for k in range(len(words) - 1, 1, -1)]
    return [name[:end] for end in ends if name[:end] == "".join(WORDS.findall(name[:end]))]


def shared_dirs(a: str, b: str) -> int:
    """How many leading directories two paths share (the nearer of two files ranks first)."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


@lru_cache(maxsize=1 << 16)
def is_test(path: str) -> bool:
    """Whether ``path`` is test code by the conventions of the common languages' tools
    (a ``test``/``tests``/``__tests__`` directory, ``*_test.go``, ``*.test.ts``, ``*Test.java``,
    ``test_*.py``). Kept per path: a cursor's cards ask it of every file its file calls into
    (hundreds in a large module), and each asking split the path anew."""
    *dirs, name = path.split("/")
    if any(d.lower() in _TEST_DIRS for d in dirs):
        return True
    stem = name.split(".", 1)[0]
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "_tests", "Test", "Tests", "_spec"))
        or ".test." in name
        or ".spec." in name
    )


_TEST_DIRS = frozenset({"test", "tests", "__tests__", "testing", "spec", "specs", "testdata"})


@cache
def for_language(language: str) -> Language:
    """The resolution of ``language``'s family (the by-name fallback where it has none)."""
    module = MODULES.get(language)
    namespace = NAMESPACE.get(language, language)
    if module is not None:
        try:
            loaded = importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{module}":
                raise
        else:
            return loaded.LANGUAGE
    fallback = Language()
    fallback.namespace = namespace
    return fallback


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")
