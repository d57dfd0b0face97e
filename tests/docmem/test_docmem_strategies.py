"""The retrieval and navigation strategies without a language model (their extractive
paths), on a real fixture repository."""

from __future__ import annotations

import asyncio
import re

import pytest
from test_docmem_memory import README, widget_repo

from repomem.docmem.answer import NO_MODEL_NOTE, AskResult, Context
from repomem.docmem.factqa import best_fact, plan_questions
from repomem.docmem.memory import DocMemory, Source
from repomem.docmem.model import TextModel
from repomem.docmem.names import FORMS, STRATEGIES
from repomem.docmem.strategies import AskError, ask, expansion_terms
from repomem.index.repo import RepoIndex

NO_MODEL = TextModel(None)
TIMEOUT_LINE = README.split("\n").index(
    "Set `WIDGET_TIMEOUT` to the number of seconds a request may take. It defaults to 30."
)


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoIndex, DocMemory]:
    return widget_repo(tmp_path_factory.mktemp("strategies") / "repo")


def run(memory: DocMemory, question: str, **options: object) -> AskResult:
    return asyncio.run(ask(memory, question, NO_MODEL, **options))  # type: ignore[arg-type]


def covers(source: Source, path: str, line: int) -> bool:
    return source.path == path and source.start <= line < source.end


QUESTION = "How many seconds may a request take before the timeout?"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_finds_the_documented_answer(
    widget: tuple[RepoIndex, DocMemory], strategy: str
) -> None:
    _, memory = widget
    result = run(memory, QUESTION, strategy=strategy, k=3)
    assert result.mode == "extractive" and result.answer is None
    assert NO_MODEL_NOTE in result.notes
    assert result.steps, "every strategy reports what it did"
    assert any(covers(s, "README.md", TIMEOUT_LINE) for s in result.sources)
    for source in result.sources:
        assert source.label == f"{source.path}:{source.start + 1}"
        assert source.start < source.end
    assert len({s.key for s in result.sources}) == len(result.sources)


@pytest.mark.parametrize("form", [*FORMS, "mixed"])
def test_every_memory_form_retrieves_and_says_how_it_was_made(
    widget: tuple[RepoIndex, DocMemory], form: str
) -> None:
    _, memory = widget
    result = run(memory, "Which key caps how many times a failed request is retried?", form=form)
    assert result.sources and result.sources[0].kind == "doc"
    assert result.sources[0].path == "README.md"
    assert "RETRY_LIMIT" in memory.segments[result.sources[0].segment].text
    note = next(n for n in result.notes if n.startswith("memory form"))
    assert form in note
    assert form == "chunk" or "extractive" in note
    allowed = set(FORMS) if form == "mixed" else {form}
    assert all(s.form in allowed for s in result.sources if s.kind == "doc")


def test_docs_only_leaves_code_out(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    both = run(memory, "Where are the default timeout and retry limit values?", k=8)
    assert any(s.kind == "code" and s.path == "widget/config.py" for s in both.sources)
    docs = run(memory, "Where are the default timeout and retry limit values?", k=8, code=False)
    assert docs.sources and all(s.kind == "doc" for s in docs.sources)


def test_rerank_orders_by_question_coverage(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    result = run(memory, "flag restart server files change", strategy="rerank", k=4)
    ctx = Context(memory, NO_MODEL, "chunk", 4, 0.5)
    cover = [ctx.coverage(result.question, s.text) for s in result.sources]
    assert cover == sorted(cover, reverse=True)
    assert "--reload" in result.sources[0].text


def test_iterative_feedback_adds_terms_the_hits_share() -> None:
    def src(text: str) -> Source:
        return Source("a.md", 0, 1, text, "doc", "chunk", "extractive", "", 1.0)

    sources = [src("alpha bravo charlie"), src("bravo charlie delta"), src("charlie echo")]
    assert expansion_terms("alpha question", sources) == ["charlie", "bravo"]


def test_readagent_looks_pages_up_by_their_gists(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    parallel = run(memory, QUESTION, strategy="readagent", lookup="parallel", k=5)
    assert parallel.steps[0].action == "gist memory"
    looked = [s for s in parallel.steps if s.action == "look up"]
    assert looked and "extractive" in looked[0].detail
    numbers = {int(n) for n in re.findall(r"\d+", looked[0].detail.split("(")[0])}
    read_segments = {
        s for p in memory.pages("extractive") if p.number in numbers for s in p.segments
    }
    assert numbers and read_segments
    assert all(s.segment in read_segments for s in parallel.sources)
    sequential = run(memory, QUESTION, strategy="readagent", lookup="sequential", k=5)
    assert [s.action for s in sequential.steps][:2] == ["gist memory", "look up"]
    assert "still missing" in sequential.steps[1].detail


def test_graph_expands_from_question_entities_to_code(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    result = run(memory, "What does setup_logging write, and which file?", strategy="graph", k=3)
    seed = result.steps[0]
    assert seed.action == "seed" and "widget.logs.setup_logging" in seed.detail
    assert any(s.action.startswith("reflect") for s in result.steps)
    code = [s for s in result.sources if s.kind == "code"]
    assert code and code[0].path == "widget/logs.py"
    assert "def setup_logging" in code[0].text


def test_graph_reflection_names_what_is_missing(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    result = run(
        memory, "Which port does serve use and how is the zeppelin tuned?", strategy="graph", k=3
    )
    reflections = [s for s in result.steps if s.action.startswith("reflect")]
    assert "zeppelin" in reflections[0].detail
    assert any(s.action.startswith("expand") for s in result.steps)


def test_factqa_plans_sub_questions_and_extracts_facts(
    widget: tuple[RepoIndex, DocMemory],
) -> None:
    _, memory = widget
    ctx = Context(memory, NO_MODEL, "chunk", 3, 0.5)
    question = "Which key caps retries and what does --reload do?"
    plan = plan_questions(ctx, question)
    assert plan[0] == question
    assert "Which key caps retries?" in plan and "What is --reload?" in plan
    found = ctx.search("Which key caps retries?", 3)
    fact, source = best_fact(ctx, "Which key caps retries?", found)
    assert "RETRY_LIMIT" in fact and source is not None and source.path == "README.md"
    result = run(memory, question, strategy="factqa", k=4)
    plans = [s for s in result.steps if s.action.startswith("plan")]
    assert len(plans) == 3 and "RETRY_LIMIT" in plans[0].detail + plans[1].detail


def test_bad_questions_and_options_are_clear_errors(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    with pytest.raises(AskError, match="question is empty"):
        run(memory, "   ")
    with pytest.raises(AskError, match="unknown strategy 'magic'"):
        run(memory, QUESTION, strategy="magic")
    with pytest.raises(AskError, match="unknown memory form 'poem'"):
        run(memory, QUESTION, form="poem")
    with pytest.raises(AskError, match="unknown look-up"):
        run(memory, QUESTION, lookup="random")
    with pytest.raises(AskError, match="at least 1"):
        run(memory, QUESTION, k=0)
