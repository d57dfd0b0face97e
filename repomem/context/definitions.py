"""The definitions the cursor's code uses, found through the index's resolver and ranked on
the code graph.

Similarity retrieval shows the model code that *looks like* the cursor's; what the next line
usually needs is the signature of what it calls. Those names are mostly written already:

* the names in the last lines before the cursor, most recent first: dotted names
  (``mod.f``, ``pkg.sub.Cls``), ``self.``/``cls.`` attributes (through the enclosing class
  and its bases), and attributes of receivers whose type the left context shows, from an
  annotation (``x: Foo``, a parameter ``client: Client``) or a constructor call
  (``x = Foo(...)``, ``self.conn = pool.Connection(...)``);
* the bases of the enclosing class (their methods are what ``self.`` reaches);
* the file's imports (a name imported but not used yet is often about to be);
* where the language asks for them (Java, Go, Rust, C and C++: ``Language.file_callees``),
  the other files' definitions the file's code calls most (a project's checking macro, its
  allocator: what the next line calls though the last lines did not);
* C and C++: the type of the variable named nearest the cursor, its card listing functions
  taking one first (``Language.receiver_functions``: C's methods, which the next line passing
  the variable on calls, often one no line above names);
* C and Go: beside a function or macro of another file named just above, the rest of its
  name's family (``Language.name_families``: ``DNS_HEADER_AA`` after ``DNS_HEADER_QR``,
  ``scanFollowsFalse`` after ``scanFollowsTrue``);
* Go and Java: beside a method of another file called just above, its type's other methods
  by name (``Language.other_methods``), and beside a function of an imported package
  (``pkg.F``), its package's other functions (``Language.package_functions``); Go: in a
  type's card, first, the methods the enclosing test is named for (``Language.subject``);
* Go and Rust: a type's card names the methods it gets from elsewhere (what the types it
  embeds promote; the repository traits its ``impl`` blocks implement for it);
* where the lines above pair names twice or more the same way (``case RNSVGFeOffset:``
  then ``new FeOffsetView(``), the definition the last line's name makes that way
  (``case RNSVGMarker:``: ``MarkerView``), first;
* C and Go: the project's helpers the headers the file includes declare (Go: its package's
  and those it imports), the most called that no line names
  (``Language.included_definitions``), listed on a card of declarations alone that comes
  after every other card (``cards.listing``: it takes the room they leave); Go: first
  there, the one the enclosing test's whole name spells (``TestStride``: ``Stride``);
* in RepoCoder's second iteration, the names in the first draft: a draft that calls
  ``foo(`` brings ``foo``'s card, whatever else it got wrong.

Names resolve exactly as the index resolves calls: Python's through imports, relative
imports, classes and their bases; every other family's through its own module system
(``repomem.index.langs``). Anything else is dropped, never guessed.

Ranking is FragRel's Eq. 8 from the cursor's window (its statement nodes weighted by their
share of the window's code, as for any fragment) to each definition's node, computed at query
time from that one source: a name the window calls is one call edge (0.8) away from its
definition; a name only imported is reached through the file and directory nodes, far weaker.
No ε or cap of the index applies (the index keeps each fragment's 32 strongest relations;
these strengths are computed fresh). Ties, and definitions the graph does not reach, go by
nearness to the cursor (the line of the name's last mention), then by how often it is named.
The cursor's file's own definitions above the cursor come after the other files' (the fresh
and the unused imports first): the prompt's own text shows that file, and the graph, which
reaches them through the enclosing definition, would rank them ahead of what the next line
calls from other files.
"""

from __future__ import annotations

import builtins
import keyword
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Generic, TypeVar
from weakref import ref

import numpy as np

from repomem.context import pytypes
from repomem.context.cards import (
    MAX_METHODS,
    Card,
    call_count,
    constant_card,
    definition_card,
    function_line,
    listing,
    with_functions,
)
from repomem.context.lexer import code_only, starts_in_code
from repomem.context.pytypes import Owner, PythonTypes
from repomem.index import langs
from repomem.index.fragments import one_window_nodes
from repomem.index.graph import W_CALL
from repomem.index.parsed import STAR, Definition, ImportBinding, ParsedFile
from repomem.index.resolve import PYTHON_NS

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex
    from repomem.index.resolve import Resolver

#: lines above the cursor's last one read for the names it pairs (``_add_analogue``)
ANALOGY_LINES = 16
#: fewest characters two paired names share, and fewest pairs agreeing on a rule
ANALOGY_CORE = 3
ANALOGY_PAIRS = 2

#: lines before the cursor whose names are looked up
NAME_LINES = 40
#: lines before the cursor searched for receivers' types
TYPE_LINES = 200
#: lines before the cursor where a receiver bound and not used yet puts its class first
FRESH_LINES = 3
#: Python's ``Language.file_callees``: the other files' definitions the file calls most (a
#: test module's ``click.Group``, ``requests.Session``: the names its tests call over and over,
#: written on the cursor's line before any line above names them)
PYTHON_FILE_CALLEES = 8
#: how many fixtures requesting fixtures are followed to type a test's parameter
FIXTURE_DEPTH = 4
#: a method's body just begun: this many of what its other implementations call first
SIBLING_CALLEES = 2
#: at most this many definitions are ranked and returned
MAX_DEFINITIONS = 32
#: a call in the last ``SUCCESSOR_LINES`` lines lists what the repository's other calls of
#: its definition are followed by within as many lines, where ``SUCCESSOR_SITES`` agree
SUCCESSOR_LINES = 3
SUCCESSOR_SITES = 2
#: the files whose calls are read for it, the nearest by path where more call it
SUCCESSOR_FILES = 32
#: outside Python, the imports no code uses yet come first when the file has at most this
#: many: more are a long file cut above the code that uses them (its buffer at the cursor),
#: where they would crowd out what the code around the cursor names (on TypeScript's
#: held-out sets, a file with 8 or more held the next line's target in 6 of 28 tasks, one
#: with 1 to 7 in 88 of 175)
MAX_PENDING = 7
#: where the file has more, the imports no code uses yet that the repository calls most come
#: first, this many of them (``_pending_first``)
MANY_PENDING = 3
#: C: at most this many of the project's helpers the file's headers declare are listed on a
#: card after the others (``_helpers``), each called this many times in the repository at least
HELPERS = 4
HELPER_CALLS = 4
#: Python's ranking: a card's value is (strength + DENSITY_FLOOR) / its length ** DENSITY_POWER
#: (the floor lets size order the definitions the graph does not reach)
DENSITY_FLOOR = 0.01
DENSITY_POWER = 0.25
#: query-time Eq. 8: strengths below this count as 0 (they would only reorder what nearness
#: orders anyway); a search settles at most this many nodes
QUERY_EPSILON = 0.01
QUERY_NODE_CAP = 256
#: Python's searches settle three quarters as many: its ranking also counts a name the window
#: writes as a call edge, so the far reach matters less. Measured (dev suite, graph): Python
#: API def@prompt 75.6 -> 76.1 %, line 61.7 -> 63.3 %, unseen tomlkit's unchanged, and the
#: standard library's definitions channel p95 -11 %; at 128 for every language TypeScript
#: and C++ lost tasks (84.8 -> 81.8, 66.7 -> 64.2 %) and tomlkit's API def@prompt fell 83.1 ->
#: 81.7 %
PYTHON_QUERY_NODE_CAP = 192

