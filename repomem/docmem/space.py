"""Doc memory entries and code fragments scored together, in both directions.

One BM25 index holds the entries of one memory form (ids ``0 .. n_doc-1``) and, when code
takes part, every live code fragment of the repository index (id ``n_doc + fragment id``), so
that a doc entry and a code fragment are scored against the same term statistics. One relation
matrix spans both::

    [ entry x entry   entry x code    ]
    [ code x entry    code x code     ]   (code x code: the index's FragRel relations)

and FragRel's environment and relation-aware scores (Eq. 9 and 10) are computed over it by
``repomem.index.scorer.relation_aware_scores``: a doc entry rises when the code it names
matches the query, and a code fragment when the docs that describe it do. The code part follows
the index as it changes (an edited buffer, a benchmark task's file): fragments whose text
changed are re-added to the BM25 index before the next query, or, where the memory does not
``follow_code`` (the language server, where a query follows every edit), when
:meth:`DocMemory.sync_code` is called; until then the code part stays as it was, which moves
doc scores a little and never shows a stale code fragment (code fragments are ranked by the
index itself).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from repomem.core import Exclusion
from repomem.docmem.forms import Entry
from repomem.docmem.relations import entry_code_relations, entry_relations
from repomem.index.bm25 import BM25Index
from repomem.index.scorer import relation_aware_scores, top_k

if TYPE_CHECKING:
    from repomem.config import DocMemoryConfig
    from repomem.docmem.segments import Segment
    from repomem.index.repo import RepoIndex

Terms = Callable[[str], list[str]]


@dataclass(frozen=True)
class Hit:
    """A ranked item: a doc entry (``entry`` set) or a code fragment (``fragment`` set)."""

    entry: int | None
    fragment: int | None
    s_ind: float
    s_env: float
    s_rel: float


class Memory(Protocol):
    """What a joint space reads of the doc memory that owns it
    (:class:`repomem.docmem.memory.DocMemory`): its segments and their relations, the code
    index and the segments' links into it, kept current by ``refresh_code``."""

    index: RepoIndex
    config: DocMemoryConfig
    segments: list[Segment]
    segment_relations: sp.csr_matrix
    links: sp.csr_matrix
    follow_code: bool

    def refresh_code(self) -> None: ...


class JointSpace:
    def __init__(
        self, memory: Memory, entries: Sequence[Entry], terms: Terms, *, code: bool
    ) -> None:
        self.memory = memory
        self.entries = list(entries)
        self.terms = terms
        self.code = code
        self.n_doc = len(self.entries)
        self.bm25 = BM25Index()
        for i, entry in enumerate(self.entries):
            self.bm25.add(i, terms(entry.text))
        self.bm25.compact()
        n_seg = len(memory.segments)
        rows = np.repeat(np.arange(self.n_doc), [len(e.segments) for e in self.entries])
        cols = np.array([s for e in self.entries for s in e.segments], np.int64)
        vals = np.array(
            [max(memory.segments[s].words, 1) for e in self.entries for s in e.segments],
            np.float64,
        )
        self.membership = sp.csr_matrix((vals, (rows, cols)), shape=(self.n_doc, n_seg))
        cfg = memory.config
        self._dd = entry_relations(
            self.membership, memory.segment_relations, cfg.neighbours, cfg.epsilon
        )
        self._code_text: dict[int, str] = {}
        self._seen_relations: sp.csr_matrix | None = None
        self._matrix: sp.csr_matrix | None = None

    # ------------------------------------------------------------------ keeping up with code
    def sync(self, *, force: bool = False) -> sp.csr_matrix:
        """The joint relation matrix, after following any change of the code index (with
        ``force``, even where the memory does not ``follow_code``)."""
        index = self.memory.index
        code_relations = index.relations if self.code else None
        if self._matrix is not None and (
            code_relations is self._seen_relations or not (force or self.memory.follow_code)
        ):
            return self._matrix
        if not self.code or code_relations is None:
            self._matrix = self._dd
        else:
            cfg = self.memory.config
            self.memory.refresh_code()
            dc = entry_code_relations(
                self.membership, self.memory.links, cfg.neighbours, cfg.epsilon
            )
            self._sync_code_terms()
            n_code = index.fragment_slots
            cc = _square(code_relations, n_code)
            dc = _resize(dc, self.n_doc, n_code)
            self._matrix = sp.bmat([[self._dd, dc], [dc.T, cc]], format="csr")
        self._seen_relations = code_relations
        return self._matrix

    def _sync_code_terms(self) -> None:
        index = self.memory.index
        live = index.visible(None)  # per fragment id: whether it is live
        seen = self._code_text
        for fid in list(seen):
            if fid >= live.size or not live[fid] or index.fragment_text(fid) != seen[fid]:
                self.bm25.remove(self.n_doc + fid)
                del seen[fid]
        for fid in np.flatnonzero(live).tolist():
            if fid not in seen:
                text = index.fragment_text(fid)
                self.bm25.add(self.n_doc + fid, self.terms(text))
                seen[fid] = text

    # ------------------------------------------------------------------ scoring
    def scores(
        self,
        query: str,
        *,
        alpha: float,
        exclusion: Exclusion | None = None,
        doc_visible: np.ndarray | None = None,
        with_code: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(s_ind, s_env, s_rel, visible)`` over all items (doc entries first)."""
        matrix = self.sync()
        n = matrix.shape[0]
        s_ind = np.zeros(n)
        raw = self.bm25.scores(self.terms(query))
        s_ind[: min(n, raw.size)] = raw[:n]
        visible = np.zeros(n, bool)
        visible[: self.n_doc] = True if doc_visible is None else doc_visible
        if n > self.n_doc and with_code:
            code_vis = self.memory.index.visible(exclusion)
            m = min(n - self.n_doc, code_vis.size)
            visible[self.n_doc : self.n_doc + m] = code_vis[:m]
        s_env, s_rel = relation_aware_scores(matrix, s_ind, visible, alpha)
        return s_ind, s_env, s_rel, visible

    def search(
        self,
        query: str,
        k: int,
        *,
        alpha: float,
        exclusion: Exclusion | None = None,
        doc_visible: np.ndarray | None = None,
        with_code: bool = True,
    ) -> list[Hit]:
        """The ``k`` best items by ``s_rel = s_ind + alpha * s_env``."""
        s_ind, s_env, s_rel, visible = self.scores(
            query, alpha=alpha, exclusion=exclusion, doc_visible=doc_visible, with_code=with_code
        )
        return [
            Hit(
                int(i) if i < self.n_doc else None,
                int(i) - self.n_doc if i >= self.n_doc else None,
                float(s_ind[i]),
                float(s_env[i]),
                float(s_rel[i]),
            )
            for i in top_k(s_rel, visible, k)
        ]


def _square(m: sp.csr_matrix, n: int) -> sp.csr_matrix:
    """``m`` cut or zero-padded to ``n x n``."""
    if m.shape == (n, n):
        return m
    m = m[: min(n, m.shape[0]), : min(n, m.shape[1])]
    return _resize(m, n, n)


def _resize(m: sp.csr_matrix, rows: int, cols: int) -> sp.csr_matrix:
    m = sp.csr_matrix(m)
    if m.shape == (rows, cols):
        return m
    m = m[: min(rows, m.shape[0]), : min(cols, m.shape[1])].tocoo()
    return sp.csr_matrix((m.data, (m.row, m.col)), shape=(rows, cols))
