"""Persistence of an index's tables (``IndexTables``): versioned, atomic, and free of pickle.

Layout: ``<index_dir>/CURRENT`` names the live generation directory ``gen-<n>``, which holds
``manifest.json`` and one ``.npy`` file per array under ``arrays/``. A new generation is
written in full under a temporary name, renamed, and only then does ``CURRENT`` switch
(``os.replace``), so a run killed at any moment leaves the previous index (or none), never a
half-written one. A generation is never modified once written, which is what lets ``load``
map its arrays (copy-on-write) instead of reading them: the index opens at once whatever its
size, the pages a query touches are read on demand, and what updates change stays in memory
(``repomem.index.mapped``) until the next save writes a new generation.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from repomem import __version__
from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.bm25 import BM25Index
from repomem.index.gcpause import paused_gc
from repomem.index.graph import CodeGraph, import_cost, laid_out
from repomem.index.mapped import LazyDict, Locations, Texts, hash_order, window_locations
from repomem.index.parsing import ParsedFile, newline_positions
from repomem.index.resolve import saved_dependencies
from repomem.index.rowpool import RowPool
from repomem.index.saved_parse import (
    NODE_ROWS,
    FileParts,
    SpooledParses,
    callsites_of,
    definitions_of,
    packed_parse,
    saved_parse,
    symbols_of,
)
from repomem.index.spool import (
    ArrayWriter,
    TextWriter,
    extend_array,
    file_id,
    is_file,
    mapped,
    maps_file,
    spooled_parts,
    write_array,
)
from repomem.index.tables import (
    WINDOW_ROWS,
    FileEntry,
    IndexTables,
    SpooledCalls,
    packed_calls,
    relation_spare,
)
from repomem.index.trim import mappings_of, release_mapped

FORMAT_VERSION = 38


class IndexNotFound(RepomemError):
    pass


class IndexUnreadable(RepomemError):
    pass


def index_dir(root: Path, config: IndexConfig) -> Path:
    d = Path(config.index_dir)
    return d if d.is_absolute() else root / d


def _make_dir(directory: Path) -> None:
    """Create the index directory with a ``.gitignore`` of ``*``, as pytest's and ruff's
    caches do: the index holds the code's text, and ``git add -A`` must never commit it."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Created by repomem: the index is a cache of this tree.\n*\n")


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    _make_dir(directory)
    with open(directory / "lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def save(root: Path, tables: IndexTables, summary: dict | None = None) -> Path:
    """Write the index of ``root`` as the new live generation; returns its directory."""
    with writing(root, tables.config) as out:
        write_generation(tables, out, summary)
    return live_generation(root, tables.config)


@contextlib.contextmanager
def writing(root: Path, config: IndexConfig) -> Iterator[Path]:
    """A folder to write a new generation into, which goes live when the block ends (or is
    removed if it raises). While it is being written, a save beside it leaves it alone."""
    base = index_dir(root, config)
    with _locked(base):
        tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=base))
        busy = open(tmp / _BUSY, "w")  # noqa: SIM115 - closed below, whatever happens
        fcntl.flock(busy, fcntl.LOCK_EX)
    try:
        (tmp / "arrays").mkdir()
        yield tmp
        with _locked(base), paused_gc():
            (tmp / _BUSY).unlink()
            gen = base / f"gen-{_next_generation(base)}"
            os.rename(tmp, gen)
            _fsync(base)
            current_tmp = base / "CURRENT.tmp"
            current_tmp.write_text(gen.name)
            with open(current_tmp) as fh:
                os.fsync(fh.fileno())
            os.replace(current_tmp, base / "CURRENT")
            _fsync(base)
            _remove_stale(base, keep=gen.name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        busy.close()


# held (flock) in a generation's folder while it is being written
_BUSY = "writing"


def _next_generation(base: Path) -> int:
    nums = [int(p.name[4:]) for p in base.glob("gen-*") if p.name[4:].isdigit()]
    return max(nums, default=0) + 1


def _remove_stale(base: Path, keep: str) -> None:
    for p in base.iterdir():
        stale = p.is_dir() and p.name != keep and p.name.startswith(("gen-", "tmp-"))
        if stale and not _being_written(p):
            shutil.rmtree(p, ignore_errors=True)


def _being_written(folder: Path) -> bool:
    try:
        with open(folder / _BUSY) as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return False
    except BlockingIOError:
        return True
    return False


def _fsync_files(path: Path) -> None:
    """Every file of a generation's folder, and the folder, on disk before the generation
    goes live: the arrays are written without syncing (``spool``), most of what is written
    that way being scratch that is never saved."""
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False):
            _fsync(entry.path)
    _fsync(path)


