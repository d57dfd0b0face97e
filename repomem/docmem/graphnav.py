"""QRMeM's reflection-based navigation over the doc-code entity graph (its Algorithm 1).

The question's entities (named literally, by their words, or, with a model, picked out by
QRMeM's entity-recognition prompt) select the important segments ``S_imp``: the best-matching
of the segments that mention them and of those retrieved for the question directly (when the
question names no known entity, the entities of those segments seed the graph). Then, until
the gathered segments ``S_mix = S_imp + S_add`` can answer:

1. reflect: the model is asked whether the text answers the question (action -2) or not
   (action -1, saying what is missing); without a model, the text answers when it covers
   ``ANSWERED_COVERAGE`` of the question's idf-weighted terms, and the reason names the
   terms it lacks;
2. expand: every entity adjacent to the current ones (mentioned in the same segment, or a
   dotted parent or child) is scored by the overlap of its edge (the entity and the sentence
   connecting it) with ``[question; reason; entities]``, so the failure reason steers the
   step; the best one joins the entity set and its segments join ``S_add``, scored the same
   way;
3. keep ``S_mix`` within the window: the lowest-scored added segments go first.

The code definitions of the gathered entities join the sources, so a doc question can be
answered with the code that implements what the docs name.
"""

from __future__ import annotations

from repomem.docmem import prompts
from repomem.docmem.answer import AskResult, Context, Step, distinct, finish
from repomem.docmem.memory import Source
from repomem.docmem.text import sentences, terms

MAX_STEPS = 4
MAX_ENTITIES = 5
ANSWERED_COVERAGE = 0.75
_WINDOW_WORDS = 1500  # extractive S_mix budget; with a model, half its context window
_VERDICT_TOKENS = 96
_ENTITY_TOKENS = 48
_CODE_SOURCES = 2


async def navigate(ctx: Context, result: AskResult) -> None:
    question = result.question
    memory = ctx.memory
    graph = memory.graph
    entities = await _initial_entities(ctx, question, result)
    chunk = memory.space("chunk", ctx.builder, code=False)
    _, _, relevance, _ = chunk.scores(question, alpha=ctx.alpha, with_code=False)
    linked = {s for e in entities for s in graph.entity_segments.get(e, [])}
    direct = [h.entry for h in chunk.search(question, ctx.k, alpha=ctx.alpha, with_code=False)]
    candidates = linked | {s for s in direct if s is not None}
    important = sorted(candidates, key=lambda s: (-relevance[s], s))[: ctx.k]
    if not entities:
        entities = list(
            dict.fromkeys(
                e for s in important for e in graph.segment_entities[s] if graph.specific(e)
            )
        )[:MAX_ENTITIES]
    result.steps.append(Step("seed", f"entities {entities} -> segments {important}"))
    added: dict[int, float] = {}
    budget = _budget(ctx)
    for step in range(1, MAX_STEPS + 1):
        mix = important + [s for s in added if s not in important]
        text = "\n\n".join(memory.segments[s].text for s in sorted(mix))
        answerable, reason = await _reflect(ctx, question, text)
        result.steps.append(
            Step(f"reflect {step}", ("answerable: " if answerable else "not answerable: ") + reason)
        )
        if answerable:
            break
        probe = f"{question} {reason} {' '.join(entities)}"
        candidate = _best_neighbour(ctx, entities, probe)
        if candidate is None:
            result.steps.append(Step(f"expand {step}", "no adjacent entity left"))
            break
        entities.append(candidate)
        fresh = [s for s in graph.entity_segments.get(candidate, []) if s not in mix]
        for s in fresh:
            added[s] = _overlap(ctx, probe, memory.segments[s].text)
        result.steps.append(
            Step(f"expand {step}", f"entity {candidate!r} adds segments {sorted(fresh)}")
        )
        _fit(ctx, important, added, budget)
    ordered = important + sorted(
        (s for s in added if s not in important), key=lambda s: (-added[s], s)
    )
    result.sources = [memory.segment_source(s, float(relevance[s])) for s in ordered[: ctx.k]]
    result.sources = distinct(result.sources + _definitions(ctx, entities))
    await finish(ctx, result)


