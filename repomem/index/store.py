"""Persistence of a ``RepoIndex``: versioned, atomic, and free of pickle.

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
from collections.abc import Callable, Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from repomem import __version__
from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.bm25 import BM25Index
from repomem.index.gcpause import paused_gc
from repomem.index.graph import CodeGraph, import_cost, laid_out
from repomem.index.mapped import LazyDict, Locations, TextIds, Texts
from repomem.index.parsing import CallSite, Definition, ImportBinding, ParsedFile
from repomem.index.repo import FileEntry, RepoIndex
from repomem.index.rowpool import RowPool

FORMAT_VERSION = 7


class IndexNotFound(RepomemError):
    pass


class IndexUnreadable(RepomemError):
    pass


def index_dir(root: Path, config: IndexConfig) -> Path:
    d = Path(config.index_dir)
    return d if d.is_absolute() else root / d


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _blob(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), offsets


def _concat(parts: list[np.ndarray], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([p.size for p in parts], out=offsets[1:])
    data = np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype)
    return data, offsets


def save(index: RepoIndex, summary: dict | None = None) -> Path:
    """Write ``index`` as the new live generation; returns its directory."""
    base = index_dir(index.root, index.config)
    with _locked(base), paused_gc():
        tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=base))
        try:
            _write_generation(index, tmp, summary)
            gen = base / f"gen-{_next_generation(base)}"
            os.rename(tmp, gen)
            _fsync_dir(base)
            current_tmp = base / "CURRENT.tmp"
            current_tmp.write_text(gen.name)
            with open(current_tmp) as fh:
                os.fsync(fh.fileno())
            os.replace(current_tmp, base / "CURRENT")
            _fsync_dir(base)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _remove_stale(base, keep=gen.name)
    return gen


def _next_generation(base: Path) -> int:
    nums = [int(p.name[4:]) for p in base.glob("gen-*") if p.name[4:].isdigit()]
    return max(nums, default=0) + 1


def _remove_stale(base: Path, keep: str) -> None:
    for p in base.iterdir():
        if p.is_dir() and p.name != keep and p.name.startswith(("gen-", "tmp-")):
            shutil.rmtree(p, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_generation(index: RepoIndex, out: Path, summary: dict | None) -> None:
    paths = sorted(index.files)
    entries = [index.files[p] for p in paths]
    parsed = [index.parsed[p] for p in paths]
    n_frags = len(index.frag_text)
    arrays: dict[str, np.ndarray] = {}
    arrays["texts"], arrays["texts_off"] = _blob([e.text for e in entries])
    arrays["frag_text"], arrays["frag_text_off"] = _blob(list(index.frag_text))
    for name, dtype in (
        ("win_start", np.int32),
        ("win_end", np.int32),
        ("win_frag", np.int64),
        ("wn_frag", np.int64),
        ("wn_node", np.int64),
        ("wn_weight", np.float64),
    ):
        arrays[name], arrays[f"{name}_off"] = _concat([getattr(e, name) for e in entries], dtype)
    for name in ("line_len", "node_start", "node_end", "node_parent", "line_owner"):
        arrays[name], arrays[f"{name}_off"] = _concat([getattr(p, name) for p in parsed], np.int32)
    # every window's place, grouped by fragment (in path and line order within one)
    win_file = np.repeat(np.arange(len(paths), dtype=np.int32), np.diff(arrays["win_start_off"]))
    by_frag = np.argsort(arrays["win_frag"], kind="stable")
    arrays["loc_file"] = win_file[by_frag]
    arrays["loc_start"] = arrays["win_start"][by_frag]
    arrays["loc_end"] = arrays["win_end"][by_frag]
    arrays["loc_indptr"] = np.searchsorted(
        arrays["win_frag"][by_frag], np.arange(n_frags + 1)
    ).astype(np.int64)
    live = np.asarray(index.live[:n_frags], bool)
    arrays["live"] = live
    arrays["frag_key"] = np.asarray(index.frag_key[:n_frags], np.int64)
    live_ids = np.flatnonzero(live)
    arrays["frag_by_key"] = live_ids[np.argsort(arrays["frag_key"][live_ids], kind="stable")]
    file_no = {p: i for i, p in enumerate(paths)}
    calls = [(file_no[p], s, file_no[t], n) for p in paths for s, t, n in index.calls.get(p, ())]
    arrays["calls"] = np.array(calls, np.int64).reshape(-1, 4)
    arrays["calls_off"] = np.searchsorted(arrays["calls"][:, 0], np.arange(len(paths) + 1))
    # spare relation rows, so that the first new fragments do not copy the table
    rows = index.rel_idx.shape[0]
    spare = rows + max(1024, rows // 8)
    arrays["rel_idx"] = np.full((spare, index.rel_idx.shape[1]), -1, np.int64)
    arrays["rel_val"] = np.zeros(arrays["rel_idx"].shape, np.float64)
    arrays["rel_idx"][:rows], arrays["rel_val"][:rows] = index.rel_idx, index.rel_val
    # and the relations by target as retrieval reads them, laid out as an in-memory pool is
    # (an eighth more room), so that a loaded index's first query does not gather them
    inverse = index.inverse_relations
    inv_ptr, inv_src, _ = inverse.gather(np.arange(inverse.n_rows))
    arrays["inv_indptr"] = inv_ptr
    arrays["inv_src"] = np.full(inv_src.size + inv_src.size // 8, -1, np.int64)
    arrays["inv_src"][: inv_src.size] = inv_src
    arrays["truncated"] = np.array(sorted(index.truncated), np.int64)
    arrays["radius"] = index.canonical_radius()
    _save_graph(index, arrays)
    for key, value in index.bm25.state().items():
        arrays[f"bm25__{key}"] = value
    resolver = index.resolver
    # dumps, not dump: only the one-shot encoder is the C one (6x faster here); what call
    # resolution depended on is apart, as only files whose calls are resolved again read it
    arrays["deps"], arrays["deps_off"] = _blob(
        [json.dumps(resolver.dependencies(pf.path), separators=(",", ":")) for pf in parsed]
    )
    arrays["symbols"], arrays["symbols_off"] = _blob(
        [
            json.dumps(
                {
                    "defs": [[d.name, d.node, d.is_class] for d in pf.definitions],
                    "imports": [[b.name, b.module, b.symbol, b.level] for b in pf.imports],
                    "import_nodes": pf.import_nodes,
                    "has_error": pf.has_error,
                    "bases": {k: [list(v) for v in vs] for k, vs in pf.bases.items()},
                },
                separators=(",", ":"),
            )
            for pf in parsed
        ]
    )
    # apart, as only files whose calls are resolved again read their call sites
    arrays["callsites"], arrays["callsites_off"] = _blob(
        [
            json.dumps([[c.node, list(c.parts), c.scope] for c in pf.calls], separators=(",", ":"))
            for pf in parsed
        ]
    )
    (out / "arrays").mkdir()
    for name, value in arrays.items():
        with open(out / "arrays" / f"{name}.npy", "wb") as fh:
            np.save(fh, value, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
    _fsync_dir(out / "arrays")
    manifest = {
        "format": FORMAT_VERSION,
        "repomem": __version__,
        "config": asdict(index.config),
        "files": [[p, e.language, e.digest] for p, e in zip(paths, entries, strict=True)],
        "arrays": sorted(arrays),
        "relation_rows": rows,
        "skipped": index.skipped,
        "summary": summary or {},
    }
    with open(out / "manifest.json", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, separators=(",", ":")))
        fh.flush()
        os.fsync(fh.fileno())


def _save_graph(index: RepoIndex, arrays: dict[str, np.ndarray]) -> None:
    """The code graph and the node rows of the fragments, numbered as ``build_graph`` numbers
    them, so that an update after a load does not build them from every file's parse."""
    graph = index.graph
    ids, n = graph.canonical_ids()
    at = np.full(n, -1, np.int64)  # per canonical id, the node holding it now
    held = np.flatnonzero(ids >= 0)
    at[ids[held]] = held
    arrays["graph_key"] = np.zeros(n, np.int64)
    arrays["graph_key"][ids[held]] = graph.key[held]
    indptr, nbr, cost = graph.adj.saved(at)
    nbr[: indptr[-1]] = ids[nbr[: indptr[-1]]]
    arrays["graph_indptr"], arrays["graph_nbr"], arrays["graph_cost"] = indptr, nbr, cost
    frag_nodes = index.frag_nodes
    frag_nodes.grow(len(index.frag_text))
    indptr, node, weight = frag_nodes.saved(np.arange(len(index.frag_text)))
    node[: indptr[-1]] = ids[node[: indptr[-1]]]
    arrays["fn_indptr"], arrays["fn_node"], arrays["fn_weight"] = indptr, node, weight
    arrays["nf_indptr"], arrays["nf_frag"], arrays["nf_weight"] = index.node_frags.saved(at)


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


