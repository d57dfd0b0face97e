"""What name resolution and the languages' resolution hooks share, below both of them.

``repomem.index.resolve`` dispatches to each language family's hooks (``repomem.index.langs``)
and hands them itself; the hooks read its tables and note what they read. Declared here, the
resolver as the hooks see it lets the languages name it without importing the resolver.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Protocol

from repomem.index.parsed import ImportBinding, ParsedFile

# (target file path, target local node)
Target = tuple[str, int]


class ResolverTables(Protocol):
    """The resolver's tables and notes that a language's hooks use (``resolve.Resolver``)."""

    # what each family read outside the indexed files when the index was built, by namespace
    settings: dict[str, object]
    # each family's own tables, by namespace
    tables: dict[str, object]
    files: dict[str, ParsedFile]
    defs: dict[str, dict[str, int]]
    classes: dict[str, set[str]]
    qualnames: dict[str, dict[int, str]]
    bindings: dict[str, dict[str, ImportBinding]]
    # (namespace, name) -> definitions
    by_name: MutableMapping[tuple[str, str], list[Target]]
    # the module names and keys the resolution under way tried (None: none is under way)
    _trying: set[str] | None

    def note_lookup(self, path: str, name: str) -> None:
        """Record that the resolution under way read what ``name`` means in ``path``."""

    def note_key(self, namespace: str, key: str) -> None:
        """Record that the resolution under way tried ``key`` of a language family."""
