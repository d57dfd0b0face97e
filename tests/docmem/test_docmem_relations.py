"""Segment relations (FragRel Eq. 6-8) and the joint doc + code scoring space (Eq. 9-10)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from rank_bm25 import BM25Okapi
from repos import make_repo
from test_docmem_memory import WIDGET_FILES, widget_repo

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
from repomem.docmem.space import JointSpace
from repomem.docmem.text import STOPWORDS
from repomem.index.bm25 import tokenize
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


def test_entries_score_as_bm25_over_entries_and_code_together(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    index, memory = widget
    space = memory.space("chunk", EXTRACTIVE, code_terms=True)
    query = "serve port reload setup_logging"
    s_ind, s_env, s_rel, visible = space.scores(query, alpha=0.0)
    live = index.tables.live_ids().tolist()
    corpus = [tokenize(e.text) for e in space.entries] + [
        tokenize(index.fragment_text(f)) for f in live
    ]
    reference = BM25Okapi(corpus).get_scores(tokenize(query))
    np.testing.assert_allclose(s_ind, reference[: space.n_doc], rtol=1e-9, atol=1e-12)
    assert s_ind.max() > 0
    np.testing.assert_array_equal(s_rel, s_ind)
    assert visible.all()
    # code fragments are the code index's own: its scores, its ranking
    hits = [h for h in space.search(query, 50, alpha=0.0) if h.fragment is not None]
    code = index.retrieve(query, k=len(hits), alpha=0.0)
    assert [h.fragment for h in hits] == [f.fragment_id for f in code]
    scores = index.query_scores(query)
    assert [h.s_ind for h in hits] == [float(scores[h.fragment]) for h in hits]


def _joint_matrix(space: JointSpace, index: RepoIndex) -> np.ndarray:
    """The relations the space scores over, as one dense matrix (entries first)."""
    n_doc, n_code = space.n_doc, index.fragment_slots
    dc = np.zeros((n_doc, n_code))
    dc[:, space.linked] = space._dc.toarray()
    cc = index.relations.toarray()[:n_code, :n_code]
    return np.block([[space._dd.toarray(), dc], [dc.T, cc]])


@pytest.mark.parametrize("code_terms", [False, True])
def test_environment_score_is_eq9_over_the_joint_relations(
    widget: tuple[RepoIndex, DocMemory], code_terms: bool
) -> None:
    index, memory = widget
    space = memory.space("chunk", EXTRACTIVE, code_terms=code_terms)
    query = "timeout retries serve port setup_logging basicConfig"
    s_doc, env_doc, rel_doc, _ = space.scores(query, alpha=0.5)
    assert space.linked.size, "the widget's docs name its code"
    matrix = _joint_matrix(space, index)
    live = np.zeros(index.fragment_slots, bool)
    live[index.tables.live_ids()] = True
    s_ind = np.concatenate([s_doc, index.query_scores(space.code_query(query))])
    visible = np.concatenate([np.ones(space.n_doc, bool), live])
    w = matrix * visible
    expected = np.divide(w @ s_ind, w.sum(axis=1), out=np.zeros(len(s_ind)), where=w.sum(1) > 0)
    np.testing.assert_allclose(env_doc, expected[: space.n_doc], atol=1e-12)
    np.testing.assert_allclose(rel_doc, s_doc + 0.5 * env_doc)
    assert env_doc.max() > 0
    # every item the search ranks, entry or fragment, has the joint matrix's scores
    hits = space.search(query, 10_000, alpha=0.5)
    assert {h.fragment for h in hits} >= set(space.linked.tolist()) & set(
        np.flatnonzero(s_ind[space.n_doc :] > 0).tolist()
    )
    for h in hits:
        i = h.entry if h.entry is not None else space.n_doc + h.fragment
        assert h.s_ind == pytest.approx(s_ind[i])
        assert h.s_env == pytest.approx(expected[i])
    rel = s_ind + 0.5 * expected
    ranked = [(h.entry if h.entry is not None else space.n_doc + h.fragment) for h in hits]
    assert ranked == sorted(np.flatnonzero(visible & (rel > 0)).tolist(), key=lambda i: -rel[i])


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
    index.update_file("widget/logs.py", None)  # the file is gone, and so are its links
    gone = space.search("basicConfig filename", 5, alpha=0.5)
    assert not [h for h in gone if h.fragment is not None]
    assert "widget.logs.setup_logging" not in memory.graph.definitions


def _space_bytes(root: Path, files: dict[str, str]) -> int:
    """The memory a code-term space allocates and keeps once it has followed the code."""
    make_repo(root, files)
    index, _ = RepoIndex.build(root)
    memory = DocMemory.open(index)
    tracemalloc.start()
    try:
        space = memory.space("chunk", EXTRACTIVE, code_terms=True)
        space.sync(force=True)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert space.n_doc
    return held


def test_a_space_holds_no_copy_of_the_code(tmp_path: Path) -> None:
    """Code the docs do not name costs the doc memory's scoring nothing: it reads fragments
    through the code index (a copy of their terms and texts grew with the repository)."""
    body = "def f{i}_{j}(x):\n    return x + {j}\n"
    unnamed = {
        f"widget/generated/m{i}.py": "".join(body.format(i=i, j=j) for j in range(40))
        for i in range(40)
    }
    small = _space_bytes(tmp_path / "small", WIDGET_FILES)
    large = _space_bytes(tmp_path / "large", {**WIDGET_FILES, **unnamed})
    assert large < 1.2 * small + 20_000, (small, large)


def test_a_question_asks_the_code_index_with_its_words_as_the_index_reads_them(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    question = "How do I set the WIDGET_TIMEOUT of serve?"
    assert memory.space("chunk", EXTRACTIVE).code_query(question) == "set WIDGET_TIMEOUT serve"
    assert not {"how", "do", "i", "the", "of"} - STOPWORDS
    code_space = memory.space("chunk", EXTRACTIVE, code_terms=True)
    assert code_space.code_query(question) == question
