"""The tables of a repository index: what ``repomem.index.store`` saves and loads.

``IndexTables`` holds the files, their parses and resolved calls, the fragments (texts,
locations, BM25), their relations, and the code graph with its node rows. What is derived
from the saved tables (the graph and node rows, calls by target, call resolution, relations
by target) is made on first use, from a saved index's own arrays where it has them. The work
on the tables lives beside them: ``build`` (a full index), ``update`` (one file's change),
``search`` (retrieval); ``repo.RepoIndex`` is the handle the rest of repomem holds.
"""

from __future__ import annotations

import mmap
from collections import defaultdict
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from repomem.config import IndexConfig
from repomem.index.bm25 import BM25Index
from repomem.index.gcpause import paused_gc
from repomem.index.graph import CodeGraph, NodeLayout, build_graph
from repomem.index.mapped import LazyDict, Locations, TextIds, Texts
from repomem.index.parsing import ParsedFile
from repomem.index.relations import relations_by_target
from repomem.index.resolve import Resolver, SavedDependencies, saved_dependencies
from repomem.index.rowpool import RowPool, with_room
from repomem.index.spool import ArrayWriter, is_file, mapped, write_array
from repomem.index.trim import fresh_zeros, map_under

# the type of a relation row's fragment ids
RELATION_ID = np.int32


