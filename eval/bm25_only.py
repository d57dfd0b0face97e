"""Only what plain BM25 retrieval reads, built without parsing: for benchmarking BM25 on a
repository whose full index costs too much to build just for that (the whole Linux kernel's
takes half an hour and ~10 GB; this takes the files, their windows and the BM25 rows).

The fragments are the full build's: the code files that the index would take, in its order,
each cut into the same windows, a window whose text is already indexed given that fragment's
id, so the ids (and hence the blocks the pruned top k bounds) are laid out as a build lays
them out. Saved in a folder: the BM25 state without its block maxima (each version of the
code takes its own at load), the files' paths and their windows' lines and fragment ids.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.core import Exclusion
from repomem.index.bm25 import BM25Index, SpooledRows, count_terms
from repomem.index.files import FileSkipped, list_candidates, load_file
from repomem.index.fragments import windows
from repomem.index.parsing import split_lines, supported


def build(root: Path, config: IndexConfig, out: Path) -> int:
    """Index ``root``'s code files' windows into ``out`` (created); returns the fragments."""
    out.mkdir(parents=True)
    rows = SpooledRows(out, "spool__")
    ids: dict[bytes, int] = {}
    paths: list[str] = []
    start, end, frag = [], [], []
    for path in list_candidates(root, config):
        try:
            f = load_file(root, path, config)
        except FileSkipped:
            continue
        if not supported(f.language):
            continue
        lines = split_lines(f.text)
        wins = windows(lines, config.fragment_lines, config.stride)
        new = []
        for i, w in enumerate(wins):
            key = hashlib.blake2b(w.text.encode("utf-8", "surrogatepass"), digest_size=16)
            fid = ids.setdefault(key.digest(), len(ids))
            if fid == len(ids) - 1 and fid == len(rows) + len(new):
                new.append(i)
            frag.append(fid)
        if new:
            spans = [(wins[i].start, wins[i].end) for i in new]
            rows.add(count_terms(lines, spans), np.arange(len(new)))
        paths.append(f.path)
        start.append(np.array([w.start for w in wins], np.int32))
        end.append(np.array([w.end for w in wins], np.int32))
    state = rows.index().state()
    for key, values in state.items():
        if not key.startswith("block_"):  # each version of the pruning takes its own at load
            np.save(out / f"bm25__{key}.npy", values)
    del state
    for spool in out.glob("spool__*"):
        spool.unlink()
    counts = np.array([s.size for s in start], np.int64)
    np.save(out / "win_start.npy", np.concatenate(start))
    np.save(out / "win_end.npy", np.concatenate(end))
    np.save(out / "win_frag.npy", np.array(frag, np.int64))
    np.save(out / "file_ptr.npy", np.concatenate([[0], np.cumsum(counts)]))
    (out / "paths.json").write_text(json.dumps(paths))
    return len(ids)


@dataclass
class Bm25Only:
    """A folder of :func:`build`: the BM25 index (mapped), the files and their windows."""

    root: Path
    config: IndexConfig
    bm25: BM25Index
    paths: list[str]
    win_start: np.ndarray
    win_end: np.ndarray
    win_frag: np.ndarray
    file_ptr: np.ndarray
    n_locs: np.ndarray  # per fragment, its windows in all files
    file_of: dict[str, int]  # path -> its place in ``paths``

    @classmethod
    def load(cls, root: Path, config: IndexConfig, folder: Path) -> Bm25Only:
        state = {
            p.name[6:-4]: np.load(p, mmap_mode="r") for p in sorted(folder.glob("bm25__*.npy"))
        }
        state["format"] = np.asarray(state["format"])
        bm25 = BM25Index.from_state(state, trusted=True)
        bm25.compact()  # takes the block maxima (the state is saved without them)
        win_frag = np.load(folder / "win_frag.npy")
        paths = json.loads((folder / "paths.json").read_text())
        return cls(
            root,
            config,
            bm25,
            paths,
            np.load(folder / "win_start.npy"),
            np.load(folder / "win_end.npy"),
            win_frag,
            np.load(folder / "file_ptr.npy"),
            np.bincount(win_frag),
            {p: i for i, p in enumerate(paths)},
        )

    @property
    def fragment_count(self) -> int:
        return int(self.n_locs.size)

    def file_lines(self, path: str) -> list[str]:
        return split_lines(load_file(self.root, path, self.config).text)

    def hidden(self, ex: Exclusion) -> np.ndarray:
        """The fragments whose windows are all hidden by ``ex`` (``RepoIndex``'s rule: all of
        a fragment's locations hidden), ascending."""
        f = self.file_of[ex.path]
        lo, hi = self.file_ptr[f], self.file_ptr[f + 1]
        hidden = (self.win_end[lo:hi] > ex.start) & (self.win_start[lo:hi] < ex.end)
        frags, hides = np.unique(self.win_frag[lo:hi][hidden], return_counts=True)
        return frags[hides == self.n_locs[frags]]

    def visible(self, ex: Exclusion) -> np.ndarray:
        """Every fragment but the :meth:`hidden` ones."""
        out = np.ones(self.fragment_count, np.bool_)
        out[self.hidden(ex)] = False
        return out
