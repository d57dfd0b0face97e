"""Retrieval over an index's tables (repomem.index.search): the top fragment for a query,
what an exclusion hides, and the scores consecutive searches share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from repos import PY_FILES, make_repo

from repomem.core import Exclusion
from repomem.index import maxscore, search
from repomem.index.bm25 import tokenize
from repomem.index.parsing import Lines, split_lines
from repomem.index.repo import RepoIndex
from repomem.index.search import Searcher

QUERY = "def compute(items):\n    out = []"


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    root = make_repo(tmp_path_factory.mktemp("search") / "r", PY_FILES, use_git=False)
    index, _ = RepoIndex.build(root, save=False)
    return Searcher(index.tables)


def test_the_top_fragment_holds_the_query(searcher: Searcher) -> None:
    top = searcher.retrieve(QUERY, k=3, revision=0)[0]
    assert [loc.path for loc in top.locations] == ["pkg/sub/mod.py"]
    assert "def compute(items):" in top.text
    # what the prompt shows of it: lines of the file, from ``shown_start``
    lines = searcher.lines("pkg/sub/mod.py")
    shown = top.shown.split("\n")
    assert shown == lines[top.shown_start : top.shown_start + len(shown)]
    assert top.s_ind > 0 and top.s_rel == pytest.approx(top.s_ind + 0.5 * top.s_env)
    assert top.s_rel == max(f.s_rel for f in searcher.retrieve(QUERY, k=10, revision=0))


def test_lines_kept_stay_within_their_bounds_and_follow_an_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A searcher keeps the lines of the files its results and cards came from, the first
    kept first dropped past ``LINE_FILES`` files or ``LINE_BYTES`` of what they hold; a
    file updated since is read anew."""
    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    index, _ = RepoIndex.build(root, save=False)
    searcher = Searcher(index.tables)
    paths = sorted(p for p, e in index.tables.files.items() if e.text)[:4]  # each holds bytes
    monkeypatch.setattr(search, "LINE_FILES", 3)
    for path in paths:
        searcher.lines(path)
    assert list(searcher._line_cache) == paths[1:]
    assert searcher._line_bytes == sum(h[1].nbytes for h in searcher._line_cache.values())
    monkeypatch.setattr(search, "LINE_BYTES", Lines(index.tables.files[paths[0]].buffer).nbytes)
    searcher.lines(paths[0])
    assert list(searcher._line_cache) == [paths[0]]  # one file's worth of bytes
    index.update_file(paths[0], "x = 1\n")
    fresh = Searcher(index.tables)
    fresh.lines(paths[0])
    assert searcher.lines(paths[0])[:] == ["x = 1"] == fresh.lines(paths[0])[:]
    assert searcher._line_bytes == fresh._line_bytes


def test_a_loaded_index_keeps_lines_over_its_mapped_text(tmp_path: Path) -> None:
    """The lines a searcher keeps of a loaded index's file read its mapped text in place
    (its pages the index file's, handed back at a tidy) and count its bounds alone against
    ``LINE_BYTES``; an edited file's hold their own text."""
    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    RepoIndex.build(root)
    index = RepoIndex.load(root)
    path = "pkg/sub/mod.py"
    lines = index.file_lines(path)
    assert lines[:] == split_lines(index.file_text(path))
    assert np.shares_memory(
        np.frombuffer(lines._data, np.uint8), index.tables.files[path].content[0]._data
    )
    # 4 bytes a newline, the text not counted
    assert lines.nbytes == lines._newlines.nbytes == 4 * lines._newlines.size > 0
    index.update_file(path, "x = 1\n")
    edited = index.file_lines(path)
    assert edited.nbytes == len(b"x = 1\n") + 4  # its text, and its one newline


