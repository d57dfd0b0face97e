"""A parse as an index saves it: its node rows as slices of arrays concatenated over the
files, its symbols, definitions and call sites as JSON, and read back as a ``SavedParse``
whose parts are decoded when first read."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import compress
from pathlib import Path
from typing import Any

import numpy as np

from repomem.index.mapped import LazyDict
from repomem.index.parsed import CallSite, Definition, ImportBinding, ParsedFile
from repomem.index.spool import ArrayWriter, TextWriter, is_file, mapped, write_array

# a parse's per-line and per-node arrays, saved concatenated over the files (int32)
NODE_ROWS = (
    "line_len",
    "node_start",
    "node_end",
    "node_parent",
    "line_owner",
    "node_head",
    "class_methods",
)
# the fields a ``SavedParse`` is made with, set by name
_SAVED_FIELDS = ("path", "language", "digest", *NODE_ROWS)


class FileParts:
    """One file's slice of the saved arrays that are concatenated over the files."""

    def __init__(self, a: dict, names: tuple[str, ...]) -> None:
        self.arrays = a
        self.offsets = {name: a[f"{name}_off"].tolist() for name in names}

    def of(self, name: str, i: int) -> np.ndarray:
        off = self.offsets[name]
        return self.arrays[name][off[i] : off[i + 1]]

    def all(self, names: tuple[str, ...], i: int) -> list[np.ndarray]:
        return [self.of(name, i) for name in names]


def saved_parse(file: list[str], part: Callable[[str], np.ndarray]) -> ParsedFile:
    """A file's parse from its saved parts (``part(name)``: its slice of the array so
    named), each part of it decoded when first read."""
    path, language, digest = file
    # tuple.__new__ skips the named tuples' Python-level constructors: a first update
    # after a load makes every file's parse, ~400k of them on the standard library
    new = tuple.__new__

    def symbols() -> dict[str, Any]:
        return json.loads(part("symbols").tobytes())

    def columns() -> tuple[list[str], list[int], list[bool]]:
        names, nodes, classes = json.loads(part("definitions").tobytes())
        return names, nodes, classes

    def callsites() -> list[CallSite]:
        return [
            new(CallSite, (node, tuple(names), scope))
            for node, names, scope in json.loads(part("callsites").tobytes())
        ]

    return SavedParse(
        path,
        language,
        digest,
        *(part(name) for name in NODE_ROWS),
        saved=(symbols, columns, callsites),
    )


# how each of a saved parse's symbols is made from its JSON, when first read: a file that a
# cursor's names reach for its imports makes neither its bases nor its error rows
_DECODE: dict[str, Callable[[Any], Any]] = {
    "has_error": lambda value: value,
    "error_rows": lambda rows: None if rows is None else np.array(rows, np.int32).reshape(-1, 2),
    # (tuple.__new__, as in ``saved_parse``: without the named tuple's constructor)
    "imports": lambda imports: [tuple.__new__(ImportBinding, b) for b in imports],
    "import_nodes": lambda value: value,
    "bases": lambda bases: {k: [tuple(v) for v in vs] for k, vs in bases.items()},
    "package": lambda value: value,
}


def _symbol(name: str) -> property:
    """A field of ``SavedParse`` read from its saved symbols, made at its first read; set, it
    holds what is set."""
    decode = _DECODE[name]

    def get(self: SavedParse) -> Any:
        fields = self.__dict__
        if name not in fields:
            fields[name] = decode(self._saved_symbols().pop(name))
        return fields[name]

    def put(self: SavedParse, value: Any) -> None:
        self.__dict__[name] = value

    return property(get, put)


