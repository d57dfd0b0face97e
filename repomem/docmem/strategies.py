"""Answering a question from the doc memory: the retrieval and navigation strategies.

* ``single``: the top-k entries of the chosen memory form by FragRel's relation-aware score
  (doc entries and code fragments together).
* ``rerank``: a wider candidate list reordered by the model's relevance scores (structural
  memory's reranking prompt); without a model, by the idf-weighted share of the question's
  terms each candidate contains.
* ``iterative``: the query refined over rounds (structural memory's step-by-step "Thought"
  prompt), the final query retrieving the sources; without a model, the query grows by the
  terms the retrieved doc entries share most (pseudo-relevance feedback).
* ``readagent``: ReadAgent's page look-up over the gist memory (``repomem.docmem.readagent``).
* ``graph``: QRMeM's graph expansion with reflection (``repomem.docmem.graphnav``).
* ``factqa``: iterative QA with fact extraction (``repomem.docmem.factqa``).

Each strategy is a loop that prompts the configured model; with the built-in backend it runs
its extractive counterpart and the result says so.
"""

from __future__ import annotations

from collections import Counter

from repomem.docmem import prompts
from repomem.docmem.answer import AskResult, Context, Step, finish
from repomem.docmem.memory import DocMemory, Source
from repomem.docmem.model import TextModel
from repomem.docmem.names import ALL_FORMS, BUILT_FORMS, LOOKUPS, STRATEGIES
from repomem.docmem.text import STOPWORDS, content_terms, terms
from repomem.errors import RepomemError

#: chosen on the doc-QA set (``eval/docqa/run_docqa.py``: 47 questions over nine projects,
#: code competing with docs as ``repomem ask`` ranks them): hit@1 / @5 0.55 / 0.87 against
#: 0.36 / 0.74 for ``single``, the best of every strategy and form with code competing. It
#: navigates segments as written, so a question over another memory form goes to ``single``.
DEFAULT_STRATEGY = "graph"


def default_strategy(form: str) -> str:
    """The strategy a question over ``form`` gets when none is named."""
    return DEFAULT_STRATEGY if form == "chunk" else "single"


# Candidates reranked per source wanted, and rounds of query refinement (the study found 2-3
# rounds best).
_RERANK_FACTOR = 3
_REFINE_ROUNDS = 2
_EXPANSION_TERMS = 5
_RERANK_TOKENS = 120
_REFINE_TOKENS = 96


class AskError(RepomemError):
    """A question or an option of ``repomem ask`` is not usable."""


async def ask(
    memory: DocMemory,
    question: str,
    model: TextModel,
    *,
    strategy: str | None = None,
    form: str = "chunk",
    k: int = 5,
    lookup: str = "parallel",
    code: bool = True,
    alpha: float | None = None,
) -> AskResult:
    """Answer ``question`` with ``strategy`` (by default ``default_strategy(form)``) over the
    memory ``form`` (``alpha``: the environment weight, by default the memory's)."""
    question = " ".join(question.split())
    strategy = default_strategy(form) if strategy is None else strategy
    if not question:
        raise AskError("the question is empty: ask something about the repository")
    if strategy not in STRATEGIES:
        raise AskError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    if form not in ALL_FORMS:
        raise AskError(f"unknown memory form {form!r}: choose one of {', '.join(ALL_FORMS)}")
    if lookup not in LOOKUPS:
        raise AskError(f"unknown look-up {lookup!r}: choose one of {', '.join(LOOKUPS)}")
    if k < 1:
        raise AskError(f"the number of sources must be at least 1, got {k}")
    if alpha is not None and alpha < 0:
        raise AskError(f"alpha must be 0 or more, got {alpha}")
    ctx = Context(memory, model, form, k, memory.config.alpha if alpha is None else alpha, code)
    reads_gists = strategy == "readagent"
    await memory.prepare([form, "gist"] if reads_gists else [form], model, pages=reads_gists)
    mode = "model" if model.available else "extractive"
    result = AskResult(question, strategy, form, mode, None, [])
    result.notes.append(_form_note(memory, ctx, form))
    if strategy == "single":
        _single(ctx, result)
    elif strategy == "rerank":
        await _rerank(ctx, result)
    elif strategy == "iterative":
        await _iterative(ctx, result)
    elif strategy == "readagent":
        from repomem.docmem.readagent import read_agent

        await read_agent(ctx, result, lookup)
        return result
    elif strategy == "graph":
        from repomem.docmem.graphnav import navigate

        await navigate(ctx, result)
        if not result.sources:  # no entity or segment to start from (a few docs, a rare name)
            _single(ctx, result)
        return result
    else:
        from repomem.docmem.factqa import fact_qa

        await fact_qa(ctx, result)
        return result
    return await finish(ctx, result)


