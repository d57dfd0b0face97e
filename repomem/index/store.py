"""Persistence of a ``RepoIndex``: versioned, atomic, and free of pickle.

Layout: ``<index_dir>/CURRENT`` names the live generation directory ``gen-<n>``, which holds
``manifest.json``, ``symbols.json`` and ``arrays.npz``. A new generation is written in full
under a temporary name, renamed, and only then does ``CURRENT`` switch (``os.replace``), so a
run killed at any moment leaves the previous index (or none), never a half-written one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from repomem import __version__
from repomem.config import IndexConfig
from repomem.context.scorer import Location
from repomem.errors import RepomemError
from repomem.index.bm25 import BM25Index
from repomem.index.gcpause import paused_gc
from repomem.index.parsing import CallSite, Definition, ImportBinding, ParsedFile
from repomem.index.repo import FileEntry, RepoIndex, text_key

FORMAT_VERSION = 5


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


def _unblob(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    raw = data.tobytes()
    return [
        raw[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogatepass")
        for i in range(offsets.size - 1)
    ]


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
    arrays: dict[str, np.ndarray] = {}
    arrays["texts"], arrays["texts_off"] = _blob([e.text for e in entries])
    arrays["frag_text"], arrays["frag_text_off"] = _blob(index.frag_text)
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
    file_no = {p: i for i, p in enumerate(paths)}
    calls = [(file_no[p], s, file_no[t], n) for p in paths for s, t, n in index.calls.get(p, ())]
    arrays["calls"] = np.array(calls, np.int64).reshape(-1, 4)
    arrays["rel_idx"] = index.rel_idx
    arrays["rel_val"] = index.rel_val
    arrays["truncated"] = np.array(sorted(index.truncated), np.int64)
    arrays["radius"] = index.canonical_radius()
    for key, value in index.bm25.state().items():
        arrays[f"bm25__{key}"] = value
    with open(out / "arrays.npz", "wb") as fh:
        np.savez(fh, **arrays)
        fh.flush()
        os.fsync(fh.fileno())

    resolver = index.resolver
    symbols = [
        {
            "deps": resolver.dependencies(pf.path),
            "defs": [[d.name, d.node, d.is_class] for d in pf.definitions],
            "calls": [[c.node, list(c.parts), c.scope] for c in pf.calls],
            "imports": [[b.name, b.module, b.symbol, b.level] for b in pf.imports],
            "import_nodes": pf.import_nodes,
            "has_error": pf.has_error,
            "bases": {k: [list(v) for v in vs] for k, vs in pf.bases.items()},
        }
        for pf in parsed
    ]
    manifest = {
        "format": FORMAT_VERSION,
        "repomem": __version__,
        "config": asdict(index.config),
        "files": [[p, e.language, e.digest] for p, e in zip(paths, entries, strict=True)],
        "skipped": index.skipped,
        "summary": summary or {},
    }
    for name, obj in (("symbols.json", symbols), ("manifest.json", manifest)):
        with open(out / name, "w", encoding="utf-8") as fh:
            # dumps, not dump: only the one-shot encoder is the C one (6x faster here)
            fh.write(json.dumps(obj, separators=(",", ":")))
            fh.flush()
            os.fsync(fh.fileno())


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


def load(root: Path, config: IndexConfig | None = None) -> RepoIndex:
    """Load the live index of ``root``; raises ``IndexNotFound``/``IndexUnreadable``."""
    config = config or IndexConfig()
    manifest = read_manifest(root, config)
    gen = live_generation(root, config)
    try:
        with paused_gc(freeze=True):
            with np.load(gen / "arrays.npz", allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            symbols = json.loads((gen / "symbols.json").read_text(encoding="utf-8"))
            return _restore(root, config_from(manifest["config"]), manifest, arrays, symbols)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise IndexUnreadable(
            f"index at {gen} is unreadable ({exc}); re-run `repomem index`"
        ) from exc


def _restore(root: Path, config: IndexConfig, manifest: dict, a: dict, symbols: list) -> RepoIndex:
    idx = RepoIndex(root, config)
    idx.skipped = dict(manifest["skipped"])
    texts = _unblob(a["texts"], a["texts_off"])
    idx.frag_text = _unblob(a["frag_text"], a["frag_text_off"])
    idx.frag_locs = [[] for _ in idx.frag_text]

    def part(name: str, i: int) -> np.ndarray:
        off = a[f"{name}_off"]
        return a[name][off[i] : off[i + 1]]

    for i, (path, language, digest) in enumerate(manifest["files"]):
        entry = FileEntry(
            language,
            digest,
            texts[i],
            *(
                part(n, i)
                for n in ("win_start", "win_end", "win_frag", "wn_frag", "wn_node", "wn_weight")
            ),
        )
        idx.files[path] = entry
        for s, e, fid in zip(entry.win_start, entry.win_end, entry.win_frag, strict=True):
            idx.frag_locs[int(fid)].append(Location(path, int(s), int(e)))
        sym = symbols[i]
        idx.parsed[path] = ParsedFile(
            path,
            language,
            digest,
            *(
                part(n, i)
                for n in ("line_len", "node_start", "node_end", "node_parent", "line_owner")
            ),
            has_error=sym["has_error"],
            definitions=[Definition(n, node, c) for n, node, c in sym["defs"]],
            calls=[CallSite(node, tuple(parts), scope) for node, parts, scope in sym["calls"]],
            imports=[ImportBinding(*b) for b in sym["imports"]],
            import_nodes=sym["import_nodes"],
            bases={k: [tuple(v) for v in vs] for k, vs in sym["bases"].items()},
        )
        idx.saved_dependencies[path] = (sym["deps"][0], sym["deps"][1])
    paths = [f[0] for f in manifest["files"]]
    idx.calls = {p: [] for p in paths}
    for fno, src, tno, node in a["calls"].tolist():
        idx.calls[paths[fno]].append((src, paths[tno], node))
    idx.live = np.array([bool(locs) for locs in idx.frag_locs], bool)
    idx.frag_key = np.array([text_key(t) for t in idx.frag_text], np.int64)
    idx.free_ids = [i for i, locs in enumerate(idx.frag_locs) if not locs]
    idx.by_text = {t: i for i, t in enumerate(idx.frag_text) if idx.live[i]}
    idx.set_relations(a["rel_idx"], a["rel_val"])
    idx.truncated = set(a["truncated"].tolist())
    idx.radius = a["radius"]
    idx.bm25 = BM25Index.from_state({k[6:]: v for k, v in a.items() if k.startswith("bm25__")})
    return idx


def index_bytes(root: Path, config: IndexConfig) -> int:
    gen = live_generation(root, config)
    return sum(p.stat().st_size for p in gen.iterdir() if p.is_file())
