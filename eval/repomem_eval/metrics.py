"""RepoEval's scores, defined exactly as RepoCoder's ``compute_score.py`` computes them.

Both scores look only at the stripped, non-empty lines of the text, and the prediction is cut
to the target's number of such lines first: a model that keeps writing after the hole is not
penalised for it, and indentation or blank lines never count. Published RepoEval numbers are
comparable with these only because the definitions match line for line.

Next to them, model-free measures of the context each prompt gave (``context_metrics``):
whether it showed the definitions the ground truth calls, and code calling them, averaged
over the tasks whose ground truth calls such a definition.

A backend that gives a confidence (the built-in one) is also scored as the editor shows it:
``coverage``, the share of tasks whose confidence reaches ``completion.min_confidence`` (the
rest are not answered), and ``precision``, EM among those; :func:`precision_coverage` gives
both at every threshold. EM and ES stay at full coverage: every task answered.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

#: the ranks ``def_at_k``/``use_at_k`` look at
AT_K: tuple[int, ...] = (1, 5, 10)
#: the confidence thresholds of the precision/coverage curve
THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
#: the per-task context measures, in ``results.json``'s order
CONTEXT_KEYS: tuple[str, ...] = (
    "def_prompt",
    "use_prompt",
    *(f"def_at_{k}" for k in AT_K),
    *(f"use_at_{k}" for k in AT_K),
)


def code_lines(text: str) -> list[str]:
    """The stripped, non-empty lines of ``text``: the unit both scores compare."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _aligned(target: str, prediction: str) -> tuple[list[str], list[str]]:
    target_lines = code_lines(target)
    return target_lines, code_lines(prediction)[: len(target_lines)]


def exact_match(target: str, prediction: str) -> bool:
    """EM: the prediction's first lines equal the target's lines (after stripping).

    A target without any non-empty line matches every prediction, as in RepoCoder.
    """
    target_lines, prediction_lines = _aligned(target, prediction)
    return target_lines == prediction_lines


def edit_similarity(target: str, prediction: str) -> float:
    """ES: ``1 - levenshtein(t, p) / max(len(t), len(p))`` over the lines joined by newlines.

    When both joined strings are empty (RepoCoder would divide by zero) they are identical, so
    the similarity is 1.0.
    """
    target_lines, prediction_lines = _aligned(target, prediction)
    t = "\n".join(target_lines)
    p = "\n".join(prediction_lines)
    longest = max(len(t), len(p))
    if longest == 0:
        return 1.0
    return 1.0 - Levenshtein.distance(t, p) / longest


def hit_at_k(ground_truth: str, shown_texts: Iterable[str]) -> bool:
    """Whether the retrieved fragments a prompt shows contain the ground truth's first line.

    Compares the first non-empty line of the ground truth, stripped, with every stripped line
    of the shown texts; it needs no model, so it measures retrieval alone. A ground truth
    without any non-empty line is never hit.
    """
    target_lines = code_lines(ground_truth)
    if not target_lines:
        return False
    first = target_lines[0]
    return any(first in code_lines(text) for text in shown_texts)


@dataclass(frozen=True)
class TaskScore:
    """One task's outcome under one method; ``hit`` is None for methods that retrieve nothing,
    ``context`` (the ``CONTEXT_KEYS`` measures) for them and for tasks without targets."""

    task_id: str
    em: bool
    es: float
    hit: bool | None
    seconds: float
    context: Mapping[str, bool] | None = None
    confidence: float | None = None
    cards: Mapping[str, int] | None = None

    @property
    def repo(self) -> str:
        """RepoEval task ids are ``<repo>/<n>``."""
        return self.task_id.rsplit("/", 1)[0]


