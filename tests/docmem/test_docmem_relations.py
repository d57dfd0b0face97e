"""Segment relations (FragRel Eq. 6-8) and the joint doc + code scoring space (Eq. 9-10)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from rank_bm25 import BM25Okapi
from test_docmem_memory import widget_repo

from repomem.core import Exclusion
from repomem.docmem.entities import EntityGraph
from repomem.docmem.memory import DocMemory
from repomem.docmem.model import EXTRACTIVE
from repomem.docmem.relations import (
    MENTION_WEIGHT,
    context_relations,
    entity_relations,
    entry_relations,
    semantic_relations,
)
from repomem.docmem.text import terms
from repomem.index.repo import RepoIndex


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoIndex, DocMemory]:
    return widget_repo(tmp_path_factory.mktemp("relations") / "repo")


def test_context_structure_relation_is_eq7_within_a_document() -> None:
    doc_of = np.array([0, 0, 0, 0, 1, 1])
    rel = context_relations(doc_of, 0.3, 0.05).toarray()
    for i in range(6):
        for j in range(6):
            same = doc_of[i] == doc_of[j] and i != j
            expected = 0.3 ** abs(i - j) if same and 0.3 ** abs(i - j) >= 0.05 else 0.0
            assert rel[i, j] == pytest.approx(expected)
    assert rel[0, 3] == 0.0  # 0.3**3 = 0.027 is below epsilon
    assert rel[3, 4] == 0.0  # neighbours across documents are not related


def test_semantic_relation_is_clipped_cosine_similarity_not_distance() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 5))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rel = semantic_relations(vectors, 0.0, cap=11).toarray()
    cos = vectors @ vectors.T
    for i in range(12):
        for j in range(12):
            expected = max(cos[i, j], 0.0) if i != j else 0.0
            assert rel[i, j] == pytest.approx(expected, abs=1e-9)
    assert rel.max() <= 1.0  # 1 - cos would reach 2 for opposite vectors
    capped = semantic_relations(vectors, 0.0, cap=2).toarray()
    assert ((capped > 0).sum(axis=1) <= 2).all()
    for i in range(12):  # the cap keeps each row's strongest
        kept = np.flatnonzero(capped[i])
        others = [j for j in range(12) if j != i and j not in kept]
        assert min(capped[i, kept]) >= max(rel[i, others])


def test_entity_relation_links_co_mentions_and_skips_hubs() -> None:
    graph = EntityGraph(
        segment_entities=[["A"], ["A", "hub"], ["B", "hub"], ["hub"]],
        entity_segments={"A": [0, 1], "B": [2], "hub": [1, 2, 3]},
        kinds={"A": "symbol", "B": "symbol", "hub": "symbol"},
        definitions={},
    )
    rel = entity_relations(graph, 4, max_segments=2).toarray()
    assert rel[0, 1] == rel[1, 0] == pytest.approx(MENTION_WEIGHT**2)
    assert rel[1, 2] == 0.0  # only "hub" connects them, and it is mentioned too often
    assert entity_relations(graph, 4, max_segments=3).toarray()[1, 2] == pytest.approx(0.64)


def test_entry_relation_is_the_word_weighted_mean_of_eq8() -> None:
    rng = np.random.default_rng(1)
    seg_rel = sp.csr_matrix(np.triu(rng.random((5, 5)) * (rng.random((5, 5)) > 0.4), 1))
    seg_rel = (seg_rel + seg_rel.T).tocsr()
    membership = sp.csr_matrix(
        np.array([[3, 1, 0, 0, 0], [0, 0, 2, 0, 0], [0, 4, 0, 5, 1]], np.float64)
    )
    got = entry_relations(membership, seg_rel, cap=10, epsilon=0.0).toarray()
    full = seg_rel.toarray() + np.eye(5)
    a = membership.toarray()
    for i in range(3):
        for j in range(3):
            num = sum(a[i, k] * a[j, m] * full[k, m] for k in range(5) for m in range(5))
            expected = 0.0 if i == j else num / (a[i].sum() * a[j].sum())
            assert got[i, j] == pytest.approx(expected)


def test_joint_space_with_alpha_zero_is_bm25_over_docs_and_code(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    index, memory = widget
    space = memory.space("chunk", EXTRACTIVE)
    query = "restart the server when files change with reload"
    s_ind, s_env, s_rel, visible = space.scores(query, alpha=0.0)
    live = index.tables.live_ids().tolist()
    corpus = [terms(e.text) for e in space.entries] + [
        terms(index.tables.frag_text[f]) for f in live
    ]
    reference = BM25Okapi(corpus).get_scores(terms(query))
    ids = list(range(space.n_doc)) + [space.n_doc + f for f in live]
    np.testing.assert_allclose(s_ind[ids], reference, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(s_rel, s_ind)
    assert visible[ids].all()


def test_environment_score_is_eq9_over_the_joint_matrix(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    index, memory = widget
    space = memory.space("chunk", EXTRACTIVE)
    s_ind, s_env, s_rel, visible = space.scores("timeout retries serve port", alpha=0.5)
    matrix = space.sync().toarray()
    n_doc = space.n_doc
    n_code = len(index.tables.frag_text)
    np.testing.assert_allclose(
        matrix[n_doc:, n_doc:], index.tables.relations.toarray()[:n_code, :n_code]
    )
    for i in range(matrix.shape[0]):
        w = matrix[i] * visible
        w[i] = 0.0
        expected = (w @ s_ind) / w.sum() if w.sum() > 0 else 0.0
        assert s_env[i] == pytest.approx(expected)
    np.testing.assert_allclose(s_rel, s_ind + 0.5 * s_env)


def test_doc_segments_rank_for_code_queries_through_the_entity_graph(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    space = memory.space("chunk", EXTRACTIVE)
    query = "basicConfig filename"  # words of setup_logging's body, not of any doc
    hits = space.search(query, 20, alpha=0.5)
    docs = [h for h in hits if h.entry is not None]
    assert docs, "the guide mentions widget.logs.setup_logging and should follow its code"
    guide = [h for h in docs if "setup_logging" in space.entries[h.entry].text]
    assert guide and guide[0].s_ind == 0.0 and guide[0].s_env > 0.0
    # hidden code takes part in nothing: without it the guide has no environment
    hidden = space.search(query, 20, alpha=0.5, exclusion=Exclusion("widget/logs.py", 0))
    assert not [h for h in hidden if h.entry == guide[0].entry]


def test_code_fragments_rank_for_doc_questions(widget: tuple[RepoIndex, DocMemory]) -> None:
    index, memory = widget
    space = memory.space("chunk", EXTRACTIVE)
    hits = space.search("Which flag restarts it when files change?", 10, alpha=0.5)
    code = [h for h in hits if h.fragment is not None]
    server = [h for h in code if index.tables.frag_locs[h.fragment][0].path == "widget/server.py"]
    assert server and server[0].s_env > 0.0  # the README segment that documents --reload


def test_space_follows_code_index_updates(tmp_path: Path) -> None:
    index, memory = widget_repo(tmp_path / "repo")
    space = memory.space("chunk", EXTRACTIVE)
    assert not [h for h in space.search("rotate_journal", 5, alpha=0.5) if h.fragment is not None]
    text = index.file_text("widget/logs.py") + "\n\ndef rotate_journal():\n    return 1\n"
    index.update_file("widget/logs.py", text)
    found = [h for h in space.search("rotate_journal", 5, alpha=0.5) if h.fragment is not None]
    assert found and index.tables.frag_locs[found[0].fragment][0].path == "widget/logs.py"
    n_code = len(index.tables.frag_text)
    matrix = space.sync()
    assert matrix.shape == (space.n_doc + n_code, space.n_doc + n_code)
    np.testing.assert_allclose(
        matrix[space.n_doc :, space.n_doc :].toarray(),
        index.tables.relations.toarray()[:n_code, :n_code],
    )
    index.update_file("widget/logs.py", None)  # the file is gone, and so are its links
    gone = space.search("basicConfig filename", 5, alpha=0.5)
    assert not [h for h in gone if h.fragment is not None]
    assert "widget.logs.setup_logging" not in memory.graph.definitions
