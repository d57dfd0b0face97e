"""Bounded retrieval (Eq. 9 only where a fragment can still rank) against full scoring: the
same ids in the same order with the same floats, ties included, before and after updates."""

from __future__ import annotations

import email
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from repos import write_files

from repomem.config import IndexConfig
from repomem.core import Exclusion
from repomem.index import maxscore
from repomem.index.bm25 import tokenize
from repomem.index.relations import relations_by_target
from repomem.index.repo import RepoIndex
from repomem.index.scorer import bounded_top_k, relation_aware_scores, top_k


def _padded(rng: np.random.Generator, n: int, cap: int, levels: int) -> tuple[np.ndarray, ...]:
    """Random relation rows: up to ``cap`` distinct targets (no self-loops), strengths from a
    few levels so that equal scores are common."""
    idx = np.full((n, cap), -1, np.int64)
    val = np.zeros((n, cap))
    for f in range(n):
        m = int(rng.integers(0, min(cap, n - 1) + 1))
        targets = rng.choice(np.delete(np.arange(n), f), m, replace=False)
        slots = np.sort(rng.choice(cap, m, replace=False))
        idx[f, slots] = targets
        val[f, slots] = rng.integers(1, levels + 1, m) / levels
    return idx, val


def _csr(idx: np.ndarray, val: np.ndarray) -> sp.csr_matrix:
    mask = idx >= 0
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))])
    return sp.csr_matrix((val[mask], idx[mask], indptr), shape=(len(idx), len(idx)))