# (the lookahead first lets the search skip what cannot begin a name without trying the
# pattern there: the same names in two thirds of the time)
_NAME = re.compile(r"(?=[A-Za-z_])(?<![\w.])[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
# the same with ``a::b`` paths kept whole, for the families whose resolution reads them
_PATH_NAME = re.compile(r"(?=[A-Za-z_])(?<![\w.:])[A-Za-z_]\w*(?:\s*(?:\.|::)\s*[A-Za-z_]\w*)*")
# a member of a call's result, ``f(x).M`` / ``c.Get(k).M`` (one level of parentheses in the
# arguments): read as the name ``f.M`` where ``Language.call_chains``
_CHAIN = re.compile(
    r"(?=[A-Za-z_])(?<![\w.])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*"
    r"\((?:[^()]|\([^()]*\))*\)\s*\.\s*([A-Za-z_]\w*)"
)
# a receiver's type: ``x = Foo(`` / ``self.x = mod.Foo(`` / ``x = make(`` (the class called,
# or what the function called is annotated to return), ``with f(...) as x``, an annotation
# ``x: Foo`` (parameters too; ``Optional[Foo]``, ``list[Foo]`` with its first type argument),
# or a loop variable ``for x in xs`` (typed by ``xs``'s elements where ``xs: list[Foo]`` shows
# them); one pattern so that a block is scanned once, tried only where a name begins (three
# times faster than at every character), a name taken whole (``\w*+``: the rest of one is
# word characters, which nothing after it matches) where most names fail (a fifth faster);
# a word boundary first, which fails at once inside a word (the same matches, implied by
# what follows it; an eighth faster)
_TYPED = re.compile(
    r"\b(?<![\w.])(?:for[ \t]+(?P<loop>[A-Za-z_]\w*+)[ \t]+in[ \t]+"
    r"(?P<items>(?:self\.)?[A-Za-z_]\w*)"
    r"|with[ \t]+(?P<enter>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)[ \t]*\([^\n]*?\)[ \t]+as[ \t]+"
    r"(?P<bound>[A-Za-z_]\w*)[ \t]*:"
    r"|(?P<target>(?:self\.)?[A-Za-z_]\w*+)[ \t]*"
    r"(?::[ \t]*(?P<annot>[A-Za-z_][\w.]*)(?:\[[ \t]*(?P<arg>[A-Za-z_][\w.]*))?"
    r"|=\s*(?P<call>(?:[A-Za-z_]\w*+\.)*[A-Za-z_]\w*+)\s*\())"
)
# written out rather than ``{2,}``: the same runs found in two thirds of the time
_SPACES = re.compile(r"[ \t][ \t]+")
_WORDS = re.compile(r"\w+")
_CALLED = re.compile(r"(\w+)\s*\(")
# annotations whose first type argument is the type of the value (``Optional``) or of the
# items a loop over it binds
_OPTIONAL = frozenset({"Optional"})
_CONTAINERS = frozenset(
    [
        "list",
        "List",
        "Sequence",
        "MutableSequence",
        "Iterable",
        "Iterator",
        "Collection",
        "set",
        "Set",
        "frozenset",
        "FrozenSet",
        "AbstractSet",
        "tuple",
        "Tuple",
        "deque",
        "Generator",
    ]
)
# a Python ``def``/``class`` line's own name
_DEFINES = re.compile(r"\b(def|class)[ \t]+[A-Za-z_]\w*")
_MEMBER_OPERATORS = {"c": ("->", "::")}
_SKIP = frozenset(keyword.kwlist) | frozenset(dir(builtins)) - {"self", "cls"}
_COMMON_METHODS = frozenset(
    name for t in (str, bytes, list, dict, set, tuple, int, float, object) for name in dir(t)
)


@dataclass(frozen=True)
class DefinitionHit:
    """A definition the cursor's code uses: its ``card``, the ``name`` as the code wrote it,
    ``how`` it was found and resolved, its Eq. 8 ``strength`` from the cursor's window, the
    ``distance`` in lines from the cursor to the name's last mention (0: the cursor's line or
    the draft) and how many times it is named (``count``)."""

    card: Card
    name: str
    how: str
    strength: float
    distance: int
    count: int


@dataclass
class _Found:
    target: tuple[str, str]  # (file, qualified name or constant name)
    node: int  # the definition's local statement node
    name: str
    how: str
    distance: int
    count: int = 1
    fresh: bool = False  # the class of a receiver bound just above the cursor, unused yet
    rows: list[int] = field(default_factory=list)  # the rows naming it (Python)
    pending: bool = False  # imported and not called above the cursor yet
    # C: the functions taking one first that its card lists, and how many more the cursor's
    # file sees
    functions: list[tuple[str, int]] = field(default_factory=list)
    more: int = 0
    heading: str = ""  # what the card says the functions are (default: taking one first)
    # the card names ``functions`` on one line rather than declaring them a line each
    named: bool = False
    # a type standing for its methods the code names (``_group_members``): their nodes, which
    # its skeleton lists before the others
    members: tuple[int, ...] = ()
    # shown in its brief form (a receiver's type with no functions listed beside it: the
    # members its brief form names are what the next line calls)
    brief: bool = False


class _Cards:
    """Cards by (file, name), kept while the file's parse is the same object: an update of
    the file replaces its parse, and with it every card cut from it. A class too large for a
    whole skeleton lists the methods the repository calls most (any type's skeleton outside
    Python ranks its members so), so a card that asked for the calls is also kept only while
    the index is at the same revision. The parse is held by a weak reference: a loaded index
    drops the parses it has not read lately (``RepoIndex.tidy``), and a card kept them all,
    the headers of every cursor an editing session completed at."""

    def __init__(self) -> None:
        self._cards: dict[
            tuple[str, str, tuple[int, ...]], tuple[ref[ParsedFile], int | None, Card | None]
        ] = {}

    def get(
        self, index: RepoIndex, path: str, name: str, first: tuple[int, ...] = ()
    ) -> Card | None:
        """``first``: the nodes of methods a type's skeleton lists before the others."""
        pf = index.parses()[path]
        hit = self._cards.get((path, name, first))
        if hit is not None and hit[0]() is pf and hit[1] in (None, index.revision):
            return hit[2]
        # Python: the definition the name is bound to, the last of its ``def``s (an
        # ``@overload`` stub comes before the implementation)
        node = index.resolver.defs.get(path, {}).get(name) if pf.language == "python" else None
        definition = pf.find_definition(name, node)
        asked = False

        def calls() -> np.ndarray:
            nonlocal asked
            asked = True
            counts = _call_counts.get(index, path, pf)
            if not first:
                return counts
            ranked = counts.copy()
            ranked[list(first)] = (counts.max() if counts.size else 0) + 1
            return ranked

        card: Card | None = None
        if definition is not None:
            card = definition_card(path, pf, index.file_lines(path), definition, calls)
        elif rows := index.rows_beginning(path, name):  # a constant's assignment begins its line
            card = constant_card(path, pf, index.file_lines(path), name, rows)
        revision = index.revision if asked else None
        if len(self._cards) >= 8192:
            self._cards.clear()
        self._cards[(path, name, first)] = (ref(pf), revision, card)
        return card


def _calls(index: RepoIndex, path: str, pf: ParsedFile) -> np.ndarray:
    """How many calls of the repository (the file's own included) resolve to each of
    ``path``'s nodes, by node (every node of ``pf``: a count, not a dict of the called
    ones, which took most of a large class's call counts to make)."""
    callers = index.callers(path)
    if not callers:
        return np.zeros(pf.n_nodes, np.int64)
    return np.bincount(np.concatenate(list(callers.values()))[:, 1], minlength=pf.n_nodes)


def _call_rows(
    index: RepoIndex, path: str, pf: ParsedFile
) -> tuple[list[int], list[tuple[str, int]]]:
    """The file's resolved calls ordered by the row of their statement (rows, (target path,
    target node)): the calls of a method's body are then a slice, found by bisection
    (``_add_sibling_callees``)."""
    targets, calls = index.resolved_calls(path)
    n = pf.n_nodes
    rows = sorted(
        (int(pf.node_start[src]) if 0 <= src < n else -1, targets[t], node)
        for src, t, node in calls.tolist()
    )
    return [row for row, _, _ in rows], [(target, node) for _, target, node in rows]


def _followers(index: RepoIndex, path: str, target: tuple[str, int]) -> Counter[tuple[str, int]]:
    """How often each definition is the first called within ``SUCCESSOR_LINES`` lines after
    a call of ``target`` (path, node) in the repository (a test's calls only for a test, the
    nearest ``SUCCESSOR_FILES`` calling files by path where more call it)."""
    test = langs.is_test(path)
    sites = [
        (caller, srcs)
        for caller, pairs in index.callers(target[0]).items()
        if (test or not langs.is_test(caller)) and (srcs := pairs[pairs[:, 1] == target[1], 0]).size
    ]
    if len(sites) > SUCCESSOR_FILES:  # a helper called everywhere: the nearest files'
        sites.sort(key=lambda s: (-langs.shared_dirs(s[0], path), s[0]))
    counts: Counter[tuple[str, int]] = Counter()
    for caller, srcs in sites[:SUCCESSOR_FILES]:
        pf = index.parses()[caller]
        rows, calls = _call_rows_by_file.get(index, caller, pf)
        for src in srcs.tolist():
            row = int(pf.node_start[src])
            i = bisect_right(rows, row)
            if i < len(rows) and rows[i] <= row + SUCCESSOR_LINES:
                counts[calls[i]] += 1
    return counts


T = TypeVar("T")


class _PerFile(Generic[T]):
    """A value made from one file (``make(index, path, parse)``), kept while the index is at
    the same revision and the file's parse the same object, the parse held weakly as
    ``_Cards`` holds it (a tidy must be able to drop it): a type's functions are ranked by
    their call counts at every cursor, and a method's siblings read their call rows."""

    def __init__(self, make: Callable[[RepoIndex, str, ParsedFile], T]) -> None:
        self._make = make
        self._values: dict[str, tuple[ref[ParsedFile], int, T]] = {}

    def get(self, index: RepoIndex, path: str, pf: ParsedFile) -> T:
        hit = self._values.get(path)
        if hit is not None and hit[0]() is pf and hit[1] == index.revision:
            return hit[2]
        if len(self._values) >= 8192:
            self._values.clear()
        value = self._make(index, path, pf)
        self._values[path] = (ref(pf), index.revision, value)
        return value


class _CallGroups:
    """A file's resolved calls grouped by the definition they reach (target file numbered
    in ``targets``, ``files``; its node, ``nodes``): how many calls each group has
    (``counts``), its calls' rows (-1: a call outside the file's statements, counted as at
    the cursor) and which groups reach another file's definition that the file is offered
    (``offered``: a test's only from a test). Kept per file while the index is at the same
    revision (``_PerFile``), and ranked in arrays, the targets' names read only for the
    groups as good as the ``n``-th (``top``): the file's calls grouped afresh at every cursor,
    a dict and a sort over every group, took 48 µs a cursor on the standard library (the
    same cursor again: 12 µs; a first cursor in a file 78 → 60 µs)."""

    def __init__(self, index: RepoIndex, path: str, pf: ParsedFile) -> None:
        self.targets, calls = index.resolved_calls(path)
        starts, src = pf.node_start, calls[:, 0]
        inside = (src >= 0) & (src < starts.size)
        rows = np.full(src.size, -1, np.int64)
        rows[inside] = starts[src[inside]]
        by_number = calls[:, 1].astype(np.int64) << 32 | calls[:, 2]
        order = np.argsort(by_number, kind="stable")
        grouped = by_number[order]
        begins = np.ones(grouped.size, bool)
        begins[1:] = grouped[1:] != grouped[:-1]
        self.starts = np.flatnonzero(begins)
        # (not ``np.diff(..., append=)``, whose ``broadcast_to`` took a third of making the groups)
        ends = np.empty_like(self.starts)
        ends[:-1] = self.starts[1:]
        ends[-1:] = order.size
        self.counts = ends - self.starts
        self.rows = rows[order]
        heads = order[self.starts]
        self.files, self.nodes = calls[heads, 1], calls[heads, 2]
        test = langs.is_test(path)
        numbers = set(self.files.tolist())  # (a few hundred groups: a set before ``np.unique``)
        offered = np.zeros(max(numbers) + 1 if numbers else 0, bool)
        for t in numbers:
            target = self.targets[t]
            offered[t] = target != path and (test or not langs.is_test(target))
        self.offered = np.flatnonzero(offered[self.files])

    def keys(self) -> list[tuple[str, int]]:
        """Each group's (file, node)."""
        targets = self.targets
        return [
            (targets[t], n) for t, n in zip(self.files.tolist(), self.nodes.tolist(), strict=True)
        ]

    def top(self, cursor: int, n: int) -> list[tuple[tuple[str, int], int, int]]:
        """The ``n`` offered groups with the most calls, then the nearest ``cursor``, then by
        (file, node): each one's (file, node), distance in rows from the cursor to its
        nearest call, and count."""
        if n <= 0 or self.offered.size == 0:
            return []
        distance = np.abs(cursor - self.rows)
        distance[self.rows < 0] = 0
        near = np.minimum.reduceat(distance, self.starts)
        counts, ranked = self.counts, self.offered
        if ranked.size > n:  # the groups as good as the n-th by count and distance
            ranked = ranked[np.lexsort((near[ranked], -counts[ranked]))]
            cut = ranked[n - 1]
            tied = counts[ranked] == counts[cut]
            ranked = ranked[(counts[ranked] > counts[cut]) | tied & (near[ranked] <= near[cut])]
        targets = self.targets
        found = [
            (-int(counts[g]), int(near[g]), (targets[self.files[g]], int(self.nodes[g])))
            for g in ranked.tolist()
        ]
        return [(key, distance, -count) for count, distance, key in sorted(found)[:n]]


_call_counts = _PerFile(_calls)
# per file, how many calls reach each of its definitions through the entity (filled as asked)
_entity_counts: _PerFile[dict[int, int]] = _PerFile(lambda index, path, pf: {})
_call_rows_by_file = _PerFile(_call_rows)
_call_groups = _PerFile(_CallGroups)


class _FixtureTypes:
    """The class of each fixture's value, kept while the index is at the same revision (it
    is read through other files: the class a fixture calls, the fixtures it requests)."""

    def __init__(self) -> None:
        self._owners: dict[tuple[str, int], tuple[int, Owner | None]] = {}

    def get(self, index: RepoIndex, target: tuple[str, int], depth: int) -> Owner | None:
        hit = self._owners.get(target)
        if hit is not None and hit[0] == index.revision:
            return hit[1]
        owner = self._read(index, target, depth)
        if len(self._owners) >= 4096:
            self._owners.clear()
        self._owners[target] = (index.revision, owner)
        return owner

    def _read(self, index: RepoIndex, target: tuple[str, int], depth: int) -> Owner | None:
        """As the fixture's return annotation says, else as its last ``return``/``yield``
        value types in the fixture's own body (a call, a local, a fixture it requests)."""
        path, node = target
        pf = index.parse(path)
        if pf is None:
            return None
        lines = index.file_lines(path)
        value = pytypes.fixture_value(lines, pf, node, index.resolver.qualnames[path][node])
        if value is None:
            return None
        if value[0] == "class":
            parts = pytypes.annotation_type(value[1])
            return _types.class_named(index, path, parts) if parts is not None else None
        row = value[1]
        expression = pytypes.value_expression(lines[row])
        if expression is None:
            return None
        start = int(pf.node_start[node])
        body = [""] * start + lines[start:row] + [""]
        finder = _Finder(index, path, pf, body, depth + 1)
        kind, parts = expression
        return finder._call_type(parts) if kind == "call" else finder._receiver(parts)[1]


_cards = _Cards()
_types = PythonTypes()
_fixture_types = _FixtureTypes()


def find_definitions(
    index: RepoIndex,
    path: str,
    left_context: str,
    *,
    draft: str = "",
    window: int = 20,
    limit: int = MAX_DEFINITIONS,
) -> list[DefinitionHit]:
    """The definitions the code before the cursor (and ``draft``) uses, best first (see the
    module doc). ``path`` is the cursor's file as the index holds it; a file the index does
    not hold gets none."""
    pf = index.parse(path)
    if pf is None:
        return []
    lines = left_context.split("\n")
    cursor = len(lines) - 1
    finder = _Finder(index, path, pf, lines)
    found = finder.collect(draft)
    if not found:
        return _next_declared(index, finder, [])
    # nearest first before the cut: the graph ranks what survives it
    ranked = sorted(found.values(), key=lambda f: (f.distance, -f.count))[: limit * 2]
    strengths = _strengths(index, path, pf, cursor, window, ranked)
    value = strengths
    cards: dict[int, Card | None] = {}
    if finder.python:
        # the prompt fits what the cards' budget holds, best first: among definitions about as
        # strongly related, the smaller card first (value per size, the size counted mildly)
        cards = {i: _cards.get(index, *f.target, f.members) for i, f in enumerate(ranked)}
        sizes = np.array([len(c.text) if c is not None else 1 for c in cards.values()])
        # an import no call above the cursor uses yet is used below it
        floor = DENSITY_FLOOR * np.array([1 + f.pending for f in ranked], np.float64)
        value = (strengths + floor) / sizes.astype(np.float64) ** DENSITY_POWER
    # outside Python (whose value counts it) an import no code uses yet comes next; of many,
    # only the most called
    first = _pending_first(finder, found, ranked)
    # then the other files' definitions: the prompt's own text shows the cursor's file, the
    # definitions above the cursor with it (their cards are left out where it shows them)
    above = [f.target[0] == path and 0 <= _row(pf, f.node) < cursor for f in ranked]
    order = sorted(
        range(len(ranked)),
        key=lambda i: (
            not ranked[i].fresh,
            i not in first,
            above[i],
            -value[i],
            ranked[i].distance,
            -ranked[i].count,
        ),
    )
    hits: list[DefinitionHit] = []
    for i in order:
        f = ranked[i]
        card = cards[i] if i in cards else _cards.get(index, *f.target, f.members)
        if card is not None and f.functions:
            card = _with_functions(index, card, f)
        elif card is not None and f.brief and card.brief:
            card = card.briefed()
        if card is not None:
            hits.append(
                DefinitionHit(card, f.name, f.how, float(strengths[i]), f.distance, f.count)
            )
        if len(hits) >= limit:
            break
    return _list_pending(index, finder, hits)


def _pending_first(
    finder: _Finder, found: dict[tuple[str, str], _Found], ranked: list[_Found]
) -> set[int]:
    """Which of ``ranked`` come first as imports no code uses yet (outside Python, whose
    value counts them): all of them where the file has at most ``MAX_PENDING``; where it has
    more (a long file cut far below its imports, which the code further down uses), the
    ``MANY_PENDING`` the repository calls most: a project's helpers (``die``,
    ``isSpyEnabled``), where most of the others are types and constants, which no call needs
    and no call counts."""
    if finder.python:
        return set()
    pending = [i for i, f in enumerate(ranked) if f.pending]
    if sum(f.pending for f in found.values()) <= MAX_PENDING:
        return set(pending)
    calls = {i: finder.entity_calls(ranked[i].target[0], ranked[i].node) for i in pending}
    return set(sorted((i for i in pending if calls[i]), key=lambda i: -calls[i])[:MANY_PENDING])


def _list_pending(
    index: RepoIndex, finder: _Finder, hits: list[DefinitionHit]
) -> list[DefinitionHit]:
    """The definitions of the modules the file takes whole and uses nothing of yet
    (``Language.pending_definitions``: C's small headers included above), listed under the
    first card of another file: included for what the next lines call, which no line names
    yet (at most ``MAX_PENDING`` of them, as for other languages' imports). A line each
    under a card the code names, not cards of their own: a card whose name the code does not
    write is most often one the next line does not need either. Then, last, the project's
    helpers those modules declare (``_helpers``)."""
    if finder.python:
        return hits  # (a module's names come through its imports, ranked with the others)
    host = _host(finder, hits)
    pending: list[tuple[str, int]] = []
    if host is not None:
        found = finder.language.pending_definitions(finder.resolver, finder.path, finder.lines)
        # (more: the top of a file including all it will use, none used yet)
        pending = [target for target, _ in found] if len(found) <= MAX_PENDING else []
    if host is not None and pending:
        heading = "// declared by headers included above, none used yet:"
        _list_under(hits, host, _declarations(index, pending), heading)
    helpers = _helpers(index, finder, hits, set(pending))
    if helpers:
        hits.append(_listing(finder, helpers, f"// {finder.language.helpers_heading}"))
    return _next_declared(index, finder, hits)


def _next_declared(
    index: RepoIndex, finder: _Finder, hits: list[DefinitionHit]
) -> list[DefinitionHit]:
    """``hits`` with what the cursor's file is likely to declare next
    (``Language.next_declarations``: a C header's source's functions not declared yet)
    listed under the first card of another file, as the pending headers' definitions are
    (the next line is likely one of them, and a list last is the first cut), else alone:
    no line names them, so no card of their own."""
    found = finder.language.next_declarations(finder.resolver, finder.path, finder.lines)
    if not found:
        return hits
    functions = _declarations(index, found)
    heading = f"// defined in {found[0][0].rsplit('/', 1)[-1]}, not declared above yet:"
    host = _host(finder, hits)
    if host is None:
        hits.append(_listing(finder, functions, heading))
    else:
        _list_under(hits, host, functions, heading)
    return hits


def _host(finder: _Finder, hits: list[DefinitionHit]) -> int | None:
    """The first card of another file than the cursor's: what no line names is listed under
    it (the file's own cards are often left out, its text showing them)."""
    return next((i for i, h in enumerate(hits) if h.card.path != finder.path), None)


def _list_under(
    hits: list[DefinitionHit], host: int, functions: list[tuple[str, int, str]], heading: str
) -> None:
    """``functions`` (path, row, declaration) listed under ``hits[host]``'s card."""
    hits[host] = replace(hits[host], card=with_functions(hits[host].card, functions, 0, heading))


def _listing(finder: _Finder, functions: list[tuple[str, int, str]], heading: str) -> DefinitionHit:
    """A card of ``functions``' declarations alone (``cards.listing``), under ``heading``."""
    return DefinitionHit(listing(functions, heading), "", heading[3:], 0.0, finder.cursor, 0)


def _helpers(
    index: RepoIndex, finder: _Finder, hits: list[DefinitionHit], listed: set[tuple[str, int]]
) -> list[tuple[str, int, str]]:
    """The declarations of the ``HELPERS`` definitions of the modules the file takes whole
    (``Language.included_definitions``: C's project headers) that the repository calls most,
    ``HELPER_CALLS`` times at least, and that no code line above the cursor names, no card
    shows and no list holds yet: a project's own helpers, its error and debug calls
    (``NoSuchProcess``, ``psutil_debug``), which any next line may call though none above
    does. First, whatever it is called, the one the enclosing test is named for, all its
    words (``Language.subject``: ``danger.Stride`` in ``TestStride``): a test calls what it
    is named for, which only tests may call."""
    found = finder.language.included_definitions(finder.resolver, finder.path, finder.lines)
    if not found:
        return []
    qualnames = finder.resolver.qualnames
    parses = index.parses()
    shown = {h.card.name.rsplit(".", 1)[-1] for h in hits}
    lines = {at for h in hits for at in h.card.listed}
    written = finder.code_words
    subject = "".join(finder.language.subject(finder.lines)).lower()
    best: dict[str, tuple[bool, int, tuple[str, int]]] = {}
    for path, node in found:
        bare = qualnames[path][node].rsplit(".", 1)[-1]
        if (
            bare in written
            or bare in shown
            or bare in best
            or (path, node) in listed
            or (path, _row(parses[path], node)) in lines
        ):
            continue
        calls = finder.entity_calls(path, node)
        named_for = bare.lower() == subject
        if calls >= HELPER_CALLS or named_for:
            best[bare] = (not named_for, -calls, (path, node))
    ranked = sorted(best.values())
    return _declarations(index, [target for *_, target in ranked[:HELPERS]])


def _row(pf: ParsedFile, node: int) -> int:
    """The first row of the file's statement ``node`` (-1: none)."""
    return int(pf.node_start[node]) if 0 <= node < pf.n_nodes else -1


def _with_functions(index: RepoIndex, card: Card, f: _Found) -> Card:
    names = f.named or langs.for_language(index.parses()[card.path].language).receiver_names > 0
    if not names:
        return with_functions(card, _declarations(index, f.functions), f.more, f.heading)
    qualnames = index.resolver.qualnames  # named only: no declaration to read
    functions = [
        (path, _row(index.parses()[path], node), qualnames[path][node].rsplit(".", 1)[-1])
        for path, node in f.functions
    ]
    return with_functions(card, functions, f.more, f.heading, names)


def _declarations(
    index: RepoIndex, targets: Sequence[tuple[str, int]]
) -> list[tuple[str, int, str]]:
    """Each of ``targets``' (path, 0-based line, declaration on one line), as a card lists
    the functions beside it (``with_functions``); none for a node that is no definition."""
    out = []
    for path, node in targets:
        pf = index.parses()[path]
        definition = next((d for d in pf.definitions if d.node == node), None)
        if definition is not None:
            out.append((path, *function_line(pf, index.file_lines(path), definition)))
    return out


def resolve_names(
    index: RepoIndex, path: str, left_context: str, names: Sequence[str]
) -> list[tuple[str, str, int] | None]:
    """For each dotted name (``mod.f``, ``self.run``, ``client.send``) written at the cursor,
    (file, qualified name or constant name, definition node) of what it refers to, resolved
    as the cards are: imports, ``self.`` through the enclosing class and its bases, receivers
    typed before the cursor; None where it does not resolve as a whole (no shorter prefix is
    tried)."""
    pf = index.parse(path)
    if pf is None:
        return [None] * len(names)
    finder = _Finder(index, path, pf, left_context.split("\n"))
    out: list[tuple[str, str, int] | None] = []
    for name in names:
        found = finder.resolve(_parts(name))
        out.append(None if found is None else (*found[0], found[1]))
    return out


def _strengths(
    index: RepoIndex, path: str, pf: ParsedFile, cursor: int, window: int, found: list[_Found]
) -> np.ndarray:
    """Eq. 8 from the window before the cursor to each definition's node. In Python a name
    the window's code writes is also one call edge (``graph.W_CALL``) from each
    window node naming it, whether or not the index resolved a call there: the index
    resolves Python calls through imports and classes, not through the receivers the cursor's
    context types (``console.print`` after ``console = Console()``), which would otherwise
    rank below every import the graph reaches."""
    lo, hi = max(0, cursor - window), min(cursor, pf.line_owner.size)
    weight_of = one_window_nodes(pf, lo, max(lo, hi))
    if not weight_of:
        return np.zeros(len(found))
    nodes = np.fromiter(weight_of, np.int64, len(weight_of))
    weights = np.fromiter(weight_of.values(), np.float64, len(weight_of))
    targets = [(f.target[0], f.node) for f in found]
    strengths = index.strengths(
        path,
        nodes,
        weights,
        targets,
        epsilon=QUERY_EPSILON,
        node_cap=PYTHON_QUERY_NODE_CAP if pf.language == "python" else QUERY_NODE_CAP,
    )
    if pf.language == "python":
        owner = pf.line_owner[lo:hi].tolist()
        for i, f in enumerate(found):
            owners = {owner[r - lo] for r in f.rows if lo <= r < hi}
            named = W_CALL * sum(weight_of.get(k, 0.0) for k in owners)
            strengths[i] = max(strengths[i], named)
    return strengths


class _Lookups:
    """What a name or receiver at the cursor refers to: the file's bindings, locals and module
    constants, receivers typed by what the code writes down (annotations, constructors, return
    types; in Python also pytest's fixtures), methods by name. :class:`_Finder` collects the
    names; these are its lookups, apart."""

    index: RepoIndex
    resolver: Resolver
    path: str
    pf: ParsedFile
    lines: list[str]
    depth: int

    def _receiver(self, parts: tuple[str, ...]) -> tuple[bool, Owner | None]:
        """Whether the code declares the type of the receiver ``x`` or ``self.x``, and the
        repository class it is: from the lines before the cursor, else (``self.x``) from
        what the enclosing class and its bases assign to ``x``."""
        key = ".".join(parts)
        if key in self._owners:
            return self._owners[key]
        self._owners[key] = (False, None)  # ``x = x.next()``: no type from itself
        declared = self.types.get(key)
        found: tuple[bool, Owner | None] = (False, None)
        if declared is not None:
            kind, name = declared
            if kind == "class":
                found = (True, _types.class_named(self.index, self.path, name))
            else:  # a call: the class called, or what the function called returns
                owner = self._call_type(name, kind)
                found = (owner is not None or name[-1][:1].isupper(), owner)
        elif parts[0] in ("self", "cls") and self.scope is not None and key not in self.types:
            owner = _types.attribute(self.index, (self.path, self.scope), parts[1])
            found = (owner is not None, owner)
        elif len(parts) == 1 and self.python:
            owner = self._fixture_owner(parts[0])
            found = (owner is not None, owner)
        self._owners[key] = found
        return found

    def _call_type(self, name: tuple[str, ...], kind: str = "call") -> Owner | None:
        """The class a call of ``name`` makes (``kind`` "call"), or what ``with name(...)
        as x`` binds (``kind`` "enter"): the class called, or what the function called is
        annotated to return; None for a guessed callee."""
        callee = self.resolve(name)
        if callee is None or callee[2].startswith("guessed"):
            return None
        (path, qual), node, _ = callee
        if qual in self.resolver.classes.get(path, ()):
            owner: Owner | None = (path, qual)
        else:
            owner = _types.returns(self.index, path, node)
        if owner is not None and kind == "enter":
            owner = self._entered(owner)
        return owner

    @cached_property
    def _functions(self) -> list[tuple[Definition, list[str]]]:
        """The functions holding the cursor, innermost first, with their parameters (a
        closure sees its outer functions' parameters): the statements around the last code
        line above it (the blank lines after a body may still be in it: the cursor's
        indentation is not written yet)."""
        pf = self.pf
        last = min(self.cursor, pf.line_owner.size) - 1
        while last > 0 and pf.line_len[last] == 0:
            last -= 1
        qualnames = self.resolver.qualnames.get(self.path, {})
        classes = self.resolver.classes.get(self.path, ())
        out = []
        node = int(pf.line_owner[last]) if last >= 0 else -1
        while node >= 0:
            qual = qualnames.get(node)
            if qual is not None and qual not in classes:
                start = int(pf.node_start[node])
                out.append((Definition(qual, node, False), pytypes.parameters(self.lines, start)))
            node = int(pf.node_parent[node])
        return out

    def _parameter(self, name: str) -> bool:
        """Whether ``name`` is a parameter of a function holding the cursor (which hides a
        module-level name: a test's ``runner`` beside a ``runner`` fixture)."""
        return any(name in params for _, params in self._functions)

    def _fixture(self, name: str) -> tuple[str, int] | None:
        """The fixture pytest passes to the parameter ``name`` of the test or fixture the
        cursor is in; None where the innermost function with that parameter is neither, or
        ``@pytest.mark.parametrize`` gives it its values."""
        for d, params in self._functions:
            if name not in params:
                continue
            if not self._injected(d):
                return None
            if name in pytypes.parametrized(self.pf, self.lines, d.node):
                return None
            owner = d.name.rpartition(".")[0]
            cls = owner if owner in self.resolver.classes.get(self.path, ()) else None
            return pytypes.fixture(self.index, self.path, name, cls)
        return None

    def _injected(self, d: Definition) -> bool:
        """Whether pytest fills the parameters of ``d`` from fixtures: a test (``test*``,
        pytest's default ``python_functions``) or a fixture."""
        bare = d.name.rsplit(".", 1)[-1]
        return bare.startswith("test") or pytypes.is_fixture(self.pf, self.lines, d.node)

    def _fixture_owner(self, name: str) -> Owner | None:
        """The class of the value pytest passes to the parameter ``name`` (``_fixture``)."""
        target = self._fixture(name)
        if target is None or self.depth >= FIXTURE_DEPTH:
            return None
        return _fixture_types.get(self.index, target, self.depth)

    def _entered(self, owner: Owner) -> Owner | None:
        """What ``with owner(...) as x`` binds: ``__enter__``'s annotated class, else the
        instance itself (``return self``, as context managers mostly do)."""
        enter = self.resolver.definition(owner[0], ("self", "__enter__"), owner[1])
        if enter is None:
            return owner
        node = self.resolver.defs[enter[0]][enter[1]]
        returned = _types.returns(self.index, enter[0], node)
        return returned if returned is not None else owner

    def _member(self, owner: Owner, parts: tuple[str, ...]) -> tuple[str, str] | None:
        """The method ``parts`` reaches from an instance of ``owner``: attributes on the way
        by their declared types, properties by their return annotations."""
        for i, part in enumerate(parts):
            found = self.resolver.definition(owner[0], ("self", part), owner[1])
            if i == len(parts) - 1:
                return found
            step: Owner | None
            if found is None:
                step = _types.attribute(self.index, owner, part)
            elif found[1] in self.resolver.classes.get(found[0], ()):
                step = found  # a nested class
            else:
                step = _types.returns(self.index, found[0], self.resolver.defs[found[0]][found[1]])
            if step is None:
                return None
            owner = step
        return None

    def _method_by_name(self, parts: tuple[str, ...]) -> tuple[tuple[str, str], int, str] | None:
        """``obj.meth`` that did not resolve (a local or parameter of unknown type, ``self``
        outside any class the parse shows, a package that re-exports with ``import *``;
        not a name imported from outside the repository, ``np.zeros``): the repository's only
        definition named ``meth``, unless built-in types have a method of that name
        (``d.get(k)``) or it is in a test file and the cursor's file is not. A guess, and
        ``how`` says so."""
        name = parts[-1]
        if len(parts) < 2 or name in _COMMON_METHODS or name.startswith("__"):
            return None
        if parts[0] in self._local or self._external(parts[0]):
            return None
        if parts[0] in ("self", "cls") and len(parts) == 2 and self.scope is not None:
            return None  # the class and its bases were searched: an attribute, not a method
        found = self.resolver.by_name.only((PYTHON_NS, name))
        if found is None or (langs.is_test(found[0]) and not langs.is_test(self.path)):
            return None
        path, node = found
        how = "guessed: the only definition so named"
        return (path, self.resolver.qualnames[path][node]), node, how

    def _unbound(self, name: str) -> bool:
        """Whether ``name`` is neither imported nor defined at the top of the file (so only
        a local's type can tell what it is)."""
        return name not in self._local and name not in self._bindings

    def _external(self, name: str) -> bool:
        """Whether ``name`` is imported from a module outside the repository."""
        binding = self._bindings.get(name)
        if binding is None:
            return False
        return self.resolver.resolve_module(binding.module, binding.level, self.path) is None

    def _lookup(self, name: str) -> tuple[str, str | None] | None:
        """``Resolver.lookup`` of ``name`` in the cursor's file, once per name: a name that
        does not resolve is looked up for itself, for each dotted name it heads and for a
        module constant, the failing lookups searching every ``import *`` of the file."""
        if name not in self._looked:
            self._looked[name] = self.resolver.lookup(self.path, name)
        return self._looked[name]

    def _definition(self, parts: tuple[str, ...]) -> tuple[str, str] | None:
        """``Resolver.definition`` of a name whose first part ``_lookup`` found: a bare
        name's lookup is its definition already (or a module, none), which the resolver
        would look up again."""
        if len(parts) > 1:
            return self.resolver.definition(self.path, parts)
        looked = self._lookup(parts[0])
        return (looked[0], looked[1]) if looked is not None and looked[1] is not None else None

    @cached_property
    def _local(self) -> dict[str, int]:
        """The file's definitions by name (the resolver's table, read once a query: a
        cursor asks it for most of the ~50 names it reads)."""
        return self.resolver.defs.get(self.path, {})

    @cached_property
    def _bindings(self) -> dict[str, ImportBinding]:
        """The file's imports by the name they bind (the resolver's table: the last wins;
        read once a query)."""
        return self.resolver.bindings.get(self.path, {})

    def _constant(self, parts: tuple[str, ...]) -> tuple[tuple[str, str], int, str] | None:
        """A module-level constant named directly (imported) or as ``module.NAME``."""
        if parts[0] in ("self", "cls") or len(parts) > 2:
            return None
        if len(parts) == 1:
            binding = self._bindings.get(parts[0])
            if binding is None or binding.symbol is None:
                return None
            module = self.resolver.resolve_module(binding.module, binding.level, self.path)
            name = binding.symbol
        else:
            looked = self._lookup(parts[0])
            module = looked[0] if looked is not None and looked[1] is None else None
            name = parts[1]
        if module is None or name is None or module not in self.index:
            return None
        card = _cards.get(self.index, module, name)
        if card is None:
            return None
        owner = self.index.parses()[module].line_owner
        node = int(owner[card.line]) if card.line < owner.size else -1
        return ((module, name), node, "module constant") if node >= 0 else None

    def _enclosing_class(self) -> str | None:
        """The innermost class whose span holds the cursor's line (Python, whose definitions
        are in source order): of the classes starting above the cursor and holding it, the
        one starting last, the first in order of those starting on one row. They are read
        from the last class back, to the first class starting above the one found: a test
        module's hundreds of classes were each read to find the one at its end."""
        pf, cursor = self.pf, self.cursor
        last = pf.line_owner.size - 1
        best: tuple[int, str] | None = None
        for d in reversed(pf.class_definitions()):
            start = int(pf.node_start[d.node])
            if best is not None and start < best[0]:
                break
            end = int(pf.node_end[d.node])
            # the buffer may end at the cursor: a class reaching the last line holds it
            if start < cursor and (end >= cursor or end >= last):
                best = (start, d.name)
        return best[1] if best is not None else None

    def _written(self, name: str) -> bool:
        """Whether the buffer's code writes ``name`` (a line not commented out before it): a
        type whose members the file reaches only by inheritance is not one it refers to."""
        text = "\n".join(self.lines)
        for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text):
            start = text.rfind("\n", 0, m.start()) + 1
            before = text[start : m.start()]
            if "//" not in before and not before.lstrip().startswith(("*", "/*")):
                return True
        return False

    @cached_property
    def code_words(self) -> set[str]:
        """The words the cursor's code lines write: read once for ``_add_receivers`` and
        ``_add_families`` alike."""
        return {w for row in self.code for w in _WORDS.findall(row)}

    @cached_property
    def called_words(self) -> set[str]:
        """The names the cursor's code lines call (``Errors`` of ``c.Errors.Errors()``, not
        of the field ``c.Errors``)."""
        return {w for row in self.code for w in _CALLED.findall(row)}

    @cached_property
    def types(self) -> dict[str, tuple[str, tuple[str, ...]] | None]:
        """``name -> (kind, dotted name)`` from annotations and loops over annotated
        containers (``class``: the type), assignments of calls (``call``: the callee) and
        ``with`` statements (``enter``) before the cursor (the last one wins; None: a loop
        variable of unknown type); read only when a name has a receiver to type."""
        block = "\n".join(self.code[max(0, self.cursor - TYPE_LINES) : self.cursor + 1])
        # runs of spaces read as one: the pattern finds the same groups (none holds a space,
        # each of its gaps takes one or more) in half the characters (indents, blanked text)
        block = _SPACES.sub(" ", block)
        types: dict[str, tuple[str, tuple[str, ...]] | None] = {}
        items: dict[str, tuple[str, ...]] = {}  # the element type of a typed container
        for m in _TYPED.finditer(block):
            if m["loop"]:
                item = items.get(m["items"])
                types[m["loop"]] = ("class", item) if item is not None else None
            elif m["enter"]:
                types[m["bound"]] = ("enter", tuple(m["enter"].split(".")))
            elif m["call"]:
                types[m["target"]] = ("call", tuple(m["call"].split(".")))
            else:
                last = m["annot"].rsplit(".", 1)[-1]
                arg = tuple(m["arg"].split(".")) if m["arg"] else None
                if last in _OPTIONAL and arg is not None:
                    types[m["target"]] = ("class", arg)
                    continue
                types[m["target"]] = ("class", tuple(m["annot"].split(".")))
                if last in _CONTAINERS and arg is not None:
                    items[m["target"]] = arg
        return types

    def _fixture_values(self) -> list[tuple[str, Owner, bool, int]]:
        """The parameters pytest fills from fixtures of the test (or fixture) holding the
        cursor, each with the class of its value, whether the code after the ``def`` uses it
        yet and the ``def``'s distance from the cursor."""
        found = next(((d, p) for d, p in self._functions if self._injected(d)), None)
        if found is None:
            return []
        d, params = found
        start = int(self.pf.node_start[d.node])
        body = "\n".join(self.code[start + 1 : self.cursor + 1])
        out = []
        for name in params:
            owner = self._receiver((name,))[1] if name not in ("self", "cls") else None
            if owner is not None:
                used = re.search(rf"(?<![\w.]){re.escape(name)}\b", body) is not None
                out.append((name, owner, used, self.cursor - start))
        return out