class SavedParse(ParsedFile):
    """A saved parse whose parts are decoded when first read. A file that a cursor's names
    or cards reach needs its definitions alone (saved as columns: names, nodes, classes,
    which the resolver's tables read without a ``Definition`` each); its imports, bases and
    the rest are one JSON text, decoded at the first read of any of them, each made from it
    when first read (a file reached for its imports makes neither its bases nor its error
    rows); only a file whose calls are resolved again reads its call sites (447k of them in
    the Linux kernel's subset), whose first parts are saved apart (``call_heads``): the
    definition cards of a cursor in the file read those alone."""

    has_error = _symbol("has_error")  # type: ignore[assignment]
    error_rows = _symbol("error_rows")  # type: ignore[assignment]
    imports = _symbol("imports")  # type: ignore[assignment]
    import_nodes = _symbol("import_nodes")  # type: ignore[assignment]
    bases = _symbol("bases")  # type: ignore[assignment]
    package = _symbol("package")  # type: ignore[assignment]

    def __init__(
        self,
        *args: Any,
        saved: tuple[
            Callable[[], dict[str, Any]],
            Callable[[], tuple[list[str], list[int], list[bool]]],
            Callable[[], list[CallSite]],
        ]
        | None = None,
        **kwargs: Any,
    ) -> None:
        """``saved``: what decodes its symbols, its definitions' columns and its call sites,
        given with the path, language, digest and node rows (the fields before them: the
        rest is decoded when read, so the dataclass's constructor, which set each default
        through the properties here, is skipped: it was half of making a saved parse);
        without it, a parse of the fields given (``dataclasses.replace`` gives them all)."""
        if saved is not None:
            self.__dict__.update(
                zip(_SAVED_FIELDS, args, strict=True),
                _symbols=saved[0],
                _raw_symbols=None,
                _columns=saved[1],
                _saved_columns=None,
                _callsites=saved[2],
                _definitions=[],
                _calls=[],
            )
            return
        self.__dict__.update(_symbols=None, _columns=None, _saved_columns=None, _callsites=None)
        super().__init__(*args, **kwargs)

    def _saved_symbols(self) -> dict[str, Any]:
        """The saved symbols' JSON, decoded at the first read of any of them; each field is
        taken out of it as it is made (``_symbol``)."""
        if self._raw_symbols is None:
            self._raw_symbols = self._symbols()
        return self._raw_symbols

    def definition_columns(self) -> tuple[list[str], list[int], list[bool]]:
        if self._columns is not None:
            if self._saved_columns is None:
                self._saved_columns = self._columns()
            return self._saved_columns
        return super().definition_columns()

    @property  # type: ignore[override]
    def definitions(self) -> list[Definition]:
        if self._columns is not None:
            new = tuple.__new__
            names, nodes, classes = self.definition_columns()
            self._definitions = [
                new(Definition, d) for d in zip(names, nodes, classes, strict=True)
            ]
            self._columns = self._saved_columns = None
        return self._definitions

    @definitions.setter
    def definitions(self, value: list[Definition]) -> None:
        self._definitions, self._columns, self._saved_columns = value, None, None

    # a card or a cursor's class reads a few of a file's definitions: while they are still
    # the saved columns, those few are found there (``list.index`` on the names) and made
    # alone, rather than a ``Definition`` for each (a test file has hundreds)
    def find_definition(self, name: str, node: int | None = None) -> Definition | None:
        if self._columns is None:
            return super().find_definition(name, node)
        names, nodes, classes = self.definition_columns()
        k = -1
        while True:
            try:
                k = names.index(name, k + 1)
            except ValueError:
                return None
            if node is None or nodes[k] == node:
                return tuple.__new__(Definition, (name, nodes[k], classes[k]))

    def definitions_at(self, indices: list[int]) -> list[Definition]:
        if self._columns is None:
            return super().definitions_at(indices)
        names, nodes, classes = self.definition_columns()
        new = tuple.__new__
        return [new(Definition, (names[k], nodes[k], classes[k])) for k in indices]

    def members(self, owner: str) -> list[Definition]:
        if self._columns is None:
            return super().members(owner)
        names, nodes, classes = self.definition_columns()
        prefix, new = owner + ".", tuple.__new__
        return [
            new(Definition, (name, nodes[k], classes[k]))
            for k, name in enumerate(names)
            if name.startswith(prefix)
        ]

    def class_definitions(self) -> list[Definition]:
        if self._columns is None:
            return super().class_definitions()
        names, nodes, classes = self.definition_columns()
        new = tuple.__new__
        return [
            new(Definition, (names[k], nodes[k], True))
            for k in compress(range(len(names)), classes)
        ]

    def call_heads(self) -> set[str]:
        if self._callsites is not None:  # the saved calls: their first parts saved apart
            return set(self._saved_symbols()["call_heads"])
        return super().call_heads()

    @property  # type: ignore[override]
    def calls(self) -> list[CallSite]:
        if self._callsites is not None:
            self._calls, self._callsites = self._callsites(), None
        return self._calls

    @calls.setter
    def calls(self, value: list[CallSite]) -> None:
        self._calls, self._callsites = value, None


# a parse's JSON: compact, and without the check for cycles (a parse holds none), which put
# each list written in a table (~a tenth of a Linux kernel file's JSON)
_JSON = json.JSONEncoder(separators=(",", ":"), check_circular=False)


def symbols_of(pf: ParsedFile) -> bytes:
    # (an ``ImportBinding`` and a ``CallSite`` are tuples: written as JSON's lists of their
    # fields, not copied into lists first)
    return _JSON.encode(
        {
            "imports": pf.imports,
            "import_nodes": pf.import_nodes,
            "has_error": pf.has_error,
            # where its errors are, so that a loaded C file's first edit can be spliced
            "error_rows": None if pf.error_rows is None else pf.error_rows.tolist(),
            "bases": {k: [list(v) for v in vs] for k, vs in pf.bases.items()},
            "package": pf.package,
            # what a loaded file's definition cards read of its calls, without them
            "call_heads": sorted(pf.call_heads()),
        }
    ).encode()