def _inverse(idx: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    ptr, parts = relations_by_target(idx, n, entries=None)
    return ptr[:-1], ptr[1:], next(parts)


def _full(idx, val, s_ind, visible, alpha, k):
    s_env, s_rel = relation_aware_scores(_csr(idx, val), s_ind, visible, alpha)
    ids = top_k(s_rel, visible, k)
    return ids, s_env[ids], s_rel[ids]


@pytest.mark.parametrize("seed", range(40))
def test_bounded_top_k_equals_full_scoring(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    idx, val = _padded(rng, n, int(rng.integers(1, 9)), int(rng.integers(1, 4)))
    for _ in range(10):
        # few distinct scores (ties), many zeros, some fragments hidden
        s_ind = rng.integers(0, int(rng.integers(2, 6)), n) * rng.choice([1.0, 0.37])
        s_ind[rng.random(n) < rng.random()] = 0.0
        visible = rng.random(n) < rng.uniform(0.5, 1.0)
        alpha = float(rng.choice([0.0, 0.5, 1.0, 3.0, 0.1]))
        k = int(rng.integers(1, 30))
        got = bounded_top_k(idx, val, _inverse(idx, n), s_ind, visible, alpha, k)
        want = _full(idx, val, s_ind, visible, alpha, k)
        for a, b in zip(got, want, strict=True):
            assert a.tolist() == b.tolist()


def test_bounded_top_k_prunes_and_ranks_a_fragment_by_its_environment_alone() -> None:
    """Fragment 2 scores nothing itself but relates to the best one: it must rank, found
    through the relations by target, while the long unrelated tail is never scored."""
    n = 10_000
    idx = np.full((n, 2), -1, np.int64)
    val = np.zeros((n, 2))
    idx[2, 0], val[2, 0] = 0, 1.0
    idx[5:, 0], val[5:, 0] = np.arange(4, n - 1), 1.0  # a chain through the tail
    s_ind = np.zeros(n)
    s_ind[0], s_ind[1] = 10.0, 9.0
    s_ind[5:] = 0.001
    visible = np.ones(n, bool)
    got = bounded_top_k(idx, val, _inverse(idx, n), s_ind, visible, 0.5, 3)
    assert got[0].tolist() == [0, 1, 2] == _full(idx, val, s_ind, visible, 0.5, 3)[0].tolist()
    assert got[2].tolist() == [10.0, 9.0, 5.0]


def test_bounded_top_k_keeps_a_fragment_that_ties_at_the_bound() -> None:
    """Fragment 0 scores s_k / (1 + alpha) and so does its environment: s_rel = s_k exactly,
    a tie that the lower id wins, so the bound must not drop it. The fragments just below
    s_k / 2 make that split the cheapest, which puts fragment 0 right on it."""
    n = 23
    idx = np.full((n, 1), -1, np.int64)
    val = np.zeros((n, 1))
    idx[0, 0], val[0, 0] = 1, 1.0
    s_ind = np.full(n, 2 * 15.5 / 32)
    s_ind[:3] = [1.0, 1.0, 2.0]
    visible = np.ones(n, bool)
    got = bounded_top_k(idx, val, _inverse(idx, n), s_ind, visible, 1.0, 1)
    assert got[0].tolist() == [0] == _full(idx, val, s_ind, visible, 1.0, 1)[0].tolist()


def _repo_files(rng: random.Random, n_files: int) -> dict[str, str]:
    names = [f"fn_{i}" for i in range(12)]
    files = {}
    for f in range(n_files):
        body = []
        for d in range(rng.randrange(1, 5)):
            callee = rng.choice(names)
            body.append(
                f"def {rng.choice(names)}_{f}_{d}(value):\n"
                f"    total = {callee}(value) + {rng.randrange(3)}\n"
                f"    return {rng.choice(names)}(total)\n"
            )
        files[f"m{f}.py"] = "\n".join(body)
    files["base.py"] = "".join(
        f"def {n}(x):\n    return x + {i % 3}\n\n" for i, n in enumerate(names)
    )
    return files


def _full_retrieve(idx: RepoIndex, query: str, alpha: float, k: int, ex=None) -> list:
    n = len(idx.tables.frag_text)
    s_ind = np.zeros(n)
    scores = idx.tables.bm25.scores(tokenize(query))
    s_ind[: min(n, scores.size)] = scores[:n]
    vis = idx.visible(ex)
    s_env, s_rel = relation_aware_scores(idx.tables.relations, s_ind, vis, alpha)
    return [(int(f), s_ind[f], s_env[f], s_rel[f]) for f in top_k(s_rel, vis, k)]


@pytest.mark.parametrize("seed", range(4))
def test_retrieve_equals_full_scoring_after_updates(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    files = _repo_files(rng, 12)
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, save=False)
    for step in range(8):
        for _ in range(5):
            words = rng.sample(tokenize(" ".join(files.values())), 6)
            query = " ".join(words)
            alpha = rng.choice([0.0, 0.5, 2.0])
            k = rng.randrange(1, 12)
            got = [
                (h.fragment_id, h.s_ind, h.s_env, h.s_rel)
                for h in idx.retrieve(query, k=k, alpha=alpha)
            ]
            assert got == _full_retrieve(idx, query, alpha, k)
        path = rng.choice(sorted(files))
        files[path] = files[path] + f"\ndef extra_{step}(v):\n    return fn_{step}(v) + fn_1(v)\n"
        idx.update_file(path, files[path])
        # the relations by target, kept in step, hold what a rebuild from the rows holds
        start, end, sources = _inverse(idx.tables.rel_idx, len(idx.tables.frag_text))
        pool = idx.tables.inverse_relations
        for g in range(len(idx.tables.frag_text)):
            kept = pool.cols[pool.start[g] : pool.end[g]]
            assert sorted(kept.tolist()) == sources[start[g] : end[g]].tolist()


def _windows(idx: RepoIndex, rng: random.Random, n: int) -> list[tuple[str, int, str]]:
    """Query windows as a completion makes them: the 20 lines before a random cursor."""
    paths = sorted(p for p in idx.tables.files if len(idx.file_lines(p)) > 25)
    out = []
    for path in rng.choices(paths, k=n):
        line = rng.randrange(20, len(idx.file_lines(path)))
        out.append((path, line, "\n".join(idx.file_lines(path)[line - 20 : line])))
    return out


def _assert_plain_bm25_exact(idx: RepoIndex, rng: random.Random, n: int) -> None:
    """Whole windows, and a few of their names (where a bound decides more often)."""
    for path, line, window in _windows(idx, rng, n):
        ex = Exclusion.around(path, line, 20)
        words = tokenize(window) or ["payload"]
        for query in (window, " ".join(rng.sample(words, min(len(words), rng.randrange(1, 5))))):
            for k in (1, 10, 40):
                got = [
                    (h.fragment_id, h.s_ind, h.s_env, h.s_rel)
                    for h in idx.retrieve(query, k=k, alpha=0.0, exclusion=ex)
                ]
                assert got == _full_retrieve(idx, query, 0.0, k, ex)
            # what usages score: a few fragments alone, the floats of scoring them all
            some = np.array(rng.sample(range(idx.fragment_slots), 40))
            every = idx.tables.bm25.scores(tokenize(query))
            assert idx.fragment_scores(query, some).tolist() == every[some].tolist()


def test_plain_bm25_retrieval_is_exact_on_a_real_package_through_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain BM25 retrieval (pruned, whatever the size) ranks query windows of a real package
    (the standard library's ``email``) exactly as scoring every fragment does, ids and
    floats, around the cursor's excluded lines: built, loaded from disk, then edited
    (functions added, files cut, removed and added, some with long lines that move the mean
    fragment length)."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    monkeypatch.setattr(maxscore, "FIRST_BUDGET", 64)  # a first k-th score from few postings
    root = tmp_path / "r"
    shutil.copytree(Path(email.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    rng = random.Random(0)
    RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")))
    idx = RepoIndex.load(root, IndexConfig(index_dir=str(tmp_path / "idx")))
    _assert_plain_bm25_exact(idx, rng, 30)
    paths = sorted(idx.tables.files)
    for step in range(12):
        path = rng.choice(paths)
        text = idx.file_text(path) or ""
        lines = text.splitlines()
        if step % 4 == 0:  # long lines of the file's own names: much longer fragments
            words = tokenize(text) or ["payload"]
            extra = [" ".join(rng.choices(words, k=200)) for _ in range(40)]
            text = "\n".join(lines + ["x = '''", *extra, "'''"]) + "\n"
        elif step % 4 == 1:
            text = "\n".join(lines[: len(lines) // 3]) + "\n"
        elif step % 4 == 2:
            text = text + f"\ndef added_{step}(msg):\n    return msg.get_payload(decode=True)\n"
        else:
            text = None
        idx.update_file(path, text)
        if text is None:
            paths.remove(path)
        _assert_plain_bm25_exact(idx, rng, 6)
    fresh = (f"def fresh_{i}(part):\n    return part.get_content_type()\n" for i in range(30))
    idx.update_file("fresh.py", "\n".join(fresh))
    _assert_plain_bm25_exact(idx, rng, 20)