def load(root: Path, config: IndexConfig | None = None, *, mapped: bool = True) -> RepoIndex:
    """Open the live index of ``root``; raises ``IndexNotFound``/``IndexUnreadable``.

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
        return _restore(root, config_from(manifest["config"]), manifest, arrays)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise IndexUnreadable(
            f"index at {gen} is unreadable ({exc}); re-run `repomem index`"
        ) from exc


def _restore(root: Path, config: IndexConfig, manifest: dict, a: dict) -> RepoIndex:
    idx = RepoIndex(root, config)
    idx.skipped = dict(manifest["skipped"])
    paths = [f[0] for f in manifest["files"]]
    texts = Texts(a["texts"], a["texts_off"])
    idx.frag_text = Texts(a["frag_text"], a["frag_text_off"])
    idx.frag_locs = Locations(paths, a["loc_indptr"], (a["loc_file"], a["loc_start"], a["loc_end"]))
    offsets = {
        name: a[f"{name}_off"].tolist()
        for name in (
            *("win_start", "win_end", "win_frag", "wn_frag", "wn_node", "wn_weight"),
            *("line_len", "node_start", "node_end", "node_parent", "line_owner"),
            *("symbols", "callsites", "deps", "calls"),
        )
    }

    def part(name: str, i: int) -> np.ndarray:
        off = offsets[name]
        return a[name][off[i] : off[i + 1]]

    def parsed(i: int) -> ParsedFile:
        path, language, digest = manifest["files"][i]
        sym = json.loads(part("symbols", i).tobytes())
        # tuple.__new__ skips the named tuples' Python-level constructors: a first update
        # after a load makes every file's parse, ~400k of them on the standard library
        new = tuple.__new__

        def callsites() -> list[CallSite]:
            return [
                new(CallSite, (node, tuple(parts), scope))
                for node, parts, scope in json.loads(part("callsites", i).tobytes())
            ]

        return SavedParse(
            path,
            language,
            digest,
            *(
                part(n, i)
                for n in ("line_len", "node_start", "node_end", "node_parent", "line_owner")
            ),
            has_error=sym["has_error"],
            definitions=[new(Definition, d) for d in sym["defs"]],
            imports=[new(ImportBinding, b) for b in sym["imports"]],
            import_nodes=sym["import_nodes"],
            bases={k: [tuple(v) for v in vs] for k, vs in sym["bases"].items()},
            callsites=callsites,
        )

    def dependencies(i: int) -> tuple[list[list], list[str]]:
        deps = json.loads(part("deps", i).tobytes())
        return deps[0], deps[1]

    def calls(i: int) -> list[tuple[int, str, int]]:
        return [(s, paths[t], n) for _, s, t, n in part("calls", i).tolist()]

    for i, (path, language, digest) in enumerate(manifest["files"]):
        idx.files[path] = FileEntry(
            language,
            digest,
            (texts, i),
            *(
                part(n, i)
                for n in ("win_start", "win_end", "win_frag", "wn_frag", "wn_node", "wn_weight")
            ),
        )
    idx.parsed = LazyDict(paths, parsed)
    idx.calls = LazyDict(paths, calls)
    idx.saved_dependencies = LazyDict(paths, dependencies)
    idx.live = a["live"]
    idx.frag_key = a["frag_key"]
    idx.free_ids = np.flatnonzero(~idx.live).tolist()
    order = a["frag_by_key"]
    idx.by_text = TextIds(idx.frag_text, idx.frag_key[order], order)
    rows = int(manifest["relation_rows"])
    idx.set_relations(
        a["rel_idx"], a["rel_val"], rows, RowPool.adopt(a["inv_indptr"], a["inv_src"])
    )
    idx.truncated = set(a["truncated"].tolist())
    idx.radius = a["radius"]

    def graph() -> tuple[CodeGraph, RowPool, RowPool]:
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

    idx.saved_graph = graph

    def calls_into() -> dict[str, dict[str, np.ndarray]]:
        """``RepoIndex.calls_into`` from the saved calls (nothing changes them before it is
        first used), grouped at once rather than file by file."""
        calls = a["calls"]  # rows of (file, source node, target file, target node)
        calls = calls[np.lexsort((calls[:, 0], calls[:, 2]))]
        pairs = np.ascontiguousarray(calls[:, [1, 3]])
        new = (np.diff(calls[:, 0]) != 0) | (np.diff(calls[:, 2]) != 0)
        first = np.flatnonzero(np.r_[calls.shape[0] > 0, new])
        bounds = np.r_[first, calls.shape[0]].tolist()
        out: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
        for k, (src, target) in enumerate(calls[first][:, [0, 2]].tolist()):
            out[paths[target]][paths[src]] = pairs[bounds[k] : bounds[k + 1]]
        return out

    idx.saved_calls_into = calls_into
    idx.bm25 = BM25Index.from_state(
        {k[6:]: v for k, v in a.items() if k.startswith("bm25__")}, trusted=True
    )
    return idx


class SavedParse(ParsedFile):
    """A saved parse whose call sites are decoded when first read: resolution tables are
    made from every file's definitions and imports, but only a file whose calls are
    resolved again reads its call sites (447k of them in the Linux kernel's subset)."""

    def __init__(
        self, *args: Any, callsites: Callable[[], list[CallSite]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)  # (``dataclasses.replace`` gives the calls)
        self._callsites = callsites

    @property  # type: ignore[override]
    def calls(self) -> list[CallSite]:
        if self._callsites is not None:
            self._calls, self._callsites = self._callsites(), None
        return self._calls

    @calls.setter
    def calls(self, value: list[CallSite]) -> None:
        self._calls, self._callsites = value, None


def index_bytes(root: Path, config: IndexConfig) -> int:
    gen = live_generation(root, config)
    return sum(p.stat().st_size for p in gen.rglob("*") if p.is_file())
