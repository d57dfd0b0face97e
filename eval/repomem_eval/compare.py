"""``repomem eval compare``: several runs' ``results.json`` side by side.

A run directory holds ``results.json``::

    {"methods": {METHOD: {"overall": SUMMARY, "per_repo": {REPO: SUMMARY}}}, "config": {...}}

where SUMMARY is ``{"em", "es", "hit_at_k", "n", "seconds_per_task"}`` (percentages 0-100;
``hit_at_k`` is null for methods that retrieve nothing), and since the context measures
exist also ``def_prompt``, ``use_prompt``, ``def_at_1/5/10``, ``use_at_1/5/10`` (null where
no task was counted) and ``context_n``, and since backends give confidences ``coverage`` and
``precision`` at the run's ``completion.min_confidence`` (null for a backend that gives none);
a file without them shows "–" in their columns. A method's ``curve`` lists coverage and
precision at every threshold (``metrics.precision_coverage``).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repomem.errors import RepomemError
from repomem_eval.metrics import CONTEXT_KEYS

NAME = "compare"
HELP = "Compare evaluation runs (their results.json) side by side as a Markdown table."

RESULTS_FILE = "results.json"
OVERALL = "all"
_SUMMARY_KEYS = ("em", "es", "hit_at_k", "n", "seconds_per_task")
_OPTIONAL_KEYS = (
    *CONTEXT_KEYS,
    "context_n",
    "coverage",
    "precision",
    "cards_shown",
    "cards_wrong",
    "cards_decided",
    "wrong_cards",
)


class ResultsError(RepomemError):
    """A run directory without a readable, well-formed ``results.json``."""


@dataclass(frozen=True)
class Row:
    run: str
    method: str
    repo: str
    em: float | None
    es: float | None
    hit_at_k: float | None
    n: int
    seconds_per_task: float | None
    def_prompt: float | None = None
    use_prompt: float | None = None
    def_at_1: float | None = None
    def_at_5: float | None = None
    def_at_10: float | None = None
    use_at_1: float | None = None
    use_at_5: float | None = None
    use_at_10: float | None = None
    context_n: int | None = None
    coverage: float | None = None
    precision: float | None = None
    cards_shown: int | None = None
    cards_wrong: int | None = None
    cards_decided: int | None = None
    wrong_cards: float | None = None


@dataclass(frozen=True)
class Run:
    label: str
    methods: dict[str, Any]
    config: dict[str, Any]


def _number(value: object) -> bool:
    return value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    )


def _check_summary(path: Path, where: str, summary: object) -> None:
    if not isinstance(summary, dict):
        raise ResultsError(f"{path}: {where} must be an object")
    missing = [k for k in _SUMMARY_KEYS if k not in summary]
    if missing:
        raise ResultsError(f"{path}: {where} lacks {', '.join(missing)}")
    if not all(_number(summary.get(k)) for k in (*_SUMMARY_KEYS, *_OPTIONAL_KEYS)):
        raise ResultsError(f"{path}: {where} holds a value that is not a number or null")
    for key in ("n", "context_n", "cards_shown", "cards_wrong", "cards_decided"):
        count = summary.get(key, 0)
        if count is None and key.startswith("cards_"):
            continue
        if not isinstance(count, int) or count < 0:
            raise ResultsError(f"{path}: {where}.{key} must be a non-negative integer")


def load_run(out_dir: Path) -> Run:
    """One run's results, checked so that a broken file is reported by path, not by crash."""
    path = Path(out_dir) / RESULTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ResultsError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("methods"), dict):
        raise ResultsError(f'{path}: expected an object with a "methods" object')
    config = data.get("config", {})
    if not isinstance(config, dict):
        raise ResultsError(f'{path}: "config" must be an object')
    for method, result in data["methods"].items():
        if not isinstance(result, dict):
            raise ResultsError(f"{path}: methods.{method} must be an object")
        _check_summary(path, f"methods.{method}.overall", result.get("overall"))
        per_repo = result.get("per_repo", {})
        if not isinstance(per_repo, dict):
            raise ResultsError(f"{path}: methods.{method}.per_repo must be an object")
        for repo, summary in per_repo.items():
            _check_summary(path, f"methods.{method}.per_repo.{repo}", summary)
    return Run(str(out_dir), data["methods"], config)