def _fsync(path: Path | str) -> None:
    """A file's or a folder's (its entries') writes on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Generation:
    """The arrays of a generation being written: each goes to disk as soon as it is made
    (``put``), so that a save holds one table's copy at a time, not the whole index's."""

    def __init__(self, out: Path) -> None:
        self.dir = out / "arrays"
        self.names: list[str] = []

    def put(self, name: str, value: np.ndarray) -> None:
        """A build spools some tables into the generation it is saved as (``spooled``): an
        array mapped from its very file is there already."""
        path = self.dir / f"{name}.npy"
        if not is_file(value, path):
            write_array(path, value)
        self.names.append(name)

    def put_with_room(self, name: str, value: np.ndarray, room: int) -> None:
        """``value`` and ``room`` zeros after it. What a build spooled to that very file
        is extended in place (copying it read every page of it: the kernel's BM25 rows,
        0.9 GB); anything else is written beside and renamed over."""
        path = self.dir / f"{name}.npy"
        if is_file(value, path):
            extend_array(path, room)
        else:
            with ArrayWriter(path.with_suffix(".part"), value.dtype) as out:
                out.write(value)
                out.write(np.zeros(room, value.dtype))
            os.replace(path.with_suffix(".part"), path)
        self.names.append(name)

    def writer(self, name: str, dtype: type, row_shape: tuple[int, ...] = ()) -> ArrayWriter:
        self.names.append(name)
        return ArrayWriter(self.dir / f"{name}.npy", dtype, row_shape)

    def texts(self, name: str, encoded: Iterable[bytes]) -> None:
        out = TextWriter(self.dir, name)
        for e in encoded:
            out.append(e)
        out.close()
        self.names += [name, f"{name}_off"]

    def concat(self, name: str, parts: Iterable[np.ndarray], dtype: type) -> None:
        """Written beside and renamed over: a part may be mapped from the file it replaces
        (a build's spooled window rows), which truncating would pull from under it."""
        ends = [0]
        path = self.dir / f"{name}.npy"
        with ArrayWriter(path.with_suffix(".part"), dtype) as out:
            for p in parts:
                out.write(p)
                ends.append(ends[-1] + p.size)
        os.replace(path.with_suffix(".part"), path)
        self.names.append(name)
        self.put(f"{name}_off", np.array(ends, np.int64))

    def written(self, name: str, texts: Texts | None) -> bool:
        """Whether ``texts`` were spooled as ``name`` of this generation, as they are now."""
        path = self.dir / f"{name}.npy"
        if texts is None or not texts.pristine or not path.exists():
            return False
        if texts.file_id != file_id(path):
            return False
        self.names += [name, f"{name}_off"]
        return True

    def load(self, name: str) -> np.ndarray:
        return mapped(self.dir / f"{name}.npy")


def write_generation(
    index: IndexTables, out: Path, summary: dict | None, *, keep_node_rows: bool = True
) -> None:
    """Write an index's tables into ``out``, a folder from ``writing``. ``keep_node_rows``
    false (a build's save): the fragments' node rows go once written (only a build's
    relations read them; an update derives them again, as after a load). The graph and
    node rows are written in a thread of their own beside the rest (numpy and the writes
    let go of the lock): on one core, a save took the whole Linux kernel's build 18 s."""
    paths = sorted(index.files)
    entries = [index.files[p] for p in paths]
    gen = _Generation(out)
    with ThreadPoolExecutor(1) as beside:
        graph_saved = beside.submit(_save_graph, index, gen)
        _put_texts(gen, index, entries)
        _put_file_rows(gen, index, paths, entries)
        _put_fragments(gen, index, len(paths))
        _put_calls(gen, index, paths)
        rows = _put_relations(gen, index)
        gen.put("truncated", np.flatnonzero(index.truncated).astype(np.int64))
        gen.put("radius", index.canonical_radius())
        for key, value in index.bm25.state().items():
            if key in _BM25_ROOM:  # with room for the rows and terms updates add
                gen.put_with_room(f"bm25__{key}", value, _room(value.size))
            else:
                gen.put(f"bm25__{key}", value)
        _put_resolution(gen, index, paths)
        graph_saved.result()
    if not keep_node_rows:
        index.drop_node_rows()
    _fsync_files(gen.dir)
    manifest = {
        "format": FORMAT_VERSION,
        "repomem": __version__,
        "config": asdict(index.config),
        "files": [[p, e.language, e.digest] for p, e in zip(paths, entries, strict=True)],
        "arrays": sorted(gen.names),
        "relation_rows": rows,
        "skipped": index.skipped,
        "settings": index.settings,
        "summary": summary or {},
    }
    with open(out / "manifest.json", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, separators=(",", ":")))
        fh.flush()
        os.fsync(fh.fileno())