def test_an_exclusion_hides_the_fragments_it_covers_whole(searcher: Searcher) -> None:
    hidden = Exclusion("pkg/sub/mod.py", 0)
    found = searcher.retrieve(QUERY, k=10, exclusion=hidden, revision=0)
    assert found and all(any(not hidden.hides(loc) for loc in f.locations) for f in found), (
        "a fragment all of whose locations are hidden was returned"
    )
    assert all("def compute(items):" not in f.text for f in found)
    visible = searcher.visible(hidden)
    assert visible.sum() < searcher.visible(None).sum()
    # an exclusion of lines the file does not reach hides nothing
    assert (searcher.visible(Exclusion("pkg/sub/mod.py", 500)) == searcher.visible(None)).all()
    assert (searcher.visible(Exclusion("no/such.py", 0)) == searcher.visible(None)).all()


@pytest.mark.parametrize("pruned_from", [0, maxscore.PRUNED_FROM])
def test_plain_bm25_retrieval_ranks_the_visible_fragments(
    searcher: Searcher, pruned_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At alpha 0 the top k is BM25's over the live fragments an exclusion leaves, pruned
    or scored in full: the live mask is read, not copied, and the hidden ids come apart."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", pruned_from)
    tables = searcher.tables
    ex = Exclusion("pkg/sub/mod.py", 0)
    hidden = searcher.hidden(ex)
    live = tables.live[: len(tables.frag_text)]
    assert hidden.size and hidden.tolist() == np.flatnonzero(live & ~searcher.visible(ex)).tolist()
    scores = tables.bm25.scores(tokenize(QUERY))[: live.size]
    dead = int(np.argmax(np.where(searcher.visible(ex), scores, 0)))  # the best one left
    monkeypatch.setattr(tables, "live", tables.live.copy())
    tables.live[dead] = False
    shown = searcher.visible(ex)
    want = np.flatnonzero(shown & (scores > 0))
    want = want[np.lexsort((want, -scores[want]))][:5]
    got = searcher.retrieve(QUERY, k=5, alpha=0.0, exclusion=ex, revision=0)
    assert [f.fragment_id for f in got] == want.tolist()
    assert [f.s_ind for f in got] == scores[want].tolist()


def test_scores_are_kept_for_one_query_and_revision(searcher: Searcher) -> None:
    first = searcher.query_scores(QUERY, 0)
    assert searcher.query_scores(QUERY, 0) is first and not first.flags.writeable
    assert searcher.query_scores(QUERY, 1) is not first  # the index changed
    assert first.size == len(searcher.tables.frag_text)
    lines = searcher.lines("pkg/util.py")
    assert searcher.lines("pkg/util.py") is lines and lines[3] == "def helper(x):"


def test_a_pause_drops_the_kept_scores(tmp_path: Path) -> None:
    """The next completion after a pause asks another query: its scores (every fragment's,
    2.6 MB on the Linux kernel's subset) are not held through it."""
    index, _ = RepoIndex.build(make_repo(tmp_path / "r", PY_FILES, use_git=False), save=False)
    first = index.query_scores(QUERY)
    assert index.query_scores(QUERY) is first
    index.tidy()
    again = index.query_scores(QUERY)
    assert again is not first and again.tolist() == first.tolist()


def test_many_fragments_are_scored_from_every_fragments_scores_then_kept(
    searcher: Searcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Usages score the windows calling a definition: a few by their rows, more than
    ``FULL_SCORE_FROM`` from every fragment's scores, the same floats, kept for the query's
    next request (a module called from thousands of windows cost 18 ms by row)."""
    query = "value = helper(1)"
    every = searcher.tables.bm25.scores(tokenize(query))
    few = np.arange(2)
    assert searcher.fragment_scores(query, 3, few).tolist() == every[few].tolist()
    assert searcher._kept_scores(query, 3) is None  # scored by row: nothing kept
    monkeypatch.setattr(search, "FULL_SCORE_FROM", 2)
    many = np.arange(len(searcher.tables.frag_text))[::-1]
    assert searcher.fragment_scores(query, 3, many).tolist() == every[many].tolist()
    kept = searcher._kept_scores(query, 3)
    assert kept is not None and searcher.query_scores(query, 3) is kept
    assert searcher._kept_scores(query, 4) is None  # the index changed
