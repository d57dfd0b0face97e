"""Relations between doc segments, memory entries and code fragments (FragRel §3.2).

Segment relations, each a strength in [0, 1]:

* context structure (Eq. 7): ``w_rel ** |loc_i - loc_j|`` between segments of one document,
  ``loc`` being the segment's position in it;
* semantic (Eq. 6), when an embedding model is configured: the cosine similarity of the two
  segments' embeddings, clipped at 0. The paper prints ``1 - cos``, which is a distance; a
  relation strength must grow with relatedness, so the similarity itself is used;
* entity: two segments mentioning the same entity are two mention edges apart, and a mention
  is a reference to a definition (weight 0.8 in the code graph), so ``0.8 * 0.8``. An entity
  mentioned by very many segments (a hub such as the project's own name) relates nothing.

Kinds combine by their maximum, strengths below ``epsilon`` count as 0 and each row keeps its
``cap`` strongest neighbours, as for code fragments. A segment relates to a code fragment with
strength 0.8 when it mentions an entity that the fragment defines.

A memory entry made from several segments (a page's gist, a section's summary) relates to
another as FragRel's code structure relation (Eq. 8) relates fragments made of several nodes:
the word-weighted mean of the relations between their segments, a segment being fully
related (1) to itself.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from repomem.docmem.entities import EntityGraph
from repomem.index.repo import RepoIndex

#: strength of a mention -> definition edge (the code graph's reference edge weight)
MENTION_WEIGHT = 0.8


def keep_top(m: sp.csr_matrix, cap: int, epsilon: float = 0.0) -> sp.csr_matrix:
    """Each row's ``cap`` strongest entries at or above ``epsilon``; no self-relations."""
    m = sp.csr_matrix(m)
    m = (m - sp.diags(m.diagonal(), shape=m.shape)).tocsr()
    return keep_top_rect(m, cap, epsilon)


def context_relations(doc_of: np.ndarray, w_rel: float, epsilon: float) -> sp.csr_matrix:
    """Eq. 7 for segments stored in document order (``doc_of[i]``: segment i's document)."""
    n = doc_of.size
    rows, cols, vals = [], [], []
    d = 1
    while w_rel > 0 and d < n and w_rel**d >= epsilon:
        i = np.flatnonzero(doc_of[:-d] == doc_of[d:])
        rows += [i, i + d]
        cols += [i + d, i]
        vals.append(np.full(2 * i.size, w_rel**d))
        d += 1
    if not rows:
        return sp.csr_matrix((n, n))
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )


def semantic_relations(vectors: np.ndarray, epsilon: float, cap: int) -> sp.csr_matrix:
    """Eq. 6 with the cosine similarity clipped at 0 (``vectors`` are unit length)."""
    n = vectors.shape[0]
    rows, cols, vals = [], [], []
    for start in range(0, n, 1024):
        sims = vectors[start : start + 1024] @ vectors.T
        for r in range(sims.shape[0]):
            sims[r, start + r] = 0.0
        take = min(cap, n - 1)
        if take <= 0:
            break
        top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        values = np.take_along_axis(sims, top, axis=1)
        ok = values >= max(epsilon, 1e-12)
        r_idx = np.repeat(np.arange(start, start + sims.shape[0]), take).reshape(-1, take)
        rows.append(r_idx[ok])
        cols.append(top[ok])
        vals.append(values[ok])
    if not rows:
        return sp.csr_matrix((n, n))
    return sp.csr_matrix(
        (np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n, n),
    )


def entity_relations(graph: EntityGraph, n: int, max_segments: int) -> sp.csr_matrix:
    """Segments sharing a (non-hub) entity: ``MENTION_WEIGHT ** 2``."""
    rows, cols = [], []
    for segs in graph.entity_segments.values():
        unique = np.unique(segs)
        if 2 <= unique.size <= max_segments:
            a, b = np.meshgrid(unique, unique, indexing="ij")
            mask = a != b
            rows.append(a[mask])
            cols.append(b[mask])
    if not rows:
        return sp.csr_matrix((n, n))
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.csr_matrix((np.full(r.size, MENTION_WEIGHT**2), (r, c)), shape=(n, n))
    m.data[:] = MENTION_WEIGHT**2  # duplicates (several shared entities) stay one relation
    return m


def combine(parts: list[sp.csr_matrix], cap: int, epsilon: float) -> sp.csr_matrix:
    """Element-wise maximum of relation kinds, sparsified."""
    out = parts[0].tocsr()
    for p in parts[1:]:
        out = out.maximum(p.tocsr())
    return keep_top(out, cap, epsilon)


def code_links(graph: EntityGraph, n_segments: int, index: RepoIndex) -> sp.csr_matrix:
    """Segments x code fragment ids: ``MENTION_WEIGHT`` where a segment mentions an entity
    defined in the fragment's lines."""
    rows, cols = [], []
    for entity, sites in graph.definitions.items():
        segs = np.unique(graph.entity_segments.get(entity, []))
        if segs.size == 0:
            continue
        for path, line in sites:
            for fid in index.fragments_at_line(path, line):
                rows.append(segs)
                cols.append(np.full(segs.size, int(fid)))
    n_code = index.fragment_slots
    if not rows:
        return sp.csr_matrix((n_segments, n_code))
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n_segments, n_code))
    m.data[:] = MENTION_WEIGHT
    return m


def row_normalized(m: sp.csr_matrix) -> sp.csr_matrix:
    weights = np.asarray(m.sum(axis=1)).ravel()
    inv = np.divide(1.0, weights, out=np.zeros_like(weights), where=weights > 0)
    return (sp.diags(inv) @ m).tocsr()


def entry_relations(
    membership: sp.csr_matrix, segment_relations: sp.csr_matrix, cap: int, epsilon: float
) -> sp.csr_matrix:
    """Entry x entry relations from word-weighted ``membership`` (entries x segments): the
    Eq. 8 mean over member segments, a segment being fully related to itself."""
    normalized = row_normalized(membership)
    r1 = segment_relations + sp.identity(segment_relations.shape[0], format="csr")
    return keep_top((normalized @ r1 @ normalized.T).tocsr(), cap, epsilon)


def entry_code_relations(
    membership: sp.csr_matrix, links: sp.csr_matrix, cap: int, epsilon: float
) -> sp.csr_matrix:
    """Entry x code fragment relations: the word-weighted mean of the member segments' links."""
    return keep_top_rect((row_normalized(membership) @ links).tocsr(), cap, epsilon)


def keep_top_rect(m: sp.csr_matrix, cap: int, epsilon: float) -> sp.csr_matrix:
    """Each row's ``cap`` strongest entries at or above ``epsilon``."""
    m = sp.csr_matrix(m)
    m.data[m.data < max(epsilon, 1e-12)] = 0
    m.eliminate_zeros()
    if m.nnz == 0:
        return m
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    order = np.lexsort((-m.data, rows))
    rank = np.arange(order.size) - m.indptr[rows[order]]
    keep = order[rank < cap]
    out = sp.csr_matrix((m.data[keep], (rows[keep], m.indices[keep])), shape=m.shape)
    out.sum_duplicates()
    return out