def _single(ctx: Context, result: AskResult) -> None:
    """One search for the question: the ``single`` strategy, and ``graph``'s fallback."""
    result.sources = ctx.search(result.question, ctx.k)
    result.steps.append(Step("retrieve", _retrieve_detail(ctx, result.question)))


def _retrieve_detail(ctx: Context, query: str) -> str:
    scope = "entries and code fragments" if ctx.code else "entries"
    return f"top {ctx.k} {ctx.form} {scope} by s_rel = s_ind + {ctx.alpha}*s_env for {query!r}"


def _form_note(memory: DocMemory, ctx: Context, form: str) -> str:
    if form == "chunk":
        return "memory form: chunk (segments as written)"
    entries = memory.entries(form, ctx.builder)
    origins = Counter(e.origin for e in entries if e.form in BUILT_FORMS)
    made = ", ".join(f"{n} {origin}" for origin, n in sorted(origins.items()))
    how = f"built by {ctx.model.name}" if ctx.model.available else "extractive: no language model"
    return f"memory form: {form} ({how}; entries: {made})"


# ----------------------------------------------------------------------------- rerank


async def _rerank(ctx: Context, result: AskResult) -> None:
    question = result.question
    candidates = ctx.search(question, ctx.k * _RERANK_FACTOR)
    result.steps.append(Step("retrieve", f"{len(candidates)} candidates for reranking"))
    if ctx.model.available and candidates:
        scores = await _model_scores(ctx, question, candidates)
        result.steps.append(
            Step("rerank", f"model scored {len(scores)} of {len(candidates)} candidates")
        )
        order = sorted(range(len(candidates)), key=lambda i: (-scores.get(i + 1, -1.0), i))
    else:
        cover = [ctx.coverage(question, c.text) for c in candidates]
        order = sorted(range(len(candidates)), key=lambda i: (-cover[i], i))
        result.steps.append(
            Step("rerank", "extractive: by the idf-weighted share of question terms covered")
        )
    result.sources = [candidates[i] for i in order[: ctx.k]]


async def _model_scores(ctx: Context, question: str, candidates: list[Source]) -> dict[int, float]:
    listing = "\n".join(f"Document {i}:\n{c.text}" for i, c in enumerate(candidates, start=1))
    reply = await ctx.model.complete(
        prompts.RERANK_HEAD,
        listing,
        prompts.RERANK_TAIL.format(question=question),
        max_tokens=_RERANK_TOKENS,
    )
    return prompts.parse_rerank(reply, len(candidates))


# --------------------------------------------------------------------------- iterative


async def _iterative(ctx: Context, result: AskResult) -> None:
    question = result.question
    query = question
    for round_ in range(1, _REFINE_ROUNDS + 1):
        found = ctx.search(query, ctx.k)
        if ctx.model.available:
            context = "\n\n".join(s.text for s in found)
            reply = await ctx.model.complete(
                prompts.REFINE_HEAD,
                context,
                prompts.REFINE_TAIL.format(question=question),
                max_tokens=_REFINE_TOKENS,
            )
            thought = prompts.parse_text(reply, min_words=1)
            query = f"{question} {thought}".strip()
            result.steps.append(Step(f"refine {round_}", f"model thought: {thought!r}"))
        else:  # feedback from the documentation, not from code that shares a word
            extra = expansion_terms(question, [s for s in found if s.kind == "doc"] or found)
            query = f"{question} {' '.join(extra)}".strip()
            result.steps.append(
                Step(f"refine {round_}", f"extractive: added terms {extra} from {len(found)} hits")
            )
    result.sources = ctx.search(query, ctx.k)
    result.steps.append(Step("retrieve", _retrieve_detail(ctx, query)))


def expansion_terms(question: str, sources: list[Source], n: int = _EXPANSION_TERMS) -> list[str]:
    """Terms the retrieved sources share most, that the question lacks (pseudo-relevance
    feedback): counted once per source, ties broken by total count, then alphabetically."""
    asked = set(content_terms(question))
    per_source: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for s in sources:
        found = [t for t in terms(s.text) if t not in asked and t not in STOPWORDS and len(t) > 2]
        per_source.update(set(found))
        total.update(found)
    ranked = sorted(per_source, key=lambda t: (-per_source[t], -total[t], t))
    return [t for t in ranked if per_source[t] >= 2][:n]
