"""Call resolution: which definition does a call site refer to?

Python is resolved here through imports (``from a.b import f``, ``import a.b as m; m.f()``,
relative imports, ``from a import *``, ``self.meth()`` through the enclosing class and its
bases, class constructors). Every other language family resolves through its own module system in
``repomem.index.langs``, over the tables kept here. Anything ambiguous or unknown is
dropped, never guessed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from functools import cache, lru_cache
from itertools import compress
from pathlib import PurePosixPath
from sys import intern
from typing import TypeVar

import numpy as np

from repomem.index import langs
from repomem.index.graph import ROOT
from repomem.index.mapped import LazyDict, Vocabulary
from repomem.index.names import (
    NameRows,
    Names,
    PerFile,
    Recent,
    SavedNames,
    saved_vocabulary,
    vocabulary_arrays,
)
from repomem.index.parsed import STAR, CallSite, ImportBinding, ParsedFile
from repomem.index.resolver_types import Target
from repomem.index.saved_parse import packed_parse

_MAX_DEPTH = 4

V = TypeVar("V")

# ``by_name``'s namespace for Python definitions, by the last part of their qualified name
PYTHON_NS = "python"


@cache
@lru_cache(maxsize=8192)
def module_name(path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod`` (a package's ``__init__`` is the package). Kept
    for the files last asked: a query's lookups ask it of the same few files tens of times
    (``_submodule``), and the path's parse took most of each lookup's time."""
    p = PurePosixPath(path)
    parts = list(p.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _package_of(path: str) -> tuple[str, ...]:
    """The package a relative import in ``path`` starts from."""
    pkg = tuple(module_name(path).split("."))
    return pkg if PurePosixPath(path).name.startswith("__init__.") else pkg[:-1]


class SavedDependencies:
    """What every file's call resolution read and tried when the index was saved, as the
    arrays a saved index maps (``dep_*``): a loaded index answers which files a change
    affects from them, and only the files resolved again since keep theirs in memory (on
    the Linux kernel's kernel/ mm/ fs/ include/ the decoded tables took 200 MB and a second
    of the first edit after a load).

    ``names``: the files read, the names looked up there and the keys tried, as
    ``Vocabulary`` ids; ``reads``: rows (file read, reader, name), sorted; ``tries``: rows
    (key, file), sorted; a reader or a file that tried by its position in ``paths``. Each
    table's first column is also saved on its own (``keys``): searched in place, where a
    column of the table would be copied whole by every search.

    With them, what the resolver reads of every file, so that a loaded index's resolver
    enters no file's parse: ``by_name`` (``SavedNames``), each file's ``languages`` and its
    saved parse (``parse(position)``), decoded when resolution first reads it.
    """

    def __init__(
        self,
        paths: list[str],
        names: Vocabulary,
        reads: tuple[np.ndarray, np.ndarray],
        tries: tuple[np.ndarray, np.ndarray],
        tables: tuple[list[str], Callable[[int], ParsedFile], SavedNames],
    ) -> None:
        self.paths = paths
        self.number = {p: i for i, p in enumerate(paths)}
        self.names = names
        self.reads, self._read_keys = reads
        self.tries, self._try_keys = tries
        self.languages, self.parse, self.by_name = tables

    @staticmethod
    def _rows(table: np.ndarray, keys: np.ndarray, value: int | None) -> np.ndarray:
        """The rows of ``table`` whose key (``keys``, sorted) is ``value``."""
        if value is None:
            return table[:0]
        lo = np.searchsorted(keys, value)
        return table[lo : np.searchsorted(keys, value, side="right")]

    def readers(self, path: str) -> list[str]:
        rows = self._rows(self.reads, self._read_keys, self.names.get(path))
        return [self.paths[f] for f in np.unique(rows[:, 1]).tolist()]

    def readers_where(self, path: str, keep: Callable[[str], bool]) -> list[str]:
        """The files that looked up in ``path`` a name ``keep`` holds true of (each name
        tested once, however many files looked it up)."""
        rows = self._rows(self.reads, self._read_keys, self.names.get(path))
        word = self.names.word
        hit = [n for n in np.unique(rows[:, 2]).tolist() if keep(word(n))]
        return [self.paths[f] for f in np.unique(rows[np.isin(rows[:, 2], hit), 1]).tolist()]

    def triers(self, key: str) -> list[str]:
        """The files that tried ``key`` (a module name, or ``namespace:name``)."""
        rows = self._rows(self.tries, self._try_keys, self.names.get(key))
        return [self.paths[f] for f in rows[:, 1].tolist()]


def saved_dependencies(
    paths: list[str],
    languages: list[str],
    parse: Callable[[int], ParsedFile],
    a: Mapping[str, np.ndarray],
) -> SavedDependencies:
    """``dependency_arrays`` and ``Names.arrays`` of a saved index, as it maps them."""
    return SavedDependencies(
        paths,
        saved_vocabulary("dep_names", a),
        (a["dep_reads"], a["dep_reads_key"]),
        (a["dep_tries"], a["dep_tries_key"]),
        (languages, parse, SavedNames(a)),
    )


class DependencyRows:
    """What each file's resolution read and tried, gathered as the rows of
    ``SavedDependencies`` file by file: an int32 array per file, its names numbered in the
    order they first come (the files in ``paths``' order, each set of names sorted: a set's
    order changes with the process's string hashing), rather than a tuple per row."""

    def __init__(self, paths: list[str]) -> None:
        self.number = {p: i for i, p in enumerate(paths)}
        self.ids: dict[str, int] = {}
        self._reads: list[np.ndarray] = []
        self._tries: list[np.ndarray] = []

    def add(self, path: str, reading: Mapping[str, Iterable[str]], trying: Iterable[str]) -> None:
        """One file's rows: per file read, the names looked up there; the keys tried."""
        ids, f = self.ids, self.number[path]
        read: list[int] = []
        names: list[int] = []
        for q, looked_up in reading.items():
            q_id, before = ids.setdefault(q, len(ids)), len(names)
            names.extend([ids.setdefault(n, len(ids)) for n in sorted(looked_up)])
            read.extend([q_id] * (len(names) - before))
        if names:
            r = np.empty((len(names), 3), np.int32)
            r[:, 0], r[:, 1], r[:, 2] = read, f, names
            self._reads.append(r)
        tried = [ids.setdefault(n, len(ids)) for n in sorted(trying)]
        if tried:
            t = np.empty((len(tried), 2), np.int32)
            t[:, 0], t[:, 1] = tried, f
            self._tries.append(t)

    def sharing(self) -> DependencyRows:
        """Empty rows over the same files, their numbers shared rather than made again (the
        whole kernel's 55k for each chunk of files a run of resolution takes)."""
        rows = DependencyRows([])
        rows.number = self.number
        return rows

    def rows(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The rows gathered (read, tried), numbered by the names listed, as another
        process's ``join`` takes them."""
        r = np.concatenate([np.empty((0, 3), np.int32), *self._reads])
        t = np.concatenate([np.empty((0, 2), np.int32), *self._tries])
        return list(self.ids), r, t

    def join(self, names: list[str], reads: np.ndarray, tries: np.ndarray) -> None:
        """Rows that another process gathered (``rows``) over files after all of these: its
        names numbered on after these in the order it first met them, as if this one had
        resolved those files too."""
        ids = self.ids
        rename = np.array([ids.setdefault(n, len(ids)) for n in names], np.int32)
        r, t = np.array(reads, np.int32), np.array(tries, np.int32)
        r[:, 0], r[:, 2], t[:, 0] = rename[r[:, 0]], rename[r[:, 2]], rename[t[:, 0]]
        self._reads.append(r)
        self._tries.append(t)

    def arrays(
        self, kept: tuple[SavedDependencies, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """The rows as ``SavedDependencies`` reads them; ``kept``: a saved index's tables and,
        per saved file number, its number in ``paths`` (-1: not kept), whose rows join them."""
        r = np.concatenate([np.empty((0, 3), np.int32), *self._reads])
        t = np.concatenate([np.empty((0, 2), np.int32), *self._tries])
        self._reads, self._tries = [], []
        if kept is not None:
            saved, renumber = kept
            kept_r = saved.reads[renumber[saved.reads[:, 1]] >= 0]
            kept_t = saved.tries[renumber[saved.tries[:, 1]] >= 0]
            used = np.unique(np.r_[kept_r[:, 0], kept_r[:, 2], kept_t[:, 0]])
            rename = np.full(len(saved.names), -1, np.int32)
            ids, word = self.ids, saved.names.word
            rename[used] = [ids.setdefault(word(n), len(ids)) for n in used.tolist()]
            r = np.r_[
                r,
                np.c_[rename[kept_r[:, 0]], renumber[kept_r[:, 1]], rename[kept_r[:, 2]]],
            ].astype(np.int32)
            t = np.r_[t, np.c_[rename[kept_t[:, 0]], renumber[kept_t[:, 1]]]].astype(np.int32)
        r = r[np.lexsort((r[:, 2], r[:, 1], r[:, 0]))]
        t = _sorted_pairs(t)
        return {
            "dep_reads": r,
            "dep_reads_key": np.ascontiguousarray(r[:, 0]),
            "dep_tries": t,
            "dep_tries_key": np.ascontiguousarray(t[:, 0]),
            **vocabulary_arrays("dep_names", self.ids),
        }


def _sorted_pairs(rows: np.ndarray) -> np.ndarray:
    """Rows of two non-negative int32 columns sorted by the first, then the second: each
    row packed in an int64 and sorted as one (tied rows are equal: any order of them is
    ``np.lexsort``'s), in resolution's serial end. The kernel subset's million keys tried:
    lexsort 0.28-0.30 s, this 0.03-0.06 s."""
    packed = np.sort((rows[:, 0].astype(np.int64) << 32) | rows[:, 1])
    out = np.empty_like(rows)
    out[:, 0], out[:, 1] = packed >> 32, packed & 0xFFFFFFFF
    return out


def _defs_by_name(pf: ParsedFile) -> dict[str, int]:
    """Each definition's node by its name (the last so named)."""
    names, nodes, _ = pf.definition_columns()
    return dict(zip(names, nodes, strict=True))


def _class_names(pf: ParsedFile) -> set[str]:
    names, _, classes = pf.definition_columns()
    return set(compress(names, classes))


def _names_by_node(pf: ParsedFile) -> dict[int, str]:
    names, nodes, _ = pf.definition_columns()
    return dict(zip(nodes, names, strict=True))


class Resolver:
    """Resolution tables over a set of parsed files; ``calls_of(path)`` gives a file's edges,
    with ``imports`` also one ``(ROOT, module path, ROOT)`` per repository module it imports.

    ``saved``: a loaded index's tables, which stand for ``files`` as they were saved: the
    files are entered by path alone (``Language.enter``), ``by_name`` is read in place and
    each file's own tables are made from its saved parse when first read."""

    def __init__(
        self,
        files: Mapping[str, ParsedFile],
        *,
        imports: bool = False,
        settings: Mapping[str, object] | None = None,
        saved: SavedDependencies | None = None,
    ) -> None:
        self.imports = imports
        # what each family read outside the indexed files when the index was built
        # (``Language.settings``), by namespace; and each family's own tables
        self.settings: dict[str, object] = dict(settings or {})
        self.tables: dict[str, object] = {}
        # a saved index's parses, or a build's (a ``LazyDict`` of them: read in place, each
        # made when read and dropped by ``drop_unread``), or a copy of ``files``
        self.files: MutableMapping[str, ParsedFile] = (
            LazyDict(saved.paths, saved.parse, packed_parse)
            if saved is not None
            else files
            if isinstance(files, LazyDict)
            else {}
        )
        self.modules: dict[str, str] = {}
        self.suffixes: dict[str, list[str]] = defaultdict(list)
        # each file's own tables, made from its parse when first read (``per_file``), and
        # what resolution made of a file and may read again (``recent``)
        self._per_file: list[PerFile | Recent] = []
        # (from the definitions' columns: a saved parse makes no ``Definition`` for them)
        self.defs = self.per_file(_defs_by_name)
        self.classes = self.per_file(_class_names)
        self.qualnames = self.per_file(_names_by_node)
        self.bindings = self.per_file(_bindings)
        # a Python file's ``from m import *`` imports, in the order the file makes them
        self.stars = self.per_file(
            lambda pf: [b for b in pf.imports if b.name == STAR] if pf.language == "python" else []
        )
        # (namespace, name) -> definitions; Python's by the last part of their name
        self.by_name = Names() if saved is None else Names(saved.paths, saved.by_name)
        # what each file's resolution looked at, so that a change re-resolves only the files
        # it can affect: names looked up per file, module names tried, bare names called
        # (names, keys and files interned and kept as tuples: one edit of a header the Linux
        # kernel includes everywhere resolves ~440 files again, and their sets of fresh
        # strings took ~60 MB for the rest of the session)
        self.consulted: dict[str, dict[str, tuple[str, ...]]] = {}  # file -> {file read: names}
        self.readers: dict[str, tuple[str, ...]] = {}  # file -> files that read it
        # a module name, or "namespace:name" (``note_key``) -> files that tried it
        self.callers: dict[str, tuple[str, ...]] = {}
        self._tried_by: dict[str, tuple[str, ...]] = {}
        # what a saved index says of the files not resolved again since (``_forget``)
        self.saved = saved
        self._overridden: set[str] = set()
        self._reading: dict[str, set[str]] | None = None
        self._trying: set[str] | None = None
        if isinstance(self.files, LazyDict) and saved is None:
            self.by_name = _enter_all(self, list(files))
        elif saved is None:
            for path, pf in files.items():
                self._add(path, pf)
        else:
            for path, language in zip(saved.paths, saved.languages, strict=True):
                if language == "python":
                    self._add_module(path)
                else:
                    langs.for_language(language).enter(self, path)

    def per_file(self, make: Callable[[ParsedFile], V]) -> PerFile[V]:
        """A table of each file's own entries, made from its parse when first read (a
        language family's too): ``drop_unread`` drops those a while unused."""
        table = PerFile(self.files, make)
        self._per_file.append(table)
        return table

    def recent(self) -> Recent:
        """A table of what resolution made of each file and may read again (a language
        family's): ``drop_unread`` drops those a while unused."""
        table: Recent = Recent()
        self._per_file.append(table)
        return table

    def drop_unread(self) -> None:
        """Drop the saved parses and the per-file tables made from them that were not read
        since the last call (``LazyDict.drop_unread``): they are made again when next read;
        and the definitions looked up by name (``Names.forget_found``). The index calls it
        when it is tidied."""
        if isinstance(self.files, LazyDict):
            self.files.drop_unread()
        for table in self._per_file:
            table.drop_unread()
        self.by_name.forget_found()

    def update(self, path: str, pf: ParsedFile | None) -> None:
        """Replace one file's entries (``None`` removes the file)."""
        if path in self.files:
            self._remove(path)
        if pf is not None:
            self._add(path, pf)

    def _add(self, path: str, pf: ParsedFile) -> None:
        self.files[path] = pf
        self._enter(path, pf)

    def _enter(self, path: str, pf: ParsedFile) -> None:
        """``pf``'s entries in the tables by name and module, ``files`` holding it already."""
        ns = _namespace(pf.language)
        for d in pf.definitions:  # Python's by the last part: ``obj.meth`` untyped
            self.by_name.add(path, (ns, d.name.rsplit(".", 1)[-1]), d.node)
        self._enter_tables(path, pf)

    def _enter_tables(self, path: str, pf: ParsedFile) -> None:
        """``pf``'s entries in the modules and the family's own tables (``_enter``)."""
        if pf.language == "python":
            self._add_module(path)
        else:
            langs.for_language(pf.language).add(self, path, pf)

    def _add_module(self, path: str) -> None:
        mod = module_name(path)
        self.modules[mod] = path
        parts = mod.split(".")
        for i in range(len(parts)):
            self.suffixes[".".join(parts[i:])].append(path)

    def _remove(self, path: str) -> None:
        pf = self.files.pop(path)
        self._forget(path)  # what its resolution read (resolved again if it stays)
        for table in (self.defs, self.classes, self.qualnames, self.bindings, self.stars):
            table.forget(path)
        if pf.language == "python":
            mod = module_name(path)
            if self.modules.get(mod) == path:
                del self.modules[mod]
            parts = mod.split(".")
            for i in range(len(parts)):
                key = ".".join(parts[i:])
                self.suffixes[key] = [p for p in self.suffixes[key] if p != path]
        else:
            langs.for_language(pf.language).remove(self, path, pf)
        ns = _namespace(pf.language)
        self.by_name.remove(path, {(ns, d.name.rsplit(".", 1)[-1]) for d in pf.definitions})

    # ---- modules -------------------------------------------------------------------------
    def resolve_module(self, name: str, level: int, from_path: str) -> str | None:
        if level:
            pkg = _package_of(from_path)
            if level - 1 > len(pkg):
                return None
            base = pkg[: len(pkg) - (level - 1)]
            full = ".".join([*base, name] if name else base)
            self._note_name(full)
            return self.modules.get(full)
        self._note_name(name)
        if name in self.modules:
            return self.modules[name]
        return _shallowest(self.suffixes.get(name, []))

    def _submodule(self, path: str, attr: str) -> str | None:
        mod = module_name(path)
        full = f"{mod}.{attr}" if mod else attr
        self._note_name(full)
        return self.modules.get(full)

    def _note_name(self, name: str) -> None:
        if self._trying is not None:
            self._trying.add(name)

    def note_lookup(self, path: str, name: str) -> None:
        """Record that the resolution under way read what ``name`` means in ``path``: when
        that changes, the file being resolved is resolved again."""
        if self._reading is not None:
            self._reading.setdefault(path, set()).add(name)

    def note_key(self, namespace: str, key: str) -> None:
        """Record that the resolution under way tried ``key`` of a language family (a bare
        name, a package, a path): a file that comes to provide it, or stops providing it
        (``Language.provides``), has the file being resolved resolved again."""
        if self._trying is not None:
            self._trying.add(f"{namespace}:{key}")

    # ---- names ---------------------------------------------------------------------------
    def _binding_target(
        self, path: str, b: ImportBinding, depth: int
    ) -> tuple[str, str | None] | None:
        """(file, qualname) for a symbol binding, (file, None) for a module binding."""
        mod_path = self.resolve_module(b.module, b.level, path)
        if mod_path is None:
            return None
        if b.symbol is None:
            return mod_path, None
        return self._lookup(mod_path, b.symbol, depth + 1)

    def _lookup(self, path: str, name: str, depth: int) -> tuple[str, str | None] | None:
        """What ``name`` means at module level of ``path``."""
        if depth > _MAX_DEPTH:
            return None
        self.note_lookup(path, name)
        if name in self.defs.get(path, {}):
            return path, name
        sub = self._submodule(path, name)
        if sub is not None:
            return sub, None
        b = self.bindings.get(path, {}).get(name)
        if b is not None:
            return self._binding_target(path, b, depth)
        if name.startswith("_"):
            return None  # ``import *`` leaves private names behind
        for star in reversed(self.stars.get(path, ())):  # the last one made wins
            module = self.resolve_module(star.module, star.level, path)
            if module is not None and module != path:
                found = self._lookup(module, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _method(self, path: str, cls: str, name: str, depth: int) -> Target | None:
        if depth > _MAX_DEPTH:
            return None
        self.note_lookup(path, f"{cls}.{name}")
        node = self.defs.get(path, {}).get(f"{cls}.{name}")
        if node is not None:
            return path, node
        for base in self.files[path].bases.get(cls, []):
            found = self._resolve_parts(path, base, depth + 1, want_class=True)
            if found is not None:
                bpath, bqual = found
                hit = self._method(bpath, bqual, name, depth + 1)
                if hit is not None:
                    return hit
        return None

    def _resolve_parts(
        self, path: str, parts: tuple[str, ...], depth: int, want_class: bool = False
    ) -> tuple[str, str] | None:
        """(file, qualname) of the definition a dotted name refers to."""
        if depth > _MAX_DEPTH:
            return None
        head, rest = parts[0], parts[1:]
        found = self._lookup(path, head, depth)
        if found is None:
            return None
        cur_path, qual = found
        for part in rest:
            if qual is None:  # a module: step into a definition or a submodule
                nxt = self._lookup(cur_path, part, depth + 1)
                if nxt is None:
                    return None
                cur_path, qual = nxt
            elif qual in self.classes[cur_path]:  # Class.method, inherited ones included
                hit = self._method(cur_path, qual, part, depth + 1)
                if hit is None:
                    return None
                cur_path, qual = hit[0], self.qualnames[hit[0]][hit[1]]
            else:
                return None
        if qual is None:
            return None
        if want_class and qual not in self.classes.get(cur_path, set()):
            return None
        return cur_path, qual

    def lookup(self, path: str, name: str) -> tuple[str, str | None] | None:
        """What a bare ``name`` means at module level of ``path``: (file, qualified name) of a
        definition, or (file, None) for a module."""
        return self._lookup(path, name, 0)

    def definition(
        self, path: str, parts: tuple[str, ...], scope: str | None = None
    ) -> tuple[str, str] | None:
        """(file, qualified name) of the function or class the dotted name ``parts`` refers to
        in ``path``; ``self``/``cls`` attributes go through the class ``scope`` and its bases.
        Query time: nothing is recorded as a dependency of ``path``."""
        pf = self.files.get(path)
        if pf is None or pf.language != "python":
            return None
        if parts[0] in ("self", "cls"):
            if scope is None or len(parts) != 2:
                return None
            hit = self._method(path, scope, parts[1], 0)
            return None if hit is None else (hit[0], self.qualnames[hit[0]][hit[1]])
        return self._resolve_parts(path, parts, 0)

    def resolve_call(self, path: str, call: CallSite) -> Target | None:
        pf = self.files[path]
        if pf.language != "python":
            return langs.for_language(pf.language).resolve_call(self, path, call)
        if call.parts[0] in ("self", "cls"):
            if call.scope is None or len(call.parts) != 2:
                return None
            return self._method(path, call.scope, call.parts[1], 0)
        found = self._resolve_parts(path, call.parts, 0)
        if found is None:
            return None
        return found[0], self.defs[found[0]][found[1]]

    def calls_of(self, path: str, rows: DependencyRows | None = None) -> list[tuple[int, str, int]]:
        """Resolved call edges of one file: (source local node, target file, target local node).
        ``rows``: where what the resolution read and tried goes, as array rows, rather than
        into the resolver's own sets (a build, which keeps no resolver: on the whole Linux
        kernel those sets, and the tuples made of them, held several GB)."""
        self._forget(path)
        self._reading, self._trying = {}, set()
        try:
            _find_called(self, self.files[path])
            out = []
            # a file calls the same names over and over (``self.assertEqual``); each distinct
            # callee is resolved once, its lookups being the same every time
            memo: dict[tuple[tuple[str, ...], str | None], Target | None] = {}
            for call in self.files[path].calls:
                key = (call.parts, call.scope)
                if key not in memo:
                    memo[key] = self.resolve_call(path, call)
                hit = memo[key]
                if hit is not None:
                    out.append((call.node, hit[0], hit[1]))
                    self.note_lookup(hit[0], self.qualnames[hit[0]].get(hit[1], ""))
            if self.imports:
                modules = {self._imported(path, b) for b in self.files[path].imports}
                out.extend((ROOT, m, ROOT) for m in sorted(modules - {None, path}))
            # one edge per (statement, definition): ``f(1) + f(2)`` calls ``f`` once, as an
            # update, which gathers each file's edges into a set, counts it
            out = list(dict.fromkeys(out))
            reading, trying = self._reading, self._trying
        finally:
            self._reading = self._trying = None
        reading.pop(path, None)
        if rows is not None:
            rows.add(path, reading, trying)
        else:  # "ns:name" entries are bare names called in a name-resolved language
            self._record(path, reading, trying)
        # one edge per (statement, definition), however often the statement calls it (a C
        # macro nested in itself): an update keeps the edges as a set
        return list(dict.fromkeys(out))

    def _imported(self, path: str, b: ImportBinding) -> str | None:
        """The repository module an import binding reads: ``from pkg import sub`` reads the
        submodule when there is one, else ``pkg``; ``import a.b`` binds, and reads, ``a``.
        Another family's: as its ``Language.imported`` says."""
        language = self.files[path].language
        if language != "python":
            return langs.for_language(language).imported(self, path, b)
        module = self.resolve_module(b.module, b.level, path)
        if module is None or b.symbol is None:
            return module
        return self._submodule(module, b.symbol) or module

    def dependency_arrays(self, paths: list[str]) -> dict[str, np.ndarray]:
        """What the resolution of each of ``paths`` read and tried, as the arrays of
        ``SavedDependencies``: the rows of files not resolved again since the load are
        copied from the saved ones, renumbered, without decoding them file by file."""
        rows = DependencyRows(paths)
        saved = self.saved
        for p in paths:
            if saved is not None and p not in self._overridden and p in saved.number:
                continue
            rows.add(p, self.consulted.get(p, {}), self._tried_by.get(p, ()))
        if saved is None:
            return rows.arrays()
        renumber = np.full(len(saved.paths), -1, np.int32)
        for p, i in saved.number.items():
            if p in rows.number and p not in self._overridden:
                renumber[i] = rows.number[p]
        return rows.arrays((saved, renumber))

    def _record(self, path: str, reading: dict[str, set[str]], trying: set[str]) -> None:
        self._forget(path)
        self.consulted[path] = {
            intern(q): tuple(map(intern, names)) for q, names in reading.items()
        }
        readers, callers = self.readers, self.callers
        for p in self.consulted[path]:
            readers[p] = (*readers.get(p, ()), path)
        self._tried_by[path] = tried = tuple(map(intern, trying))
        for key in tried:
            callers[key] = (*callers.get(key, ()), path)

    def _forget(self, path: str) -> None:
        """Drop what ``path``'s last resolution recorded (a saved index's rows included)."""
        if self.saved is not None:
            self._overridden.add(path)
        for table, keys in (
            (self.readers, self.consulted.pop(path, ())),
            (self.callers, self._tried_by.pop(path, ())),
        ):
            for key in keys:
                files = tuple(f for f in table.get(key, ()) if f != path)
                if files:
                    table[key] = files
                else:
                    table.pop(key, None)

    def _readers(self, path: str) -> set[str]:
        out = set(self.readers.get(path, ()))
        if self.saved is not None:
            out.update(f for f in self.saved.readers(path) if f not in self._overridden)
        return out

    def _triers(self, key: str) -> set[str]:
        out = set(self.callers.get(key, ()))
        if self.saved is not None:
            out.update(f for f in self.saved.triers(key) if f not in self._overridden)
        return out

    def dependents(self, path: str, versions: Iterable[ParsedFile | None]) -> set[str]:
        """Files whose resolved calls may change when ``path`` changes between ``versions``
        (its old and new parse, None when absent): those whose resolution looked up a name
        in it whose meaning changed, those that tried a module name it provides (when it
        appears or goes), and, for the other families, those that tried a key it provides
        (``Language.provides``) or a name it defines anew."""
        old, new = versions
        changed = _changed_names(old, new) if old is not None and new is not None else None
        if changed is None:
            out = self._readers(path)
        else:
            names, classes = changed

            def matters(name: str) -> bool:
                return name in names or _under(name, classes)

            out = {
                f
                for f in self.readers.get(path, ())
                if any(matters(n) for n in self.consulted.get(f, {}).get(path, ()))
            }
            if self.saved is not None:
                found = self.saved.readers_where(path, matters)
                out.update(f for f in found if f not in self._overridden)
        if path.endswith((".py", ".pyi")) and changed is None:
            parts = module_name(path).split(".")
            for i in range(len(parts)):
                out.update(self._triers(".".join(parts[i:])))
        for pf in versions:
            if pf is not None and pf.language != "python":
                lang = langs.for_language(pf.language)
                keys = {k for name in _redefined(old, new) for k in (name, name.rsplit(".")[-1])}
                # as multisets: a key a file provides twice (C: a function with external
                # linkage) changes when one of the two goes
                before, after = (Counter(lang.provides(path, v) if v else ()) for v in versions)
                keys |= set((before - after) + (after - before))
                for key in keys:
                    out.update(self._triers(f"{lang.namespace}:{key}"))
                break
        out.discard(path)
        return out


def _enter_all(r: Resolver, paths: list[str]) -> Names:
    """Every file of a build's parses (``r.files``, each made when read) entered as
    ``Resolver._enter`` does, their definitions as the arrays a saved index maps
    (``NameRows``, the files numbered in path order, as ``Names`` keeps a name's)."""
    rows = NameRows(sorted(paths))
    number = {p: i for i, p in enumerate(rows.paths)}
    for path in paths:
        pf = r.files.peek(path)  # type: ignore[attr-defined]
        assert pf is not None
        ns, i = _namespace(pf.language), number[path]
        names, nodes, _ = pf.definition_columns()
        rows.add_file(i, ns, names, nodes)
        r._enter_tables(path, pf)  # noqa: SLF001 - the resolver's own step
    return rows.names()


def _find_called(r: Resolver, pf: ParsedFile) -> None:
    """The names a file calls found at once in ``by_name``'s saved keys (``Names.prefetch``)
    before its calls are resolved, where its family looks them up there."""
    if pf.language != "python" and langs.for_language(pf.language).calls_by_name:
        r.by_name.prefetch(_namespace(pf.language), {call.parts[-1] for call in pf.calls})


def _namespace(language: str) -> str:
    """``by_name``'s namespace of a language's definitions."""
    return PYTHON_NS if language == "python" else langs.for_language(language).namespace


def _bindings(pf: ParsedFile) -> dict[str, ImportBinding]:
    """A file's import bindings by the name they bind (a Python file's star imports apart)."""
    if pf.language == "python":
        return {b.name: b for b in pf.imports if b.name != STAR}
    return {b.name: b for b in pf.imports}


def _shallowest(paths: list[str]) -> str | None:
    """Of the files whose module names end with an absolute import's name, the one nearest
    the repository's top (``src/flask/__init__.py``, not a test's
    ``tests/apps/inner/flask.py``), as the roots Python searches usually are; None when two
    are as near."""
    if len(paths) <= 1:
        return paths[0] if paths else None
    depths = [module_name(p).count(".") for p in paths]
    best = min(depths)
    return paths[depths.index(best)] if depths.count(best) == 1 else None


def _under(name: str, classes: set[str]) -> bool:
    """Whether a dotted prefix of ``name`` is one of ``classes``: ``A.B.m`` was looked up
    through ``A.B``'s bases (or a JavaScript/TypeScript ``A.B``'s return type) as much as
    through ``A``'s."""
    i = name.find(".")
    while i != -1:
        if name[:i] in classes:
            return True
        i = name.find(".", i + 1)
    return False


def _changed_names(old: ParsedFile, new: ParsedFile) -> tuple[set[str], set[str]] | None:
    """Module-level names whose meaning differs between two parses of a Python file, and
    classes whose bases differ (every method looked up through them may resolve anew); of
    another family's file, the names ``_redefined``, the import bindings that differ and the
    classes whose bases differ; ``None``: the language, the declared package or a wildcard
    import changed."""
    if old.language != new.language or old.package != new.package:
        return None
    if old.language != "python":
        bind_old = {b.name: b for b in old.imports}
        bind_new = {b.name: b for b in new.imports}
        rebound = {
            n for n in bind_old.keys() | bind_new.keys() if bind_old.get(n) != bind_new.get(n)
        }
        if any(n.endswith("*") for n in rebound):
            return None  # a wildcard import (``import a.b.*;``) may change what any name means
        classes = {
            c for c in old.bases.keys() | new.bases.keys() if old.bases.get(c) != new.bases.get(c)
        }
        # a nested class's bases are looked up by its whole name (``Outer.Inner``)
        return _redefined(old, new) | rebound | classes, classes
    # a definition that only moved (lines above it changed) still means the same thing; the
    # calls into it follow it (``moved_definitions``) without resolving their files again
    kind_old = {d.name: d.is_class for d in old.definitions}
    kind_new = {d.name: d.is_class for d in new.definitions}
    names = {n for n in kind_old.keys() | kind_new.keys() if kind_old.get(n) != kind_new.get(n)}
    if [b for b in old.imports if b.name == STAR] != [b for b in new.imports if b.name == STAR]:
        return None  # an ``import *`` that came, went or moved may change what any name means
    bind_old = {b.name: b for b in old.imports}
    bind_new = {b.name: b for b in new.imports}
    names.update(n for n in bind_old.keys() | bind_new.keys() if bind_old.get(n) != bind_new.get(n))
    classes = {
        c for c in old.bases.keys() | new.bases.keys() if old.bases.get(c) != new.bases.get(c)
    }
    return names, classes


def _redefined(old: ParsedFile | None, new: ParsedFile | None) -> set[str]:
    """Names whose definitions (name, node) differ between two parses of a file resolved by
    name, a definition that only moved (``moved_definitions``) counting as itself: a call
    elsewhere resolves to a name's only definition, so calls of the others (a file's
    functions when one is added at its end) resolve as they did."""
    moved = moved_definitions(old, new)
    before = (
        Counter((d.name, moved.get(d.node, d.node)) for d in old.definitions)
        if old is not None
        else Counter()
    )
    after = Counter((d.name, d.node) for d in new.definitions) if new is not None else Counter()
    return {name for name, _ in (before - after) | (after - before)}


def moved_definitions(old: ParsedFile | None, new: ParsedFile | None) -> dict[int, int]:
    """Old node -> new node of the definitions that only moved between two parses of a
    file (``Language.moved``; Python's: those that kept their name and kind): a call
    resolved to one of them now resolves to its new node."""
    if old is None or new is None or old.language != new.language:
        return {}
    if old.language != "python":
        return langs.for_language(old.language).moved(old, new)
    before = {d.name: (d.node, d.is_class) for d in old.definitions}  # the last one wins,
    after = {d.name: (d.node, d.is_class) for d in new.definitions}  # as in ``Resolver.defs``
    return {
        before[n][0]: after[n][0]
        for n in before.keys() & after.keys()
        if before[n][1] == after[n][1] and before[n][0] != after[n][0]
    }