def definitions_of(pf: ParsedFile) -> bytes:
    """The definitions as columns: names, nodes and which are classes (``SavedParse``)."""
    return _JSON.encode(pf.definition_columns()).encode()


def callsites_of(pf: ParsedFile) -> bytes:
    """Apart from the symbols, as only files whose calls are resolved again read them."""
    return _JSON.encode(pf.calls).encode()


# a parse's JSON parts, each saved apart so that a read decodes only what it needs
_TEXTS = ("symbols", "definitions", "callsites")


class EncodedParse:
    """A parse as ``ParseSpool`` writes it: its node rows and its JSON parts, encoded where
    it was parsed. A build's parsing worker sends this rather than the ``ParsedFile``: its
    definitions and calls as pickled tuples cost the worker and the main process each about
    a microsecond a line of the Linux kernel, and the main process encoded them again."""

    __slots__ = ("file", "rows", "texts")

    def __init__(self, pf: ParsedFile) -> None:
        self.file = [pf.path, pf.language, pf.digest]
        self.rows = [getattr(pf, name) for name in NODE_ROWS]
        self.texts = [symbols_of(pf), definitions_of(pf), callsites_of(pf)]

    def parse(self) -> ParsedFile:
        """The parse again, as a saved one: its parts decoded when first read."""
        parts = dict(zip(NODE_ROWS, self.rows, strict=True))
        texts = zip(_TEXTS, self.texts, strict=True)
        parts.update((name, np.frombuffer(text, np.uint8)) for name, text in texts)
        return saved_parse(self.file, parts.__getitem__)


def packed_parse(pf: ParsedFile) -> Callable[[], ParsedFile]:
    """A parse as ``LazyDict`` packs it (``EncodedParse``: its node rows and its parts'
    JSON), made again as a saved one: an edited file's definitions, calls and imports as
    Python objects took ~10 times what they do encoded."""
    return EncodedParse(pf).parse


class ParseSpool:
    """Parses written to ``directory`` as they come, in the files and layout an index saves
    them in, then read back a file at a time (``finish``): held, every file's parse of the
    whole Linux kernel (its definitions, calls, imports and node rows) took gigabytes
    through the build's parse stage and everything after it."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._rows = {name: ArrayWriter(directory / f"{name}.npy", np.int32) for name in NODE_ROWS}
        self._ends: dict[str, list[int]] = {name: [0] for name in NODE_ROWS}
        self._texts = {name: TextWriter(directory, name) for name in _TEXTS}
        self._files: list[list[str]] = []

    def add(self, parse: EncodedParse) -> None:
        for (name, out), values in zip(self._rows.items(), parse.rows, strict=True):
            out.write(values)
            self._ends[name].append(self._ends[name][-1] + values.size)
        for out, text in zip(self._texts.values(), parse.texts, strict=True):
            out.append(text)
        self._files.append(parse.file)

    def finish(self) -> SpooledParses:
        """The parses written, mapped back from their files."""
        paths: list[Path] = []
        for name, out in self._rows.items():
            out.close()
            write_array(self._dir / f"{name}_off.npy", np.array(self._ends[name], np.int64))
            paths += [out.path, self._dir / f"{name}_off.npy"]
        for writer in self._texts.values():
            paths += writer.close()
        arrays = {path.stem: mapped(path, writeable=False) for path in paths}
        return SpooledParses(self._files, arrays)


class SpooledParses(LazyDict[str, ParsedFile]):
    """A build's parses by path (``ParseSpool``), each made from its files when read; the
    store finds them written where it saves them, so long as none was replaced."""

    def __init__(self, files: list[list[str]], arrays: dict[str, np.ndarray]) -> None:
        parts = FileParts(arrays, (*NODE_ROWS, *_TEXTS))
        self.arrays = arrays
        self.paths = [f[0] for f in files]
        # the i-th file's parse as spooled, whatever is set here since
        self.parse: Callable[[int], ParsedFile] = lambda i: saved_parse(
            files[i], lambda name: parts.of(name, i)
        )
        super().__init__(self.paths, self.parse)

    def node_rows(self) -> dict[str, NodeRows]:
        """Each file's node rows alone, read without making its parse (the code graph's)."""
        parts = FileParts(self.arrays, ("node_parent",))
        return {p: NodeRows(parts.of("node_parent", i)) for i, p in enumerate(self)}

    def written_in(self, directory: Path, paths: list[str]) -> bool:
        """Whether the files of ``directory`` hold these parses of ``paths``, as they are."""
        return (
            self.unchanged
            and list(self) == self.paths == paths
            and all(is_file(a, directory / f"{name}.npy") for name, a in self.arrays.items())
        )


class NodeRows:
    """What the code graph reads of a parse (``repomem.index.graph.build_graph``)."""

    __slots__ = ("node_parent",)

    def __init__(self, node_parent: np.ndarray) -> None:
        self.node_parent = node_parent

    @property
    def n_nodes(self) -> int:
        return int(self.node_parent.size)
