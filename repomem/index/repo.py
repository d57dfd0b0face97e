"""The repository index: a handle over its tables (``tables.IndexTables``).

``RepoIndex.build`` indexes a repository (re-parsing only files whose content changed since
the last index; ``build``), ``update_file`` applies one file's new text exactly as a rebuild
would (``update``), and ``retrieve`` ranks fragments by FragRel's relation-aware score
(``search``); ``store`` saves and loads the tables. The context engine reads the index
through the handle's methods, never its tables.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from repomem.config import IndexConfig
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.index import store
from repomem.index.bm25 import Background
from repomem.index.build import IndexSummary, Progress, build_tables
from repomem.index.calling import CallingWindows
from repomem.index.files import FileSkipped, load_file, repository_root
from repomem.index.gcpause import paused_gc
from repomem.index.mapped import LazyDict
from repomem.index.meter import StageMeter
from repomem.index.parsing import Lines, ParsedFile, TreeCache, newline_positions
from repomem.index.relations import node_strengths, release_scratch, reserve_scratch
from repomem.index.resolve import Resolver
from repomem.index.rowpool import distinct_sorted
from repomem.index.search import Searcher
from repomem.index.tables import FileEntry, IndexTables
from repomem.index.trim import (
    WrittenPages,
    release_mapped,
    release_memory,
    resident_file_bytes,
)
from repomem.index.update import update_file

# file pages read since the mapped index's were last handed back, past which an update
# hands them back: one update on the standard library reads 25–40 MB (the kernel maps whole
# folios around each page read), and the look at each of the index's ~100 mappings costs
# ~8 ms there (update p50 10–11 → 17–20 ms when done twice per update); one on the Linux
# kernel's kernel/ mm/ fs/ include/ reads 150–260 MB
READ_ALLOWANCE = 128 << 20


class RepoIndex:
    """The index of one repository: its tables, and the state a session keeps over them."""

    def __init__(self, root: Path, tables: IndexTables) -> None:
        self.root = root
        self.tables = tables
        # bumped by every change a file's update makes: what is derived from the whole
        # index (a class card's most-called methods) is cached against it
        self.revision = 0
        self._trees = TreeCache()  # the files updated last, for incremental parsing
        self._search = Searcher(tables)
        self._calling = CallingWindows(tables)
        # per file, the rows its top-level statements start on, where (bytes), and the byte
        # each begins with, kept while the file's entry is the same (``rows_beginning``)
        self._heads: dict[str, tuple[FileEntry, list[int], list[int], bytes]] = {}
        self._released_at = resident_file_bytes()  # after the last ``release_mapped``
        # the pages updates wrote in the mapped index go to files of the folder a loaded
        # index spools to (none: they stay the process's own)
        self._written = WrittenPages(tables.bm25.spool)

    @property
    def config(self) -> IndexConfig:
        return self.tables.config

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        root: Path,
        config: IndexConfig | None = None,
        *,
        progress: Progress | None = None,
        save: bool = True,
        workers: int | None = None,
    ) -> tuple[RepoIndex, IndexSummary]:
        """Index ``root`` and (by default) persist it atomically.

        Files whose content is unchanged since the saved index are not parsed again.
        ``workers``: parsing processes (by default one per core, up to four, on a large
        repository); the index is the same with any number.
        """
        config = config or IndexConfig()
        # before the index folder inside it is made: a removed root is not made again
        root = repository_root(root)
        previous = None
        with paused_gc(freeze=True):
            with contextlib.suppress(store.IndexNotFound, store.IndexUnreadable):
                manifest = store.read_manifest(root, config)
                if store.config_from(manifest["config"]) == config:
                    previous = store.load(root, config)
            meter = StageMeter()
            if save:
                # the texts go straight to the new generation, which goes live once complete
                with store.writing(root, config) as out:
                    tables, summary = build_tables(
                        root, config, previous, progress, out / "arrays", meter, workers
                    )
                    store.write_generation(tables, out, asdict(summary), keep_node_rows=False)
                meter.end("save")
                summary.index_bytes = store.index_bytes(root, config)
            else:
                # mapped back, the spooled texts outlive their files
                with tempfile.TemporaryDirectory(prefix="repomem-") as spool:
                    tables, summary = build_tables(
                        root, config, previous, progress, Path(spool), meter, workers
                    )
                    # only a build's relations read the fragments' node rows; an update
                    # derives them again, as after a load
                    tables.drop_node_rows()
            summary.seconds["total"] = meter.total
        return cls(root, tables), summary

    @classmethod
    def load(
        cls, root: Path, config: IndexConfig | None = None, *, mapped: bool = True
    ) -> RepoIndex:
        """The saved index of ``root`` (``RepomemError`` if there is none or it is unreadable);
        ``mapped``: see ``store.load``."""
        return cls(root, store.load(root, config, mapped=mapped))

    def save(self) -> None:
        store.save(self.root, self.tables)

    def warm(self) -> None:
        """Derive now what an opened index builds on first use (the resolver from every
        file's definitions and imports, the graph, node rows and calls by target from their
        saved arrays, relations by target): a long-lived process does it before serving, so
        that neither its first edit nor its first definition cards pay for it; a one-shot
        command leaves it to first use. The compiled kernels an update runs are loaded too
        (``_load_update_kernels``), and the pages of the mapped index that deriving read are
        handed back (``release_mapped``)."""
        t = self.tables
        _ = (t.graph, t.resolver, t.node_frags, t.calls_into, t.inverse_relations)
        _load_update_kernels()
        reserve_scratch(t.graph, len(t.frag_text))
        self._hand_back_read()

    def tidy(self) -> None:
        """Reorganise what updates left behind, at a moment nothing waits for the index (an
        editor's pause): BM25 compacts its delta here, long before an update or a query
        would have to; what updates freed goes back to the system (``release_memory``), and
        so do the pages of the mapped index read since the last pause (``release_mapped``):
        the resident set is then what was used since, not every page ever read; the saved
        parses and resolver tables made and not read since the last pause are dropped
        (``IndexTables.drop_unread``), and so are the syntax trees of the files not edited
        since (``TreeCache.drop_unused``), and the last query's scores
        (``Searcher.forget_scores``); the pages the relation searches wrote in their
        work arrays are handed back (``release_scratch``); the pages updates wrote in the
        mapped index and in the row pools' row arrays become pages of files of their own
        (``WrittenPages``), handed back as those read are."""
        self.tables.bm25.tidy()
        self.tables.drop_unread()
        self._trees.drop_unused()
        self._search.forget_scores()
        release_scratch()
        release_memory()
        self._written.spill(self._mapped())
        self._hand_back_read()

    # ------------------------------------------------------------------ incremental update
    def update_file(self, path: str, text: str | None) -> None:
        """Apply one file's new content (``None``: the file is gone), exactly as a full
        rebuild over the new set of files would (``update.update_file``). The pages of the
        mapped index read since they were last handed back go back before a change is
        applied, and those it read before its relations are recomputed and as it ends, once
        they pass ``READ_ALLOWANCE`` (``_hand_back_read``): its searches read graph, node
        and relation rows scattered over the tables, and the kernel maps whole runs of pages
        around each one read (on the Linux kernel's kernel/ mm/ fs/ include/, ~220 MB for a
        one-line edit, most of those columns), which kept until the next pause piled up over
        the updates and completions before it."""
        if self._read_since() > READ_ALLOWANCE and text != self.file_text(path):
            self._hand_back_read()
        # the searches' pages go back before the relation recomputation reads its own (on the
        # Linux kernel's kernel/ mm/ fs/ include/ ~130–190 MB, then ~70 MB more: the language
        # server's peak came at an update's end); those go back as the update ends if all it
        # read passed the allowance, as they would have without the first hand-back
        searched_read = 0

        def searched() -> None:
            nonlocal searched_read
            read = self._read_since()
            if read > READ_ALLOWANCE:
                self._hand_back_read()
                searched_read = read

        if update_file(self.tables, self._trees, path, text, searched):
            self.revision += 1
            if searched_read + self._read_since() > READ_ALLOWANCE:
                self._hand_back_read()

    def _read_since(self) -> int:
        """Bytes the process's file pages grew by since the mapped index's were last handed
        back (``resident_file_bytes``: a look that costs microseconds)."""
        return resident_file_bytes() - self._released_at

    def _mapped(self) -> list[mmap.mmap]:
        """The maps whose pages the process reads and writes through: the mapped index, BM25's
        rows and postings mapped from its spool folder (a compaction's) and the row pools'
        row arrays (``IndexTables.row_maps``; their written pages are files' once spilled)."""
        return [*self.tables.mappings, *self.tables.bm25.spooled_maps, *self.tables.row_maps()]

    def _hand_back_read(self) -> None:
        """``release_mapped`` of every map the index reads through (``_mapped``), in one look
        at the page map, noting what stays resident after it: retrieval reads the postings
        as the updates read the tables, and ``_read_since`` counts both."""
        release_mapped(self._mapped())
        self._released_at = resident_file_bytes()

    def apply_buffer(self, path: str, text: str) -> None:
        """Show retrieval a file as the user has it now. Only files the index holds are
        updated: one it skipped (ignored, secret, unsupported) stays out of every prompt."""
        if path in self.tables.files:
            self.update_file(path, text)

    def reload_file(self, path: str) -> None:
        """Re-read one file from disk (or drop it if it is gone or no longer indexable)."""
        try:
            f = load_file(self.root, path, self.config)
        except FileSkipped:
            self.update_file(path, None)
            return
        self.update_file(path, f.text)

    # ------------------------------------------------------------------ retrieval
    def visible(self, exclusion: Exclusion | None) -> np.ndarray:
        """Per fragment id, whether a search may return it: live, and not hidden whole by
        ``exclusion``."""
        return self._search.visible(exclusion)

    def retrieve(
        self,
        query: str,
        *,
        k: int = 10,
        alpha: float = 0.5,
        exclusion: Exclusion | None = None,
    ) -> list[RetrievedFragment]:
        """The top-k fragments for a query window by ``s_rel = s_ind + alpha * s_env``."""
        return self._search.retrieve(
            query, k=k, alpha=alpha, exclusion=exclusion, revision=self.revision
        )

    def query_scores(self, query: str) -> np.ndarray:
        """Every fragment's BM25 score for ``query`` (shared with the caller: read only)."""
        return self._search.query_scores(query, self.revision)

    def fragment_scores(self, query: str, ids: np.ndarray) -> np.ndarray:
        """``query_scores(query)[ids]``, scoring only those fragments when it can."""
        return self._search.fragment_scores(query, self.revision, ids)

    def term_statistics(self, tokens: Sequence[str]) -> Background:
        """The fragments' BM25 statistics for ``tokens``: what scores other documents (a doc
        memory's entries) on the fragments' scale, as if indexed with them."""
        return self.tables.bm25.statistics(tokens)

    def relation_rows(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The relations of fragments ``ids``: per id, a row of related fragment ids (-1: an
        empty slot) and one of strengths, as ``relations`` holds them, without making it."""
        return self.tables.rel_idx[ids], self.tables.rel_val[ids]

    # ------------------------------------------------------------------ what the context reads
    @property
    def resolver(self) -> Resolver:
        """Call resolution over the indexed files (definitions, imports, what a name means)."""
        return self.tables.resolver

    @property
    def relations(self) -> sp.csr_matrix:
        """Fragment relations as CSR (rows and columns: fragment ids), built once per change:
        the same object until the index changes."""
        return self.tables.relations

    def __contains__(self, path: object) -> bool:
        """Whether the index holds the code file ``path`` (relative, POSIX)."""
        return path in self.tables.files

    @property
    def file_count(self) -> int:
        return len(self.tables.files)

    @property
    def fragment_count(self) -> int:
        """Live fragments (distinct window texts)."""
        return int(np.count_nonzero(self.tables.live))

    @property
    def fragment_slots(self) -> int:
        """Fragment ids in use, freed ones included: the length of per-fragment arrays
        (``query_scores``, ``visible``, the rows of ``relations``)."""
        return len(self.tables.frag_text)

    def indexed_files(self) -> Iterator[tuple[str, str, str]]:
        """(path, language, content digest) of every indexed code file, in index order."""
        for path, entry in self.tables.files.items():
            yield path, entry.language, entry.digest

    def file_text(self, path: str) -> str | None:
        """An indexed file's text as the index holds it now; None if it holds no such file."""
        entry = self.tables.files.get(path)
        return entry.text if entry is not None else None

    def rows_beginning(self, path: str, word: str) -> list[int]:
        """The 0-based rows of an indexed file where a top-level statement starts whose line
        begins with ``word``, ascending (a module constant's assignment): the statements'
        first bytes are read once a file, then only the lines beginning with the word's
        first byte compared in its stored UTF-8 (a scan of the whole file for the name cost
        30-55 µs a lookup in ``argparse.py``; and its lines are not split: a name looked up
        is mostly not there)."""
        entry = self.tables.files.get(path)
        key = word.encode("utf-8", "surrogatepass")
        if entry is None or not key:
            return []
        heads = self._heads.get(path)
        if heads is None or heads[0] is not entry:
            pf = self.parse(path)  # (read where the heads are made, not at every look-up)
            if pf is None:
                return []
            if len(self._heads) >= 8192:
                self._heads.clear()
            heads = self._heads[path] = (entry, *_statement_heads(entry, pf))
        _, rows, starts, firsts = heads
        data, n, found = entry.buffer, len(key), []
        at = firsts.find(key[0])
        while at >= 0:
            if data[starts[at] : starts[at] + n] == key:
                found.append(rows[at])
            at = firsts.find(key[0], at + 1)
        return found

    def file_lines(self, path: str) -> Lines:
        """The lines of an indexed file as the index holds it now, decoded as read."""
        return self._search.lines(path)

    def parse(self, path: str, *, keep: bool = True) -> ParsedFile | None:
        """An indexed file's parse (definitions, imports, calls, node rows; do not modify).
        ``keep=False``: a saved index's parse not yet made is made for the caller alone, so
        that a reader of every file does not leave the index holding every parse."""
        parsed = self.tables.parsed
        if keep or not isinstance(parsed, LazyDict):
            return parsed.get(path)
        return parsed.peek(path)

    def parses(self) -> Mapping[str, ParsedFile]:
        """Every indexed file's parse by path, read only; a saved index's are made as read."""
        return MappingProxyType(self.tables.parsed)

    def resolved_calls(self, path: str) -> tuple[Sequence[str], np.ndarray]:
        """The calls of ``path`` that resolve to repository definitions: (target paths, an
        (n, 3) array of rows (local source node, the target path's number in the first,
        target local node)), read in place from a saved index."""
        return self.tables.call_rows(path)

    def callers(self, path: str) -> Mapping[str, np.ndarray]:
        """The calls into ``path``: per calling file, its (source node, target node) pairs,
        local to the caller and to ``path``, as an (n, 2) array."""
        return self.tables.calls_into.get(path, {})

    def calling_fragments(self, path: str, node: int, *, outside: str) -> np.ndarray:
        """The fragments whose windows hold a statement of a file other than ``outside`` that
        calls ``path``'s definition at local ``node`` (sorted, once each)."""
        return self._calling.fragments(path, node, outside=outside, revision=self.revision)

    def fragments_at_line(self, path: str, line: int) -> np.ndarray:
        """The fragments whose windows in ``path`` cover 0-based ``line`` (none for a file the
        index does not hold)."""
        entry = self.tables.files.get(path)
        if entry is None:
            return np.empty(0, np.int64)
        return np.unique(entry.win_frag[(entry.win_start <= line) & (line < entry.win_end)])

    def fragment_text(self, fid: int) -> str:
        return self.tables.frag_text[fid]

    def fragment_locations(self, fid: int) -> list[Location]:
        """Where fragment ``fid``'s text stands (empty for a freed id)."""
        return self.tables.frag_locs[fid]

    def strengths(
        self,
        path: str,
        nodes: np.ndarray,
        weights: np.ndarray,
        targets: Sequence[tuple[str, int]],
        *,
        epsilon: float,
        node_cap: int,
    ) -> np.ndarray:
        """Eq. 8 relation strength from ``path``'s weighted local ``nodes`` (a query window's)
        to each target definition (file, local node), over the code graph; zeros where the
        graph does not hold ``path``."""
        graph = self.tables.graph
        if path not in graph.stmt_offset:
            return np.zeros(len(targets))
        sources = nodes + graph.stmt_offset[path]
        ids = np.array([graph.stmt_offset[file] + node for file, node in targets], np.int64)
        return node_strengths(
            graph,
            sources,
            weights,
            ids,
            epsilon=epsilon,
            hub=self.config.hub_degree,
            node_cap=node_cap,
        )


@functools.cache
def _load_update_kernels() -> None:
    """Load the compiled kernels an update and a retrieval run (numba loads each from its
    disk cache when first called, ~0.35 s in all) by indexing, querying and editing two
    small files in memory (a call taken out and put back: relations go and come): a first
    edit after ``warm`` then pays only for itself. Once per process: a process that warms
    after every update (the evaluation's buffer swaps) would otherwise build it each time."""
    calls = {
        "a.c": "int g(int y) { return y; }\nint f(int x) { return g(x); }\n",
        "b.py": "from a import g\n\n\ndef f(x):\n    return g(x)\n",
    }
    with tempfile.TemporaryDirectory(prefix="repomem-warm-") as d:
        root = Path(d)
        (root / "a.py").write_text("def g(y):\n    return y\n")
        for name, text in calls.items():
            (root / name).write_text(text)
        idx, _ = RepoIndex.build(root, IndexConfig(), save=False)
        idx.retrieve("f x", alpha=0.5)
        for name, text in calls.items():
            idx.update_file(name, text.replace("g(x)", "x"))
            idx.update_file(name, text)
        idx.retrieve("f x", alpha=0.5)
        idx.file_lines("b.py")  # a card's first read of a file finds its lines (``Lines``)


def _statement_heads(entry: FileEntry, pf: ParsedFile) -> tuple[list[int], list[int], bytes]:
    """The rows ``pf``'s top-level statements start on (ascending, once each), where each
    row begins in ``entry``'s UTF-8 and the byte it begins with."""
    rows = distinct_sorted(pf.node_start[pf.node_parent == -1].astype(np.int64))
    data = entry.buffer
    marks = entry.newlines if entry.newlines is not None else newline_positions(data)
    rows = rows[rows <= marks.size]  # row r begins after the text's r-th newline
    starts = np.zeros(rows.size, np.int64)
    later = rows > 0
    starts[later] = marks[rows[later] - 1] + 1
    text = np.frombuffer(data, np.uint8)
    inside = starts < text.size  # (no line begins after a final newline)
    rows, starts = rows[inside], starts[inside]
    return rows.tolist(), starts.tolist(), text[starts].tobytes()
