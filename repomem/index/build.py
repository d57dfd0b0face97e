"""Building a repository's index in full: files -> parsed code -> graph -> fragments ->
relations + BM25, and the steps on the tables that an update shares with it (fragments added,
relations grown and recomputed)."""

from __future__ import annotations

import dataclasses
import heapq
import json
import mmap
import multiprocessing as mp
import os
import shutil
import threading
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.core import Location
from repomem.index import langs
from repomem.index.bm25 import (
    BM25Index,
    SpooledRows,
    TermCounts,
    count_encoded_terms,
    count_terms,
)
from repomem.index.files import (
    FileScan,
    FileSkipped,
    SourceFile,
    list_candidates,
    load_file,
    repository_root,
)
from repomem.index.files import warm_up as files_warm_up
from repomem.index.fragments import load_window_kernel, window_bounds, window_nodes
from repomem.index.graph import CallRows, NodeLayout, build_graph, node_layout
from repomem.index.languages import language_for_path
from repomem.index.mapped import (
    Locations,
    TextIds,
    Texts,
    bytes_keys,
    hash_order,
    window_locations,
)
from repomem.index.meter import StageMeter
from repomem.index.parsing import (
    ParsedFile,
    newline_positions,
    parse_source,
    split_lines,
    supported,
    utf8_lines,
    warm_up,
)
from repomem.index.relations import compute_relations, forget_scratch
from repomem.index.resolve import DependencyRows, Resolver
from repomem.index.rowpool import RowPool
from repomem.index.saved_parse import EncodedParse, ParseSpool, SpooledParses
from repomem.index.spool import ArrayWriter, mapped, spooled, write_array
from repomem.index.tables import (
    RELATION_ID,
    WINDOW_ROWS,
    FileEntry,
    IndexTables,
    SpooledCalls,
    relation_spare,
)
from repomem.index.trim import mappings_of, release_mapped, release_read_only

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
    # per stage, the CPU seconds of the building process and of the processes it waited for
    cpu_s: dict[str, float] = field(default_factory=dict)
    # per stage, the most resident memory the building process held (MB; Linux only)
    peak_mb: dict[str, float] = field(default_factory=dict)
    index_bytes: int = 0


@dataclass
class PreparedFile:
    """What one file contributes, computed independently of every other file: arrays and
    bytes, which a parsing worker sends back at little cost (each window's text once)."""

    parsed: ParsedFile | None  # None: the caller has it (a parse reused from the last index)
    win_start: np.ndarray  # int32 first line of each window
    win_end: np.ndarray  # int32, exclusive
    # what each window's text is a slice of: the file's UTF-8 or, where it holds a carriage
    # return, its lines joined by newlines (``_window_text``); None where a worker leaves it
    # out of a file's ``LoadedFile``, whose content holds it
    win_text: bytes | None
    win_span: np.ndarray  # int64 (windows, 2): each window's text's bounds in ``win_text``
    win_key: np.ndarray  # int64 ``bytes_key`` of each window's text
    wn_window: np.ndarray  # Eq. 8 weights: window index, local node, weight
    wn_node: np.ndarray
    wn_weight: np.ndarray
    # BM25 term counts of every window, when counted with the parse (see ``prepare_file``)
    terms: TermCounts | None

    def encoded(self) -> list[bytes]:
        """Each window's text in UTF-8."""
        text = self.win_text
        assert text is not None
        return [text[lo:hi] for lo, hi in self.win_span.tolist()]


def prepare_file(
    f: SourceFile, config: IndexConfig, parsed: ParsedFile | None = None, *, terms: bool = True
) -> PreparedFile:
    """``terms``: count every window's terms now, as the parsing workers of a build do; an
    update leaves it to ``_add_file_fragments``, which counts only the windows it adds. The
    file is encoded and its newlines found once, for its parse and its windows."""
    if parsed is None:
        utf8 = utf8_lines(f.text)
        parsed = parse_source(f.path, f.language, f.text, f.digest, utf8=utf8)
    else:  # (an editor's text may hold lone surrogates, which a parse fails on: not here)
        encoded = f.text.encode("utf-8", "surrogatepass")
        utf8 = encoded, newline_positions(encoded)
    starts, ends = window_bounds(parsed.line_len, config.fragment_lines, config.stride)
    text, newlines = _window_text(f.text, *utf8)
    span = np.empty((starts.size, 2), np.int64)
    span[:, 0] = np.r_[0, newlines + 1][starts]
    # (a final newline ends the last line: its window ends there)
    span[:, 1] = np.r_[newlines, len(text)][ends - 1]
    counts = count_encoded_terms(text, np.stack([starts, ends], 1)) if terms else None
    return PreparedFile(
        parsed,
        starts,
        ends,
        text,
        span,
        bytes_keys(text, span),
        *window_nodes(parsed, starts, ends),
        counts,
    )


