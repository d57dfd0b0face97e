"""Doc memory entries and code fragments scored together, in both directions.

A BM25 index holds the entries of one memory form; when code takes part, they are scored
against the code index's term statistics as well (``RepoIndex.term_statistics``), as if they
were indexed with every live code fragment, and the fragments are scored by the code index
itself (its BM25 and its FragRel retrieval): the doc memory holds no copy of the code. The
relations span both::

    [ entry x entry   entry x code    ]
    [ code x entry    code x code     ]   (code x code: the index's FragRel relations)

and FragRel's environment and relation-aware scores (Eq. 9 and 10) are computed over them
without making that matrix: an entry's environment reads its related entries and the few
fragments the docs link to; a fragment's is the index's own (``RepoIndex.retrieve``), except
for those linked fragments, whose environment adds the entries that relate to them. A doc
entry rises when the code it names matches the query, and a code fragment when the docs that
describe it do. What the space keeps of the code is the entry x code relations, as large as
the docs' links; it follows the index as it changes (an edited buffer, a benchmark task's
file) before the next query, or, where the memory does not ``follow_code`` (the language
server, where a query follows every edit), when :meth:`DocMemory.sync_code` is called.

A doc-term space (questions) asks the code index with the question's words as the index
tokenizes them (case kept, function words left out).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from repomem.core import Exclusion, RetrievedFragment
from repomem.docmem.forms import Entry
from repomem.docmem.relations import entry_code_relations, entry_relations
from repomem.docmem.text import STOPWORDS
from repomem.index.bm25 import BM25Index, tokenize
from repomem.index.scorer import top_k

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
        # entry x linked fragment relations, and the linked fragments' ids (its columns)
        self._dc = sp.csr_matrix((self.n_doc, 0))
        self.linked = np.zeros(0, np.int64)
        self._seen_links: sp.csr_matrix | None = None

    # ------------------------------------------------------------------ keeping up with code
    def sync(self, *, force: bool = False) -> None:
        """Follow any change of the code index (with ``force``, even where the memory does
        not ``follow_code``): the entry x code relations, from the docs' links into it."""
        if not self.code:
            return
        if self._seen_links is not None and not (force or self.memory.follow_code):
            return
        self.memory.refresh_code()
        links = self.memory.links
        if links is self._seen_links:
            return
        cfg = self.memory.config
        dc = entry_code_relations(self.membership, links, cfg.neighbours, cfg.epsilon)
        self.linked = np.unique(dc.indices).astype(np.int64)
        self._dc = sp.csr_matrix(dc[:, self.linked])
        self._seen_links = links

    # ------------------------------------------------------------------ scoring
    def code_query(self, query: str) -> str:
        """``query`` as the code index is asked it: as is for a code-term space; a question's
        words without the function words for a doc-term space."""
        if self.terms is tokenize:
            return query
        return " ".join(w for w in tokenize(query) if w.lower() not in STOPWORDS)

    def scores(
        self,
        query: str,
        *,
        alpha: float,
        exclusion: Exclusion | None = None,
        doc_visible: np.ndarray | None = None,
        with_code: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(s_ind, s_env, s_rel, visible)`` of the doc entries; code fragments take part in
        their environment unless ``with_code`` is false."""
        self.sync()
        tokens = self.terms(query)
        index = self.memory.index
        background = index.term_statistics(tokens) if self.code else None
        s_ind = _fit(self.bm25.scores(tokens, background), self.n_doc)
        visible = np.ones(self.n_doc, bool)
        if doc_visible is not None:
            visible[:] = doc_visible
        if alpha == 0.0:
            return s_ind, np.zeros(self.n_doc), s_ind, visible
        num = self._dd @ np.where(visible, s_ind, 0.0)
        den = self._dd @ visible.astype(np.float64)
        if self.code and with_code and self.linked.size:
            s_code, env_code = self._linked_scores(query, exclusion)
            num += self._dc @ np.where(env_code, s_code, 0.0)
            den += self._dc @ env_code.astype(np.float64)
        s_env = np.zeros(self.n_doc)
        np.divide(num, den, out=s_env, where=den > 0)
        return s_ind, s_env, s_ind + alpha * s_env, visible

    def _linked_scores(
        self, query: str, exclusion: Exclusion | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The linked fragments' BM25 scores and whether each counts in an environment."""
        index = self.memory.index
        s_code = index.fragment_scores(self.code_query(query), self.linked)
        return s_code, _environment(index, exclusion)[self.linked]

    def search(
        self,
        query: str,
        k: int,
        *,
        alpha: float,
        exclusion: Exclusion | None = None,
        doc_visible: np.ndarray | None = None,
        with_code: bool = True,
        retrieved: list[RetrievedFragment] | None = None,
    ) -> list[Hit]:
        """The ``k`` best items by ``s_rel = s_ind + alpha * s_env`` (a tie: entries first).
        ``retrieved``: the code index's ``retrieve`` of the code query with the same ``k``,
        ``alpha`` and ``exclusion``, where the caller has it (``_code_hits``)."""
        s_ind, s_env, s_rel, visible = self.scores(
            query, alpha=alpha, exclusion=exclusion, doc_visible=doc_visible, with_code=with_code
        )
        hits = [
            Hit(int(i), None, float(s_ind[i]), float(s_env[i]), float(s_rel[i]))
            for i in top_k(s_rel, visible, k)
        ]
        if self.code and with_code:
            hits += self._code_hits(query, k, alpha, exclusion, s_ind, visible, retrieved)
        hits.sort(key=lambda h: (-h.s_rel, h.entry is None, h.entry or h.fragment or 0))
        return hits[:k]

    def _code_hits(
        self,
        query: str,
        k: int,
        alpha: float,
        exclusion: Exclusion | None,
        doc_scores: np.ndarray,
        doc_visible: np.ndarray,
        retrieved: list[RetrievedFragment] | None = None,
    ) -> list[Hit]:
        """The ``k`` best code fragments by their joint ``s_rel``. A fragment no entry relates
        to scores as the index ranks it; the linked ones' environment also holds the entries
        relating to them, so they are scored here and the index is asked for more until ``k``
        others are found (the first ``k`` are ``retrieved`` where given)."""
        index = self.memory.index
        code_query = self.code_query(query)
        linked = set(self.linked.tolist()) if alpha > 0 else set()
        want = k
        while True:
            if want == k and retrieved is not None:
                found = retrieved
            else:
                found = index.retrieve(code_query, k=want, alpha=alpha, exclusion=exclusion)
            plain = [f for f in found if f.fragment_id not in linked]
            if len(plain) >= k or len(found) < want:
                break
            want = len(found) + k - len(plain)
        hits = [Hit(None, f.fragment_id, f.s_ind, f.s_env, f.s_rel) for f in plain[:k]]
        if linked:
            hits += self._linked_hits(code_query, alpha, exclusion, doc_scores, doc_visible)
        return hits

    def _linked_hits(
        self,
        code_query: str,
        alpha: float,
        exclusion: Exclusion | None,
        doc_scores: np.ndarray,
        doc_visible: np.ndarray,
    ) -> list[Hit]:
        """The linked fragments that can rank, with Eq. 9 over their code relations (the
        index's rows) and the entries relating to them."""
        index = self.memory.index
        ids = self.linked
        visible = index.visible(exclusion)
        environment = _environment(index, exclusion)
        s_ind = index.fragment_scores(code_query, ids)
        related, strength = index.relation_rows(ids)
        present = related >= 0
        others, where = np.unique(related[present], return_inverse=True)
        weight = np.zeros(related.shape)
        weight[present] = np.where(environment[others][where], strength[present], 0.0)
        other_scores = np.zeros(related.shape)
        other_scores[present] = index.fragment_scores(code_query, others)[where]
        num = (weight * other_scores).sum(axis=1)
        den = weight.sum(axis=1)
        by_code = self._dc.T.tocsr()
        num += by_code @ np.where(doc_visible, doc_scores, 0.0)
        den += by_code @ doc_visible.astype(np.float64)
        s_env = np.zeros(ids.size)
        np.divide(num, den, out=s_env, where=den > 0)
        s_rel = s_ind + alpha * s_env
        return [
            Hit(None, int(ids[j]), float(s_ind[j]), float(s_env[j]), float(s_rel[j]))
            for j in np.flatnonzero(visible[ids] & (s_rel > 0)).tolist()
        ]


def _environment(index: RepoIndex, exclusion: Exclusion | None) -> np.ndarray:
    """Per fragment id, whether it counts in an environment (Eq. 9), as the index's own
    retrieval counts it: visible, or live where the exclusion leaves its fragments there."""
    if exclusion is not None and exclusion.in_environment:
        exclusion = None
    return index.visible(exclusion)


def _fit(v: np.ndarray, n: int) -> np.ndarray:
    """``v`` cut or zero-padded to length ``n``."""
    out = np.zeros(n)
    out[: min(n, v.size)] = v[:n]
    return out
