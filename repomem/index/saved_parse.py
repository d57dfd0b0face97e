"""A parse as an index saves it: its node rows as slices of arrays concatenated over the
files, its symbols and call sites as JSON, and read back as a ``SavedParse`` whose call
sites are decoded when first read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from repomem.index.parsed import CallSite, Definition, ImportBinding, ParsedFile

# a parse's per-line and per-node arrays, saved concatenated over the files (int32)
NODE_ROWS = ("line_len", "node_start", "node_end", "node_parent", "line_owner")


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


def saved_parse(file: list[str], parts: FileParts, i: int) -> ParsedFile:
    """The ``i``-th file's parse, its call sites decoded when first read."""
    path, language, digest = file
    sym = json.loads(parts.of("symbols", i).tobytes())
    # tuple.__new__ skips the named tuples' Python-level constructors: a first update
    # after a load makes every file's parse, ~400k of them on the standard library
    new = tuple.__new__

    def callsites() -> list[CallSite]:
        return [
            new(CallSite, (node, tuple(names), scope))
            for node, names, scope in json.loads(parts.of("callsites", i).tobytes())
        ]

    return SavedParse(
        path,
        language,
        digest,
        *parts.all(NODE_ROWS, i),
        has_error=sym["has_error"],
        error_rows=None
        if sym["error_rows"] is None
        else np.array(sym["error_rows"], np.int32).reshape(-1, 2),
        definitions=[new(Definition, d) for d in sym["defs"]],
        imports=[new(ImportBinding, b) for b in sym["imports"]],
        import_nodes=sym["import_nodes"],
        bases={k: [tuple(v) for v in vs] for k, vs in sym["bases"].items()},
        package=sym["package"],
        callsites=callsites,
        call_heads=sym["call_heads"],
    )


class SavedParse(ParsedFile):
    """A saved parse whose call sites are decoded when first read: resolution tables are
    made from every file's definitions and imports, but only a file whose calls are
    resolved again reads its call sites (447k of them in the Linux kernel's subset). Their
    first parts are saved apart (``call_heads``): the definition cards of a cursor in the
    file read those alone, not every call site."""

    def __init__(
        self,
        *args: Any,
        callsites: Callable[[], list[CallSite]] | None = None,
        call_heads: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)  # (``dataclasses.replace`` gives the calls)
        self._callsites = callsites
        self._call_heads = call_heads

    def call_heads(self) -> set[str]:
        if self._callsites is not None and self._call_heads is not None:
            return set(self._call_heads)
        return super().call_heads()

    @property  # type: ignore[override]
    def calls(self) -> list[CallSite]:
        if self._callsites is not None:
            self._calls, self._callsites = self._callsites(), None
        return self._calls

    @calls.setter
    def calls(self, value: list[CallSite]) -> None:
        self._calls, self._callsites = value, None


def symbols_of(pf: ParsedFile) -> bytes:
    return json.dumps(
        {
            "defs": [[d.name, d.node, d.is_class] for d in pf.definitions],
            "imports": [[b.name, b.module, b.symbol, b.level] for b in pf.imports],
            "import_nodes": pf.import_nodes,
            "has_error": pf.has_error,
            # where its errors are, so that a loaded C file's first edit can be spliced
            "error_rows": None if pf.error_rows is None else pf.error_rows.tolist(),
            "bases": {k: [list(v) for v in vs] for k, vs in pf.bases.items()},
            "package": pf.package,
            # what a loaded file's definition cards read of its calls, without them
            "call_heads": sorted(pf.call_heads()),
        },
        separators=(",", ":"),
    ).encode()


def callsites_of(pf: ParsedFile) -> bytes:
    """Apart from the symbols, as only files whose calls are resolved again read them."""
    return json.dumps(
        [[c.node, list(c.parts), c.scope] for c in pf.calls], separators=(",", ":")
    ).encode()