def score_task(
    task_id: str,
    ground_truth: str,
    prediction: str,
    *,
    shown_texts: Sequence[str] | None = None,
    seconds: float = 0.0,
    context: Mapping[str, bool] | None = None,
    confidence: float | None = None,
    cards: Mapping[str, int] | None = None,
) -> TaskScore:
    """Score one prediction; pass ``shown_texts`` (what the prompt showed) to get hit@k, the
    task's ``context`` measures to have them averaged, and the backend's ``confidence`` for
    coverage and precision, and the ``cards`` verdicts (``card_check``) for the wrong-card
    rate."""
    return TaskScore(
        task_id=task_id,
        em=exact_match(ground_truth, prediction),
        es=edit_similarity(ground_truth, prediction),
        hit=None if shown_texts is None else hit_at_k(ground_truth, shown_texts),
        seconds=seconds,
        context=context,
        confidence=confidence,
        cards=cards,
    )


def _percent(values: Sequence[bool]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


def _answered(scores: Sequence[TaskScore], threshold: float) -> dict[str, float | None]:
    """Coverage and precision at ``threshold`` (None when no task has a confidence)."""
    rated = [s for s in scores if s.confidence is not None]
    if not rated:
        return {"coverage": None, "precision": None}
    answered = [s.em for s in rated if s.confidence is not None and s.confidence >= threshold]
    return {
        "coverage": 100.0 * len(answered) / len(rated),
        "precision": _percent(answered),
    }


def precision_coverage(scores: Iterable[TaskScore]) -> list[dict[str, float | None]]:
    """Coverage and precision (%) at each of ``THRESHOLDS``; empty when no task has a
    confidence."""
    scores = list(scores)
    if all(s.confidence is None for s in scores):
        return []
    return [{"threshold": t, **_answered(scores, t)} for t in THRESHOLDS]


def _cards(scores: Sequence[TaskScore]) -> dict[str, float | int | None]:
    """Cards shown, decided right and wrong, and the wrong share of the decided (%); None
    for a method that shows no cards."""
    rated = [s.cards for s in scores if s.cards is not None]
    if not rated:
        return {"cards_shown": None, "cards_wrong": None, "cards_decided": None,
                "wrong_cards": None}  # fmt: skip
    wrong = sum(c.get("wrong", 0) for c in rated)
    decided = wrong + sum(c.get("right", 0) for c in rated)
    return {
        "cards_shown": sum(c.get("shown", 0) for c in rated),
        "cards_wrong": wrong,
        "cards_decided": decided,
        "wrong_cards": 100.0 * wrong / decided if decided else None,
    }


def _summary(scores: Sequence[TaskScore], threshold: float) -> dict[str, float | int | None]:
    n = len(scores)
    counted = [s.context for s in scores if s.context is not None]
    context: dict[str, float | int | None] = {
        **{key: _percent([c[key] for c in counted]) for key in CONTEXT_KEYS},
        "context_n": len(counted),
        **_answered(scores, threshold),
        **_cards(scores),
    }
    if n == 0:
        return {
            "em": None,
            "es": None,
            "hit_at_k": None,
            "n": 0,
            "seconds_per_task": None,
            **context,
        }
    return {
        "em": 100.0 * sum(s.em for s in scores) / n,
        "es": 100.0 * sum(s.es for s in scores) / n,
        "hit_at_k": _percent([s.hit for s in scores if s.hit is not None]),
        "n": n,
        "seconds_per_task": sum(s.seconds for s in scores) / n,
        **context,
    }


def aggregate(scores: Iterable[TaskScore], threshold: float) -> dict[str, object]:
    """Per-repository and overall means as percentages (0-100), in ``results.json``'s shape.

    The overall figure is the mean over all tasks (not over repositories), as RepoEval
    reports it; hit@k averages only the tasks that retrieved, the context measures only the
    ``context_n`` tasks that have them; coverage and precision are taken at ``threshold``,
    and ``curve`` holds them at every threshold.
    """
    scores = list(scores)
    by_repo: dict[str, list[TaskScore]] = defaultdict(list)
    for s in scores:
        by_repo[s.repo].append(s)
    return {
        "overall": _summary(scores, threshold),
        "per_repo": {repo: _summary(by_repo[repo], threshold) for repo in sorted(by_repo)},
        "curve": precision_coverage(scores),
    }