def _put_texts(gen: _Generation, index: IndexTables, entries: list[FileEntry]) -> None:
    """The files' and the fragments' texts."""
    # a build spools its texts into the generation it is saved as: they are there already
    texts = {e.content[0] if isinstance(e.content, tuple) else None for e in entries}
    if not (
        len(texts) == 1
        and gen.written("texts", texts.pop())
        and all(e.content[1] == i for i, e in enumerate(entries))  # type: ignore[index]
    ):
        gen.texts("texts", (e.encoded for e in entries))
    # a loaded file's newlines as saved (its text unchanged: an edit makes a new entry); the
    # others' found in their texts read back as written (a build's are in the generation
    # already, not in memory), rather than scanning every text at every save
    data, bounds = gen.load("texts"), gen.load("texts_off").tolist()
    gen.concat(
        "text_newlines",
        (
            newline_positions(data[a:b]) if e.newlines is None else e.newlines
            for e, a, b in zip(entries, bounds, bounds[1:], strict=False)
        ),
        np.int32,
    )
    if not gen.written("frag_text", index.frag_text):
        gen.texts("frag_text", index.frag_text.encoded())


def _put_file_rows(
    gen: _Generation, index: IndexTables, paths: list[str], entries: list[FileEntry]
) -> None:
    """Per file, its windows and their Eq. 8 weights (a build spooled them to the very
    files, in this order: ``build.WindowRows``), and its parse's node rows."""
    for name, dtype in WINDOW_ROWS:
        parts = [getattr(e, name) for e in entries]
        if spooled_parts(parts, gen.dir / f"{name}.npy"):
            gen.names.append(name)
            gen.put(f"{name}_off", np.cumsum([0, *(p.size for p in parts)], dtype=np.int64))
        else:
            gen.concat(name, parts, dtype)
    if _parses_written(gen, index, paths):
        gen.names += [n for name in NODE_ROWS for n in (name, f"{name}_off")]
        return
    for name in NODE_ROWS:
        gen.concat(name, (getattr(index.parsed[p], name) for p in paths), np.int32)