class _Finder(_Lookups):
    """Collects the definitions named in one cursor's context."""

    def __init__(
        self, index: RepoIndex, path: str, pf: ParsedFile, lines: list[str], depth: int = 0
    ) -> None:
        self.index = index
        self.depth = depth  # fixtures followed to get here (``_fixture_owner``)
        self.resolver = index.resolver
        self.path = path
        self.pf = pf
        self.lines = lines
        self.cursor = len(lines) - 1
        self.python = pf.language == "python"
        self.language = langs.for_language(pf.language)
        # the lines' code alone: names are never read from comments, docstrings or strings
        self.name_lines = self.language.name_lines or NAME_LINES
        first = self.cursor - (TYPE_LINES if self.python else self.name_lines)
        self.code = _code_lines(pf, lines, first)
        self.members = _MEMBER_OPERATORS.get(self.language.namespace, ())
        self.scope = self._enclosing_class() if self.python else None
        self.found: dict[tuple[str, str], _Found] = {}
        self._resolved: dict[str, tuple[tuple[str, str], int, str, str] | None] = {}
        self._owners: dict[str, tuple[bool, Owner | None]] = {}
        self._looked: dict[str, tuple[str, str | None] | None] = {}

    def collect(self, draft: str) -> dict[tuple[str, str], _Found]:
        pattern = _PATH_NAME if self.language.scoped_names else _NAME
        for text in reversed(pattern.findall(self._members(code_only(draft, self.pf.language)))):
            self._add(text, 0, "draft")
        first = max(0, self.cursor - self.name_lines)
        for row in range(self.cursor, first - 1, -1):
            code = self.code[row]
            if self.python and ("def" in code or "class" in code):
                code = _DEFINES.sub(r"\1", code)  # ``def f`` defines f: no use of it
            for text in reversed(_names(pattern, self._members(code), self.language)):
                self._add(text, self.cursor - row, "named here", row)
        if self.python:
            for base in self.pf.bases.get(self.scope or "", ()):
                self._add(".".join(base), self.cursor, "base class")
            for name in self._fresh_receivers():
                owner = self._receiver(tuple(name.split(".")))[1]
                if owner is not None:
                    self._add_fresh(owner, name)
            for name, owner, used, distance in self._fixture_values():
                self._add_fixture(owner, name, used, distance)
        for target, row in self.language.in_scope(self.resolver, self.path, self.lines):
            self._add_target(target, max(self.cursor - row, 0), "in scope")
            if self.language.fresh_in_scope:
                self.found[(target[0], self.resolver.qualnames[target[0]][target[1]])].fresh = True
        for target in self.language.fresh_types(self.resolver, self.path, self.lines):
            self._add_target(target, 0, "bound just above, not used yet").fresh = True
        _add_analogue(self)
        self._add_sibling_callees()
        self._add_receivers()
        callees = PYTHON_FILE_CALLEES if self.python else self.language.file_callees
        for target, distance, count in self._file_callees(callees):
            how = f"called in this file ({count} call{'s' * (count != 1)})"
            self._add_target(target, distance, how, count)
        if self.language.group_members:
            self._group_members(self.language.group_members)
        _subject_members(self)
        if self.language.name_families:
            self._add_families(self.language.name_families)
        if self.language.other_methods:
            _other_methods(self, self.language.other_methods)
        if self.language.successors:
            self._add_successors(self.language.successors)
        by_use = self.language.rank_imports_by_use
        named = set(self.found)
        called = self.pf.call_heads() if self.python else set()
        pending = set() if self.python else self.language.pending_imports(self.pf, self.lines)
        for binding, node in zip(self.pf.imports, self.pf.import_nodes, strict=True):
            # nor do ``#include``, ``import *`` and what only comments name
            if binding.name and binding.name != STAR and self.language.offers(binding):
                row = int(self.pf.node_start[node]) if 0 <= node < self.pf.n_nodes else 0
                distance = _import_distance(self.language, binding, self.cursor, row, by_use)
                found = self._add(binding.name, distance, "import")
                if found is not None and binding.name in pending:
                    found.pending = True  # imported to be called below: likely next
                if found is not None and self.python and binding.name not in called:
                    found.pending = True
        self._add_value_members()
        if by_use:
            uses = self._uses()
            for target, f in self.found.items():
                if target not in named:
                    f.count = uses.get(target, 0)
        return self.found

    def _add_value_members(self) -> None:
        """An object of another file declared with a type (``Language.value_members``) lists
        that type's members on its card, whose declaration's line alone says nothing of what
        the next line calls on it (``timeoutProvider.setTimeout(``); a type of another file,
        the members it gets from elsewhere that its card does not show (Go's embedded types'
        promoted methods, Rust's repository traits' methods), named on one line."""
        if not self.language.value_members_listed:
            return
        for f in self.found.values():
            path = f.target[0]
            pf = self.resolver.files.get(path)
            if path == self.path or pf is None or f.functions or not 0 <= f.node < pf.n_nodes:
                continue
            lines = self.index.file_lines(path)
            row = int(pf.node_start[f.node])
            line = lines[row] if row < len(lines) else ""
            members = self.language.value_members(self.resolver, path, f.node, line)
            if members:
                f.functions, f.heading, f.named = members, self.language.value_heading, True

    def _file_callees(self, n: int) -> list[tuple[tuple[str, int], int, int]]:
        """The ``n`` definitions of other files the file's calls resolve to most often (a
        test's only from a test), each with the distance from the cursor to its nearest call
        and how many calls it has: what the next line calls is often what the file calls
        everywhere (a project's checking macro, its allocator), though not in the last lines."""
        return _call_groups.get(self.index, self.path, self.pf).top(self.cursor, n)

    def _add_sibling_callees(self) -> None:
        """A method's body just begun: what the other implementations of that method
        (``Language.siblings``) call, called by two or more of them, the most first
        (``SIBLING_CALLEES`` of them), come first, as fresh receivers' types do: the views'
        ``getPath`` bodies all call ``relativeOnWidth``, which no line here names yet."""
        siblings = self.language.siblings(self.resolver, self.path, self.lines)
        if len(siblings) < 2:
            return
        callers: dict[tuple[str, int], set[tuple[str, int]]] = {}
        for path, node in siblings:
            pf = self.resolver.files[path]
            rows, calls = _call_rows_by_file.get(self.index, path, pf)
            first = bisect_left(rows, int(pf.node_start[node]))
            for target in calls[first : bisect_right(rows, int(pf.node_end[node]))]:
                if target[0] != path:
                    callers.setdefault(target, set()).add((path, node))
        ranked = sorted(callers.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for target, by in ranked[:SIBLING_CALLEES]:
            if len(by) >= 2:
                how = f"called by {len(by)} other implementations"
                self._add_target(target, 0, how).fresh = True

    def _add_receivers(self) -> None:
        """C: the type of the variable named nearest the cursor, carded first with the
        functions taking one (``Language.receiver_functions``): the next line often passes
        the variable to one no line above names (``cmark_node_get_list_type(node)`` among the
        70 functions taking a ``cmark_node``); TypeScript: a receiver's type with its bases'
        members. The card lists ``MAX_METHODS`` of them: those the lines above do not name
        first (``receiver_written_first``: last), then those sharing most of their name with
        the last of them the lines above call (``cmark_node_get_``), then the most called."""
        found = self.language.receiver_functions(
            self.resolver, self.path, self.lines, self.language.receiver_types
        )
        if not found:
            return
        qualnames = self.resolver.qualnames
        calls = [c for row in reversed(self.code) for c in reversed(_CALLED.findall(row))]
        written = set(calls) | self.code_words
        for (path, node), functions in found:
            named = {self.language.receiver_key(qualnames[p][n]): (p, n) for p, n in functions}
            last = next((c for c in calls if c in named), "")
            ranked = sorted(
                named,
                key=lambda q: (
                    (q in written) != self.language.receiver_written_first,
                    -_shared_words(q, last),
                    -self.entity_calls(*named[q]),
                ),
            )
            qual = qualnames[path][node]
            seen = self.found.get((path, qual))
            if seen is None:
                how = "type of a variable named near the cursor, with functions taking one"
                seen = self.found[(path, qual)] = _Found((path, qual), node, qual, how, 0)
            seen.fresh, seen.heading = True, self.language.receiver_heading
            seen.functions = [
                named[q] for q in ranked[: self.language.receiver_names or MAX_METHODS]
            ]
            seen.more = len(named) - len(seen.functions)
            seen.brief = not seen.functions

    def _add_families(self, n: int) -> None:
        """C, Go: a function or macro of another file that the last ``Language.family_lines`` lines
        name lists beside it up to ``n`` of its family the code does not name yet: the
        definitions of its file whose names start as its own does (``Language.family``: C's
        ``DNS_HEADER_``, Go's ``scanFollows``), nearest it first, each one the cursor's file
        can call as it calls the one named. Such families are a C API's methods by name (``_init``,
        ``_update``, ``_final``; one header field's accessor after another), where the next
        line calls the next of them. The nearest member named stands for its family."""
        classes = self.resolver.classes
        written = self.code_words
        done: set[tuple[str, str]] = set()
        for f in sorted(self.found.values(), key=lambda f: (f.distance, -f.count)):
            path, qual = f.target
            if (
                f.distance > self.language.family_lines
                or path == self.path
                or f.functions
                or qual in classes[path]
            ):
                continue
            pf = self.resolver.files[path]
            row = _row(pf, f.node)
            family: list[tuple[int, str, int]] = []
            for prefix in self.language.family(qual):  # the longest start shared
                family = sorted(
                    (abs(_row(pf, d.node) - row), d.name, d.node)
                    for d in pf.definitions
                    if d.name.startswith(prefix)
                    and d.name not in written
                    and d.name != qual
                    and not d.is_class
                    and d.name not in classes[path]
                )
                if family:
                    break
            if not family or (path, prefix) in done:
                continue
            done.add((path, prefix))
            # each called as the one named is (``pkg.F`` of an imported Go package)
            head = tuple(f.name.split("."))[:-1] if "." in f.name else ()
            members: dict[str, tuple[str, int]] = {}
            for _, name, node in family:
                if name not in members and self.resolve((*head, name)) is not None:
                    members[name] = (path, node)
                    if len(members) >= n:
                        break
            if members:
                f.functions = list(members.values())
                f.heading = f"// beside it in {path.rsplit('/', 1)[-1]}:"

    def _add_successors(self, n: int) -> None:
        """The definitions the last ``SUCCESSOR_LINES`` lines call (the two nearest) list
        beside them up to ``n`` of what follows their other calls in the repository, where
        ``SUCCESSOR_SITES`` or more of those calls are followed by it within as many lines (a
        test's calls only for a test): a pipeline's steps are called in one order
        (``jsonnet_lex``, then ``jsonnet_parse``, then ``jsonnet_desugar``), and the next
        line often takes the next step, which no line above names."""
        rows, calls = _call_rows_by_file.get(self.index, self.path, self.pf)
        recent = list(
            dict.fromkeys(reversed(calls[bisect_left(rows, self.cursor - SUCCESSOR_LINES) :]))
        )
        qualnames = self.resolver.qualnames
        for target in recent[:2]:
            f = self.found.get((target[0], qualnames[target[0]].get(target[1], "")))
            if f is None or f.functions:
                continue
            counts = _followers(self.index, self.path, target)
            f.functions = [
                t for t, c in counts.most_common() if c >= SUCCESSOR_SITES and t not in recent
            ][:n]
            f.heading = "// what its other calls are followed by:"

    def entity_calls(self, path: str, node: int) -> int:
        """How many of the repository's calls reach a function, through any of its
        declarations and its definition (a header's prototype is one entity with its body):
        kept for the index's revision, since a cursor ranks a type's functions or a header's
        helpers by them, the same ones at cursor after cursor."""
        counts = _entity_counts.get(self.index, path, self.index.parses()[path])
        if node in counts:
            return counts[node]
        qual = self.resolver.qualnames[path][node]
        bare = qual.rsplit(".", 1)[-1]
        total = 0
        for p, n in self.resolver.by_name.get((self.language.namespace, bare), ()):
            if self.resolver.qualnames[p].get(n) == qual:
                total += call_count(_call_counts.get(self.index, p, self.index.parses()[p]), n)
        counts[node] = total
        return total

    def _group_members(self, n: int) -> None:
        """Replace ``n`` or more found methods of one type of another file by the type's
        card, as near as the nearest of them and named as often as all together; fewer keep
        their cards, the type's beside them where the code's last lines write its name
        (``DomUtilities.traverseDFS(`` above ``DomUtilities.traverseChildren(``)."""
        classes = self.resolver.classes
        members: dict[tuple[str, str], list[_Found]] = {}
        for f in self.found.values():
            path, qual = f.target
            owner, _, bare = qual.rpartition(".")
            if (
                path != self.path
                and owner in classes[path]
                and qual not in classes[path]  # a member type is carded whole
                and bare != owner.rsplit(".", 1)[-1]  # a constructor is its class
            ):
                members.setdefault((path, owner), []).append(f)
        for (path, owner), group in members.items():
            bare = owner.rsplit(".", 1)[-1]
            if len(group) < n and bare in self.code_words:  # the next line may call another
                node = self.resolver.defs[path][owner]
                how = f"owner of {group[0].name.rsplit('.', 1)[-1]}"
                distance = min(f.distance for f in group)
                self.found.setdefault(
                    (path, owner), _Found((path, owner), node, owner, how, distance)
                )
            if len(group) < n or not self._written(bare):
                continue
            for f in group:
                del self.found[f.target]
            seen = self.found.get((path, owner))
            if seen is None:
                node = self.resolver.defs[path][owner]
                names = ", ".join(f.name.rsplit(".", 1)[-1] for f in group)
                seen = _Found((path, owner), node, owner, f"members {names}", self.cursor)
                self.found[(path, owner)] = seen
                seen.count = 0
            seen.distance = min(seen.distance, *(f.distance for f in group))
            seen.count += sum(f.count for f in group)
            seen.members = tuple(sorted({*seen.members, *(f.node for f in group)}))

    def _add_target(
        self, target: tuple[str, int], distance: int, source: str, count: int = 1
    ) -> _Found:
        """A definition found without its name being read (``in_scope``, the file's calls)."""
        path, node = target
        qual = self.resolver.qualnames[path][node]
        seen = self.found.get((path, qual))
        if seen is not None:
            seen.count += 1
            return seen
        name = qual.rsplit(".", 1)[-1]
        found = self.found[(path, qual)] = _Found((path, qual), node, name, source, distance, count)
        return found

    def _uses(self) -> dict[tuple[str, str], int]:
        """How many of the file's resolved calls reach each definition: the calls of it, and
        those of its members (a type's methods count for the type, which a file may use
        without writing its name)."""
        called: dict[tuple[str, str], int] = {}
        qualnames = self.resolver.qualnames
        groups = _call_groups.get(self.index, self.path, self.pf)
        for (target, node), count in zip(groups.keys(), groups.counts.tolist(), strict=True):
            name = qualnames.get(target, {}).get(node)
            if name is not None:
                called[(target, name)] = called.get((target, name), 0) + count
        uses = dict(called)
        for (target, name), count in called.items():
            if "." in name:
                owner = (target, name.rpartition(".")[0])
                uses[owner] = uses.get(owner, 0) + count
        return uses

    def _fresh_receivers(self) -> list[str]:
        """Names bound in the last ``FRESH_LINES`` lines before the cursor (``x = Foo()``,
        ``x = make()``, ``with f() as x``, a parameter ``x: Foo``) and not used since: the
        next line is likely to use them, through members no line names yet. (Measured: on
        starlette's API tasks, annotated parameters count: ``request: Request`` then
        ``await request.body()``, 52.9 -> 58.8%; the dev suite is the same either way.)"""
        first = max(0, self.cursor - FRESH_LINES)
        rows = self.code[first : self.cursor + 1]
        out = []
        for i, row in enumerate(rows):
            for m in _TYPED.finditer(row):
                name = m["target"] or m["bound"] or m["loop"]
                later = "\n".join([row[m.end() :], *rows[i + 1 :]])
                if name and not _uses_name(later, name):
                    out.append(name)
        return out

    def _add_fixture(self, owner: Owner, name: str, used: bool, distance: int) -> None:
        """A fixture's class, named on the test's ``def`` line; first when that line is
        just above and the test does not use the fixture yet (as a receiver bound just
        above: the next line is likely to use it)."""
        node = self.resolver.defs[owner[0]].get(owner[1])
        if node is None:
            return
        seen = self.found.get(owner)
        if seen is None:
            how = f"pytest fixture {name}, typed {owner[1]}"
            seen = self.found[owner] = _Found(owner, node, name, how, distance)
        seen.rows.append(self.cursor - distance)
        seen.fresh = seen.fresh or (not used and distance <= FRESH_LINES)

    def _add_fresh(self, owner: Owner, name: str) -> None:
        node = self.resolver.defs[owner[0]].get(owner[1])
        if node is None:
            return
        seen = self.found.get(owner)
        if seen is None:
            how = f"bound just above, receiver typed {owner[1]}"
            seen = self.found[owner] = _Found(owner, node, name, how, 0)
        seen.fresh = True

    def _members(self, code: str) -> str:
        """``code`` with the language's other member and scope operators read as ``.``
        (C's ``p->f`` is ``p.f``, C++'s ``ns::f`` is ``ns.f``)."""
        for op in self.members:
            code = code.replace(op, ".")
        return code

    def _add(self, text: str, distance: int, source: str, row: int = -1) -> _Found | None:
        if text not in self._resolved:  # a name is usually written many times
            self._resolved[text] = self._resolve_longest(text)
        resolved = self._resolved[text]
        if resolved is None:
            return None
        target, node, how, name = resolved
        seen = self.found.get(target)
        if seen is not None:
            seen.count += 1
        else:
            seen = self.found[target] = _Found(target, node, name, f"{source}, {how}", distance)
        if row >= 0 and self.python:
            seen.rows.append(row)
        return seen

    def _resolve_longest(self, text: str) -> tuple[tuple[str, str], int, str, str] | None:
        """The longest prefix of a dotted name that resolves: (target, node, how, prefix)."""
        parts = _parts(text)
        for end in range(len(parts), 0, -1):
            resolved = self.resolve(parts[:end])
            if resolved is not None:
                return (*resolved, ".".join(parts[:end]))
        return None

    def resolve(self, parts: tuple[str, ...]) -> tuple[tuple[str, str], int, str] | None:
        """(target, its node, how it resolved) for a dotted name, or None (keywords and
        built-ins never resolve)."""
        if not self.python:
            if self.language.reserved(parts[0]):
                return None
            found = self.language.resolve_name(self.resolver, self.path, parts, self.lines)
            if found is None:
                return None
            (target_path, node), how = found
            return (target_path, self.resolver.qualnames[target_path][node]), node, how
        if parts[0] in _SKIP and parts[0] not in ("self", "cls"):
            return None
        receiver = 0
        if parts[0] in ("self", "cls"):
            receiver = 2 if len(parts) > 2 else 0
        elif len(parts) > 1 and (self._unbound(parts[0]) or self._parameter(parts[0])):
            receiver = 1
        typed, owner = self._receiver(parts[:receiver]) if receiver else (False, None)
        if owner is not None:
            hit = self._member(owner, parts[receiver:])
            how = f"receiver typed {owner[1]}"
        elif typed:
            return None  # a type the repository does not define: no other name stands in
        elif parts[0] in ("self", "cls"):
            hit = self.resolver.definition(self.path, parts, self.scope)
            how = f"method of {self.scope}" if self.scope else ""
        elif self._lookup(parts[0]) is None:
            hit = None  # what ``Resolver.definition`` finds: it starts from the same lookup
        else:
            hit = self._definition(parts)
            how = "resolved through imports" if parts[0] not in self._local else "this file"
        if hit is not None:
            return hit, self.resolver.defs[hit[0]][hit[1]], how
        if owner is not None:
            return None  # an attribute of a known type (a field): no other name stands in
        return self._constant(parts) or self._method_by_name(parts)


def _parts(name: str) -> tuple[str, ...]:
    """A dotted name's parts, without the white space a line may hold around its dots (most
    names hold none, and are only split)."""
    if name.split() == [name]:
        return tuple(name.split("."))
    return tuple(p.strip() for p in name.split("."))


def _names(pattern: re.Pattern[str], code: str, language: langs.Language) -> list[str]:
    """The dotted names a line of code writes, the members of calls' results first where the
    language reads them (``Language.call_chains``: ``decoder(in).Decode`` is
    ``decoder.Decode``)."""
    names = pattern.findall(code)
    if not language.call_chains:
        return names
    return [f"{head}.{member}" for head, member in _CHAIN.findall(code)] + names


def _subject_members(finder: _Finder) -> None:
    """The methods of a type of another file found here whose names the enclosing
    test's name spells (``Language.subject``: ``YAML`` and ``Render`` of ``Context`` in
    ``TestContextRenderYAML``, ``BindJSON`` in ``TestContextBindWithJSON``, words in
    their order) come first in its card's skeleton: a test calls what it is named
    for, which a type of a hundred methods does not list among its most called. So do
    those a method just begun forwards to (``Language.forwarder``): a wrapper calls its
    field's method of its own name."""
    subject = [w.lower() for w in finder.language.subject(finder.lines)]
    forwarder = finder.language.forwarder(finder.lines)
    if not subject and not forwarder:
        return
    classes = finder.resolver.classes
    for f in finder.found.values():
        path, qual = f.target
        if path == finder.path:
            continue
        if qual not in classes[path]:
            # a function the test is named for (nom's ``is_a_fail``: ``is_a``) comes first
            if subject and "." not in qual and _spelled(qual, subject):
                f.fresh = True
            continue
        named = [
            d.node
            for d in finder.resolver.files[path].members(qual)
            if (subject and _spelled(d.name.rsplit(".", 1)[-1], subject))
            or (forwarder and _forwarded(d.name.rsplit(".", 1)[-1], forwarder))
        ]
        if named:
            f.members = tuple(sorted({*f.members, *named}))


def _add_analogue(finder: _Finder) -> None:
    """What the lines above pair with a name the way the last line names one: where
    ``ANALOGY_PAIRS`` or more of the ``ANALOGY_LINES`` lines above call a definition whose
    name is a name of their own or of the line before it with the same start and end
    changed (``case RNSVGFeOffset:`` then ``return new FeOffsetView(``), the last code
    line's names changed the same way, where one is a definition no line names yet,
    come first (``case RNSVGMarker:``: ``MarkerView``): a factory's, a registry's or a
    dispatch's next line makes the next of its kind."""
    last = next((r for r in range(finder.cursor, -1, -1) if finder.code[r].strip()), -1)
    if last < 1 or finder.code[last].rstrip().endswith((";", "}", ")")):
        return  # (a statement ended: its line's names are done with)
    rules: dict[tuple[str, str, str, str], set[str]] = {}
    for row in range(max(1, last - ANALOGY_LINES), last):
        calls = _CALLED.findall(finder.code[row])
        if not calls:
            continue
        names = set(_WORDS.findall(finder.code[row - 1] + " " + finder.code[row]))
        for called in calls:
            for name in names - {called}:
                rule = _analogy(name, called)
                if rule is not None:
                    rules.setdefault(rule[0], set()).add(rule[1])
    agreed = [rule for rule, cores in rules.items() if len(cores) >= ANALOGY_PAIRS]
    if not agreed:
        return
    written = finder.code_words
    for name in dict.fromkeys(_WORDS.findall(finder.code[last])):
        for start, end, new_start, new_end in agreed:
            core = name[len(start) : len(name) - len(end)]
            if len(core) < ANALOGY_CORE or not (name.startswith(start) and name.endswith(end)):
                continue
            made = new_start + core + new_end
            resolved = None if made in written else finder.resolve((made,))
            if resolved is not None:
                target, node, how = resolved
                if target not in finder.found:
                    how = f"named as the lines above pair their names, {how}"
                    finder.found[target] = _Found(target, node, made, how, 0)
                finder.found[target].fresh = True
                return


def _other_methods(finder: _Finder, n: int) -> None:
    """Go, Java, C++: a method of another file's type that the last ``Language.family_lines``
    lines call names beside it up to ``n`` of the type's other methods (of its file) that
    the code does not call, the most called first: the next line calls another method of
    the same value (``v1.GET(`` after ``v1.Use(``; ``c.Errors.Errors()`` after
    ``c.Errors.ByType(``), whose type the code need not name (its card would be a
    name the code does not write). One method of a type stands for it. With
    ``Language.other_methods_all`` (C++) the nearest method the names' lines call names
    all the type's methods but its constructors, destructor and operators, the called
    ones too: their own cards may be ranked out."""
    classes = finder.resolver.classes
    every = finder.language.other_methods_all
    called = set() if every else finder.called_words
    lines = finder.language.name_lines if every else finder.language.family_lines
    done: set[tuple[str, str]] = set()
    for f in sorted(finder.found.values(), key=lambda f: (f.distance, -f.count)):
        path, qual = f.target
        owner = qual.rpartition(".")[0]
        if (
            f.distance > lines
            or path == finder.path
            or f.functions
            or qual in classes[path]
            or (path, owner) in done
        ):
            continue
        if not owner:  # a module's function: its module's others
            module = (path.rpartition("/")[0], "")
            if module not in done:
                done.add(module)
                _other_functions(finder, f, n)
            continue
        if owner not in classes[path]:
            continue
        done.add((path, owner))
        methods = [
            d
            for d in finder.resolver.files[path].members(owner)
            if d.name != qual
            and d.name.rsplit(".", 1)[-1] not in called
            and (not every or _method(d, owner))
        ]
        methods.sort(key=lambda d: -finder.entity_calls(path, d.node))
        if methods:
            f.functions = [(path, d.node) for d in methods[:n]]
            f.heading = f"// other methods of {owner.rsplit('.', 1)[-1]}:"
            f.named = True


def _method(d: Definition, owner: str) -> bool:
    """Whether a member of class ``owner`` is a method called on a value: not a nested type
    or alias, a constructor, the destructor or an operator."""
    name = d.name.rsplit(".", 1)[-1]
    short = owner.rsplit(".", 1)[-1]
    return not d.is_class and name != short and name.isidentifier() and name[:8] != "operator"


def _other_functions(finder: _Finder, f: _Found, n: int) -> None:
    """Go: a function of an imported package that the last lines call (``pkg.F``) names
    beside it up to ``n`` of the package's other functions (``Language.package_functions``)
    that the code does not call and the repository does, the most called first: the next
    line calls another function through the same ``pkg.`` (``testsuite.CmpJSON`` after
    ``testsuite.ValueToTaggedJSON``). The nearest function of a package stands for it."""
    path = f.target[0]
    found = finder.language.package_functions(finder.resolver, finder.path, (path, f.node))
    if not found:
        return  # (C++'s free functions: no package; what the code calls is not read)
    qualnames = finder.resolver.qualnames
    called = finder.called_words
    calls = {t: finder.entity_calls(*t) for t in found if qualnames[t[0]][t[1]] not in called}
    ranked = sorted((t for t, c in calls.items() if c), key=lambda t: (-calls[t], t))
    if ranked:
        f.functions = ranked[:n]
        f.heading = f"// other functions of package {finder.resolver.files[path].package}:"
        f.named = True


def _forwarded(name: str, method: str) -> bool:
    """Whether a member ``name`` is what a method ``method`` forwards to: its name, or its
    name with more words after it (``retain_in_order`` of ``retain``)."""
    return name == method or name.startswith(method + "_")


def _spelled(name: str, words: list[str]) -> bool:
    """Whether ``name``'s words (``langs.WORDS``) are some of ``words`` (lower case), in
    their order."""
    rest = iter(words)
    return all(w.lower() in rest for w in langs.WORDS.findall(name))


def _shared_words(name: str, other: str) -> int:
    """How many leading ``_``-separated words two names share."""
    count = 0
    for a, b in zip(name.split("_"), other.split("_"), strict=False):
        if a != b:
            break
        count += 1
    return count


def _import_distance(
    language: langs.Language, binding: ImportBinding, cursor: int, row: int, by_use: bool
) -> int:
    """How far an import of row ``row`` ranks from the cursor: past every line where the
    language ranks imports by use; else its line's distance, and a type-only one's past every
    value import's (nearness to the imports' end would put a file's closing ``import type``
    block first, which no call needs)."""
    if by_use:
        return cursor + 1
    return max(cursor - row, 0) + (cursor + 1) * language.types_only(binding)


def _uses_name(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (``x``, ``self.x``) whole and not as an attribute: no
    word character or ``.`` before it, no word character after it. Found with ``str.find``:
    compiling a pattern per name cost more than the search (a request meets many names, the
    ``re`` module caches few)."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if not (at > 0 and _word_or_dot(text[at - 1])) and not (
            end < len(text) and _word(text[end])
        ):
            return True
        at = text.find(name, at + 1)
    return False


def _analogy(name: str, called: str) -> tuple[tuple[str, str, str, str], str] | None:
    """How ``called`` is ``name`` with its start and end changed, as (the start and end
    ``name`` loses, those ``called`` gains), around the longest run of ``ANALOGY_CORE`` or
    more characters they share, with that run; None where they share none, or where the run
    is the whole of either (a name is not its own analogue)."""
    shared = _grams(name) & _grams(called)
    if not shared:
        return None  # (most pairs: nothing shared, told cheaply)
    best = (0, 0, 0)  # (length, start in name, start in called): the first longest run
    for i in range(len(name) - ANALOGY_CORE + 1):
        gram = name[i : i + ANALOGY_CORE]
        if gram not in shared:
            continue  # (only where a shared gram starts can a run long enough start)
        j = called.find(gram)
        while j >= 0:
            k = ANALOGY_CORE
            while i + k < len(name) and j + k < len(called) and name[i + k] == called[j + k]:
                k += 1
            if k > best[0]:
                best = (k, i, j)
            j = called.find(gram, j + 1)
    k, i, j = best
    if k in (len(name), len(called)):
        return None
    core = name[i : i + k]
    return (name[:i], name[i + k :], called[:j], called[j + k :]), core


@lru_cache(maxsize=4096)
def _grams(word: str) -> frozenset[str]:
    """The runs of ``ANALOGY_CORE`` characters of ``word``: a word is met cursor after
    cursor, in pair after pair."""
    return frozenset(word[i : i + ANALOGY_CORE] for i in range(len(word) - ANALOGY_CORE + 1))


def _word(char: str) -> bool:
    """Whether ``char`` is a word character as ``re`` reads one: a letter, digit or ``_``."""
    return char.isalnum() or char == "_"


def _word_or_dot(char: str) -> bool:
    return char == "." or _word(char)


def _code_lines(pf: ParsedFile, lines: list[str], first: int) -> list[str]:
    """``lines`` without comments and literals from row ``first`` on (the rows before it are
    left empty). The lexer starts where a statement of the index's parse begins at or before
    ``first``, on a line as long in the buffer as in the index (a statement begins in code,
    whatever comment or docstring is open above the window), else at the top of the file."""
    start = 0
    if first > 0:
        k = int(np.searchsorted(pf.node_start, first, side="right"))
        for row in pf.node_start[max(0, k - 32) : k][::-1].tolist():
            if (
                0 < row < min(pf.line_len.size, len(lines))
                and pf.line_len[row] == len(lines[row].rstrip())
                and starts_in_code(lines[row - 1], lines[row], pf.language)
            ):
                start = row
                break
    code = code_only("\n".join(lines[start:]), pf.language).split("\n")
    return [""] * start + code