async def _initial_entities(ctx: Context, question: str, result: AskResult) -> list[str]:
    graph = ctx.memory.graph
    found = graph.match_question(question)
    if ctx.model.available:
        reply = await ctx.model.complete(
            prompts.ENTITIES_HEAD, question, prompts.ENTITIES_TAIL, max_tokens=_ENTITY_TOKENS
        )
        named = []
        lowered = {name.lower(): name for name in graph.kinds}
        for item in prompts.parse_lines(reply):
            if item in graph.kinds:
                named.append(item)
            elif item.lower() in lowered:
                named.append(lowered[item.lower()])
            else:
                named += graph.match_question(item)[:1]
        result.steps.append(Step("entities", f"model named {named or 'no known entity'}"))
        found = list(dict.fromkeys(named + found))
    return found[:MAX_ENTITIES]


async def _reflect(ctx: Context, question: str, text: str) -> tuple[bool, str]:
    if ctx.model.available:
        reply = await ctx.model.complete(
            prompts.ANSWERABLE_HEAD,
            text,
            prompts.ANSWERABLE_TAIL.format(question=question),
            max_tokens=_VERDICT_TOKENS,
        )
        verdict = prompts.parse_verdict(reply)
        return verdict.answerable, " ".join(verdict.reason.split())[:300]
    coverage = ctx.coverage(question, text)
    lacking = ctx.missing(question, text)
    if coverage >= ANSWERED_COVERAGE:
        return True, f"covers {coverage:.0%} of the question's terms"
    return False, f"covers {coverage:.0%}; the segments do not mention {', '.join(lacking)}"


def _best_neighbour(ctx: Context, entities: list[str], probe: str) -> str | None:
    graph = ctx.memory.graph
    best: tuple[float, int, str] | None = None
    for entity in entities:
        for other, segs in graph.neighbours(entity).items():
            if other in entities:
                continue
            edge = _edge_text(ctx, other, segs)
            key = (_overlap(ctx, probe, edge), -len(graph.entity_segments.get(other, ())), other)
            if best is None or key[:2] > best[:2] or (key[:2] == best[:2] and other < best[2]):
                best = key
    return best[2] if best is not None else None


def _edge_text(ctx: Context, entity: str, segments: list[int]) -> str:
    """The entity and the sentence that connects it (QRMeM's relation description)."""
    memory = ctx.memory
    for s in segments or ctx.memory.graph.entity_segments.get(entity, [])[:1]:
        for sentence in sentences(memory.segments[s].text):
            if entity in sentence:
                return f"{entity} {sentence}"
        return f"{entity} {memory.segments[s].heading}"
    return entity


def _overlap(ctx: Context, probe: str, text: str) -> float:
    """Idf-weighted overlap of two texts' terms."""
    have = set(terms(text))
    return sum(ctx.weight(t) for t in set(terms(probe)) if t in have)


def _budget(ctx: Context) -> int:
    """Words ``S_mix`` may hold: half the model's context window (a token is rarely less than
    a word), or a fixed budget without a model."""
    backend = ctx.model.backend
    if ctx.model.available and backend is not None:
        return backend.context_window // 2
    return _WINDOW_WORDS


def _fit(ctx: Context, important: list[int], added: dict[int, float], budget: int) -> None:
    def size() -> int:
        segs = set(important) | set(added)
        return sum(ctx.memory.segments[s].words for s in segs)

    while added and size() > budget:
        worst = min(added, key=lambda s: (added[s], -s))
        del added[worst]


def _definitions(ctx: Context, entities: list[str]) -> list[Source]:
    if not ctx.code:
        return []
    out = []
    for entity in entities:
        for path, line in ctx.memory.graph.definitions.get(entity, [])[:1]:
            text = ctx.memory.index.file_text(path) or ""
            lines = text.split("\n")
            end = min(len(lines), line + 12)
            out.append(
                Source(
                    path, line, end, "\n".join(lines[line:end]), "code", "code", "code", entity, 0.0
                )
            )
        if len(out) >= _CODE_SOURCES:
            break
    return out