def comparison_rows(runs: Sequence[Run], *, per_repo: bool = False) -> list[Row]:
    """One row per run and method (overall), plus one per repository when ``per_repo``."""
    rows: list[Row] = []
    for run in runs:
        for method, result in run.methods.items():
            summaries = [(OVERALL, result["overall"])]
            if per_repo:
                summaries += sorted(result.get("per_repo", {}).items())
            for repo, s in summaries:
                rows.append(
                    Row(
                        run.label,
                        method,
                        repo,
                        *(s[k] for k in _SUMMARY_KEYS),
                        **{k: s.get(k) for k in _OPTIONAL_KEYS},
                    )
                )
    return rows


def _fmt(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown_table(rows: Sequence[Row], *, per_repo: bool = False) -> str:
    """EM, ES, hit@k, the main context measures (``results.json`` has them all), the task
    counts, the time per task, and the share of tasks answered at the confidence threshold
    with the EM among them."""
    header = [
        "run",
        "method",
        *(["repo"] if per_repo else []),
        "EM",
        "ES",
        "hit@k",
        "def@prompt",
        "use@prompt",
        "def@10",
        "use@10",
        "n",
        "ctx n",
        "s/task",
        "answered",
        "EM answered",
    ]
    numeric = 12
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * (len(header) - numeric) + ["---:"] * numeric) + "|",
    ]
    for r in rows:
        cells = [
            r.run,
            r.method,
            *([r.repo] if per_repo else []),
            _fmt(r.em, 2),
            _fmt(r.es, 2),
            _fmt(r.hit_at_k, 2),
            _fmt(r.def_prompt, 1),
            _fmt(r.use_prompt, 1),
            _fmt(r.def_at_10, 1),
            _fmt(r.use_at_10, 1),
            str(r.n),
            "–" if r.context_n is None else str(r.context_n),
            _fmt(r.seconds_per_task, 3),
            _fmt(r.coverage, 1),
            _fmt(r.precision, 1),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def _curves(runs: Sequence[Run]) -> list[tuple[str, list[dict]]]:
    """(run and method, precision/coverage curve) of every method that has one."""
    return [
        (f"{run.label} {method}", result["curve"])
        for run in runs
        for method, result in run.methods.items()
        if result.get("curve")
    ]


def curve_table(runs: Sequence[Run]) -> str:
    """Coverage and precision per confidence threshold, one column pair per run and method
    that has a curve; "" when none has."""
    curves = _curves(runs)
    if not curves:
        return ""
    header = ["threshold", *(f"{name}: answered / EM" for name, _ in curves)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---:"] * len(header)) + "|"]
    for i, point in enumerate(curves[0][1]):
        cells = [f"{point['threshold']:.2f}"]
        for _, curve in curves:
            cells.append(f"{_fmt(curve[i]['coverage'], 1)} / {_fmt(curve[i]['precision'], 1)}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def curve_plot(runs: Sequence[Run], path: Path) -> str:
    """Draw the runs' precision/coverage curves into the PNG ``path``; returns what was done,
    for the log. matplotlib is an optional extra (``repomem[plot]``): without it the table
    in ``results.md`` is the curve, and the message says how to get the plot."""
    curves = _curves(runs)
    if not curves:
        return ""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display is needed or wanted
        import matplotlib.pyplot as plt
    except ImportError:
        return (
            f"no {path.name}: matplotlib is not installed"
            " (in a clone of repomem: pip install '.[plot]')"
        )
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for name, curve in curves:
        points = [p for p in curve if p["precision"] is not None]
        ax.plot([p["coverage"] for p in points], [p["precision"] for p in points], marker=".")
        ax.lines[-1].set_label(name)
    ax.set_xlabel("answered (% of tasks)")
    ax.set_ylabel("EM among answered (%)")
    ax.set_title("Precision and coverage by confidence threshold")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return f"wrote {path}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out_dirs", nargs="+", type=Path, metavar="OUT_DIR", help="run directory")
    parser.add_argument("--per-repo", action="store_true", help="add one row per repository")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    runs = [load_run(d) for d in args.out_dirs]
    rows = comparison_rows(runs, per_repo=args.per_repo)
    if args.json:
        payload = {
            "runs": {r.label: {"config": r.config} for r in runs},
            "rows": [asdict(row) for row in rows],
        }
        print(json.dumps(payload, indent=2))
    else:
        print(markdown_table(rows, per_repo=args.per_repo))
    return 0