def relation_spare(rows: int) -> int:
    """The spare relation rows a saved index has past its ``rows``, so that the first new
    fragments do not copy the table."""
    return max(1024, rows // 8)


# ``FileEntry``'s per-window arrays, and their types as saved
WINDOW_ROWS = (
    ("win_start", np.int32),
    ("win_end", np.int32),
    ("win_frag", np.int64),
    ("wn_frag", np.int64),
    ("wn_node", np.int64),
    ("wn_weight", np.float64),
)


@dataclass
class FileEntry:
    """An indexed code file: its text and, per window, the fragment it belongs to."""

    language: str
    digest: str
    content: str | tuple[Texts, int]  # the text, or where a saved index holds it
    win_start: np.ndarray  # int32 window starts
    win_end: np.ndarray
    win_frag: np.ndarray  # int64 fragment id of each window
    # Eq. 8 weights of the file's windows: (fragment id, local node, weight)
    wn_frag: np.ndarray
    wn_node: np.ndarray
    wn_weight: np.ndarray
    # where the text's UTF-8 holds its newlines, as a saved index keeps them for a text it
    # holds (``parsing.Lines``); None: found when its lines are first read
    newlines: np.ndarray | None = None

    @property
    def text(self) -> str:
        """Read from a saved index anew each time: its files stay out of memory."""
        content = self.content
        return content if isinstance(content, str) else content[0][content[1]]

    @property
    def encoded(self) -> bytes:
        """The text in UTF-8; a saved index's as it is stored, without decoding it."""
        content = self.content
        if isinstance(content, str):
            return content.encode("utf-8", "surrogatepass")
        return content[0].encoded_at(content[1])

    @property
    def buffer(self) -> bytes | memoryview:
        """The text in UTF-8: a saved index's a view of where it is mapped, not a copy."""
        content = self.content
        if isinstance(content, str):
            return content.encode("utf-8", "surrogatepass")
        return content[0].view_at(content[1])


def _call_rows(
    entries: Sequence[tuple[int, str, int]], dtype: type[np.signedinteger]
) -> tuple[list[str], np.ndarray]:
    """A file's resolved calls as their target paths and rows of (source node, target's
    number there, target node)."""
    targets = list(dict.fromkeys(t for _, t, _ in entries))
    number = {t: i for i, t in enumerate(targets)}
    return targets, np.array([(s, number[t], n) for s, t, n in entries], dtype).reshape(-1, 3)


def packed_calls(entries: list[tuple[int, str, int]]) -> Callable[[], list[tuple[int, str, int]]]:
    """A file's resolved calls as ``LazyDict`` packs them (``_call_rows``, int32): a tuple
    per call took ~10 times that."""
    targets, rows = _call_rows(entries, np.int32)
    return lambda: [(s, targets[t], n) for s, t, n in rows.tolist()]


class SpooledCalls(LazyDict[str, list[tuple[int, str, int]]]):
    """A build's resolved calls, written to ``calls.npy`` as each file's come, as rows of
    (file, source node, target file, target node) in the files' order, with their bounds
    (``calls_off.npy``), as an index saves them; each file's list made when read. Held as
    tuples, the whole kernel's millions of calls took hundreds of MB, and the allocator
    kept more: it could not give back the pages that they shared with what resolution
    dropped."""

    def __init__(self, spool: Path, paths: list[str]) -> None:
        self.paths = paths
        self._number = {p: i for i, p in enumerate(paths)}
        self._path = spool / "calls.npy"
        self._out: ArrayWriter | None = None
        self._ends = [0]
        self.rows = np.empty((0, 4), np.int64)
        self.offsets = np.zeros(1, np.int64)
        super().__init__(paths, self._calls)

    def _calls(self, i: int) -> list[tuple[int, str, int]]:
        rows = self.rows[self.offsets[i] : self.offsets[i + 1]].tolist()
        return [(s, self.paths[t], n) for _, s, t, n in rows]

    def _writer(self) -> ArrayWriter:
        if self._out is None:
            self._out = ArrayWriter(self._path, np.int64, (4,))
        return self._out

    def add(self, path: str, calls: list[tuple[int, str, int]]) -> None:
        """The next file's calls (in ``paths``' order)."""
        assert self.paths[len(self._ends) - 1] == path
        self.extend(self.rows_of(path, calls), [len(calls)])

    def rows_of(self, path: str, calls: list[tuple[int, str, int]]) -> np.ndarray:
        """A file's calls as the rows ``add`` writes (in any process)."""
        i, number = self._number[path], self._number
        return np.array([(i, s, number[t], n) for s, t, n in calls], np.int64).reshape(-1, 4)

    def extend(self, rows: np.ndarray, counts: list[int]) -> None:
        """The next files' rows (``rows_of``), ``counts[k]`` of them the k-th file's."""
        self._writer().write(rows)
        for count in counts:
            self._ends.append(self._ends[-1] + count)

    def finish(self) -> None:
        """Every file's calls written, with their bounds; ``map_back`` then reads them."""
        self._writer().close()
        write_array(self._path.with_name("calls_off.npy"), np.array(self._ends, np.int64))

    def map_back(self) -> None:
        """The calls ``finish`` wrote (in this process or another), mapped read-only."""
        self.rows, self.offsets = (
            mapped(self._path, writeable=False),
            mapped(self._path.with_name("calls_off.npy"), writeable=False),
        )

    def written_in(self, directory: Path, paths: list[str]) -> bool:
        """Whether ``directory``'s files hold these calls of ``paths``, as they are."""
        return (
            self.unchanged
            and list(self) == self.paths == paths
            and is_file(self.rows, directory / "calls.npy")
            and is_file(self.offsets, directory / "calls_off.npy")
        )


# the ranges of fragment ids whose node rows are grouped one after another
_GROUPED_PARTS = 16

# graph nodes renumbered at a time (``canonical_radius``)
_NODES_AT_ONCE = 1 << 16


@dataclass(eq=False)
class IndexTables:
    """The arrays and maps of one repository's index, as saved and loaded."""

    config: IndexConfig
    files: dict[str, FileEntry] = field(default_factory=dict)
    # a saved index makes a file's parse and calls when they are first used
    parsed: MutableMapping[str, ParsedFile] = field(default_factory=LazyDict)
    calls: LazyDict[str, list[tuple[int, str, int]]] = field(default_factory=LazyDict)
    skipped: dict[str, int] = field(default_factory=dict)
    # what name resolution read outside the indexed files when the index was built
    # (``repomem.index.langs.read_settings``: tsconfig.json paths), by language family
    settings: dict[str, object] = field(default_factory=dict)
    # fragments, by id; a freed id has empty text and no locations
    frag_text: Texts = field(default_factory=Texts)
    frag_locs: Locations = field(default_factory=Locations)
    # text -> live fragment id, over ``frag_text``; made from ``frag_order`` (a saved index's
    # fragment keys, sorted, and their ids)
    by_text: TextIds = field(init=False)
    frag_order: InitVar[tuple[np.ndarray, np.ndarray] | None] = None
    free_ids: list[int] = field(default_factory=list)
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # content hash per fragment id: stable tie-breaks
    frag_key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    bm25: BM25Index = field(default_factory=BM25Index)
    # relations: padded rows of (fragment id, strength), -1 = empty slot, ids as int32
    # (``RELATION_ID``: half the kernel's 2.7M rows' 0.7 GB of ids); the arrays hold
    # spare rows, so that new fragments do not copy them whole (``build.grow_relations``);
    # the first ``relation_rows`` are the fragments' (``rel_idx``, ``rel_val``)
    relation_idx: np.ndarray = field(default_factory=lambda: np.full((0, 0), -1, RELATION_ID))
    relation_val: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    relation_rows: int = 0
    # per fragment: the fragments relating to it, when saved with the relations
    inverse: RowPool | None = None
    # per fragment id, whether a cap truncated its relation row (most of them do: as a set
    # of ids, the whole kernel's 2.5M took ~0.2 GB through a build's relations and save,
    # and again in every process that loaded it); as long as ``live`` (``new_fragments``)
    truncated: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per graph node: up to what cost its relation search is complete (inf: unknown)
    radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # a saved index's graph and node rows (``graph``, ``frag_nodes``, ``node_frags``),
    # opened on first use
    saved_graph: Callable[[], tuple[CodeGraph, RowPool, RowPool]] | None = None
    # a saved index's calls of its ``i``-th file as ``call_rows`` gives them, read in place
    saved_call_rows: Callable[[int], tuple[Sequence[str], np.ndarray]] | None = None
    # a saved index's ``calls_into``, made from its arrays on first use
    saved_calls_into: Callable[[], dict[str, dict[str, np.ndarray]]] | None = None
    # what each file's call resolution depended on, as a saved index holds it
    saved_dependencies: SavedDependencies | None = None
    # the files a saved index's arrays are mapped from (``trim.release_mapped``)
    mappings: list[mmap.mmap] = field(default_factory=list)
    # a build's resolution arrays (``adopt``)
    spooled_resolution: dict[str, np.ndarray] | None = None
    # derived on first use (``graph``, ``frag_nodes``, ``node_frags``, ``calls_into``,
    # ``resolver``, ``relations``); a build sets some of them as it goes
    _graph: CodeGraph | None = field(default=None, init=False, repr=False)
    _frag_nodes: RowPool | None = field(default=None, init=False, repr=False)
    _node_frags: RowPool | None = field(default=None, init=False, repr=False)
    _calls_into: dict[str, dict[str, np.ndarray]] | None = field(
        default=None, init=False, repr=False
    )
    _resolver: Resolver | None = field(default=None, init=False, repr=False)
    _relations_csr: sp.csr_matrix | None = field(default=None, init=False, repr=False)

    def __post_init__(self, frag_order: tuple[np.ndarray, np.ndarray] | None) -> None:
        self.by_text = TextIds(self.frag_text, *(frag_order or ()))
        cap = self.config.fragment_neighbours
        if not self.relation_idx.size:
            self.relation_idx = np.full((0, cap), -1, RELATION_ID)
            self.relation_val = np.zeros((0, cap), np.float64)

    def adopt(
        self,
        graph: CodeGraph,
        resolution: dict[str, np.ndarray],
        parse: Callable[[int], ParsedFile],
        frag_nodes: RowPool,
    ) -> None:
        """Keep the graph a build made, the fragments' node rows it made from the graph's
        ``NodeLayout``, and what its call resolution depended on as the
        arrays a save writes (``resolution``, spooled where the build is saved): the
        resolver is made from them when first used, as after a load, rather than kept with
        every file's tables (the kernel subset's 0.3 GB) through the rest of the build.
        ``parse(i)``: the parse of the i-th file by path as the build made it (an update
        replaces ``parsed``'s)."""
        self._graph = graph
        self._frag_nodes, self._node_frags = frag_nodes, None
        self.spooled_resolution = resolution
        paths = sorted(self.files)
        self.saved_dependencies = saved_dependencies(
            paths, [self.files[p].language for p in paths], parse, resolution
        )

    @property
    def resolution_saved(self) -> bool:
        """Whether ``spooled_resolution`` is what the resolver would save: none was made
        since."""
        return self._resolver is None and self.spooled_resolution is not None

    def drop_node_rows(self) -> None:
        """Forget the fragments' node rows: only a build's relations read them, and an
        update derives them again, as after a load."""
        self._frag_nodes = self._node_frags = None

    def row_maps(self) -> list[mmap.mmap]:
        """The maps under the row arrays of the pools made so far (the graph's, the node
        rows both ways, the relations by target), which updates write as rows change, and
        under the per-node arrays grown past the saved ones (the graph's keys, the radii)."""
        pools = (self.inverse, self._graph.adj if self._graph else None)
        pools += (self._frag_nodes, self._node_frags)
        maps = [m for p in pools if p is not None and (m := p.row_map()) is not None]
        saved = {id(m) for m in self.mappings}
        grown = (self._graph.key if self._graph else None, self.radius)
        maps += [
            m
            for a in grown
            if a is not None and (m := map_under(a)) is not None and id(m) not in saved
        ]
        return maps

    def drop_unread(self) -> None:
        """Drop the saved parses, calls and resolver tables made and not read since the last
        call (``LazyDict.drop_unread``): what an editing session keeps of the files it
        reached is what it used lately, not every file it ever read."""
        for table in (self.parsed, self.calls):
            if isinstance(table, LazyDict):
                table.drop_unread()
        if self._resolver is not None:
            self._resolver.drop_unread()

    def relations_changed(self) -> None:
        """Relation rows were rewritten: ``relations`` is made again when next read."""
        self._relations_csr = None

    def frag_entries(
        self, paths: list[str], nodes: CodeGraph | NodeLayout | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fragment, node, weight) of the windows of ``paths``; ``nodes``: the graph's
        numbering, ``graph``'s if not given."""
        graph = nodes or self.graph
        parts = [
            (
                self.files[p].wn_frag,
                self.files[p].wn_node + graph.stmt_offset[p],
                self.files[p].wn_weight,
            )
            for p in paths
        ]
        empty = np.empty(0, np.int64)
        return (
            np.concatenate([empty, *(f for f, _, _ in parts)]),
            np.concatenate([empty, *(n for _, n, _ in parts)]),
            np.concatenate([np.empty(0), *(w for _, _, w in parts)]),
        )

    def grouped(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        by_key: bool,
        nodes: CodeGraph | NodeLayout | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Entries summed per (row, col), grouped by row; within a row by column id, or by
        the graph's node key (fragment rows: Eq. 8 sums then run in the same order however
        node ids were allocated); ``nodes`` as in ``frag_entries``."""
        graph = nodes or self.graph
        span = np.int64(max(graph.n_nodes, len(self.frag_text), 1))
        pair, inverse = np.unique(rows * span + cols, return_inverse=True)
        vals = np.bincount(inverse, weights=vals, minlength=pair.size)
        rows, cols = pair // span, pair % span
        if by_key:
            order = np.lexsort((graph.key[cols], rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
        return rows, cols, vals

    def assemble_frag_nodes(self, nodes: NodeLayout | None = None) -> RowPool:
        """Fragments x graph nodes, Eq. 8 weights summed over a fragment's locations
        (``nodes``: the graph's numbering before the graph is made, as a build has it while
        its calls resolve; ``graph``'s otherwise). Grouped
        a range of fragment ids at a time, from the files holding some of them (each entry
        in its order, so that every sum adds the same weights in the same order), and
        written into the rows' arrays as each range is done: all entries gathered at once,
        then the ranges' rows joined and copied into the pool, took the whole kernel's
        graph stage several copies of every entry."""
        paths = [p for p in self.files if self.files[p].wn_frag.size]
        lows = np.array([self.files[p].wn_frag.min() for p in paths], np.int64)
        highs = np.array([self.files[p].wn_frag.max() for p in paths], np.int64)
        bound = sum(self.files[p].wn_frag.size for p in paths)  # entries, before summing
        # untouched pages cost nothing: only the entries written become resident
        cols = fresh_zeros(with_room(bound), np.int64)
        vals = fresh_zeros(cols.size, np.float64)
        n = len(self.frag_text)
        counts = np.zeros(n, np.int64)
        used = 0
        step = max(1, -(-n // _GROUPED_PARTS))
        for lo in range(0, n, step):
            hi = lo + step
            mine = [paths[i] for i in np.flatnonzero((lows < hi) & (highs >= lo))]
            frags, ids, weights = self.frag_entries(mine, nodes)
            sel = np.flatnonzero((frags >= lo) & (frags < hi))
            rows, c, v = self.grouped(frags[sel], ids[sel], weights[sel], True, nodes)
            del frags, ids, weights, sel
            cols[used : used + c.size], vals[used : used + c.size] = c, v
            counts[lo:hi] = np.bincount(rows - lo, minlength=min(step, n - lo))
            used += c.size
        room = with_room(used)
        return RowPool.adopt(np.r_[0, np.cumsum(counts)], cols[:room], vals[:room])

    @property
    def rel_idx(self) -> np.ndarray:
        return self.relation_idx[: self.relation_rows]

    @property
    def rel_val(self) -> np.ndarray:
        return self.relation_val[: self.relation_rows]

    @property
    def graph(self) -> CodeGraph:
        if self._graph is None and self.saved_graph is not None:
            self._graph, self._frag_nodes, self._node_frags = self.saved_graph()
            self.saved_graph = None
        elif self._graph is None:
            self._graph = build_graph(self.parsed, self.calls, self.config.import_weight)
        return self._graph

    @property
    def calls_into(self) -> dict[str, dict[str, np.ndarray]]:
        """``calls`` by target: per file, each calling file's (source node, target node) pairs
        as an (n, 2) array. A change re-links the untouched callers of a file from here,
        without scanning every call of every file that reads it (a module read by hundreds
        of files, called 66k times in the standard library's ``unittest``)."""
        if self._calls_into is None and self.saved_calls_into is not None:
            self._calls_into, self.saved_calls_into = self.saved_calls_into(), None
        elif self._calls_into is None:
            self._calls_into = defaultdict(dict)
            for path, entries in self.calls.items():
                self._link_calls(path, entries)
        return self._calls_into

    def _link_calls(self, path: str, entries: list[tuple[int, str, int]]) -> None:
        assert self._calls_into is not None
        by_target: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for src, target, node in entries:
            by_target[target].append((src, node))
        for target, pairs in by_target.items():
            self._calls_into[target][path] = np.array(pairs, np.int64)

    def call_rows(self, path: str) -> tuple[Sequence[str], np.ndarray]:
        """``calls[path]`` as (target paths, rows of (source node, target path's number
        there, target node)): a saved file's read from the saved arrays without making its
        list (a test file's thousands of tuples, for counts a cursor's cards want)."""
        calls = self.calls
        if isinstance(calls, LazyDict) and self.saved_call_rows is not None:
            i = calls.saved_position(path)
            if i is not None:
                return self.saved_call_rows(i)
        return _call_rows(calls.get(path, ()), np.int64)

    def set_calls(self, path: str, entries: list[tuple[int, str, int]] | None) -> None:
        """Replace one file's resolved calls (``None``: the file is gone), by target too."""
        into = self.calls_into
        for target in {t for _, t, _ in self.calls.get(path, ())}:
            into[target].pop(path, None)
        if entries is None:
            self.calls.pop(path, None)
        else:
            self.calls[path] = entries
            self._link_calls(path, entries)

    def follow_moved(self, caller: str, path: str, moved: dict[int, int]) -> None:
        """``caller``'s calls into ``path`` follow the definitions that moved there (old node
        -> new); its calls into other files stay, and so do their arrays in ``calls_into``
        (linked again, an edit of a Linux header that every file includes made ~27k arrays
        for the rest of the session). The calls are read without being kept and set packed
        (``LazyDict.set_packed``): an edit follows hundreds of callers at once."""
        held = self.calls.peek(caller)
        assert held is not None
        entries = sorted((s, f, moved.get(n, n) if f == path else n) for s, f, n in held)
        self.calls.set_packed(caller, entries)
        pairs = [(s, n) for s, f, n in entries if f == path]
        self.calls_into[path][caller] = np.array(pairs, np.int64)

    @property
    def frag_nodes(self) -> RowPool:
        if self._frag_nodes is None and self.saved_graph is not None:
            _ = self.graph  # a saved index's graph comes with its node rows
        if self._frag_nodes is None:
            self._frag_nodes = self.assemble_frag_nodes()
            self._node_frags = None
        return self._frag_nodes

    @property
    def node_frags(self) -> RowPool:
        """``frag_nodes`` transposed: the fragments holding each graph node."""
        frag_nodes = self.frag_nodes
        if self._node_frags is None:
            self._node_frags = frag_nodes.transposed(self.graph.n_nodes)
        return self._node_frags

    def spool_node_frags(self, spool: Path) -> list[mmap.mmap]:
        """``node_frags`` made through files in ``spool`` (``RowPool.transposed``), as a
        build's relations read them; returns the maps they are read through."""
        pool = self._node_frags = self.frag_nodes.transposed(self.graph.n_nodes, spool)
        return pool.file_maps()

    @property
    def resolver(self) -> Resolver:
        """Call resolution tables; resolving every file once records what each depends on."""
        if self._resolver is None:
            with paused_gc(freeze=True):
                self._resolver = Resolver(
                    self.parsed,
                    imports=self.config.import_weight > 0,
                    settings=self.settings,
                    saved=self.saved_dependencies,
                )
                if self.saved_dependencies is None:
                    for path in self.parsed:
                        self._resolver.calls_of(path)
            self.saved_dependencies = None
        return self._resolver

    @property
    def relations(self) -> sp.csr_matrix:
        """Fragment relations as CSR (rows: fragment ids), built once per change."""
        if self._relations_csr is None:
            n, cap = self.rel_idx.shape
            mask = self.rel_idx >= 0
            counts = mask.sum(axis=1)
            indptr = np.zeros(n + 1, np.int64)
            np.cumsum(counts, out=indptr[1:])
            self._relations_csr = sp.csr_matrix(
                (self.rel_val[mask], self.rel_idx[mask], indptr), shape=(n, n)
            )
        return self._relations_csr

    @property
    def inverse_relations(self) -> RowPool:
        """Per fragment, the fragments relating to it: what lets retrieval compute Eq. 9 for
        the few fragments that can rank. Built once, then kept in step by updates."""
        if self.inverse is None:
            n = len(self.frag_text)
            ptr, parts = relations_by_target(self.rel_idx, n, entries=None)
            sources = next(parts, np.empty(0, np.int32))  # one part, none without fragments
            self.inverse = RowPool.from_indptr(ptr, sources, np.zeros(sources.size))
        self.inverse.grow(len(self.frag_text))
        return self.inverse

    def relations_by_target(self) -> tuple[np.ndarray, Iterator[np.ndarray]]:
        """``inverse_relations`` as CSR: pointers, and the sources a range of rows at a time.
        Before any query has built them (a build being saved), they are derived from the
        relation rows a part at a time (``relations.relations_by_target``), not kept as a
        pool, which would hold twice their size until the first query."""
        if self.inverse is None:
            return relations_by_target(self.rel_idx, len(self.frag_text))
        pool = self.inverse_relations
        ptr, sources, _ = pool.gather(np.arange(pool.n_rows))
        return ptr, iter([sources])

    def live_ids(self) -> np.ndarray:
        return np.flatnonzero(self.live).astype(np.int64)

    def canonical_radius(self) -> np.ndarray:
        """Search radii numbered as a rebuild numbers the nodes (what a saved index holds)."""
        if self._graph is None:
            return self.radius
        ids, n = self._graph.canonical_ids()
        out = np.full(n, np.inf)
        # a block of nodes at a time: all at once, the temporaries took the whole Linux
        # kernel's save ~0.3 GB
        for lo in range(0, ids.size, _NODES_AT_ONCE):
            part = ids[lo : lo + _NODES_AT_ONCE]
            held = part >= 0
            out[part[held]] = self.radius[lo : lo + part.size][held]
        return out
