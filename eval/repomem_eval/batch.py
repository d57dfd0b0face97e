"""One batch of tasks under every method: retrieval shared, generation batched, each task scored.

A task's time is what completing it costs where the index already holds the user's buffer: its
retrieval (``RepoIndex.retrieve``, see ``task_retrieval``), its prompt building and its share
of each batched generation call it took part in. A retrieving method's prediction also
records the context measures of its prompt (``context_metrics``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from repomem.completion.engine import CompletionEngine, CompletionResult, query_window
from repomem_eval.context_metrics import Target, context_scores
from repomem_eval.methods import Method
from repomem_eval.metrics import score_task
from repomem_eval.predictions import Prediction, task_digest
from repomem_eval.task_retrieval import Lookup, SharedRetrieval
from repomem_eval.task_view import TaskView

Record = Callable[[Method, list[Prediction]], None]


@dataclass(frozen=True)
class MethodRun:
    """A method and the engine that completes with its settings (and, if it retrieves, a
    retriever of the repository's :class:`SharedRetrieval`)."""

    method: Method
    engine: CompletionEngine


def first_lookups(view: TaskView, runs: Sequence[MethodRun]) -> list[Lookup]:
    """The retrievals the methods' first iterations will ask for on ``view``."""
    lookups = []
    for run in runs:
        if not run.method.retrieves:
            continue
        config = run.engine.settings.completion
        query = (
            view.oracle_query
            if run.method.oracle
            else query_window(view.completion.left_context, config.query_lines)
        )
        lookups.append(Lookup(query, config.alpha))
    return lookups


def generation_shares(results: Sequence[CompletionResult]) -> list[float]:
    """Each result's share of the batched generation time, iteration by iteration."""
    rounds = max((len(r.iterations) for r in results), default=0)
    shares = [0.0] * len(results)
    for i in range(rounds):
        members = [j for j, r in enumerate(results) if len(r.iterations) > i]
        for j in members:
            shares[j] += results[j].iterations[i].generation_s / len(members)
    return shares


def prediction(
    view: TaskView,
    result: CompletionResult,
    method: Method,
    *,
    retrieval: float,
    generation: float,
    targets: Sequence[Target] | None = None,
    cards: dict[str, int] | None = None,
) -> Prediction:
    """The task's completion scored, with the fragments its final prompt showed and, given the
    task's ``targets``, the context measures of that prompt; ``cards`` counts the final
    prompt's cards shown, right and wrong (``card_check``)."""
    task = view.task
    shown = result.prompt.fragments
    prompt = result.timings["prompt"]
    seconds = retrieval + prompt + generation
    last = result.iterations[-1]
    context = (
        context_scores(targets, last.prompt, last.retrieved, last.definitions)
        if targets is not None
        else None
    )
    score = score_task(
        task.task_id,
        task.ground_truth,
        result.text,
        shown_texts=[f.shown or f.text for f in shown] if method.retrieves else None,
        seconds=seconds,
        context=context,
        cards=cards,
    )
    return Prediction(
        task_id=task.task_id,
        task_digest=task_digest(task),
        mode=view.completion.mode,
        ground_truth=task.ground_truth,
        prediction=result.text,
        em=score.em,
        es=score.es,
        hit=score.hit,
        seconds=seconds,
        iterations=len(result.iterations),
        fragments=[[[loc.path, loc.start, loc.end] for loc in f.locations] for f in shown],
        timings={"retrieval": retrieval, "prompt": prompt, "generation": generation},
        targets=None if targets is None else [[t.path, t.line, t.name] for t in targets],
        context=context,
        confidence=result.confidence,
        cards=cards,
    )


async def evaluate_batch(
    runs: Sequence[MethodRun],
    views: Mapping[str, Sequence[TaskView]],
    shared: SharedRetrieval | None,
    record: Record,
) -> None:
    """Complete ``views[method name]`` with each run's engine and ``record`` each method's
    predictions as soon as they are made; the index is restored before returning."""
    if shared is not None:
        members = {r.method.name: {id(v) for v in views.get(r.method.name, ())} for r in runs}
        seen = {id(v): v for run in runs for v in views.get(run.method.name, ())}
        for key, view in seen.items():
            shared.add(
                view, first_lookups(view, [r for r in runs if key in members[r.method.name]])
            )
    try:
        for run in runs:
            batch = views.get(run.method.name, ())
            if not batch:
                continue
            sharing = shared if run.method.retrieves else None
            results = await run.engine.complete_many(
                [v.completion for v in batch],
                retrieval_scope=sharing.scope if sharing is not None else None,
            )
            shares = generation_shares(results)
            made = []
            for view, result, generation in zip(batch, results, shares, strict=True):
                retrieval = sharing.take_served(view.task.task_id) if sharing is not None else 0.0
                targets = sharing.targets(view) if sharing is not None else None
                cards = (
                    sharing.card_verdicts(view, result.iterations[-1].prompt.cards)
                    if sharing is not None and run.method.definitions
                    else None
                )
                made.append(
                    prediction(
                        view,
                        result,
                        run.method,
                        retrieval=retrieval,
                        generation=generation,
                        targets=targets,
                        cards=cards,
                    )
                )
            record(run.method, made)
    finally:
        if shared is not None:
            shared.finish()
