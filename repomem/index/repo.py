"""The repository index: files -> parsed code -> graph -> fragments -> relations + BM25.

``RepoIndex.build`` indexes a repository (re-parsing only files whose content changed since
the last index), ``update_file`` applies one file's new text exactly as a rebuild would, and
``retrieve`` ranks fragments by FragRel's relation-aware score.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing as mp
import os
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, MutableMapping
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from repomem.config import IndexConfig
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.index import langs
from repomem.index.bm25 import BM25Index, TermCounts, count_terms, tokenize
from repomem.index.files import FileSkipped, SourceFile, load_file, scan_files
from repomem.index.fragments import Window, shown_span, window_nodes, windows
from repomem.index.gcpause import paused_gc
from repomem.index.graph import CodeGraph, RowChange, build_graph, multiset_hash
from repomem.index.languages import code_language
from repomem.index.mapped import (
    LazyDict,
    Locations,
    TextIds,
    Texts,
    text_key,
    window_locations,
)
from repomem.index.parsing import (
    ParsedFile,
    TreeCache,
    parse_source,
    split_lines,
    supported,
    warm_up,
)
from repomem.index.relations import compute_relations, node_ball
from repomem.index.resolve import Resolver, SavedDependencies, moved_definitions
from repomem.index.rowpool import RowPool
from repomem.index.scorer import bounded_top_k, inverse_relations
from repomem.index.spool import spooled

Progress = Callable[[str, int, int], None]


@dataclass
class IndexSummary:
    files_by_language: dict[str, int]
    skipped: dict[str, int]
    reparsed: int
    reused: int
    fragments: int
    nodes: dict[str, int]
    edges: dict[str, int]
    relations: int
    truncated_fragments: int
    seconds: dict[str, float] = field(default_factory=dict)
    index_bytes: int = 0


@dataclass
class PreparedFile:
    """What one file contributes, computed independently of every other file."""

    parsed: ParsedFile
    windows: list[Window]
    wn_window: np.ndarray  # Eq. 8 weights: window index, local node, weight
    wn_node: np.ndarray
    wn_weight: np.ndarray
    # BM25 term counts of every window, when counted with the parse (see ``prepare_file``)
    terms: TermCounts | None


def prepare_file(
    f: SourceFile, config: IndexConfig, parsed: ParsedFile | None = None, *, terms: bool = True
) -> PreparedFile:
    """``terms``: count every window's terms now, as the parsing workers of a build do; an
    update leaves it to ``_add_file_fragments``, which counts only the windows it adds."""
    lines = split_lines(f.text)
    pf = parsed or parse_source(f.path, f.language, f.text, f.digest, lines)
    wins = windows(lines, config.window, config.stride)
    counts = count_terms(lines, [(w.start, w.end) for w in wins]) if terms else None
    return PreparedFile(pf, wins, *window_nodes(pf, wins), counts)


def _prepare_job(args: tuple[SourceFile, IndexConfig]) -> PreparedFile:
    return prepare_file(*args)


def _prepare_all(
    files: list[SourceFile],
    parsed: dict[str, ParsedFile],
    config: IndexConfig,
    progress: Progress | None,
) -> Iterator[tuple[SourceFile, PreparedFile]]:
    """Parse and window every file, yielded in the order of ``files`` as soon as it is ready,
    so that the caller keeps only what it needs of each (a build's peak then does not grow
    with every window of the repository); new parses run in worker processes on a large repo."""
    todo = [f for f in files if f.path not in parsed]
    workers = min(os.cpu_count() or 1, 4)
    # Fork only a single-threaded process: forking one that runs threads (a language server)
    # can copy a held lock into the child and hang it. Other start methods re-run the caller's
    # main module, which a script without a main guard cannot survive.
    forkable = "fork" in mp.get_all_start_methods() and threading.active_count() == 1
    if len(todo) < 64 or workers < 2 or not forkable:
        results = iter(map(_prepare_job, ((f, config) for f in todo)))
        pool = None
    else:
        warm_up({f.language for f in todo})  # once here, not once per worker
        pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))
        results = iter(pool.map(_prepare_job, ((f, config) for f in todo), chunksize=8))
    try:
        for done, f in enumerate(files, 1):
            if f.path in parsed:
                yield f, prepare_file(f, config, parsed[f.path])
            else:
                yield f, next(results)
            if progress:
                progress("parse", done, len(files))
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


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

    @property
    def text(self) -> str:
        """Read from a saved index anew each time: its files stay out of memory."""
        content = self.content
        return content if isinstance(content, str) else content[0][content[1]]


class RepoIndex:
    """In-memory index of one repository; see ``repomem.index.store`` for persistence."""

    def __init__(self, root: Path, config: IndexConfig) -> None:
        self.root = root
        self.config = config
        self.files: dict[str, FileEntry] = {}
        # a saved index makes a file's parse and calls when they are first used
        self.parsed: MutableMapping[str, ParsedFile] = LazyDict()
        self.calls: MutableMapping[str, list[tuple[int, str, int]]] = LazyDict()
        self.skipped: dict[str, int] = {}
        # fragments, by id; a freed id has empty text and no locations
        self.frag_text = Texts()
        self.frag_locs = Locations()
        self.by_text = TextIds(self.frag_text)
        self.free_ids: list[int] = []
        self.live = np.zeros(0, bool)
        self.frag_key = np.zeros(0, np.int64)  # content hash per fragment id: stable tie-breaks
        self.bm25 = BM25Index()
        # relations: padded rows of (fragment id, strength), -1 = empty slot; the arrays hold
        # spare rows, so that new fragments do not copy them whole (``_grow_relations``)
        self._rel_idx = np.full((0, config.fragment_neighbours), -1, np.int64)
        self._rel_val = np.zeros((0, config.fragment_neighbours), np.float64)
        self._rel_rows = 0
        self.truncated: set[int] = set()
        # per graph node: up to what cost its relation search is complete (inf: unknown)
        self.radius = np.zeros(0)
        self._relations_csr: sp.csr_matrix | None = None
        self._inverse: RowPool | None = None  # per fragment: the fragments relating to it
        self._graph: CodeGraph | None = None
        # a saved index's graph and node rows (``graph``, ``frag_nodes``, ``node_frags``),
        # opened on first use
        self.saved_graph: Callable[[], tuple[CodeGraph, RowPool, RowPool]] | None = None
        self._calls_into: dict[str, dict[str, np.ndarray]] | None = None
        # a saved index's ``calls_into``, made from its arrays on first use
        self.saved_calls_into: Callable[[], dict[str, dict[str, np.ndarray]]] | None = None
        # bumped by every change a file's update makes: what is derived from the whole
        # index (a class card's most-called methods) is cached against it
        self.revision = 0
        self._last_scores: tuple[tuple[str, int, int], np.ndarray] | None = None
        self._trees = TreeCache()  # the files updated last, for incremental parsing
        self._frag_nodes: RowPool | None = None  # per fragment: its nodes, Eq. 8 weights
        self._node_frags: RowPool | None = None  # per node: the fragments holding it
        self._resolver: Resolver | None = None
        # what name resolution read outside the indexed files when the index was built
        # (``repomem.index.langs.read_settings``: tsconfig.json paths), by language family
        self.settings: dict[str, object] = {}
        self._line_cache: dict[str, tuple[FileEntry, list[str]]] = {}
        # what each file's call resolution depended on, as a saved index holds it
        self.saved_dependencies: SavedDependencies | None = None

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        root: Path,
        config: IndexConfig | None = None,
        *,
        progress: Progress | None = None,
        save: bool = True,
    ) -> tuple[RepoIndex, IndexSummary]:
        """Index ``root`` and (by default) persist it atomically.

        Files whose content is unchanged since the saved index are not parsed again.
        """
        from repomem.index import store

        config = config or IndexConfig()
        previous = None
        with paused_gc(freeze=True):
            with contextlib.suppress(store.IndexNotFound, store.IndexUnreadable):
                manifest = store.read_manifest(root, config)
                if store.config_from(manifest["config"]) == config:
                    previous = store.load(root, config)
            if save:
                # the texts go straight to the new generation, which goes live once complete
                with store.writing(root, config) as out:
                    idx, summary = cls._build(root, config, previous, progress, out / "arrays")
                    store.write_generation(idx, out, asdict(summary))
                summary.index_bytes = store.index_bytes(root, config)
            else:
                # mapped back, the spooled texts outlive their files
                with tempfile.TemporaryDirectory(prefix="repomem-") as spool:
                    idx, summary = cls._build(root, config, previous, progress, Path(spool))
        return idx, summary

    @classmethod
    def load(cls, root: Path, config: IndexConfig | None = None) -> RepoIndex:
        """The saved index of ``root`` (``RepomemError`` if there is none or it is unreadable)."""
        from repomem.index import store

        return store.load(root, config)

    def save(self) -> None:
        from repomem.index import store

        store.save(self)

    @classmethod
    def _build(
        cls,
        root: Path,
        config: IndexConfig,
        previous: RepoIndex | None,
        progress: Progress | None,
        spool: Path,
    ) -> tuple[RepoIndex, IndexSummary]:
        """``spool``: the folder that the files' and fragments' texts are written to as they
        are read, then mapped back from (a build's peak memory does not hold them)."""
        t0 = time.perf_counter()
        scan = scan_files(root, config, (lambda d, t: progress("scan", d, t)) if progress else None)
        t_scan = time.perf_counter()
        idx = cls(root, config)
        idx.skipped = dict(scan.skipped)
        by_lang = Counter(f.language for f in scan.files)
        code = [f for f in scan.files if supported(f.language)]
        del scan  # the texts of what is not indexed go now, the others once spooled
        reused_parses = {
            f.path: previous.parsed[f.path]
            for f in code
            if previous is not None
            and f.path in previous.parsed
            and previous.parsed[f.path].digest == f.digest
        }
        texts = Texts.spooled(spool, "texts")
        idx.frag_text = Texts.spooled(spool, "frag_text")
        idx.by_text = TextIds(idx.frag_text)
        for i, (f, prep) in enumerate(_prepare_all(code, reused_parses, config, progress)):
            idx.parsed[f.path] = prep.parsed
            texts.append(f.text)
            idx._add_file_fragments(f, prep, (texts, i), locate=False)  # its windows go
        del code  # and the texts, read once more from the spool's map when needed
        idx.frag_locs = idx._window_locations()
        texts.finish()
        idx.frag_text.finish()
        order = np.argsort(idx.frag_key[: len(idx.frag_text)], kind="stable")
        idx.by_text = TextIds(idx.frag_text, idx.frag_key[order], order)
        # now, while the relations' tables do not exist yet: compacting copies every posting;
        # then its arrays go where the store saves them, and are read from there
        state = spooled(spool, {f"bm25__{k}": v for k, v in idx.bm25.state().items()})
        idx.bm25 = BM25Index.from_state({k[6:]: v for k, v in state.items()}, trusted=True)
        del state
        t_parse = time.perf_counter()
        idx.settings = langs.read_settings(root, idx.parsed)
        idx._resolver = Resolver(
            idx.parsed,
            imports=config.import_weight > 0,
            settings=idx.settings,
        )
        idx.calls = {p: idx._resolver.calls_of(p) for p in idx.parsed}
        idx._graph = build_graph(idx.parsed, idx.calls, config.import_weight)
        idx._frag_nodes = idx._assemble_frag_nodes()
        idx.radius = np.full(idx._graph.n_nodes, np.inf)
        t_graph = time.perf_counter()
        live = idx.live_ids()
        idx._grow_relations()
        idx._recompute_relations(live, progress)
        # only the relations read them: an update derives them again, as after a load
        idx._frag_nodes = idx._node_frags = None
        t_rel = time.perf_counter()
        summary = IndexSummary(
            files_by_language=dict(sorted(by_lang.items())),
            skipped=idx.skipped,
            reparsed=len(idx.files) - len(reused_parses),
            reused=len(reused_parses),
            fragments=int(live.size),
            nodes=dict(idx._graph.node_counts),
            edges=dict(idx._graph.edge_counts),
            relations=int((idx.rel_idx >= 0).sum()),
            truncated_fragments=len(idx.truncated),
            seconds={
                "scan": t_scan - t0,
                "parse_and_fragments": t_parse - t_scan,
                "graph": t_graph - t_parse,
                "relations": t_rel - t_graph,
                "total": time.perf_counter() - t0,
            },
        )
        return idx, summary

    def _add_file_fragments(
        self,
        f: SourceFile,
        prep: PreparedFile,
        content: str | tuple[Texts, int] | None = None,
        *,
        locate: bool = True,
    ) -> None:
        """``content``: where the index keeps the file's text (``f.text`` itself if not said);
        ``locate=False``: the caller derives the fragments' locations once every file is in
        (``_window_locations``), as a build does: a list per fragment held the kernel's in
        objects several times the size of its windows' arrays."""
        win_frag = np.empty(len(prep.windows), np.int64)
        new_fids, new_windows = [], []
        for i, w in enumerate(prep.windows):
            fid = self.by_text.get(w.text)
            if fid is None:
                fid = self._new_fragment(w.text, locate)
                new_fids.append(fid)
                new_windows.append(i)
            if locate:
                self.frag_locs.add(fid, Location(f.path, w.start, w.end))
            win_frag[i] = fid
        if prep.terms is not None:
            self.bm25.add_counted(new_fids, prep.terms, np.array(new_windows, np.int64))
        elif new_windows:
            # the lines the new windows cover, each tokenized once though windows overlap
            added = [prep.windows[i] for i in new_windows]
            lo, hi = min(w.start for w in added), max(w.end for w in added)
            lines = split_lines(f.text)[lo:hi]
            counts = count_terms(lines, [(w.start - lo, w.end - lo) for w in added])
            self.bm25.add_counted(new_fids, counts, np.arange(len(added)))
        self.files[f.path] = FileEntry(
            language=f.language,
            digest=f.digest,
            content=f.text if content is None else content,
            win_start=np.array([w.start for w in prep.windows], np.int32),
            win_end=np.array([w.end for w in prep.windows], np.int32),
            win_frag=win_frag,
            wn_frag=win_frag[prep.wn_window],
            wn_node=prep.wn_node,
            wn_weight=prep.wn_weight,
        )

    def _new_fragment(self, text: str, locate: bool = True) -> int:
        """An id for a window text not indexed yet (its BM25 row is added by the caller)."""
        if self.free_ids:
            fid = self.free_ids.pop()
            self.frag_text[fid] = text
        else:
            fid = len(self.frag_text)
            self.frag_text.append(text)
            if locate:
                self.frag_locs.append([])
            if fid >= self.live.size:
                grow = max(1024, fid)
                self.live = np.concatenate([self.live, np.zeros(grow, bool)])
                self.frag_key = np.concatenate([self.frag_key, np.zeros(grow, np.int64)])
        self.live[fid] = True
        self.frag_key[fid] = text_key(text)
        self.by_text[text] = fid
        return fid

    def _window_locations(self) -> Locations:
        """Every fragment's locations, from the files' windows."""
        paths = list(self.files)
        entries = self.files.values()
        sizes = [e.win_frag.size for e in entries]
        win_file = np.repeat(np.arange(len(paths), dtype=np.int32), sizes)
        indptr, rows = window_locations(
            win_file,
            np.concatenate([np.empty(0, np.int32), *(e.win_start for e in entries)]),
            np.concatenate([np.empty(0, np.int32), *(e.win_end for e in entries)]),
            np.concatenate([np.empty(0, np.int64), *(e.win_frag for e in entries)]),
            len(self.frag_text),
        )
        return Locations(paths, indptr, rows)

    def _frag_entries(self, paths: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fragment, node, weight) of the windows of ``paths``."""
        graph = self.graph
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

    def _grouped(
        self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, by_key: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Entries summed per (row, col), grouped by row; within a row by column id, or by
        the graph's node key (fragment rows: Eq. 8 sums then run in the same order however
        node ids were allocated)."""
        span = np.int64(max(self.graph.n_nodes, len(self.frag_text), 1))
        pair, inverse = np.unique(rows * span + cols, return_inverse=True)
        vals = np.bincount(inverse, weights=vals, minlength=pair.size)
        rows, cols = pair // span, pair % span
        if by_key:
            order = np.lexsort((self.graph.key[cols], rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
        return rows, cols, vals

    def _assemble_frag_nodes(self) -> RowPool:
        """Fragments x graph nodes, Eq. 8 weights summed over a fragment's locations."""
        rows, cols, vals = self._grouped(*self._frag_entries(list(self.files)), by_key=True)
        return RowPool.from_sorted(rows, cols, vals, len(self.frag_text))

    @property
    def rel_idx(self) -> np.ndarray:
        return self._rel_idx[: self._rel_rows]

    @property
    def rel_val(self) -> np.ndarray:
        return self._rel_val[: self._rel_rows]

    def set_relations(
        self, rel_idx: np.ndarray, rel_val: np.ndarray, rows: int, inverse: RowPool | None = None
    ) -> None:
        """``rows`` of the padded arrays ``rel_idx``, ``rel_val`` hold fragments' relations;
        ``inverse``: the relations by target, when saved with them."""
        self._rel_idx, self._rel_val, self._rel_rows = rel_idx, rel_val, rows
        self._relations_csr, self._inverse = None, inverse

    def _grow_relations(self) -> None:
        """Rows for the new fragments. Room for an eighth more is made at once: copying the
        rows (43 MB for the standard library) took 9 ms of an update that added one."""
        n, have = len(self.frag_text), self._rel_idx.shape[0]
        if have < n:
            rows = max(n, have + max(1024, have // 8)) if have else n
            idx = np.full((rows, self.config.fragment_neighbours), -1, np.int64)
            val = np.zeros(idx.shape, np.float64)
            idx[:have], val[:have] = self._rel_idx, self._rel_val
            self._rel_idx, self._rel_val = idx, val
        self._rel_rows = max(self._rel_rows, n)

    def _recompute_relations(self, rows: np.ndarray, progress: Progress | None = None) -> None:
        rows = np.asarray(rows, np.int64)
        chunk = 4096
        parts = [rows[start : start + chunk] for start in range(0, rows.size, chunk)]
        graph, frag_nodes, node_frags = self.graph, self.frag_nodes, self.node_frags
        frag_key = self.frag_key[: len(self.frag_text)]

        def relate(part: np.ndarray, threads: int | None) -> tuple[np.ndarray, ...]:
            return compute_relations(
                graph,
                frag_nodes,
                node_frags,
                frag_key,
                part,
                epsilon=self.config.relation_epsilon,
                node_cap=self.config.node_neighbours,
                frag_cap=self.config.fragment_neighbours,
                hub=self.config.hub_degree,
                n_threads=threads,
            )

        # Many chunks run side by side, one thread each: splitting every chunk between the
        # threads would leave one waiting for the other's slower half (docs/MEASUREMENTS.md).
        workers = min(len(parts), os.cpu_count() or 1)
        with ThreadPoolExecutor(max(workers, 1)) as pool:
            results = (
                pool.map(lambda part: relate(part, 1), parts)
                if workers > 1
                else (relate(part, None) for part in parts)
            )
            done = 0
            for part, (idx, val, capped, nodes, radius) in zip(parts, results, strict=True):
                self._write_relations(part, idx, val)
                self.radius[nodes] = radius
                self.truncated.difference_update(part.tolist())
                self.truncated.update(part[capped].tolist())
                done += part.size
                if progress:
                    progress("relations", done, rows.size)
        self._relations_csr = None

    def _write_relations(self, rows: np.ndarray, idx: np.ndarray, val: np.ndarray) -> None:
        """Set relation rows, keeping the relations by target in step once they are built:
        rebuilding them whole would cost the first retrieval after each edit 0.2 s on the
        Linux kernel's 9M relations. Only the (target, source) pairs that appear or vanish
        are edited: most recomputed rows come out as they were."""
        pool, old = self._inverse, self.rel_idx[rows]
        self.rel_idx[rows], self.rel_val[rows] = idx, val
        if pool is None:
            return
        new = self.rel_idx[rows]
        pool.grow(len(self.frag_text))
        span = np.int64(max(len(self.frag_text), 1))
        source = np.broadcast_to(rows[:, None], new.shape)
        before = np.unique(old[old >= 0] * span + source[old >= 0])
        after = np.unique(new[new >= 0] * span + source[new >= 0])
        gone = np.setdiff1d(before, after, assume_unique=True)
        added = np.setdiff1d(after, before, assume_unique=True)
        pool.edit((gone // span, gone % span), (added // span, added % span))

    # ------------------------------------------------------------------ lazily derived state
    def warm(self) -> None:
        """Derive now what an opened index builds on first use (the resolver from every
        file's definitions and imports, the graph, node rows and calls by target from their
        saved arrays, relations by target): a long-lived process does it before serving, so
        that neither its first edit nor its first definition cards pay for it; a one-shot
        command leaves it to first use."""
        _ = (self.graph, self.resolver, self.node_frags, self.calls_into, self.inverse_relations)

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

    def _set_calls(self, path: str, entries: list[tuple[int, str, int]] | None) -> None:
        into = self.calls_into
        for target in {t for _, t, _ in self.calls.get(path, ())}:
            into[target].pop(path, None)
        if entries is None:
            self.calls.pop(path, None)
        else:
            self.calls[path] = entries
            self._link_calls(path, entries)

    @property
    def frag_nodes(self) -> RowPool:
        if self._frag_nodes is None and self.saved_graph is not None:
            _ = self.graph  # a saved index's graph comes with its node rows
        if self._frag_nodes is None:
            self._frag_nodes = self._assemble_frag_nodes()
            self._node_frags = None
        return self._frag_nodes

    @property
    def node_frags(self) -> RowPool:
        """``frag_nodes`` transposed: the fragments holding each graph node."""
        frag_nodes = self.frag_nodes
        if self._node_frags is None:
            self._node_frags = RowPool.from_csr(frag_nodes.to_csr(self.graph.n_nodes).T.tocsr())
        return self._node_frags

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
        if self._inverse is None:
            ptr, sources = inverse_relations(self.rel_idx, len(self.frag_text))
            self._inverse = RowPool.from_indptr(ptr, sources, np.zeros(sources.size))
        self._inverse.grow(len(self.frag_text))
        return self._inverse

    def relations_by_target(self) -> tuple[np.ndarray, np.ndarray]:
        """``inverse_relations`` as CSR (pointers, sources). Before any query has built them
        (a build being saved), they are derived without keeping a pool, which would hold
        twice their size until the first query."""
        if self._inverse is None:
            return inverse_relations(self.rel_idx, len(self.frag_text))
        pool = self.inverse_relations
        ptr, sources, _ = pool.gather(np.arange(pool.n_rows))
        return ptr, sources

    def tidy(self) -> None:
        """Reorganise what updates left behind, at a moment nothing waits for the index (an
        editor's pause): BM25 compacts its delta here, long before an update or a query
        would have to."""
        self.bm25.tidy()

    def live_ids(self) -> np.ndarray:
        return np.flatnonzero(self.live).astype(np.int64)

    # ------------------------------------------------------------------ incremental update
    def update_file(self, path: str, text: str | None) -> None:
        """Apply one file's new content (``None``: the file is gone), exactly as a full
        rebuild over the new set of files would.

        Only relations that can change are recomputed: a fragment's when one of its nodes'
        searches reached, before or after the change, a changed node or call edge (a node
        ``u`` can be affected only if the change lies within the radius its capped search
        settled, ``relations._search``).
        """
        language = code_language(path, text) if text is not None else None
        new_pf = None
        if text is not None and language is not None and supported(language):
            digest = _digest(text)
            old = self.parsed.get(path)
            if old is not None and old.digest == digest:
                return
            previous = (self.files[path].text, old) if old is not None else None
            new_pf = parse_source(
                path, language, text, digest, trees=self._trees, previous=previous
            )
        else:
            self._trees.forget(path)
            if path not in self.parsed:
                return

        self.revision += 1
        graph, resolver = self.graph, self.resolver
        node_frags = self.node_frags
        old_pf = self.parsed.get(path)
        touched = {path} | resolver.dependents(path, (old_pf, new_pf))
        moved = moved_definitions(old_pf, new_pf)
        incoming = self.calls_into.get(path, {})
        old_calls = {p: set(self.calls.get(p, ())) for p in touched}
        if new_pf is None:
            self.parsed.pop(path, None)
        else:
            self.parsed[path] = new_pf
        resolver.update(path, new_pf)
        new_calls = {p: set(resolver.calls_of(p)) for p in touched if p in self.parsed}
        old_nodes = graph.file_nodes(path)
        held_before = node_frags.gather(old_nodes)
        old_frag_sig = multiset_hash(*held_before)
        change = graph.replace_file(
            path,
            new_pf,
            old_calls,
            new_calls,
            self.calls,
            self.parsed,
            incoming=incoming,
            moved=moved,
        )
        self._grow_node_arrays()

        old_frags = self._file_frags(path)
        freed = self._replace_file_fragments(path, new_pf, text)
        new_nodes = graph.file_nodes(path)
        self._update_fragment_nodes(
            np.union1d(old_frags, self._file_frags(path)), np.union1d(old_nodes, new_nodes)
        )
        plan = _UpdatePlan(change, old_nodes, old_frag_sig, new_nodes, self, self.config.hub_degree)
        # what the old graph reached; the file's old nodes held the fragments they held then
        affected0 = self._fragments_near(plan.seeds_before, (old_nodes, *held_before[:2]))
        graph.apply(change)
        for p in touched:
            self._set_calls(p, sorted(new_calls[p]) if p in self.parsed else None)
        # the calls of files not resolved again follow the definitions that moved
        moved_nodes = np.fromiter(moved, np.int64, len(moved))
        follow = [
            p
            for p, pairs in incoming.items()
            if moved and p not in touched and np.isin(pairs[:, 1], moved_nodes).any()
        ]
        for p in follow:
            self._set_calls(
                p, sorted((s, t, moved.get(n, n) if t == path else n) for s, t, n in self.calls[p])
            )
        self.radius[new_nodes] = plan.carried_radius(self.radius)
        affected1 = self._fragments_near(plan.seeds_after)
        self._grow_relations()
        if freed:
            gone = np.array(freed, np.int64)
            self._write_relations(gone, np.full(self.rel_idx[gone].shape, -1), 0.0)
            self.truncated.difference_update(freed)
        new_frags = np.setdiff1d(self._file_frags(path), old_frags)
        rows = np.union1d(np.union1d(affected0, affected1), node_frags.gather(plan.hubs)[1])
        rows = np.union1d(rows[self.live[rows]], new_frags)
        self._recompute_relations(rows)

    def _replace_file_fragments(
        self, path: str, pf: ParsedFile | None, text: str | None
    ) -> list[int]:
        """Moves the file to its new windows; a window whose text is unchanged keeps its
        fragment (and so its relations). Returns the fragments that no longer exist."""
        old = self.files.pop(path, None)
        old_frags = np.unique(old.win_frag).tolist() if old is not None else []
        for fid in old_frags:
            self.frag_locs[fid] = [loc for loc in self.frag_locs[fid] if loc.path != path]
        if pf is not None and text is not None:
            source = SourceFile(path, pf.language, text, pf.digest, len(text))
            prep = prepare_file(source, self.config, pf, terms=False)
            self._add_file_fragments(source, prep)
        freed = []
        for fid in old_frags:
            if not self.frag_locs[fid]:
                del self.by_text[self.frag_text[fid]]
                self.frag_text[fid] = ""
                self.bm25.remove(fid)
                self.free_ids.append(fid)
                self.live[fid] = False
                freed.append(fid)
        return freed

    def _file_frags(self, path: str) -> np.ndarray:
        entry = self.files.get(path)
        return np.unique(entry.win_frag) if entry is not None else np.empty(0, np.int64)

    def _grow_node_arrays(self) -> None:
        n = self.graph.n_nodes
        self.node_frags.grow(n)
        if self.radius.size < n:
            self.radius = np.concatenate([self.radius, np.full(n - self.radius.size, np.inf)])

    def _update_fragment_nodes(self, frags: np.ndarray, nodes: np.ndarray) -> None:
        """Refresh the rows one file's change touched: of its fragments, old and new (some
        shared with other files, whose nodes stay in them), and of its nodes, old and new."""
        frag_nodes, node_frags = self.frag_nodes, self.node_frags
        frag_nodes.grow(len(self.frag_text))
        live = frags[self.live[frags]]
        paths = sorted({loc.path for fid in live.tolist() for loc in self.frag_locs[fid]})
        f, n, w = self._frag_entries(paths)
        keep = np.isin(f, live)
        frag_nodes.set_rows(frags, *self._grouped(f[keep], n[keep], w[keep], by_key=True))
        mine = np.isin(n, nodes)
        node_frags.set_rows(nodes, *self._grouped(n[mine], f[mine], w[mine], by_key=False))

    def canonical_radius(self) -> np.ndarray:
        """Search radii numbered as a rebuild numbers the nodes (what a saved index holds)."""
        if self._graph is None:
            return self.radius
        ids, n = self._graph.canonical_ids()
        out = np.full(n, np.inf)
        held = ids >= 0
        out[ids[held]] = self.radius[: ids.size][held]
        return out

    def _fragments_near(
        self,
        seeds: tuple[np.ndarray, np.ndarray],
        held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """Fragments holding a node whose search radius reaches one of the seeds (nodes, and
        how far beyond each the change lies); ``held``: (nodes, indptr, fragments) of nodes
        whose fragments were different then."""
        seed_nodes, offsets = seeds
        ball, cost = node_ball(
            self.graph, seed_nodes, self.config.relation_epsilon, self.config.hub_degree, offsets
        )
        near = ball[cost <= self.radius[ball] * (1 + 1e-9) + 1e-12]
        _, frags, _ = self.node_frags.gather(near)
        if held is not None:
            nodes, indptr, held_frags = held
            hit = np.searchsorted(nodes, near[np.isin(near, nodes)])
            frags = np.concatenate(
                [frags, *(held_frags[indptr[i] : indptr[i + 1]] for i in hit.tolist())]
            )
        return np.unique(frags)

    # ------------------------------------------------------------------ retrieval
    def visible(self, exclusion: Exclusion | None) -> np.ndarray:
        vis = self.live[: len(self.frag_text)].copy()
        if exclusion is not None and exclusion.path in self.files:
            # only a fragment with a window here overlapping the lines can have all hidden
            e = self.files[exclusion.path]
            near = (e.win_end > exclusion.start) & (e.win_start < exclusion.end)
            for fid in np.unique(e.win_frag[near]).tolist():
                if exclusion.excludes(tuple(self.frag_locs[fid])):
                    vis[fid] = False
        return vis

    def retrieve(
        self,
        query: str,
        *,
        k: int = 10,
        alpha: float = 0.5,
        exclusion: Exclusion | None = None,
    ) -> list[RetrievedFragment]:
        """The top-k fragments for a query window by ``s_rel = s_ind + alpha * s_env``, as
        ``top_k`` ranks them over every fragment (``bounded_top_k`` scores only those that can
        rank). With ``alpha`` 0, BM25's own top k, which walks only the postings that can
        rank (Eq. 9 needs the scores of every candidate's relations, so FragRel scores all)."""
        vis = self.visible(exclusion)
        if alpha == 0.0:
            ids, s_rel = self.bm25.top_k(tokenize(query), k, vis)
            s_ind, s_env = s_rel, np.zeros(ids.size)
        else:
            s_ind = self.query_scores(query)
            env = self.visible(None) if exclusion is not None and exclusion.in_environment else None
            inverse = self.inverse_relations
            ids, s_env, s_rel = bounded_top_k(
                self.rel_idx,
                self.rel_val,
                (inverse.start, inverse.end, inverse.cols),
                s_ind,
                vis,
                alpha,
                k,
                environment=env,
            )
            s_ind = s_ind[ids]
        out = []
        for i, fid in enumerate(ids.tolist()):
            locs = tuple(sorted(self.frag_locs[fid], key=lambda loc: (loc.path, loc.start)))
            lines = self._lines(locs[0].path)
            first, last = shown_span(lines, locs[0].start, locs[0].end, self.config.stride)
            out.append(
                RetrievedFragment(
                    fragment_id=fid,
                    locations=locs,
                    text=self.frag_text[fid],
                    shown="\n".join(lines[first:last]),
                    s_ind=float(s_ind[i]),
                    s_env=float(s_env[i]),
                    s_rel=float(s_rel[i]),
                    shown_start=first,
                )
            )
        return out

    def query_scores(self, query: str) -> np.ndarray:
        """Every fragment's BM25 score for ``query``; the last query's are kept while the
        index is unchanged (a completion's retrieval and usages ask for the same one)."""
        key = (query, self.revision, len(self.frag_text))
        if self._last_scores is None or self._last_scores[0] != key:
            scores = _fit(self.bm25.scores(tokenize(query)), len(self.frag_text))
            scores.flags.writeable = False  # shared by the callers: none may change it
            self._last_scores = (key, scores)
        return self._last_scores[1]

    def fragment_scores(self, query: str, ids: np.ndarray) -> np.ndarray:
        """The BM25 scores of fragments ``ids`` for ``query``: ``query_scores(query)[ids]``,
        the same floats, from the kept scores if they are this query's, else from those
        fragments' rows alone (a plain retrieval scores no more than its top k)."""
        key = (query, self.revision, len(self.frag_text))
        if self._last_scores is not None and self._last_scores[0] == key:
            return self._last_scores[1][ids]
        return self.bm25.scores_of(tokenize(query), ids)

    def _lines(self, path: str) -> list[str]:
        """A file's lines, kept for the few files recent results came from."""
        entry = self.files[path]
        hit = self._line_cache.get(path)
        if hit is None or hit[0] is not entry:
            hit = (entry, split_lines(entry.text))
            self._line_cache[path] = hit
            while len(self._line_cache) > 64:
                del self._line_cache[next(iter(self._line_cache))]
        return hit[1]

    def file_lines(self, path: str) -> list[str]:
        """The lines of an indexed file as the index holds it now (do not modify)."""
        return self._lines(path)

    def file_text(self, path: str) -> str | None:
        entry = self.files.get(path)
        return entry.text if entry is not None else None

    def apply_buffer(self, path: str, text: str) -> None:
        """Show retrieval a file as the user has it now. Only files the index holds are
        updated: one it skipped (ignored, secret, unsupported) stays out of every prompt."""
        if path in self.files:
            self.update_file(path, text)

    def reload_file(self, path: str) -> None:
        """Re-read one file from disk (or drop it if it is gone or no longer indexable)."""
        try:
            f = load_file(self.root, path, self.config)
        except FileSkipped:
            self.update_file(path, None)
            return
        self.update_file(path, f.text)


def _fit(v: np.ndarray, n: int) -> np.ndarray:
    """``v`` cut or zero-padded to length ``n`` (BM25 ids and fragment ids share one space)."""
    if v.size == n:
        return v
    out = np.zeros(n, v.dtype)
    m = min(n, v.size)
    out[:m] = v[:m]
    return out


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class _UpdatePlan:
    """Which nodes a file's change can matter to, compared in node keys (ids may move).

    A node whose fragments or key changed matters to every search that settles it; one whose
    neighbours changed, to every search that passes through it, which for a hub (before and
    after) is only its own.
    """

    def __init__(
        self,
        change: RowChange,
        old_nodes: np.ndarray,
        old_frag_sig: np.ndarray,
        new_nodes: np.ndarray,
        index: RepoIndex,
        hub: int,
    ) -> None:
        rows = change.rows
        frag_before = np.zeros(rows.size, np.uint64)
        frag_before[np.searchsorted(rows, old_nodes)] = old_frag_sig
        frag_after = np.zeros(rows.size, np.uint64)
        frag_after[np.searchsorted(rows, new_nodes)] = multiset_hash(
            *index.node_frags.gather(new_nodes)
        )
        alive_before = change.degree_before > 0
        alive_after = change.degree_after > 0
        kb, ka = change.key_before, change.key_after
        # per key: the row before and after (-1: no such node then)
        keys = np.union1d(kb[alive_before], ka[alive_after])
        at_before = np.full(keys.size, -1)
        at_before[np.searchsorted(keys, kb[alive_before])] = np.flatnonzero(alive_before)
        at_after = np.full(keys.size, -1)
        at_after[np.searchsorted(keys, ka[alive_after])] = np.flatnonzero(alive_after)
        both = (at_before >= 0) & (at_after >= 0)
        b, a = at_before[both], at_after[both]
        settle = np.ones(keys.size, bool)
        settle[both] = frag_before[b] != frag_after[a]
        degree_before, degree_after = change.degree_before[b], change.degree_after[a]
        # per key: the cheapest entry (neighbour key, cost) on one side only; inf: none
        changed_keys, changed_cost = change.changed
        cheapest = np.full(keys.size, np.inf)
        if changed_keys.size:
            pos = np.minimum(np.searchsorted(changed_keys, keys), changed_keys.size - 1)
            hit = changed_keys[pos] == keys
            cheapest[hit] = changed_cost[pos[hit]]
        passing = np.ones(keys.size, bool)
        passing[both] = np.isfinite(cheapest[both])
        stays_hub = np.zeros(keys.size, bool)
        stays_hub[both] = (degree_before > hub) & (degree_after > hub)
        seed = settle | (passing & ~stays_hub)
        # A node whose fragments and key stay and which is no hub, before or after, matters
        # only to the searches that go on from it along an entry that changed: a search
        # feels the change no nearer than that entry's cost beyond the node.
        calm = np.zeros(keys.size, bool)
        calm[both] = ~settle[both] & (degree_before <= hub) & (degree_after <= hub)
        offset = np.where(calm & passing, cheapest, 0.0)
        then, now = seed & (at_before >= 0), seed & (at_after >= 0)
        self.seeds_before = (rows[at_before[then]], offset[then])
        self.seeds_after = (rows[at_after[now]], offset[now])
        self.hubs = rows[at_after[passing & stays_hub & ~settle]]
        # the file's nodes: where each one's radius was, by key
        self._from = np.full(new_nodes.size, -1)
        old_key = dict(
            zip(kb[np.searchsorted(rows, old_nodes)].tolist(), old_nodes.tolist(), strict=True)
        )
        for i, k in enumerate(change.key_after[np.searchsorted(rows, new_nodes)].tolist()):
            self._from[i] = old_key.get(k, -1)

    def carried_radius(self, radius: np.ndarray) -> np.ndarray:
        """The file's new nodes' radii: an unchanged node keeps its own, others are unknown."""
        return np.where(self._from >= 0, radius[np.maximum(self._from, 0)], np.inf)
