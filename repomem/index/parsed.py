"""What parsing one source file yields: its statement nodes as arrays, its definitions, call
sites and imports. Plain data, so that the languages, the splicer, the graph and the resolver
can name it without importing the parser that fills it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


class Definition(NamedTuple):
    """A function or class definition. Python names are qualified within the module
    (``f``, ``A``, ``A.m``); other languages use the bare name."""

    name: str
    node: int
    is_class: bool


class CallSite(NamedTuple):
    """A call made from statement ``node``. ``parts`` is the dotted callee (Python:
    ``("self", "meth")``, ``("m", "f")``, ``("f",)``; other languages: the bare name);
    ``scope`` is the qualified name of the innermost enclosing Python class, if any (Go:
    the declared type of the receiver or parameter ``parts[0]``, "" for one of a type
    without methods of its own)."""

    node: int
    parts: tuple[str, ...]
    scope: str | None = None


#: the name of a Python ``from module import *`` binding
STAR = "*"


class ImportBinding(NamedTuple):
    """A name bound by an import: ``name`` refers to ``module`` (relative with ``level``
    leading dots) or, when ``symbol`` is set, to ``symbol`` inside it; a Python
    ``from module import *`` is named ``STAR``. Python's; other families use the same four
    fields in their own way (``repomem.index.langs``)."""

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
    has_error: bool  # tree-sitter found a syntax error (or a missing token)
    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportBinding] = field(default_factory=list)
    import_nodes: list[int] = field(default_factory=list)  # the statement of each import
    # class qualified name -> dotted base-class expressions (Python's bases; other
    # families': extends/implements, embedded structs, implemented traits); Go also keeps
    # the declared types of fields, results and variables here (``repomem.index.langs.go``)
    bases: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    # the package or namespace the file declares (Java ``package``, Go ``package``), if any
    package: str = ""
    # first and last rows of the top-level nodes holding a syntax error, so that an edit away
    # from them can still be spliced (``repomem.index.splice``); None: not known (a parse read
    # back from a stored index)
    error_rows: np.ndarray | None = None
    # int32 per statement node, Python's: the rows of the header and docstring of the
    # definition it starts, which its card shows (``repomem.index.heads``); empty elsewhere
    node_head: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    # int32, Python's: each class's public methods, packed (``repomem.index.skeletons``);
    # empty elsewhere
    class_methods: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))

    @property
    def n_nodes(self) -> int:
        return int(self.node_start.size)

    def definition_columns(self) -> tuple[list[str], list[int], list[bool]]:
        """The definitions' names, nodes and whether each is a class, as three columns (a
        saved parse gives them without making a ``Definition`` each)."""
        d = self.definitions
        return [x.name for x in d], [x.node for x in d], [x.is_class for x in d]

    def find_definition(self, name: str, node: int | None = None) -> Definition | None:
        """The first definition named ``name`` (at ``node``, if given). A scan: a table by
        name costs ~18 scans to make (355 vs 20 us for a test file's 739 definitions), and a
        cursor looks up ~4 names per file."""
        return next(
            (d for d in self.definitions if d.name == name and node in (None, d.node)), None
        )

    def definitions_at(self, indices: list[int]) -> list[Definition]:
        """The definitions at these positions of ``definitions``."""
        return [self.definitions[k] for k in indices]

    def members(self, owner: str) -> list[Definition]:
        """The definitions inside ``owner`` (named ``owner.``…, nested ones too), in order."""
        prefix = owner + "."
        return [d for d in self.definitions if d.name.startswith(prefix)]

    def class_definitions(self) -> list[Definition]:
        """The classes (and other types) among the definitions, in order."""
        return [d for d in self.definitions if d.is_class]

    def call_heads(self) -> set[str]:
        """The first parts of the names the file calls (``self``, ``os``, ``helper``)."""
        return {c.parts[0] for c in self.calls}