def _window_text(text: str, encoded: bytes, newlines: np.ndarray) -> tuple[bytes, np.ndarray]:
    """What a file's windows' texts are slices of, and its newlines: its UTF-8 (``encoded``,
    ``newlines``) but where it holds a carriage return, ``split_lines(text)`` joined by
    newlines then."""
    if "\r" not in text:
        return encoded, newlines
    joined = "\n".join(split_lines(text)).encode("utf-8", "surrogatepass")
    return joined, newline_positions(joined)


@dataclass
class LoadedFile:
    """A candidate file as a parsing worker hands it back: what the index records of it,
    and for a code file its text in UTF-8 and what it contributes."""

    source: SourceFile  # its text left out: ``content`` carries it
    content: bytes | None
    prep: PreparedFile | None  # its ``parsed`` left out: ``parse`` carries it
    parse: EncodedParse | None = None  # None: a parse reused from the last index


# What the parsing workers read, set before they fork: the root, the settings and, per
# path, the digest of the previous index's parse that an unchanged file reuses.
_JOB: tuple[Path, IndexConfig, dict[str, str], IndexTables | None] | None = None


def _load_and_prepare(path: str) -> LoadedFile | str:
    """One candidate read, parsed and cut into windows, or why it is not indexed: in a
    worker, so that no process holds every file's text (the kernel's 1.1 GB)."""
    assert _JOB is not None
    root, config, digests, previous = _JOB
    try:
        f = load_file(root, path, config)
    except FileSkipped as skip:
        return skip.reason
    meta = dataclasses.replace(f, text="")
    if not supported(f.language):
        return LoadedFile(meta, None, None)
    reuse = previous is not None and digests.get(path) == f.digest
    prep = prepare_file(f, config, previous.parsed[path] if reuse and previous else None)
    # the caller has a reused parse: not sent back
    parse = None if reuse or prep.parsed is None else EncodedParse(prep.parsed)
    prep.parsed = None
    # nor the windows' text where the content holds it (it was a third of what a worker
    # sent): without a carriage return, it is the content
    assert prep.win_text is not None
    if "\r" in f.text:
        content = f.text.encode("utf-8", "surrogatepass")
        if content.startswith(prep.win_text):
            prep.win_text = None
    else:
        content, prep.win_text = prep.win_text, None
    return LoadedFile(meta, content, prep, parse)


def _load_all(
    root: Path,
    config: IndexConfig,
    candidates: list[str],
    previous: IndexTables | None,
    workers: int | None,
) -> Iterator[LoadedFile | str]:
    """``_load_and_prepare`` of every candidate, yielded in their order as soon as each is
    ready; in worker processes on a large repository (``workers``: how many; by default one
    per core, up to four, and none below 64 files). At most a few chunks per worker run
    ahead of the caller, so that results waiting for it do not pile up in memory."""
    global _JOB
    digests = {} if previous is None else {p: e.digest for p, e in previous.files.items()}
    count = workers or min(os.cpu_count() or 1, 4)
    # Fork only a single-threaded process: forking one that runs threads (a language server)
    # can copy a held lock into the child and hang it. Other start methods re-run the caller's
    # main module, which a script without a main guard cannot survive.
    forkable = "fork" in mp.get_all_start_methods() and threading.active_count() == 1
    _JOB = (root, config, digests, previous)
    try:
        if count < 2 or not forkable or (workers is None and len(candidates) < 64):
            yield from map(_load_and_prepare, candidates)
            return
        languages = {language_for_path(p) for p in candidates}
        warm_up({lang for lang in languages | {"cpp"} if lang and supported(lang)})
        count_terms([], [])  # their kernels loaded here, not once in each worker
        files_warm_up()
        load_window_kernel()
        pool = ProcessPoolExecutor(count, mp_context=mp.get_context("fork"))
        try:
            ahead: deque[Future[list[LoadedFile | str]]] = deque()
            for i in range(0, len(candidates), _CHUNK):
                ahead.append(pool.submit(_load_chunk, candidates[i : i + _CHUNK]))
                if len(ahead) > 4 * count:
                    yield from ahead.popleft().result()
            while ahead:
                yield from ahead.popleft().result()
        finally:
            pool.shutdown(cancel_futures=True)
    finally:
        _JOB = None


# files a worker takes at a time
_CHUNK = 8


def _load_chunk(paths: list[str]) -> list[LoadedFile | str]:
    return [_load_and_prepare(p) for p in paths]


