"""The windows calling a definition, as usages ask for them for every cursor.

A definition called from thousands of statements (``unittest``'s ``assertEqual`` in the
standard library) would otherwise be gathered again for each cursor using it: its windows are
kept, each with how many files' calls it holds, so that leaving out the cursor's own file
costs only that file's calls.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from repomem.index.rowpool import distinct_sorted
from repomem.index.tables import IndexTables

# files whose calls by target node are kept, and calling windows kept in all (ids)
_FILES_KEPT = 64
_WINDOWS_KEPT = 1 << 20


class _CallsInto(NamedTuple):
    """The calls into one file, sorted by the target's local node: the calling files (and
    their numbers), and per call its target node, the calling statement's global node and
    its file's number."""

    files: dict[str, int]
    target: np.ndarray
    source: np.ndarray
    caller: np.ndarray


class CallingWindows:
    """Per definition (file, local node), the fragments whose windows hold a statement
    calling it, kept while the index is at one revision."""

    def __init__(self, tables: IndexTables) -> None:
        self.tables = tables
        self._revision = -1
        self._files: dict[str, _CallsInto] = {}
        # (file, node) -> the calling windows, and per window how many files' calls it holds
        self._windows: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._held = 0

    def fragments(self, path: str, node: int, *, outside: str, revision: int) -> np.ndarray:
        """The fragments whose windows hold a statement of a file other than ``outside``
        that calls ``path``'s definition at local ``node`` (sorted, once each);
        ``revision``: the index's, which every change bumps."""
        if revision != self._revision:
            self._files.clear()
            self._windows.clear()
            self._held, self._revision = 0, revision
        calls = self._calls_into(path)
        lo, hi = np.searchsorted(calls.target, [node, node + 1])
        found = self._windows.get((path, node))
        if found is None:
            found = self._gather(calls.source[lo:hi], calls.caller[lo:hi], len(calls.files))
            if self._held + found[0].size > _WINDOWS_KEPT:
                self._windows.clear()
                self._held = 0
            self._windows[(path, node)] = found
            self._held += found[0].size
        frags, files = found
        number = calls.files.get(outside)
        if number is None or frags.size == 0:
            return frags
        own = calls.source[lo:hi][calls.caller[lo:hi] == number]
        if own.size == 0:
            return frags
        _, mine = self.tables.node_frags.columns(distinct_sorted(np.sort(own)))
        # a window only ``outside``'s calls are in is left out
        return frags[~(np.isin(frags, mine) & (files == 1))]

    def _gather(
        self, source: np.ndarray, caller: np.ndarray, n_files: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The windows holding the statements ``source`` (of files ``caller``), and per
        window how many of those files' statements it holds."""
        if source.size == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        order = np.argsort(source, kind="stable")
        source, caller = source[order], caller[order]
        first = np.r_[True, source[1:] != source[:-1]]  # a statement is in one file
        indptr, frags = self.tables.node_frags.columns(source[first])
        owner = np.repeat(caller[first], np.diff(indptr))
        pairs = distinct_sorted(np.sort(frags * n_files + owner))  # (window, file), once each
        windows = pairs // n_files
        if windows.size == 0:  # call sites no window lists as a statement (a macro in an impl)
            return windows, windows.copy()
        starts = np.flatnonzero(np.r_[True, windows[1:] != windows[:-1]])
        return windows[starts], np.diff(np.r_[starts, windows.size])

    def _calls_into(self, path: str) -> _CallsInto:
        """The calls into ``path`` sorted by target node (a module called from hundreds of
        files is gathered once a revision, not for every cursor calling it)."""
        found = self._files.get(path)
        if found is not None:
            return found
        callers = self.tables.calls_into.get(path, {})
        offsets = self.tables.graph.stmt_offset
        files = [p for p in callers if p in offsets]
        pairs = np.concatenate([np.empty((0, 2), np.int64), *(callers[p] for p in files)])
        counts = [len(callers[p]) for p in files]
        order = np.argsort(pairs[:, 1], kind="stable")
        # global node ids: the caller's offset + its local node
        shift = np.repeat(np.array([offsets[p] for p in files], np.int64), counts)
        found = _CallsInto(
            {p: i for i, p in enumerate(files)},
            pairs[order, 1],
            (pairs[:, 0] + shift)[order],
            np.repeat(np.arange(len(files)), counts)[order],
        )
        if len(self._files) >= _FILES_KEPT:
            self._files.clear()
        self._files[path] = found
        return found
