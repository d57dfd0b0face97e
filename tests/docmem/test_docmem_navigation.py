"""The doc memory's scoring space (``space.JointSpace``: doc entries and code fragments ranked
together), the two navigating strategies called directly (ReadAgent's look-up over gists,
``readagent``; QRMeM's navigation over the entity graph, ``graphnav``) without a model, and
the embedding model's errors (``embeddings``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from test_docmem_memory import README, widget_repo

from repomem.docmem.answer import AskResult, Context
from repomem.docmem.embeddings import Embedder, EmbeddingError
from repomem.docmem.graphnav import navigate
from repomem.docmem.memory import DocMemory
from repomem.docmem.model import EXTRACTIVE, TextModel
from repomem.docmem.readagent import read_agent
from repomem.docmem.space import JointSpace
from repomem.index.repo import RepoIndex

NO_MODEL = TextModel(None)
TIMEOUT_LINE = README.split("\n").index(
    "Set `WIDGET_TIMEOUT` to the number of seconds a request may take. It defaults to 30."
)
QUESTION = "How many seconds may a request take before the timeout?"


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoIndex, DocMemory]:
    return widget_repo(tmp_path_factory.mktemp("navigation") / "repo")


def _gists(memory: DocMemory) -> Context:
    """The gist memory (pages and their gists) built without a model, as ``ask`` builds it."""
    asyncio.run(memory.prepare(["gist"], NO_MODEL, pages=True))
    return Context(memory, NO_MODEL, "gist", 3, memory.config.alpha)


def _result(question: str, strategy: str, form: str) -> AskResult:
    return AskResult(question, strategy, form, "extractive", None, [])


def _covers_timeout(result: AskResult) -> bool:
    return any(s.path == "README.md" and s.start <= TIMEOUT_LINE < s.end for s in result.sources)


def test_the_space_ranks_docs_by_bm25_plus_their_environment(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    space = memory.space("chunk", EXTRACTIVE, code=False)
    assert isinstance(space, JointSpace) and space.n_doc == len(space.entries)
    hits = space.search(QUESTION, 3, alpha=0.5, with_code=False)
    assert hits and all(h.fragment is None for h in hits)
    for h in hits:
        assert h.s_rel == pytest.approx(h.s_ind + 0.5 * h.s_env)
    assert [h.s_rel for h in hits] == sorted((h.s_rel for h in hits), reverse=True)
    best = space.entries[hits[0].entry]
    assert "WIDGET_TIMEOUT" in best.text
    # alpha 0 is BM25 alone
    plain = space.search(QUESTION, 3, alpha=0.0, with_code=False)
    assert all(h.s_rel == h.s_ind for h in plain)
    # an entry hidden from the search is never returned
    hidden = np.ones(space.n_doc, bool)
    hidden[hits[0].entry] = False
    again = space.search(QUESTION, 3, alpha=0.5, doc_visible=hidden, with_code=False)
    assert hits[0].entry not in [h.entry for h in again]


def test_the_space_with_code_ranks_code_fragments_too(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    query = "setup_logging basicConfig filename"
    with_code = memory.space("chunk", EXTRACTIVE, code=True).search(query, 5, alpha=0.5)
    assert any(h.fragment is not None for h in with_code), "code ranks beside the docs"
    assert all(h.entry is None or h.fragment is None for h in with_code)
    docs_only = memory.space("chunk", EXTRACTIVE, code=False).search(query, 5, alpha=0.5)
    assert all(h.fragment is None for h in docs_only)


@pytest.mark.parametrize("lookup", ["parallel", "sequential"])
def test_readagent_looks_up_the_page_that_answers(
    widget: tuple[RepoIndex, DocMemory], lookup: str
) -> None:
    _, memory = widget
    ctx = _gists(memory)
    result = _result(QUESTION, "readagent", "gist")
    asyncio.run(read_agent(ctx, result, lookup))
    assert result.steps[0].action == "gist memory"
    assert _covers_timeout(result)
    assert result.answer is None


def test_readagent_without_a_matching_gist_says_so(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    ctx = _gists(memory)
    result = _result("zyzzyva quux", "readagent", "gist")
    asyncio.run(read_agent(ctx, result, "parallel"))
    assert result.sources == [] and "no gist matches the question" in result.notes


def test_graph_navigation_seeds_from_the_question_and_adds_code(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    ctx = Context(memory, NO_MODEL, "chunk", 3, memory.config.alpha)
    result = _result("Which function sets up logging before serving?", "graphnav", "chunk")
    asyncio.run(navigate(ctx, result))
    assert result.steps[0].action == "seed"
    paths = {s.path for s in result.sources}
    assert "docs/guide.rst" in paths  # the segment naming setup_logging
    assert "widget/logs.py" in paths  # and the code that defines it


def test_an_embedding_model_must_be_a_model_directory(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="no embedding model at"):
        Embedder(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    pytest.importorskip("transformers")
    with pytest.raises(EmbeddingError, match="cannot load the embedding model"):
        Embedder(tmp_path)