def build_tables(
    root: Path,
    config: IndexConfig,
    previous: IndexTables | None,
    progress: Progress | None,
    spool: Path,
    meter: StageMeter | None = None,
    workers: int | None = None,
) -> tuple[IndexTables, IndexSummary]:
    """Index ``root``, reusing the parses of unchanged files from ``previous`` (the saved
    index's tables). ``spool``: the folder that the files' and fragments' texts are written
    to as they are read, then mapped back from (a build's peak memory does not hold them).
    ``meter``: where each stage's time and peak go (the summary's ``seconds``, ``peak_mb``);
    ``workers``: parsing processes (``_load_all``); any number gives the same index."""
    meter = meter or StageMeter()
    idx = IndexTables(config)
    scan = FileScan(repository_root(root).resolve(), [])
    candidates = list_candidates(root, config)
    if not candidates:
        scan.note_empty(config)
    meter.end("scan")
    rows = SpooledRows(spool, "bm25__")
    by_lang, reused, parses = _cut_fragments(
        idx, scan, candidates, previous, rows, progress, workers
    )
    idx.skipped = scan.skipped
    del candidates, scan
    meter.end("parse")
    idx.settings = langs.read_settings(root, {p: e.language for p, e in idx.files.items()})
    idx.calls = calls = SpooledCalls(spool, sorted(idx.files))
    # resolution starts in its child first: the postings are made beside it, in cores its
    # runs leave idle (the tables it makes before its second run forks, its last files)
    resolving = _resolve_apart(calls, parses, config, idx.settings, spool, workers)
    # now, while the relations' tables do not exist yet: the postings are made from the
    # spooled rows; then they go where the store saves them, and are read from there
    state = spooled(spool, {f"bm25__{k}": v for k, v in rows.index().state().items()})
    idx.bm25 = BM25Index.from_state({k[6:]: v for k, v in state.items()}, trusted=True)
    del state, rows
    meter.end("bm25")
    nodes, frag_nodes = _node_rows(idx, parses, spool)  # still beside resolution
    resolution = resolving()
    calls.map_back()
    parses.drop_made()
    meter.end("resolve")
    graph = build_graph(nodes, CallRows(calls.paths, calls.rows), config.import_weight)
    del nodes
    # the pages of the spooled calls it read go back: read again if needed
    release_read_only(mappings_of([calls.rows]))
    idx.adopt(graph, resolution, parses.parse, frag_nodes)
    idx.radius = np.full(graph.n_nodes, np.inf)
    idx.mappings += spill(graph.adj, spool, "graph")
    release_mapped(idx.mappings)
    meter.end("graph")
    live = idx.live_ids()
    relations = spool_relations(idx, spool, progress)
    # what the relations read goes back before the save reads what it needs
    release_mapped(idx.mappings)
    meter.end("relations")
    summary = IndexSummary(
        files_by_language=dict(sorted(by_lang.items())),
        skipped=idx.skipped,
        reparsed=len(idx.files) - reused,
        reused=reused,
        fragments=int(live.size),
        nodes=dict(graph.node_counts),
        edges=dict(graph.edge_counts),
        relations=relations,
        truncated_fragments=int(np.count_nonzero(idx.truncated)),
        seconds=meter.seconds,
        cpu_s=meter.cpu_s,
        peak_mb=meter.peak_mb,
    )
    return idx, summary


def _node_rows(idx: IndexTables, parses: SpooledParses, spool: Path) -> tuple[NodeLayout, RowPool]:
    """The graph's nodes and the fragments' node rows, which the calls do not change (a
    build makes them while its calls resolve), the rows spilled to the spool (``spill``)."""
    nodes = node_layout(parses.node_rows())
    release_read_only(mappings_of([parses.arrays["node_parent"]]))
    frag_nodes = idx.assemble_frag_nodes(nodes)
    idx.mappings += spill(frag_nodes, spool, "fn")
    # the window rows the node rows were grouped from go back: the whole kernel's Eq. 8
    # weights are 0.64 GB of pages, resident through the relations' start otherwise
    release_mapped(idx.mappings)
    return nodes, frag_nodes


def _cut_fragments(
    idx: IndexTables,
    scan: FileScan,
    candidates: list[str],
    previous: IndexTables | None,
    rows: SpooledRows,
    progress: Progress | None,
    workers: int | None,
) -> tuple[Counter[str], int, SpooledParses]:
    """Every candidate's parse, text and fragments into ``idx`` and their BM25 rows into
    ``rows`` (the texts and parses spooled beside them and mapped back), the others counted
    in ``scan``; returns the files loaded by language, how many parses were reused, and the
    parses (``idx.parsed``)."""
    spool = rows.directory
    by_lang: Counter[str] = Counter()
    reused = 0
    parses = ParseSpool(spool)
    texts = Texts.spooled(spool, "texts")
    idx.frag_text = Texts.spooled(spool, "frag_text")
    idx.by_text = TextIds(idx.frag_text)
    window_rows = WindowRows(spool)
    loaded = _load_all(scan.root, idx.config, candidates, previous, workers)
    for done, (path, got) in enumerate(zip(candidates, loaded, strict=True), 1):
        if isinstance(got, str):
            scan.skip(path, got)
        else:
            by_lang[got.source.language] += 1
        if progress:
            progress("parse", done, len(candidates))
        if isinstance(got, str) or got.prep is None:
            continue
        if got.parse is None:
            assert previous is not None
            got.parse = EncodedParse(previous.parsed[path])
            reused += 1
        parses.add(got.parse)
        texts.append_encoded(got.content or b"")
        if got.prep.win_text is None:  # the content holds the windows' text
            got.prep.win_text = got.content
        content = (texts, len(texts) - 1)
        add_file_fragments(idx, got.source, got.prep, content, locate=False, rows=rows)
        window_rows.take(idx.files[path])
    idx.mappings += window_rows.map_back()
    idx.parsed = spooled_parses = parses.finish()
    idx.frag_locs = fragment_locations(idx)
    texts.finish()
    idx.frag_text.finish()
    order = hash_order(idx.frag_key[: len(idx.frag_text)])
    idx.by_text = TextIds(idx.frag_text, idx.frag_key[order], order)
    return by_lang, reused, spooled_parses


