"""Retrieval over the tables of an index: BM25 scores, then FragRel's relation-aware score
(Eq. 9/10) over the fragments a cursor's exclusion leaves visible."""

from __future__ import annotations

import numpy as np

from repomem.core import Exclusion, RetrievedFragment
from repomem.index.bm25 import tokenize
from repomem.index.fragments import shown_span
from repomem.index.parsing import Lines
from repomem.index.scorer import bounded_top_k
from repomem.index.tables import FileEntry, IndexTables

# past this many fragments, scoring every fragment once (kept for the query's next request)
# costs less than scoring their rows (measured on the standard library: docs/MEASUREMENTS.md)
FULL_SCORE_FROM = 1024
#: the files whose lines a searcher keeps (``Searcher.lines``), and what they hold at most
#: (``Lines.nbytes``: a saved file's text is the mapped index's): the cards of a cursor
#: reach new files, and retrieval and usages others; with 64 files kept, the standard
#: library's benchmark opened 555 files' lines for 200 cursors' cards, 311 with 512
LINE_FILES = 512
LINE_BYTES = 32 << 20


class Searcher:
    """Searches one index's tables, keeping what consecutive searches share: the last
    query's scores and the lines of the files recent results came from."""

    def __init__(self, tables: IndexTables) -> None:
        self.tables = tables
        self._last_scores: tuple[tuple[str, int, int], np.ndarray] | None = None
        self._line_cache: dict[str, tuple[FileEntry, Lines]] = {}
        self._line_bytes = 0  # held by the lines kept

    def forget_scores(self) -> None:
        """Drop the last query's scores (at a pause: ``RepoIndex.tidy``): the next
        completion's query is another's, and on the Linux kernel's subset every fragment's
        score is 2.6 MB, held or not at a pause as the last completion's usages asked."""
        self._last_scores = None

    def hidden(self, exclusion: Exclusion | None) -> np.ndarray:
        """The fragments ``exclusion`` hides whole, ascending: only one with a window in its
        file overlapping the lines can be, so this costs what that file's windows do."""
        if exclusion is None or exclusion.path not in self.tables.files:
            return np.zeros(0, np.int64)
        e = self.tables.files[exclusion.path]
        near = (e.win_end > exclusion.start) & (e.win_start < exclusion.end)
        frag_locs = self.tables.frag_locs
        hidden = [
            fid
            for fid in np.unique(e.win_frag[near]).tolist()
            if exclusion.excludes(tuple(frag_locs[fid]))
        ]
        return np.array(hidden, np.int64)

    def visible(self, exclusion: Exclusion | None) -> np.ndarray:
        vis = self.tables.live[: len(self.tables.frag_text)].copy()
        vis[self.hidden(exclusion)] = False
        return vis

    def retrieve(
        self,
        query: str,
        *,
        k: int = 10,
        alpha: float = 0.5,
        exclusion: Exclusion | None = None,
        revision: int,
    ) -> list[RetrievedFragment]:
        """The top-k fragments for a query window by ``s_rel = s_ind + alpha * s_env``, as
        ``top_k`` ranks them over every fragment (``bounded_top_k`` scores only those that can
        rank). With ``alpha`` 0, BM25's own top k, which walks only the postings that can
        rank (Eq. 9 needs the scores of every candidate's relations, so FragRel scores all)."""
        if alpha == 0.0:
            # the live mask itself: the pruned top k reads it only where it scores
            live = self.tables.live[: len(self.tables.frag_text)]
            ids, s_rel = self.tables.bm25.top_k(tokenize(query), k, live, self.hidden(exclusion))
            s_ind, s_env = s_rel, np.zeros(ids.size)
        else:
            ids, s_ind, s_env, s_rel = self._fragrel_top_k(
                query, revision, exclusion, self.visible(exclusion), alpha, k
            )
        out = []
        for i, fid in enumerate(ids.tolist()):
            locs = tuple(sorted(self.tables.frag_locs[fid], key=lambda loc: (loc.path, loc.start)))
            lines = self.lines(locs[0].path)
            first, last = shown_span(lines, locs[0].start, locs[0].end, self.tables.config.stride)
            out.append(
                RetrievedFragment(
                    fragment_id=fid,
                    locations=locs,
                    text=self.tables.frag_text[fid],
                    shown="\n".join(lines[first:last]),
                    s_ind=float(s_ind[i]),
                    s_env=float(s_env[i]),
                    s_rel=float(s_rel[i]),
                    shown_start=first,
                )
            )
        return out

    def _fragrel_top_k(
        self,
        query: str,
        revision: int,
        exclusion: Exclusion | None,
        vis: np.ndarray,
        alpha: float,
        k: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Ids, ``s_ind``, ``s_env`` and ``s_rel`` of FragRel's top k (Eq. 9/10)."""
        s_ind = self.query_scores(query, revision)
        env = self.visible(None) if exclusion is not None and exclusion.in_environment else None
        inverse = self.tables.inverse_relations
        ids, s_env, s_rel = bounded_top_k(
            self.tables.rel_idx,
            self.tables.rel_val,
            (inverse.start, inverse.end, inverse.cols),
            s_ind,
            vis,
            alpha,
            k,
            environment=env,
        )
        return ids, s_ind[ids], s_env, s_rel

    def fragment_scores(self, query: str, revision: int, ids: np.ndarray) -> np.ndarray:
        """The BM25 scores of fragments ``ids`` for ``query``: ``query_scores(query)[ids]``,
        the same floats: from the kept scores if they are this query's; for more than
        ``FULL_SCORE_FROM`` fragments, from every fragment's, then kept; else from those
        fragments' rows alone (a plain retrieval scores no more than its top k)."""
        kept = self._kept_scores(query, revision)
        if kept is None and ids.size > FULL_SCORE_FROM:
            kept = self.query_scores(query, revision)
        if kept is not None:
            return kept[ids]
        return self.tables.bm25.scores_of(tokenize(query), ids)

    def _kept_scores(self, query: str, revision: int) -> np.ndarray | None:
        """The last query's scores, if they are ``query``'s on the index as it is now."""
        key = self._scores_key(query, revision)
        if self._last_scores is None or self._last_scores[0] != key:
            return None
        return self._last_scores[1]

    def _scores_key(self, query: str, revision: int) -> tuple[str, int, int]:
        return query, revision, len(self.tables.frag_text)

    def query_scores(self, query: str, revision: int) -> np.ndarray:
        """Every fragment's BM25 score for ``query``; the last query's are kept while the
        index is unchanged (a completion's retrieval and usages ask for the same one);
        ``revision``: the index's, which every change bumps."""
        kept = self._kept_scores(query, revision)
        if kept is None:
            kept = _fit(self.tables.bm25.scores(tokenize(query)), len(self.tables.frag_text))
            kept.flags.writeable = False  # shared by the callers: none may change it
            self._last_scores = (self._scores_key(query, revision), kept)
        return kept

    def lines(self, path: str) -> Lines:
        """A file's lines, kept for the files recent results and cards came from (the first
        kept first dropped, past ``LINE_FILES`` files or ``LINE_BYTES``)."""
        entry = self.tables.files[path]
        hit = self._line_cache.get(path)
        if hit is None or hit[0] is not entry:
            if hit is not None:
                self._line_bytes -= self._line_cache.pop(path)[1].nbytes
            hit = (entry, Lines(entry.buffer, entry.newlines))
            self._line_cache[path] = hit
            self._line_bytes += hit[1].nbytes
            while len(self._line_cache) > LINE_FILES or self._line_bytes > LINE_BYTES:
                self._line_bytes -= self._line_cache.pop(next(iter(self._line_cache)))[1].nbytes
        return hit[1]


def _fit(v: np.ndarray, n: int) -> np.ndarray:
    """``v`` cut or zero-padded to length ``n`` (BM25 ids and fragment ids share one space)."""
    if v.size == n:
        return v
    out = np.zeros(n, v.dtype)
    m = min(n, v.size)
    out[:m] = v[:m]
    return out
