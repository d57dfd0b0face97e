"""The memory builders and retrieval loops with a real (tiny, random) language model.

The model's replies are gibberish, so these tests check that every loop runs, sends prompts
that fit the model's context window, copes with whatever comes back, and still cites sources;
and that model-built forms are stored and reused. The same directory serves as a local
embedding model for the semantic relation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from repos import make_repo
from test_docmem_memory import WIDGET_FILES
from tinymodel import build_tiny_model

from repomem.cli import main
from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.transformers import TransformersBackend
from repomem.docmem import store as doc_store
from repomem.docmem.forms import FALLBACK, MODEL, units
from repomem.docmem.memory import DocMemory, DocMemoryConfig
from repomem.docmem.model import TextModel
from repomem.docmem.names import STRATEGIES
from repomem.docmem.relations import semantic_relations
from repomem.docmem.strategies import ask
from repomem.index.repo import RepoIndex

WINDOW = 384


class Recording(TransformersBackend):
    """The real backend, remembering every request it served."""

    def __init__(self, model: str) -> None:
        super().__init__(model, device="cpu", context_window=WINDOW)
        self.seen: list[GenerationRequest] = []

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        self.seen.extend(requests)
        return await super().complete_batch(requests)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", max_positions=WINDOW)


@pytest.fixture(scope="module")
def backend(tiny: Path) -> Recording:
    return Recording(str(tiny))


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, tiny: Path) -> DocMemory:
    root = make_repo(tmp_path_factory.mktemp("model") / "repo", WIDGET_FILES)
    index, _ = RepoIndex.build(root)
    return DocMemory.open(index, DocMemoryConfig(embedding_model=str(tiny)))


def prompts_fit(backend: Recording) -> None:
    for request in backend.seen:
        assert backend.count_tokens(request.prompt) + request.max_tokens <= WINDOW


def test_model_builds_forms_and_pages_and_they_are_reused(
    memory: DocMemory, backend: Recording
) -> None:
    model = TextModel(backend)
    asyncio.run(memory.prepare(["mixed"], model, pages=True))
    assert model.calls > 0
    prompts_fit(backend)
    builder = memory.builder(model)
    assert builder.startswith("transformers:")
    for path in memory.paths:
        built = memory.docs[path].builders[builder]
        segments = memory.docs[path].segments
        assert built.pages and built.pages[0][0] == 0 and built.pages[-1][1] == len(segments)
        assert all(
            a[1] == b[0] and a[0] < a[1] for a, b in zip(built.pages, built.pages[1:], strict=False)
        )
        for form in ("gist", "summary", "triple", "fact"):
            assert {e.origin for e in built.forms[form]} <= {MODEL, FALLBACK}
        # one summary per section, whatever the model replied
        summaries = [e.segments for e in built.forms["summary"]]
        assert summaries == units("summary", segments, built.pages)
    origins = {e.origin for e in memory.entries("mixed", builder) if e.form != "chunk"}
    assert MODEL in origins or FALLBACK in origins
    calls = model.calls
    reopened = DocMemory.open(memory.index, memory.config)
    asyncio.run(reopened.prepare(["mixed"], model, pages=True))
    assert model.calls == calls  # everything came from the store


@pytest.mark.parametrize(
    ("strategy", "lookup"),
    [(s, "parallel") for s in STRATEGIES] + [("readagent", "sequential")],
)
def test_every_loop_runs_with_a_model_and_cites_sources(
    memory: DocMemory, backend: Recording, strategy: str, lookup: str
) -> None:
    model = TextModel(backend)
    backend.seen.clear()
    result = asyncio.run(
        ask(
            memory,
            "How many seconds may a request take?",
            model,
            strategy=strategy,
            lookup=lookup,
            k=3,
        )
    )
    assert result.mode == "model"
    assert isinstance(result.answer, str)
    assert model.calls >= (1 if strategy == "single" else 2)  # the loop's prompts, the answer
    prompts_fit(backend)
    assert result.sources
    assert all(s.label == f"{s.path}:{s.start + 1}" for s in result.sources)
    assert all(0 <= i < len(result.sources) for i in result.cited)
    assert result.to_dict()["sources"][0]["line"] == result.sources[0].start + 1


def test_semantic_relation_from_a_local_embedding_model(memory: DocMemory, tiny: Path) -> None:
    vectors = memory.embeddings()
    assert vectors.shape[0] == len(memory.segments)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    cache = memory.index.root / ".repomem" / doc_store.EMBEDDINGS_NAME
    stamp = cache.stat().st_mtime_ns
    np.testing.assert_allclose(memory.embeddings(), vectors, rtol=1e-6)
    assert cache.stat().st_mtime_ns == stamp  # served from the cache
    cfg = memory.config
    semantic = semantic_relations(vectors, cfg.epsilon, cfg.neighbours).toarray()
    combined = memory.segment_relations.toarray()
    assert semantic.max() > 0
    assert (combined >= semantic - 1e-12).all()  # the relation kinds combine by maximum


def test_ask_command_with_a_local_model_answers_and_cites(
    memory: DocMemory, tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # the command in-process: torch is loaded already, the subprocess tests cover the rest
    monkeypatch.chdir(memory.index.root)
    monkeypatch.setenv("REPOMEM_BACKEND_CONTEXT_WINDOW", str(WINDOW))
    monkeypatch.setenv("REPOMEM_BACKEND_DEVICE", "cpu")
    code = main(
        [
            "ask",
            "How many seconds may a request take?",
            "--backend",
            "transformers",
            "--model",
            str(tiny),
            "--strategy",
            "rerank",
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "model" and isinstance(report["answer"], str)
    assert report["sources"] and all(s["line"] >= 1 for s in report["sources"])
    assert [s["action"] for s in report["steps"]][:2] == ["retrieve", "rerank"]
    assert "model scored" in report["steps"][1]["detail"]