# files resolved between two drops of the parses and tables resolution read (those read
# again since stay): a build holds a few thousand files' at a time, not every file's
_RESOLVED_AT_ONCE = 1024
# and between two drops of the parses alone: another file's parse is mostly read to make
# its tables, which are read from then on (every 256 files: the kernel subset's resolution
# held ~75 MB less at ~5% more of its CPU, decoding again the parses read again)
_PARSES_AT_ONCE = 256


def _resolve_calls(
    calls: SpooledCalls,
    parses: SpooledParses,
    config: IndexConfig,
    settings: dict[str, object],
    spool: Path,
    parts: int = 1,
) -> list[str]:
    """Every file's calls resolved and written to ``calls`` (``SpooledCalls.finish``), and
    what resolution depended on spooled as the arrays a save writes; returns their names.
    ``parts``: the files resolved in that many runs at once, all but the first in forked
    children that share the resolver's tables as made (a run's files depend on no other
    run's: the same arrays as one run). The runs take the files a chunk at a time as each
    is ready for more (``_Chunks``), the first from the front, the others from the back:
    split once by an estimate of their work, one run went on alone for a fifth of the
    kernel subset's resolution."""
    resolver = Resolver(parses, imports=config.import_weight > 0, settings=settings)
    dependencies = DependencyRows(calls.paths)
    chunks = _Chunks(calls.paths, parts)
    others = []
    for k in range(1, parts):
        folder = spool / f"resolved_{k}"
        run = partial(_resolve_run, resolver, parses, calls, chunks, k, folder)
        others.append((folder, _forked(run)))
    front = ((p, dependencies) for c in chunks.claimed(0) for p in chunks.files(c))
    for p, calls_of_p in _resolved(resolver, parses, front):
        calls.add(p, calls_of_p)
    for _, join in others:
        join()
    taken = heapq.merge(*(_taken_chunks(folder) for folder, _ in others), key=lambda c: c[0])
    for _, rows, counts, names, reads, tries in taken:
        calls.extend(rows, counts)
        dependencies.join(names, reads, tries)
    for folder, _ in others:
        shutil.rmtree(folder)
    calls.finish()
    # the names' arrays taken, the resolver's tables go before the dependencies' are made
    names = resolver.by_name.arrays(calls.paths)
    del resolver
    resolution = {**dependencies.arrays(), **names}
    spooled(spool, resolution)
    return list(resolution)


def _resolved(
    resolver: Resolver, parses: SpooledParses, work: Iterable[tuple[str, DependencyRows]]
) -> Iterator[tuple[str, list[tuple[int, str, int]]]]:
    """Each file of ``work`` with its calls resolved, what it read and tried added to its
    rows, what resolution read dropped as it goes."""
    for done, (p, dependencies) in enumerate(work, 1):
        yield p, resolver.calls_of(p, dependencies)
        if done % _RESOLVED_AT_ONCE == 0:
            resolver.drop_unread()
        elif done % _PARSES_AT_ONCE == 0:
            parses.drop_unread()


