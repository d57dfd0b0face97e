"""Per-task predictions, one JSON line each in ``OUT_DIR/predictions-<method>.jsonl``.

The file is the run's memory: lines are appended batch by batch and flushed, so an interrupted
run resumes where it stopped, and every score in ``results.json`` can be recomputed from it.
Each line records the task's digest; resuming over a changed task file is refused instead of
mixing predictions for different tasks.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repomem.errors import RepomemError
from repomem_eval.metrics import TaskScore
from repomem_eval.tasks import Task


class PredictionsError(RepomemError):
    """A predictions file that does not belong to this run."""


def task_digest(task: Task) -> str:
    """A fingerprint of everything that defines the task."""
    data = json.dumps(task.to_json(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Prediction:
    """One task's completion under one method and how it scored.

    ``fragments`` are the locations ``[path, start, end]`` (0-based, end exclusive) of each
    fragment the final prompt showed, best first; ``hit`` is whether their shown lines hold the
    ground truth's first line (None: the method retrieves nothing). ``timings`` are the task's
    retrieval, prompt building and share of batched generation, summed over iterations;
    ``seconds`` is their sum (see ``batch``). ``targets`` are the ``[path, line, name]`` of the
    repository definitions outside the task's file that the ground truth calls, and
    ``context`` the ``metrics.CONTEXT_KEYS`` measures of the prompt (``context_metrics``);
    both None for a method that retrieves nothing and in files written before they existed,
    ``context`` also for a task without targets. ``confidence``: the backend's (None: it
    gives none, or the file predates it). ``cards``: how many cards the final prompt showed,
    and how many of them ``card_check`` found right and wrong (None: a method without cards).
    """

    task_id: str
    task_digest: str
    mode: str
    ground_truth: str
    prediction: str
    em: bool
    es: float
    hit: bool | None
    seconds: float
    iterations: int
    fragments: list[list[list[Any]]]
    timings: dict[str, float]
    targets: list[list[Any]] | None = None
    context: dict[str, bool] | None = None
    confidence: float | None = None
    cards: dict[str, int] | None = None

    def score(self) -> TaskScore:
        return TaskScore(
            self.task_id,
            self.em,
            self.es,
            self.hit,
            self.seconds,
            self.context,
            self.confidence,
            self.cards,
        )


def predictions_path(out_dir: Path, method: str) -> Path:
    return Path(out_dir) / f"predictions-{method}.jsonl"


def _decode(line: str) -> Prediction | None:
    try:
        data = json.loads(line)
        return Prediction(**data)
    except (ValueError, TypeError):
        return None


def load_predictions(path: Path) -> dict[str, Prediction]:
    """The complete predictions in ``path`` by task id.

    A line cut short by an interrupted run is dropped, and the file is rewritten without it so
    that new lines are appended after whole ones only.
    """
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"cannot read predictions {path}: {exc}") from exc
    lines = text.split("\n")
    cut_short = not text.endswith("\n") and bool(text)
    kept: dict[str, Prediction] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        prediction = _decode(line)
        if prediction is None:
            if cut_short and number == len(lines):
                break
            raise PredictionsError(
                f"{path}:{number} is not a prediction; delete the file to recompute its method"
            )
        kept[prediction.task_id] = prediction
    if cut_short:
        _rewrite(path, kept.values())
    return kept


def _rewrite(path: Path, predictions: Iterable[Prediction]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for p in predictions:
            f.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def append_predictions(path: Path, predictions: Iterable[Prediction]) -> None:
    """Append whole lines and flush them to disk before returning."""
    with path.open("a", encoding="utf-8", newline="\n") as f:
        for p in predictions:
            f.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