def _put_fragments(gen: _Generation, index: IndexTables, n_files: int) -> None:
    """The fragments' locations (from the windows written), liveness and keys."""
    n_frags = len(index.frag_text)
    win_file = np.repeat(np.arange(n_files, dtype=np.int32), np.diff(gen.load("win_start_off")))
    indptr, (loc_file, loc_start, loc_end) = window_locations(
        win_file, gen.load("win_start"), gen.load("win_end"), gen.load("win_frag"), n_frags
    )
    del win_file
    for name, value in (
        ("loc_indptr", indptr),
        ("loc_file", loc_file),
        ("loc_start", loc_start),
        ("loc_end", loc_end),
    ):
        gen.put(name, value)
    del indptr, loc_file, loc_start, loc_end
    # with room for the fragments updates add, as for the BM25 rows (``_room``)
    live = np.asarray(index.live[:n_frags], bool)
    gen.put_with_room("live", live, _room(n_frags))
    frag_key = np.asarray(index.frag_key[:n_frags], np.int64)
    gen.put_with_room("frag_key", frag_key, _room(n_frags))
    live_ids = np.flatnonzero(live)
    gen.put("frag_by_key", live_ids[hash_order(frag_key[live_ids])])


# The per-row and per-fragment arrays saved with zeros after them, where an update after a
# load appends (copy-on-write, page by page): saved without, the first edit on the whole
# Linux kernel copied the BM25 rows' bounds and lengths and the fragments' keys and
# liveness into memory, reading every page of them (160 MB more of its resident set).
_BM25_ROOM = ("row_terms", "row_tf", "row_ptr", "row_len")