class _Chunks:
    """The files to resolve in chunks, which the runs at once take (``claimed``) until none
    is left: the first run from the front, writing its files' calls in order as it goes,
    the others from the back, whose chunks are appended after them in order. Each run is
    given one chunk at once, so that each resolves some (a run forked first could take
    every chunk before the first run takes one)."""

    def __init__(self, paths: list[str], parts: int) -> None:
        self.paths = paths
        self.size = max(1, min(_CHUNK_FILES, len(paths) // (4 * parts)))
        n = -(-len(paths) // self.size)
        ctx = mp.get_context("fork") if parts > 1 else mp.get_context()
        self._lock = ctx.Lock()
        # the chunks given at once: the first, and from ``_reserved`` to ``_count``
        self._count, self._reserved = n, max(n - (parts - 1), 0)
        # the next chunk from the front, the one after the last from the back
        self._ends = ctx.RawArray("q", [min(1, self._reserved), self._reserved])

    def files(self, chunk: int) -> list[str]:
        return self.paths[chunk * self.size : (chunk + 1) * self.size]

    def claimed(self, run: int) -> Iterator[int]:
        """The chunks run ``run`` (0: the first) resolves, as it is ready for each."""
        if run == 0:
            given = 0 if self._reserved else None
        else:
            given = self._count - run if self._count - run >= self._reserved else None
        if given is None:
            return
        yield given
        while (chunk := self._take(front=run == 0)) is not None:
            yield chunk

    def _take(self, *, front: bool) -> int | None:
        with self._lock:
            lo, hi = self._ends
            if lo >= hi:
                return None
            if front:
                self._ends[0] = lo + 1
                return lo
            self._ends[1] = hi - 1
            return hi - 1


# files a run of resolution takes at a time (fewer on a small repository: each run some)
_CHUNK_FILES = 32


@dataclass
class _RunChunk:
    """A chunk another run resolves (``_resolve_run``): its number, the dependency rows its
    files add, and each file's call rows and count of calls, in path order."""

    chunk: int
    dependencies: DependencyRows
    call_rows: list[np.ndarray] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


def _resolve_run(
    resolver: Resolver,
    parses: SpooledParses,
    calls: SpooledCalls,
    chunks: _Chunks,
    run: int,
    folder: Path,
) -> str:
    """The chunks run ``run`` takes from the back resolved (in a forked child), their call
    rows and dependency rows written to ``folder`` chunk by chunk in path order, each
    chunk's names numbered apart, for the first run's process to append
    (``_taken_chunks``)."""
    folder.mkdir()
    taken: list[_RunChunk] = []
    numbered = DependencyRows(calls.paths)

    def work() -> Iterator[tuple[str, DependencyRows]]:
        for chunk in chunks.claimed(run):
            taken.append(_RunChunk(chunk, numbered.sharing()))
            for p in chunks.files(chunk):
                yield p, taken[-1].dependencies

    for p, calls_of_p in _resolved(resolver, parses, work()):
        taken[-1].call_rows.append(calls.rows_of(p, calls_of_p))
        taken[-1].counts.append(len(calls_of_p))
    taken.sort(key=lambda c: c.chunk)
    rows = [c.dependencies.rows() for c in taken]
    calls_rows = [r for c in taken for r in c.call_rows]
    write_array(folder / "calls.npy", np.concatenate([np.empty((0, 4), np.int64), *calls_rows]))
    counts = [n for c in taken for n in c.counts]
    write_array(folder / "counts.npy", np.array(counts, np.int64))
    write_array(
        folder / "reads.npy", np.concatenate([np.empty((0, 3), np.int32)] + [r for _, r, _ in rows])
    )
    write_array(
        folder / "tries.npy", np.concatenate([np.empty((0, 2), np.int32)] + [t for _, _, t in rows])
    )
    with open(folder / "chunks.jsonl", "w") as fh:
        for c, (names, r, t) in zip(taken, rows, strict=True):
            fh.write(json.dumps([c.chunk, len(c.counts), len(r), len(t), names]) + "\n")
    return ""


def _taken_chunks(
    folder: Path,
) -> Iterator[tuple[int, np.ndarray, list[int], list[str], np.ndarray, np.ndarray]]:
    """The chunks another run wrote (``_resolve_run``), in order: per chunk its number, call
    rows, calls per file, names met, read rows and tried rows; a chunk's names read as it
    comes (the whole kernel's chunks repeat most of theirs)."""
    calls, counts = np.load(folder / "calls.npy"), np.load(folder / "counts.npy").tolist()
    reads, tries = np.load(folder / "reads.npy"), np.load(folder / "tries.npy")
    files = calls_at = reads_at = tries_at = 0
    with open(folder / "chunks.jsonl") as fh:
        for line in fh:
            chunk, n_files, n_reads, n_tries, names = json.loads(line)
            counts_of = counts[files : files + n_files]
            n_calls = sum(counts_of)
            yield (
                chunk,
                calls[calls_at : calls_at + n_calls],
                counts_of,
                names,
                reads[reads_at : reads_at + n_reads],
                tries[tries_at : tries_at + n_tries],
            )
            files, calls_at = files + n_files, calls_at + n_calls
            reads_at, tries_at = reads_at + n_reads, tries_at + n_tries


# the most files resolved in two runs at once by default: each run's process holds its
# own tables of the files it reads; at the whole Linux kernel's 55k files two took the
# process tree to 3.43 GB at the resolve stage (4.15 GB in an earlier build of older code;
# the kernel subset's 8.5k files: ~0.7 GB, docs/MEASUREMENTS.md), under the peak of the
# build's bm25 and relations stages
_RUNS_UP_TO = 60_000


def _resolve_apart(
    calls: SpooledCalls,
    parses: SpooledParses,
    config: IndexConfig,
    settings: dict[str, object],
    spool: Path,
    workers: int | None = None,
) -> Callable[[], dict[str, np.ndarray]]:
    """``_resolve_calls`` in a child process where one can be forked (as ``_load_all``'s
    workers are), started at once; returns what waits for it and maps its arrays back from
    the spool (in process, what resolves then). Resolution makes millions of small
    objects and keeps few, but those few pin the allocator's pages: in process, a build of
    the Linux kernel's kernel/ mm/ net/ kept ~0.1 GB it had freed through every later stage
    (the kernel subset's ~0.17 GB). A child's memory all goes back when it exits.
    The child resolves in as many runs at once as there are parsing workers (``workers``;
    by default two where there are two cores and 64 to ``_RUNS_UP_TO`` files): resolving on
    one core took a tenth of the kernel subset's build on two."""
    forkable = hasattr(os, "fork") and threading.active_count() == 1
    by_default = min(os.cpu_count() or 1, 2) if 64 <= len(calls.paths) <= _RUNS_UP_TO else 1
    parts = (workers or by_default) if forkable else 1
    work = partial(_resolve_calls, calls, parses, config, settings, spool, parts)
    joined = _forked(lambda: "\n".join(work())) if forkable else (lambda: "\n".join(work()))

    def join() -> dict[str, np.ndarray]:
        out = joined()
        names = out.split("\n") if out else []
        return {name: mapped(spool / f"{name}.npy", writeable=False) for name in names}

    return join


def _forked(work: Callable[[], str]) -> Callable[[], str]:
    """``work`` started in a forked child; returns what waits for the child to end and
    gives what ``work`` returned, or raises with the child's traceback if it failed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report the result, or why it failed, and leave at once
        os.close(read)
        code, out = 0, b""
        try:
            out = work().encode()
        except BaseException:  # noqa: BLE001 - any failure goes to the parent
            code, out = 1, traceback.format_exc().encode()
        with os.fdopen(write, "wb") as fh:
            fh.write(out)
        os._exit(code)
    os.close(write)

    def join() -> str:
        with os.fdopen(read, "rb") as fh:
            out = fh.read().decode()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"call resolution failed in its process:\n{out}")
        return out

    return join


class WindowRows:
    """The files' window rows (``FileEntry``'s arrays), written to the spool as each file
    comes, under the names the store saves them by, and mapped back as each file's slices
    once all are in, as a saved index's are: held, the whole Linux kernel's took ~0.7 GB
    through every stage after the parse. The store finds them written."""

    def __init__(self, spool: Path) -> None:
        self._out = {name: ArrayWriter(spool / f"{name}.npy", t) for name, t in WINDOW_ROWS}
        self._entries: list[FileEntry] = []
        self._sizes: dict[str, list[int]] = {name: [] for name in self._out}

    def take(self, entry: FileEntry) -> None:
        """``entry``'s rows written out; until ``map_back`` it holds none."""
        for name, out in self._out.items():
            values = getattr(entry, name)
            out.write(values)
            self._sizes[name].append(values.size)
            setattr(entry, name, values[:0])
        self._entries.append(entry)

    def map_back(self) -> list[mmap.mmap]:
        """Returns the maps, whose pages the graph's node rows read once (``release_mapped``
        hands them back: kept, the kernel subset's Eq. 8 weights alone were ~70 MB resident
        through the relations and the save)."""
        read = []
        for name, out in self._out.items():
            out.close()
            values = mapped(out.path, writeable=False)
            ends = np.cumsum([0, *self._sizes[name]]).tolist()
            for entry, lo, hi in zip(self._entries, ends, ends[1:], strict=False):
                setattr(entry, name, values[lo:hi])
            read.append(values)
        return mappings_of(read)


def add_file_fragments(
    t: IndexTables,
    f: SourceFile,
    prep: PreparedFile,
    content: str | tuple[Texts, int] | None = None,
    *,
    locate: bool = True,
    rows: SpooledRows | None = None,
) -> None:
    """``content``: where the index keeps the file's text (``f.text`` itself if not said);
    ``locate=False``: the caller derives the fragments' locations once every file is in
    (``fragment_locations``), as a build does: a list per fragment held the kernel's in
    objects several times the size of its windows' arrays; ``rows``: where a build's new
    fragments' BM25 rows go (counted with the parse), rather than the tables' index."""
    keys, encoded = prep.win_key.tolist(), prep.encoded()
    found = t.by_text.find_all(keys, encoded)
    new_windows, repeats = _new_texts(keys, encoded, found)
    new_fids = new_fragments(
        t, [encoded[i] for i in new_windows], [keys[i] for i in new_windows], locate
    )
    for i, fid in zip(new_windows, new_fids, strict=True):
        found[i] = fid
    for i, j in repeats:
        found[i] = found[j]
    win_frag = np.array(found, np.int64)
    if locate:
        for fid, lo, hi in zip(found, prep.win_start.tolist(), prep.win_end.tolist(), strict=True):
            t.frag_locs.add(fid, Location(f.path, lo, hi))
    if rows is not None:
        assert prep.terms is not None and new_fids == list(range(len(rows), len(t.frag_text)))
        rows.add(prep.terms, new_windows)
    elif new_windows:
        # the lines the new windows cover, each tokenized once though windows overlap
        starts, ends = prep.win_start[new_windows], prep.win_end[new_windows]
        lo, hi = int(starts.min()), int(ends.max())
        lines = split_lines(f.text)[lo:hi]
        spans = list(zip((starts - lo).tolist(), (ends - lo).tolist(), strict=True))
        counts = count_terms(lines, spans)
        t.bm25.add_counted(new_fids, counts, np.arange(len(new_windows)))
    t.files[f.path] = FileEntry(
        language=f.language,
        digest=f.digest,
        content=f.text if content is None else content,
        win_start=prep.win_start,
        win_end=prep.win_end,
        win_frag=win_frag,
        wn_frag=win_frag[prep.wn_window],
        wn_node=prep.wn_node,
        wn_weight=prep.wn_weight,
    )


def _new_texts(
    keys: list[int], encoded: list[bytes], found: list[int | None]
) -> tuple[list[int], list[tuple[int, int]]]:
    """Of a file's windows whose text was not indexed (``found`` None), those whose text is
    new, and (window, earlier window) where a text repeats one of those: its fragment."""
    missing = [i for i, fid in enumerate(found) if fid is None]
    if len({keys[i] for i in missing}) == len(missing):
        return missing, []
    first: dict[int, int] = {}  # key -> the first new window with it
    clashed: dict[bytes, int] = {}  # a text whose key the first window's other text has
    new, repeats = [], []
    for i in missing:
        j = first.setdefault(keys[i], i)
        if j != i and encoded[j] != encoded[i]:
            j = clashed.setdefault(encoded[i], i)
        if j == i:
            new.append(i)
        else:
            repeats.append((i, j))
    return new, repeats


def new_fragments(
    t: IndexTables, encoded: list[bytes], keys: list[int], locate: bool = True
) -> list[int]:
    """Ids for distinct window texts not indexed yet, given in UTF-8 with their
    ``bytes_key``s, freed ids first, in one call a file (one at a time, the whole kernel's
    2.7M took ~2 us each of the build's main process); their BM25 rows are added by the
    caller."""
    fids = [t.free_ids.pop() for _ in encoded[: len(t.free_ids)]]
    for fid, text in zip(fids, encoded, strict=False):
        t.frag_text[fid] = text.decode("utf-8", "surrogatepass")
    lo, added = len(t.frag_text), encoded[len(fids) :]
    t.frag_text.extend_encoded(added)
    if locate:
        for _ in added:
            t.frag_locs.append([])
    fids += range(lo, lo + len(added))
    while lo + len(added) > t.live.size:  # grown as one id at a time grew them
        grow = max(1024, lo, t.live.size)
        t.live = np.concatenate([t.live, np.zeros(grow, bool)])
        t.frag_key = np.concatenate([t.frag_key, np.zeros(grow, np.int64)])
        t.truncated = np.concatenate([t.truncated, np.zeros(grow, bool)])
    t.live[fids] = True
    t.frag_key[fids] = keys
    t.by_text.put_all(keys, encoded, fids)
    return fids


def fragment_locations(t: IndexTables) -> Locations:
    """Every fragment's locations, from the files' windows."""
    paths = list(t.files)
    entries = t.files.values()
    sizes = [e.win_frag.size for e in entries]
    win_file = np.repeat(np.arange(len(paths), dtype=np.int32), sizes)
    indptr, rows = window_locations(
        win_file,
        np.concatenate([np.empty(0, np.int32), *(e.win_start for e in entries)]),
        np.concatenate([np.empty(0, np.int32), *(e.win_end for e in entries)]),
        np.concatenate([np.empty(0, np.int64), *(e.win_frag for e in entries)]),
        len(t.frag_text),
    )
    return Locations(paths, indptr, rows)


def grow_relations(t: IndexTables) -> None:
    """Rows for the new fragments. Room for an eighth more is made at once: copying the
    rows (43 MB for the standard library) took 9 ms of an update that added one."""
    n, have = len(t.frag_text), t.relation_idx.shape[0]
    if have < n:
        rows = max(n, have + max(1024, have // 8)) if have else n
        idx = np.full((rows, t.config.fragment_neighbours), -1, RELATION_ID)
        val = np.zeros(idx.shape, np.float64)
        idx[:have], val[:have] = t.relation_idx, t.relation_val
        t.relation_idx, t.relation_val = idx, val
    t.relation_rows = max(t.relation_rows, n)


def recompute_relations(t: IndexTables, rows: np.ndarray, progress: Progress | None = None) -> None:
    for part, idx, val in _related(t, rows, progress):
        write_relations(t, part, idx, val)
    t.relations_changed()


def spool_relations(t: IndexTables, spool: Path, progress: Progress | None = None) -> int:
    """A build's relation rows, every fragment's, written to the spool's ``rel_idx`` and
    ``rel_val`` as they are computed, with the spare rows a saved index has
    (``relation_spare``), and mapped back (copy-on-write): held, the whole kernel's took
    a gigabyte. The store finds them written. Returns how many relations there are,
    counted as they are written: counted from the rows mapped back, every page of those
    was read while the searches' pages were still resident (the kernel subset's
    relations' peak)."""
    n, cap = len(t.frag_text), t.config.fragment_neighbours
    rows = t.live_ids()
    assert rows.size == n, "a build frees no fragment id"
    t.mappings += t.spool_node_frags(spool)
    paths = spool / "rel_idx.npy", spool / "rel_val.npy"
    relations = 0
    with (
        ArrayWriter(paths[0], RELATION_ID, (cap,)) as ids,
        ArrayWriter(paths[1], np.float64, (cap,)) as vals,
    ):
        for done, (_, idx, val) in enumerate(_related(t, rows, progress), 1):
            ids.write(idx)
            vals.write(val)
            relations += int(np.count_nonzero(idx >= 0))
            if done % _CHUNKS_BETWEEN_RELEASES == 0:
                release_mapped(t.mappings)
        spare = relation_spare(n)
        for lo in range(0, spare, _SPARE_AT_ONCE):
            size = min(_SPARE_AT_ONCE, spare - lo)
            ids.write(np.full((size, cap), -1, RELATION_ID))
            vals.write(np.zeros((size, cap)))
    t.relation_idx, t.relation_val = mapped(paths[0]), mapped(paths[1])
    t.mappings += mappings_of([t.relation_idx, t.relation_val])
    t.relation_rows = n
    t.relations_changed()
    forget_scratch()
    return relations


# spare relation rows written at a time
_SPARE_AT_ONCE = 1 << 16

# chunks of relation rows (``_related``) computed between two hand-backs of the spilled
# tables' pages: what the searches read lately stays, the rest is read again if needed
_CHUNKS_BETWEEN_RELEASES = 16


def spill(pool: RowPool, spool: Path, name: str) -> list[mmap.mmap]:
    """``pool``'s arrays written to the spool and mapped back copy-on-write, their files
    removed at once (the maps keep them); returns the maps. A build's graph and node rows
    are read through by the relation searches and the save, not kept whole: held, the
    whole kernel's took ~2 GB, and ``release_mapped`` hands back the pages of these that
    were only read."""

    def copy(attr: str, values: np.ndarray) -> np.ndarray:
        path = spool / f"spill_{name}_{attr}.npy"
        write_array(path, values)
        out = mapped(path)
        path.unlink()
        return out

    pool.replace_arrays(copy)
    return pool.file_maps()


def _related(
    t: IndexTables, rows: np.ndarray, progress: Progress | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The relation rows of ``rows`` (ids, strengths), a chunk at a time in their order;
    the search radii and which rows a cap truncated are kept in ``t`` as they come."""
    rows = np.asarray(rows, np.int64)
    chunk = 4096
    parts = [rows[start : start + chunk] for start in range(0, rows.size, chunk)]
    graph, frag_nodes, node_frags = t.graph, t.frag_nodes, t.node_frags
    frag_key = t.frag_key[: len(t.frag_text)]

    def relate(part: np.ndarray, threads: int | None) -> tuple[np.ndarray, ...]:
        return compute_relations(
            graph,
            frag_nodes,
            node_frags,
            frag_key,
            part,
            epsilon=t.config.relation_epsilon,
            node_cap=t.config.node_neighbours,
            frag_cap=t.config.fragment_neighbours,
            hub=t.config.hub_degree,
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
            yield part, idx, val
            t.radius[nodes] = radius
            t.truncated[part] = capped
            done += part.size
            if progress:
                progress("relations", done, rows.size)


def write_relations(t: IndexTables, rows: np.ndarray, idx: np.ndarray, val: np.ndarray) -> None:
    """Set relation rows, keeping the relations by target in step once they are built:
    rebuilding them whole would cost the first retrieval after each edit 0.2 s on the
    Linux kernel's 9M relations. Only the (target, source) pairs that appear or vanish
    are edited: most recomputed rows come out as they were. Only the rows that change are
    written: a loaded index's rows are mapped copy-on-write, and writing a row as it was
    made its pages the process's own copies for the rest of the session (on the Linux
    kernel's kernel/ mm/ fs/ include/, 0.8 MB of relation pages per 100 edits, against
    0.3 MB written only where they change)."""
    rows = np.asarray(rows, np.int64)
    old = t.rel_idx[rows]
    idx = np.broadcast_to(idx, old.shape)
    val = np.broadcast_to(val, old.shape)
    changed = (old != idx).any(axis=1) | (t.rel_val[rows] != val).any(axis=1)
    pool = t.inverse
    if pool is not None:
        pool.grow(len(t.frag_text))
    if not changed.any():
        return
    rows, old = rows[changed], old[changed]
    t.rel_idx[rows], t.rel_val[rows] = idx[changed], val[changed]
    if pool is None:
        return
    new = t.rel_idx[rows]
    span = np.int64(max(len(t.frag_text), 1))
    source = np.broadcast_to(rows[:, None], new.shape)
    before = np.unique(old[old >= 0] * span + source[old >= 0])
    after = np.unique(new[new >= 0] * span + source[new >= 0])
    gone = np.setdiff1d(before, after, assume_unique=True)
    added = np.setdiff1d(after, before, assume_unique=True)
    pool.edit((gone // span, gone % span), (added // span, added % span))
