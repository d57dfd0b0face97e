"""Building a repository's index in full: files -> parsed code -> graph -> fragments ->
relations + BM25, and the steps on the tables that an update shares with it (fragments added,
relations grown and recomputed)."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.core import Location
from repomem.index import langs
from repomem.index.bm25 import BM25Index, TermCounts, count_terms
from repomem.index.files import SourceFile, scan_files
from repomem.index.fragments import Window, window_nodes, windows
from repomem.index.graph import build_graph
from repomem.index.mapped import Locations, TextIds, Texts, text_key, window_locations
from repomem.index.parsing import ParsedFile, parse_source, split_lines, supported, warm_up
from repomem.index.relations import compute_relations
from repomem.index.resolve import Resolver
from repomem.index.spool import spooled
from repomem.index.tables import FileEntry, IndexTables

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
    wins = windows(lines, config.fragment_lines, config.stride)
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


def build_tables(
    root: Path,
    config: IndexConfig,
    previous: IndexTables | None,
    progress: Progress | None,
    spool: Path,
) -> tuple[IndexTables, IndexSummary]:
    """Index ``root``, reusing the parses of unchanged files from ``previous`` (the saved
    index's tables). ``spool``: the folder that the files' and fragments' texts are written
    to as they are read, then mapped back from (a build's peak memory does not hold them)."""
    t0 = time.perf_counter()
    scan = scan_files(root, config, (lambda d, t: progress("scan", d, t)) if progress else None)
    t_scan = time.perf_counter()
    idx = IndexTables(config)
    idx.skipped = dict(scan.skipped)
    by_lang = Counter(f.language for f in scan.files)
    code = [f for f in scan.files if supported(f.language)]
    del scan  # the texts of what is not indexed go now, the others once spooled
    reused_parses = _unchanged_parses(code, previous)
    texts = Texts.spooled(spool, "texts")
    idx.frag_text = Texts.spooled(spool, "frag_text")
    idx.by_text = TextIds(idx.frag_text)
    for i, (f, prep) in enumerate(_prepare_all(code, reused_parses, config, progress)):
        idx.parsed[f.path] = prep.parsed
        texts.append(f.text)
        add_file_fragments(idx, f, prep, (texts, i), locate=False)  # its windows go
    del code  # and the texts, read once more from the spool's map when needed
    idx.frag_locs = fragment_locations(idx)
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
    resolver = Resolver(
        idx.parsed,
        imports=config.import_weight > 0,
        settings=idx.settings,
    )
    idx.calls = {p: resolver.calls_of(p) for p in idx.parsed}
    graph = build_graph(idx.parsed, idx.calls, config.import_weight)
    idx.adopt(resolver, graph)
    _ = idx.frag_nodes  # assembled now, with the graph
    idx.radius = np.full(graph.n_nodes, np.inf)
    t_graph = time.perf_counter()
    live = idx.live_ids()
    grow_relations(idx)
    recompute_relations(idx, live, progress)
    idx.drop_node_rows()
    t_rel = time.perf_counter()
    summary = IndexSummary(
        files_by_language=dict(sorted(by_lang.items())),
        skipped=idx.skipped,
        reparsed=len(idx.files) - len(reused_parses),
        reused=len(reused_parses),
        fragments=int(live.size),
        nodes=dict(graph.node_counts),
        edges=dict(graph.edge_counts),
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


def _unchanged_parses(
    files: list[SourceFile], previous: IndexTables | None
) -> dict[str, ParsedFile]:
    """The previous index's parses of the files whose content is unchanged."""
    return {
        f.path: previous.parsed[f.path]
        for f in files
        if previous is not None
        and f.path in previous.parsed
        and previous.parsed[f.path].digest == f.digest
    }


def add_file_fragments(
    t: IndexTables,
    f: SourceFile,
    prep: PreparedFile,
    content: str | tuple[Texts, int] | None = None,
    *,
    locate: bool = True,
) -> None:
    """``content``: where the index keeps the file's text (``f.text`` itself if not said);
    ``locate=False``: the caller derives the fragments' locations once every file is in
    (``fragment_locations``), as a build does: a list per fragment held the kernel's in
    objects several times the size of its windows' arrays."""
    win_frag = np.empty(len(prep.windows), np.int64)
    new_fids, new_windows = [], []
    for i, w in enumerate(prep.windows):
        fid = t.by_text.get(w.text)
        if fid is None:
            fid = new_fragment(t, w.text, locate)
            new_fids.append(fid)
            new_windows.append(i)
        if locate:
            t.frag_locs.add(fid, Location(f.path, w.start, w.end))
        win_frag[i] = fid
    if prep.terms is not None:
        t.bm25.add_counted(new_fids, prep.terms, np.array(new_windows, np.int64))
    elif new_windows:
        # the lines the new windows cover, each tokenized once though windows overlap
        added = [prep.windows[i] for i in new_windows]
        lo, hi = min(w.start for w in added), max(w.end for w in added)
        lines = split_lines(f.text)[lo:hi]
        counts = count_terms(lines, [(w.start - lo, w.end - lo) for w in added])
        t.bm25.add_counted(new_fids, counts, np.arange(len(added)))
    t.files[f.path] = FileEntry(
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


def new_fragment(t: IndexTables, text: str, locate: bool = True) -> int:
    """An id for a window text not indexed yet (its BM25 row is added by the caller)."""
    if t.free_ids:
        fid = t.free_ids.pop()
        t.frag_text[fid] = text
    else:
        fid = len(t.frag_text)
        t.frag_text.append(text)
        if locate:
            t.frag_locs.append([])
        if fid >= t.live.size:
            grow = max(1024, fid)
            t.live = np.concatenate([t.live, np.zeros(grow, bool)])
            t.frag_key = np.concatenate([t.frag_key, np.zeros(grow, np.int64)])
    t.live[fid] = True
    t.frag_key[fid] = text_key(text)
    t.by_text[text] = fid
    return fid


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
        idx = np.full((rows, t.config.fragment_neighbours), -1, np.int64)
        val = np.zeros(idx.shape, np.float64)
        idx[:have], val[:have] = t.relation_idx, t.relation_val
        t.relation_idx, t.relation_val = idx, val
    t.relation_rows = max(t.relation_rows, n)


def recompute_relations(t: IndexTables, rows: np.ndarray, progress: Progress | None = None) -> None:
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
            write_relations(t, part, idx, val)
            t.radius[nodes] = radius
            t.truncated.difference_update(part.tolist())
            t.truncated.update(part[capped].tolist())
            done += part.size
            if progress:
                progress("relations", done, rows.size)
    t.relations_changed()


def write_relations(t: IndexTables, rows: np.ndarray, idx: np.ndarray, val: np.ndarray) -> None:
    """Set relation rows, keeping the relations by target in step once they are built:
    rebuilding them whole would cost the first retrieval after each edit 0.2 s on the
    Linux kernel's 9M relations. Only the (target, source) pairs that appear or vanish
    are edited: most recomputed rows come out as they were."""
    pool, old = t.inverse, t.rel_idx[rows]
    t.rel_idx[rows], t.rel_val[rows] = idx, val
    if pool is None:
        return
    new = t.rel_idx[rows]
    pool.grow(len(t.frag_text))
    span = np.int64(max(len(t.frag_text), 1))
    source = np.broadcast_to(rows[:, None], new.shape)
    before = np.unique(old[old >= 0] * span + source[old >= 0])
    after = np.unique(new[new >= 0] * span + source[new >= 0])
    gone = np.setdiff1d(before, after, assume_unique=True)
    added = np.setdiff1d(after, before, assume_unique=True)
    pool.edit((gone // span, gone % span), (added // span, added % span))