def _room(size: int) -> int:
    """An eighth more, and at least 65,536."""
    return max(1 << 16, size // 8)


def _put_calls(gen: _Generation, index: IndexTables, paths: list[str]) -> None:
    """The resolved calls, rows of (file, source node, target file, target node)."""
    if isinstance(index.calls, SpooledCalls) and index.calls.written_in(gen.dir, paths):
        gen.names += ["calls", "calls_off"]
        return
    file_no = {p: i for i, p in enumerate(paths)}
    ends = [0]
    with gen.writer("calls", np.int64, (4,)) as w:
        for i, p in enumerate(paths):  # a file at a time: a tuple per call took the kernel's
            rows = [(i, s, file_no[t], n) for s, t, n in index.calls.get(p, ())]  # ~0.4 GB
            w.write(np.array(rows, np.int64).reshape(-1, 4))
            ends.append(ends[-1] + len(rows))
    gen.put("calls_off", np.array(ends, np.int64))


def _put_relations(gen: _Generation, index: IndexTables) -> int:
    """The relation rows, with spare rows, and the relations by target; returns the rows."""
    # spare relation rows, so that the first new fragments do not copy the table
    rows, cap = index.rel_idx.shape
    spare = relation_spare(rows)
    for name, table, fill in (("rel_idx", index.rel_idx, -1), ("rel_val", index.rel_val, 0.0)):
        whole = index.relation_idx if name == "rel_idx" else index.relation_val
        if whole.shape[0] == rows + spare and maps_file(whole, gen.dir / f"{name}.npy"):
            gen.names.append(name)  # a build's, written where it is saved
            continue
        with gen.writer(name, table.dtype, (cap,)) as w:
            for lo in range(0, rows, _ROWS):
                w.write(table[lo : lo + _ROWS])
            for lo in range(0, spare, _ROWS):
                w.write(np.full((min(_ROWS, spare - lo), cap), fill, table.dtype))
    # and the relations by target as retrieval reads them, laid out as an in-memory pool is
    # (an eighth more room), so that a loaded index's first query does not gather them
    inv_ptr, inv_src = index.relations_by_target()
    gen.put("inv_indptr", inv_ptr)
    with gen.writer("inv_src", np.int64) as w:
        for part in inv_src:
            for lo in range(0, part.size, _ROWS):  # int32 as derived: widened a part at a time
                w.write(part[lo : lo + _ROWS])
        w.write(np.full(int(inv_ptr[-1]) // 8, -1, np.int64))
    return rows


def _put_resolution(gen: _Generation, index: IndexTables, paths: list[str]) -> None:
    """What call resolution depended on, and the parses' symbols and call sites."""
    if index.resolution_saved:  # a build's, in this generation already if saved here
        assert index.spooled_resolution is not None
        for name, value in index.spooled_resolution.items():
            gen.put(name, value)
    else:
        resolver = index.resolver
        # what call resolution depended on, as arrays that a load maps (``SavedDependencies``)
        deps = resolver.dependency_arrays(paths)
        for name, value in deps.items():
            gen.put(name, value)
        del deps
        # and the definitions by name, so that a load enters no file's parse (``SavedNames``)
        for name, value in resolver.by_name.arrays(paths).items():
            gen.put(name, value)
    if _parses_written(gen, index, paths):
        gen.names += [
            "symbols", "symbols_off", "definitions", "definitions_off", "callsites", "callsites_off"
        ]  # fmt: skip
        return
    # dumps, not dump: only the one-shot encoder is the C one
    gen.texts("symbols", (symbols_of(index.parsed[p]) for p in paths))
    # apart and as columns: a file whose cards or names are read needs its definitions alone
    gen.texts("definitions", (definitions_of(index.parsed[p]) for p in paths))
    gen.texts("callsites", (callsites_of(index.parsed[p]) for p in paths))


def _parses_written(gen: _Generation, index: IndexTables, paths: list[str]) -> bool:
    """Whether a build spooled its parses into this generation, as they are now."""
    parsed = index.parsed
    return isinstance(parsed, SpooledParses) and parsed.written_in(gen.dir, paths)


# rows written at a time where a table is copied into a generation
_ROWS = 1 << 16


def _save_graph(index: IndexTables, gen: _Generation) -> None:
    """The code graph and the node rows of the fragments, numbered as ``build_graph`` numbers
    them, so that an update after a load does not build them from every file's parse."""
    graph = index.graph
    ids, n = graph.canonical_ids()
    at = np.full(n, -1, np.int64)  # per canonical id, the node holding it now
    key = np.zeros(n, np.int64)
    # a block of nodes at a time: the temporaries of all at once, each an int64 per node,
    # took ~0.5 GB of the whole Linux kernel's save
    for lo in range(0, ids.size, _ROWS):
        part = ids[lo : lo + _ROWS]
        held = np.flatnonzero(part >= 0)
        at[part[held]] = held + lo
        key[part[held]] = graph.key[held + lo]
    gen.put("graph_key", key)
    del key
    _put_rows(gen, ("graph_indptr", "graph_nbr", "graph_cost"), graph.adj, at, ids)
    frag_nodes = index.frag_nodes
    frag_nodes.grow(len(index.frag_text))
    rows = np.arange(len(index.frag_text))
    _put_rows(gen, ("fn_indptr", "fn_node", "fn_weight"), frag_nodes, rows, ids)
    _put_rows(gen, ("nf_indptr", "nf_frag", "nf_weight"), index.node_frags, at, None)


def _put_rows(
    gen: _Generation,
    names: tuple[str, str, str],
    pool: RowPool,
    rows: np.ndarray,
    ids: np.ndarray | None,
) -> None:
    """``rows`` of ``pool`` (-1: an empty row) as CSR (indptr, columns, values) with an
    eighth more room (columns -1), as ``RowPool.adopt`` opens them; ``ids``: what each
    column becomes. Written a few rows at a time, the pointers too: a copy of the whole
    pool and its positions took the kernel's save a gigabyte more than the pool itself,
    and the pointers' temporaries, each one int64 per row, ~0.5 GB for its 16M nodes."""
    # a mapped pool's pages read go back after each block (``build.spill``: read once)
    read = pool.file_maps()
    total = 0
    with gen.writer(names[0], np.int64) as indptr:
        indptr.write(np.zeros(1, np.int64))
        for lo in range(0, rows.size, _ROWS):
            part = rows[lo : lo + _ROWS]
            counts = np.where(part >= 0, pool.lengths(np.maximum(part, 0)), 0)
            ends = total + np.cumsum(counts)
            indptr.write(ends)
            total = int(ends[-1])
    release_mapped(read)
    room = total // 8
    with gen.writer(names[1], np.int64) as cols, gen.writer(names[2], np.float64) as vals:
        for lo in range(0, rows.size, _ROWS):
            part = rows[lo : lo + _ROWS]
            _, c, v = pool.gather(part[part >= 0])
            cols.write(c if ids is None else ids[c])
            vals.write(v)
            release_mapped(read)
        for lo in range(0, room, _ROWS):
            size = min(_ROWS, room - lo)
            cols.write(np.full(size, -1, np.int64))
            vals.write(np.zeros(size))


def config_from(data: dict) -> IndexConfig:
    known = {f.name for f in fields(IndexConfig)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known}
    return IndexConfig(**values)


def live_generation(root: Path, config: IndexConfig) -> Path:
    base = index_dir(root, config)
    current = base / "CURRENT"
    if not current.is_file():
        raise IndexNotFound(f"no index at {base}; run `repomem index {root}` first")
    gen = base / current.read_text().strip()
    if not gen.is_dir():
        raise IndexUnreadable(
            f"index at {base} is damaged (missing {gen.name}); re-run `repomem index`"
        )
    return gen


def read_manifest(root: Path, config: IndexConfig) -> dict:
    gen = live_generation(root, config)
    try:
        manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexUnreadable(
            f"index at {gen} is unreadable ({exc}); re-run `repomem index`"
        ) from exc
    if manifest.get("format") != FORMAT_VERSION:
        raise IndexUnreadable(
            f"index at {gen.parent} has format {manifest.get('format')!r}, this repomem reads "
            f"format {FORMAT_VERSION}; re-run `repomem index` to rebuild it"
        )
    return manifest


def load(root: Path, config: IndexConfig | None = None, *, mapped: bool = True) -> IndexTables:
    """The tables of the live index of ``root``; raises ``IndexNotFound``/``IndexUnreadable``.

    ``mapped``: map the saved arrays copy-on-write (read on demand, never written back);
    otherwise read them into memory, which gives the same index (tests compare the two)."""
    config = config or IndexConfig()
    manifest = read_manifest(root, config)
    gen = live_generation(root, config)
    try:
        arrays = {
            name: np.load(gen / "arrays" / f"{name}.npy", mmap_mode="c" if mapped else None).view(
                np.ndarray
            )
            for name in manifest["arrays"]
        }
        tables = _restore(config_from(manifest["config"]), manifest, arrays)
        tables.mappings = mappings_of(arrays.values())
        base = index_dir(root, config)
        if mapped and os.access(base, os.W_OK):  # BM25's compactions stay file pages too
            tables.bm25.spool = base
        return tables
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise IndexUnreadable(
            f"index at {gen} is unreadable ({exc}); re-run `repomem index`"
        ) from exc


# the per-file parts of the saved arrays: each has an ``_off`` array of the files' bounds
_WINDOWS = tuple(name for name, _ in WINDOW_ROWS)


def _restore(config: IndexConfig, manifest: dict, a: dict) -> IndexTables:
    paths = [f[0] for f in manifest["files"]]
    parts = FileParts(
        a, (*_WINDOWS, *NODE_ROWS, "symbols", "definitions", "callsites", "calls", "text_newlines")
    )
    texts = Texts(a["texts"], a["texts_off"])
    live, frag_key, order = a["live"], a["frag_key"], a["frag_by_key"]
    frag_text = Texts(a["frag_text"], a["frag_text_off"])

    def calls(i: int) -> list[tuple[int, str, int]]:
        return [(s, paths[t], n) for _, s, t, n in parts.of("calls", i).tolist()]

    def parse(i: int) -> ParsedFile:
        return saved_parse(manifest["files"][i], lambda name: parts.of(name, i))

    parsed = LazyDict(paths, parse, packed_parse)

    def shared(i: int) -> ParsedFile:
        """The resolver's saved parse: the tables' own while they hold it (each file a
        cursor's names reach was decoded twice, once for each), else made apart (an update
        replaces or removes the tables' parse before the resolver lets go of the saved one)."""
        path = paths[i]
        return parsed[path] if parsed.saved_position(path) == i else parse(i)

    return IndexTables(
        config,
        files={
            path: FileEntry(
                language,
                digest,
                (texts, i),
                *parts.all(_WINDOWS, i),
                newlines=parts.of("text_newlines", i),
            )
            for i, (path, language, digest) in enumerate(manifest["files"])
        },
        parsed=parsed,
        calls=LazyDict(paths, calls, packed_calls),
        skipped=dict(manifest["skipped"]),
        settings=dict(manifest["settings"]),
        frag_text=frag_text,
        frag_locs=Locations(paths, a["loc_indptr"], (a["loc_file"], a["loc_start"], a["loc_end"])),
        frag_order=(frag_key[order], order),
        free_ids=np.flatnonzero(~live[: len(frag_text)]).tolist(),  # not the room after
        live=live,
        frag_key=frag_key,
        bm25=BM25Index.from_state(
            {k[6:]: v for k, v in a.items() if k.startswith("bm25__")}, trusted=True
        ),
        relation_idx=a["rel_idx"],
        relation_val=a["rel_val"],
        relation_rows=int(manifest["relation_rows"]),
        inverse=RowPool.adopt(a["inv_indptr"], a["inv_src"]),
        truncated=_flags(a["truncated"], frag_key.size),
        radius=a["radius"],
        saved_graph=lambda: _saved_graph(config, paths, a),
        saved_call_rows=lambda i: (paths, parts.of("calls", i)[:, 1:]),
        saved_calls_into=lambda: _saved_calls_into(paths, a["calls"]),
        saved_dependencies=saved_dependencies(paths, [f[1] for f in manifest["files"]], shared, a),
    )


def _flags(ids: np.ndarray, n: int) -> np.ndarray:
    """Per id below ``n``, whether ``ids`` holds it."""
    out = np.zeros(n, bool)
    out[ids] = True
    return out


def _saved_graph(
    config: IndexConfig, paths: list[str], a: dict
) -> tuple[CodeGraph, RowPool, RowPool]:
    """The code graph and the fragments' node rows, both ways, from the saved arrays."""
    n_nodes = np.diff(a["node_start_off"]).tolist()
    return (
        laid_out(
            dict(zip(paths, n_nodes, strict=True)),
            RowPool.adopt(a["graph_indptr"], a["graph_nbr"], a["graph_cost"]),
            a["graph_key"],
            import_cost(config.import_weight),
        ),
        RowPool.adopt(a["fn_indptr"], a["fn_node"], a["fn_weight"]),
        RowPool.adopt(a["nf_indptr"], a["nf_frag"], a["nf_weight"]),
    )


def _saved_calls_into(paths: list[str], calls: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """``IndexTables.calls_into`` from the saved calls, rows of (file, source node, target
    file, target node) (nothing changes them before it is first used), grouped at once rather
    than file by file."""
    calls = calls[np.lexsort((calls[:, 0], calls[:, 2]))]
    pairs = np.ascontiguousarray(calls[:, [1, 3]])
    new = (np.diff(calls[:, 0]) != 0) | (np.diff(calls[:, 2]) != 0)
    first = np.flatnonzero(np.r_[calls.shape[0] > 0, new])
    bounds = np.r_[first, calls.shape[0]].tolist()
    out: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    for k, (src, target) in enumerate(calls[first][:, [0, 2]].tolist()):
        out[paths[target]][paths[src]] = pairs[bounds[k] : bounds[k + 1]]
    return out


def index_bytes(root: Path, config: IndexConfig) -> int:
    gen = live_generation(root, config)
    return sum(p.stat().st_size for p in gen.rglob("*") if p.is_file())
