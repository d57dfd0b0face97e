"""Iterative QA with fact extraction (dynamic in-context editing, its Algorithm 1).

The reasoning thought ``T`` starts as the question. Each round the planner either ends
("Final answer: ...") or asks the next sub-question; the sub-question retrieves chunks (joined
in document order), a fact answering it is extracted from them, and ``T`` grows by the
sub-question and the fact. The answer is the planner's final answer, or the model's answer to
``T`` once the rounds are spent.

Without a model the plan is extractive: the question itself, then its clauses, then "what is
X" for the entities it names and, as facts come in, for entities a fact introduces (so that a
fact can lead to the next hop); the fact is the retrieved sentence covering most of the
sub-question's terms.
"""

from __future__ import annotations

import re

from repomem.docmem import prompts
from repomem.docmem.answer import NO_MODEL_NOTE, AskResult, Context, Step, distinct
from repomem.docmem.entities import mentions
from repomem.docmem.memory import Source
from repomem.docmem.text import content_terms, sentences

MAX_ROUNDS = 3
_PLAN_TOKENS = 64
_FACT_TOKENS = 64
_ANSWER_TOKENS = 128


async def fact_qa(ctx: Context, result: AskResult) -> None:
    if ctx.model.available:
        await _with_model(ctx, result)
    else:
        _extractive(ctx, result)
        result.notes.append(NO_MODEL_NOTE)


async def _with_model(ctx: Context, result: AskResult) -> None:
    question = result.question
    thought = f"Question: {question}"
    sources: list[Source] = []
    cited: list[tuple[str, str, int]] = []
    answer = ""
    for round_ in range(1, MAX_ROUNDS + 1):
        reply = await ctx.model.complete(
            prompts.PLAN_HEAD, thought, prompts.PLAN_TAIL, max_tokens=_PLAN_TOKENS
        )
        kind, text = prompts.parse_plan(reply)
        if kind == "final":
            answer = text
            result.steps.append(Step(f"plan {round_}", f"final answer: {text!r}"))
            break
        found = _in_document_order(ctx.search(text, ctx.k))
        reference = " ".join(s.text for s in found)
        fact_reply = await ctx.model.complete(
            prompts.FACT_HEAD,
            reference,
            prompts.FACT_TAIL.format(question=text),
            max_tokens=_FACT_TOKENS,
        )
        fact = fact_reply.strip().split("\n", 1)[0].strip()
        thought += f"\nSubquestion: {text}\nRetrieved fact: {fact}"
        result.steps.append(Step(f"plan {round_}", f"sub-question {text!r} -> fact {fact!r}"))
        sources = distinct(sources + found)
        cited += [s.key for s in found[:1]]
    if not answer:
        reply = await ctx.model.complete("", thought, prompts.FINAL_TAIL, max_tokens=_ANSWER_TOKENS)
        answer = reply.strip()
        result.steps.append(Step("answer", "model answered from the sub-questions and facts"))
    if not sources:
        sources = ctx.search(question, ctx.k)
    result.answer = answer
    result.sources = sources
    result.cited = [i for i, s in enumerate(sources) if s.key in cited]


def _extractive(ctx: Context, result: AskResult) -> None:
    question = result.question
    plan = plan_questions(ctx, question)
    asked: list[str] = []
    first: list[Source] = []
    rest: list[Source] = []
    while plan and len(asked) < MAX_ROUNDS:
        sub = plan.pop(0)
        asked.append(sub)
        found = ctx.search(sub, ctx.k)
        fact, source = best_fact(ctx, sub, found)
        result.steps.append(
            Step(
                f"plan {len(asked)}",
                f"sub-question {sub!r} -> fact {fact!r}" + (f" ({source.label})" if source else ""),
            )
        )
        if source is not None:
            first = distinct([*first, source])
        rest = distinct(rest + found)
        for name in _new_entities(ctx, fact, question, asked + plan):
            plan.append(f"What is {name}?")
    result.sources = distinct(first + rest)[: ctx.k]


def plan_questions(ctx: Context, question: str) -> list[str]:
    """The extractive plan: the question, its clauses, then its entities."""
    plan = [question]
    clauses = [c.strip(" ,?") for c in re.split(r"\band\b|;|\?", question)]
    if len(clauses) > 1:
        plan += [c + "?" for c in clauses if len(content_terms(c)) >= 2]
    plan += [f"What is {name}?" for name in ctx.memory.graph.match_question(question)[:2]]
    return list(dict.fromkeys(plan))


def best_fact(ctx: Context, question: str, found: list[Source]) -> tuple[str, Source | None]:
    """The retrieved sentence that covers most of the question's terms."""
    best: tuple[float, int, str, Source] | None = None
    for rank, source in enumerate(found):
        for sentence in sentences(source.text):
            score = ctx.coverage(question, sentence)
            if best is None or (score, -rank) > (best[0], best[1]):
                best = (score, -rank, sentence, source)
    if best is None or best[0] == 0:
        return "", None
    return best[2], best[3]


def _new_entities(ctx: Context, fact: str, question: str, planned: list[str]) -> list[str]:
    known = ctx.memory.graph.kinds
    seen = " ".join([question, *planned])
    return [m.name for m in mentions(fact) if m.name in known and m.name not in seen][:1]


def _in_document_order(sources: list[Source]) -> list[Source]:
    return sorted(sources, key=lambda s: (s.path, s.start))
