"""Eq. 9 / Eq. 10 against hand-computed values, and alpha = 0 parity with plain BM25."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from rank_bm25 import BM25Okapi
from repos import make_repo

from repomem.core import Exclusion, Location
from repomem.index.bm25 import tokenize
from repomem.index.repo import RepoIndex
from repomem.index.scorer import environment_scores, relation_aware_scores, top_k


def test_environment_and_relation_aware_scores_by_hand() -> None:
    # fragment 0 relates to 1 (0.5) and 2 (0.25); 1 relates to 0 (1.0); 2 to nothing
    w = sp.csr_matrix(np.array([[0, 0.5, 0.25], [1.0, 0, 0], [0, 0, 0]]))
    s_ind = np.array([2.0, 4.0, 8.0])
    visible = np.ones(3, bool)
    s_env = environment_scores(w, s_ind, visible)
    assert s_env == pytest.approx([(0.5 * 4 + 0.25 * 8) / 0.75, 2.0, 0.0])
    env, rel = relation_aware_scores(w, s_ind, visible, alpha=0.5)
    assert env == pytest.approx(s_env)
    assert rel == pytest.approx([2 + 0.5 * 16 / 3, 4 + 1.0, 8.0])


def test_excluded_fragments_take_part_in_nothing() -> None:
    w = sp.csr_matrix(np.array([[0, 0.5, 0.25], [1.0, 0, 0], [0, 0, 0]]))
    s_ind = np.array([2.0, 4.0, 8.0])
    visible = np.array([True, True, False])
    s_env = environment_scores(w, s_ind, visible)
    # fragment 2 is neither in 0's numerator nor in its normaliser
    assert s_env == pytest.approx([4.0, 2.0, 0.0])
    assert top_k(s_ind + 0.5 * s_env, visible, 3).tolist() == [1, 0]


def test_alpha_zero_is_plain_bm25() -> None:
    w = sp.random(20, 20, density=0.3, random_state=1, format="csr")
    s_ind = np.random.default_rng(2).random(20)
    env, rel = relation_aware_scores(w, s_ind, np.ones(20, bool), alpha=0.0)
    assert np.array_equal(rel, s_ind) and not env.any()


def test_exclusion_rules() -> None:
    ex = Exclusion("a.py", 30)
    assert ex.excludes((Location("a.py", 25, 45),))
    assert not ex.excludes((Location("a.py", 0, 20),))  # ends before the hole's context start
    assert not ex.excludes((Location("a.py", 30, 50), Location("b.py", 0, 20)))  # elsewhere too
    near = Exclusion("a.py", 10, 40)
    assert near.excludes((Location("a.py", 30, 50),))
    assert not near.excludes((Location("a.py", 40, 60),))


def test_retrieve_alpha_zero_matches_rank_bm25(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    live = idx.tables.live_ids()
    corpus = [tokenize(idx.tables.frag_text[i]) for i in live]
    query = "for item in items:\n    if item:\n        out.append(helper(item))"
    ref = BM25Okapi(corpus).get_scores(tokenize(query))
    order = sorted(range(len(live)), key=lambda i: (-ref[i], live[i]))
    expected = [int(live[i]) for i in order if ref[i] > 0][:10]
    hits = idx.retrieve(query, k=10, alpha=0.0)
    assert [h.fragment_id for h in hits] == expected
    for h in hits:
        assert h.s_ind == pytest.approx(ref[list(live).index(h.fragment_id)], rel=1e-9)
        assert h.s_rel == h.s_ind and h.s_env == 0.0


def test_retrieve_reranks_with_environment(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    query = "value = helper(1)"
    hits = idx.retrieve(query, k=5, alpha=0.5)
    s_ind = idx.tables.bm25.scores(tokenize(query))
    rel = idx.tables.relations
    vis = idx.visible(None)
    for h in hits:
        row = rel[h.fragment_id]
        num = sum(v * s_ind[j] for j, v in zip(row.indices, row.data, strict=True) if vis[j])
        den = sum(v for j, v in zip(row.indices, row.data, strict=True) if vis[j])
        assert h.s_env == pytest.approx(num / den if den else 0.0)
        assert h.s_rel == pytest.approx(h.s_ind + 0.5 * h.s_env)
    assert [h.s_rel for h in hits] == sorted((h.s_rel for h in hits), reverse=True)


def test_hidden_buffer_fragments_can_stay_in_the_environment(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    query = "value = helper(1)"
    s_ind = idx.tables.bm25.scores(tokenize(query))
    hidden = Exclusion("pkg/util.py", 0)
    assert not idx.visible(hidden).all()
    rel = idx.tables.relations
    changed = 0
    for in_env in (False, True):
        ex = Exclusion("pkg/util.py", 0, in_environment=in_env)
        env_vis = idx.visible(None) if in_env else idx.visible(hidden)
        hits = idx.retrieve(query, k=20, alpha=0.5, exclusion=ex)
        for h in hits:
            assert not hidden.excludes(h.locations)  # never retrieved, either way
            row = rel[h.fragment_id]
            pairs = list(zip(row.indices, row.data, strict=True))
            num = sum(v * s_ind[j] for j, v in pairs if env_vis[j])
            den = sum(v for j, v in pairs if env_vis[j])
            assert h.s_env == pytest.approx(num / den if den else 0.0)
            if in_env:
                changed += any(not idx.visible(hidden)[j] for j, _ in pairs)
    assert changed  # some retrieved fragment relates to a hidden one
