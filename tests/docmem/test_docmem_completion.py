"""Doc segments entering code completion: ``DocMemory.retrieve_for_code`` and the merge."""

from __future__ import annotations

import asyncio

import pytest
from test_docmem_memory import README, widget_repo

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine
from repomem.context.retriever import CodeRetriever
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.docmem.memory import DocMemory
from repomem.docmem.retriever import DocAwareRetriever, merge_ranked
from repomem.index.repo import RepoIndex
from repomem.settings import Settings

USER_FILE = "app/main.py"
LEFT = "import logging\n\nfrom widget.server import serve\n"


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoIndex, DocMemory]:
    return widget_repo(tmp_path_factory.mktemp("completion") / "repo")


def test_doc_segments_come_back_as_completion_fragments(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    docs = memory.retrieve_for_code("from widget.server import serve\nserve(port=8080,", 10)
    assert docs and docs[0].path == "README.md"
    example = README.split("\n").index("serve(port=8080, reload=True)")
    top = docs[0]
    (loc,) = top.locations
    assert loc.start <= example < loc.end
    assert top.shown == top.text == "\n".join(README.split("\n")[loc.start : loc.end])
    assert top.fragment_id < 0  # never confused with a code fragment id
    for doc in docs:
        assert doc.s_rel == pytest.approx(doc.s_ind + 0.5 * doc.s_env)


def test_doc_scores_are_on_the_code_scale_and_merge_by_rank(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    index, memory = widget
    query = "serve(port=8080, reload=True)"
    code = index.retrieve(query, k=10, alpha=0.5)
    docs = memory.retrieve_for_code(query, 10)
    merged = merge_ranked(code, docs, 4)
    assert len(merged) == 4
    assert [f.s_rel for f in merged] == sorted((f.s_rel for f in code + docs), reverse=True)[:4]
    # both lists score the query against one corpus: the server's code ranks in both
    assert any(f.path == "widget/server.py" for f in code)
    assert memory.retrieve_for_code("zzz_no_such_token", 5) == []

    def frag(score: float, path: str) -> RetrievedFragment:
        return RetrievedFragment(0, (Location(path, 0, 1),), "", "", score, 0.0, score)

    assert [f.path for f in merge_ranked([frag(2, "a.py")], [frag(3, "R.md")], 5)] == [
        "R.md",
        "a.py",
    ]


def test_the_doc_aware_retriever_searches_the_code_index_once_per_query(
    widget: tuple[RepoIndex, DocMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completion's code fragments are also what the joint scoring of doc segments needs:
    the index is searched once for both, and the doc segments are the same as when the
    memory searches it itself."""
    index, memory = widget
    query = "from widget.server import serve\nserve(port=8080,"
    alone = memory.retrieve_for_code(query, 10, alpha=0.5)
    calls: list[str] = []
    retrieve = index.retrieve

    def counted(q: str, **kw: object) -> list[RetrievedFragment]:
        calls.append(q)
        return retrieve(q, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "retrieve", counted)
    merged = DocAwareRetriever(index, memory).retrieve(query, k=10, alpha=0.5, exclusion=None)
    assert calls == [query]
    code = retrieve(query, k=10, alpha=0.5)
    assert merged == merge_ranked(code, alone, 10)


def test_completion_uses_the_documented_example(widget: tuple[RepoIndex, DocMemory]) -> None:
    index, memory = widget
    settings = Settings()
    exclusion = Exclusion(USER_FILE, 0, 40)
    index.update_file(USER_FILE, LEFT)
    try:
        with_docs = CompletionEngine(DocAwareRetriever(index, memory), BuiltinBackend(), settings)
        result = asyncio.run(with_docs.complete(USER_FILE, LEFT, exclusion=exclusion))
        assert result.text == "serve(port=8080, reload=True)"
        shown = {f.path for f in result.prompt.fragments}
        assert "README.md" in shown
        assert "# README.md" in result.prompt.text  # the prompt says where it comes from
        code_only = CompletionEngine(CodeRetriever(index), BuiltinBackend(), settings)
        plain = asyncio.run(code_only.complete(USER_FILE, LEFT, exclusion=exclusion))
        assert plain.text != result.text
    finally:
        index.update_file(USER_FILE, None)


def test_the_excluded_files_own_docstring_is_hidden(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    query = "Configuration defaults"  # the words of widget/config.py's module docstring
    seen = {f.path for f in memory.retrieve_for_code(query, 10)}
    assert "widget/config.py" in seen
    hidden = memory.retrieve_for_code(query, 10, exclusion=Exclusion("widget/config.py", 0))
    assert "widget/config.py" not in {f.path for f in hidden}
    elsewhere = memory.retrieve_for_code(query, 10, exclusion=Exclusion("widget/config.py", 5))
    assert "widget/config.py" in {f.path for f in elsewhere}  # the docstring is above line 5
