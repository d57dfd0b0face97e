"""Fit the built-in backend's confidence (``builtin.EVIDENCE_WEIGHTS`` and ``CALIBRATION``) on
the dev suite.

The built-in backend rests each continuation on its ``Evidence`` (its share of the candidates'
vote, its match length, how many places propose it, and three signs of a guess). The raw
confidence is a logistic regression of exact matches on those features, one per completion
mode (one line, or a multi-line statement: a literal or an unseen name on a statement's first
line says less about the whole), pooled over every language so that a sign of a guess costs
the same everywhere. What a raw value means still differs by language (repeated code is commoner in
some), so the table maps it, per language family and completion mode (one line, or a
multi-line statement), to the share of exact matches the dev suite's tasks at that raw value
have, told cautiously: bins of 0.05, each valued at the Wilson lower bound of its share right at
``Z`` = 1.5 standard errors (a bin of few tasks, or of tasks from one lucky project, does not
reach the threshold by chance: a bin of 10 tasks with 5 right says 0.29, of 100 with 50 right
0.43), made increasing by pooling adjacent bins that are not, so that
``completion.min_confidence`` = m answers the tasks whose EM is, with some margin, at least m.
Z is the smallest of 1, 1.25, 1.5, 1.75, 2 (and bins merged to at least 30 or 50 tasks, the
other rule tried) whose cross-validated EM among answered at the default threshold is at least
45 % in every family and mode of the dev suite (at Z = 1, Rust statements 41.7 %).

    python eval/calibrate_builtin.py --run OUT_DIR    # run the suite recording evidence, fit
    python eval/calibrate_builtin.py OUT_DIR [...]    # fit on such runs' evidence

``--run`` empties the table in this process and runs ``repomem eval devsuite run --backend
builtin --out OUT_DIR`` (resumable: evidence is appended to ``OUT_DIR/evidence.jsonl`` as each
task is scored, so run it on an empty OUT_DIR); the fit prints the weights and the table to
paste into ``builtin.py``, and each language and mode's answered share and EM among answered
at the default threshold, on the fitted tasks and cross-validated: weights and table fitted
without a project, applied to it, pooled over the projects.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repomem.completion.backends import builtin
from repomem.completion.backends.builtin import FAMILY_OF, BuiltinBackend, Evidence
from repomem.index.languages import language_for_path
from repomem.settings import Settings

BIN = 0.05
# standard errors below a bin's share right that its value is (module doc)
Z = 1.5
# the logistic regression's ridge penalty (on the weights, not the bias)
RIDGE = 1.0
EVIDENCE_FILE = "evidence.jsonl"

Steps = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Point:
    """One task's completion under one method: where it was, its evidence's features (None:
    no candidate), and whether it was an exact match."""

    key: tuple[str, str]  # (family, mode)
    project: str
    features: tuple[float, ...] | None
    em: bool


def record_evidence(out: Path) -> None:
    """Make this process's devsuite run append each built-in prediction's evidence to
    ``out/evidence.jsonl`` (the backend's choice is remembered by prompt, and written when the
    task is scored)."""
    import repomem_eval.batch as batch

    chosen: dict[str, Evidence | None] = {}
    choice, prediction = BuiltinBackend.choice, batch.prediction

    def digest(prompt: str) -> str:
        return hashlib.sha1(prompt.encode("utf-8")).hexdigest()

    def remembered(self: BuiltinBackend, request: Any) -> tuple[str, Evidence | None]:
        text, evidence = choice(self, request)
        chosen[digest(request.prompt)] = evidence
        return text, evidence

    def scored(view: Any, result: Any, method: Any, **kwargs: Any) -> Any:
        found = prediction(view, result, method, **kwargs)
        evidence = chosen.pop(digest(result.prompt.text), None)
        row = {
            "task_id": found.task_id,
            "method": method.name,
            "language": language_for_path(view.task.rel_path),
            "mode": found.mode,
            "em": found.em,
            "features": None if evidence is None else evidence.features(),
        }
        with (out / EVIDENCE_FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        return found

    BuiltinBackend.choice = remembered  # type: ignore[method-assign]
    batch.prediction = scored


def read_points(out_dirs: Sequence[Path]) -> list[Point]:
    points = []
    for out in out_dirs:
        for line in (out / EVIDENCE_FILE).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            language = row["language"] or ""
            mode = "api" if row["mode"] == "api" else "line"
            features = row["features"]
            points.append(
                Point(
                    (FAMILY_OF.get(language, language), mode),
                    row["task_id"].split("/", 1)[0],
                    None if features is None else tuple(features),
                    bool(row["em"]),
                )
            )
    return points


def fit_weights(points: Sequence[Point]) -> tuple[float, ...]:
    """Bias, then weights, of the logistic regression of ``em`` on the features (ridge ``RIDGE``
    on the weights; Newton's method), over the points with evidence."""
    rated = [p for p in points if p.features is not None]
    x = np.array([(1.0, *p.features) for p in rated if p.features is not None])
    y = np.array([float(p.em) for p in rated])
    ridge = np.diag([0.0] + [RIDGE] * (x.shape[1] - 1))
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        step = np.linalg.solve((x.T * (p * (1 - p))) @ x + ridge, x.T @ (p - y) + ridge @ w)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return tuple(round(float(v), 3) for v in w)


def raw(point: Point, weights: dict[str, tuple[float, ...]]) -> float:
    """``point``'s raw confidence by ``weights`` (mode -> bias and weights), 0 without
    evidence."""
    if point.features is None:
        return 0.0
    return builtin.logistic(weights[point.key[1]], point.features)


def wilson_lower(right: int, n: int) -> float:
    """The Wilson score interval's lower end, at ``Z`` standard errors, of ``right`` of ``n``."""
    share = right / n
    spread = Z * math.sqrt(share * (1 - share) / n + Z * Z / (4 * n * n))
    return max(0.0, (share + Z * Z / (2 * n) - spread) / (1 + Z * Z / n))


def fit(points: list[tuple[float, bool]]) -> Steps:
    """(lower bound of the raw bin, cautious EM) for each run of bins, non-decreasing (module
    doc)."""
    bins: dict[int, list[bool]] = defaultdict(list)
    for value, em in points:
        bins[min(int(value / BIN), int(1 / BIN) - 1)].append(em)
    blocks: list[list[int]] = []  # [first bin, right, tasks]
    for b in sorted(bins):
        blocks.append([b, sum(bins[b]), len(bins[b])])
        while len(blocks) > 1 and wilson_lower(*blocks[-2][1:]) >= wilson_lower(*blocks[-1][1:]):
            _, right, n = blocks.pop()
            blocks[-1][1] += right
            blocks[-1][2] += n
    return tuple((round(b * BIN, 2), round(wilson_lower(right, n), 3)) for b, right, n in blocks)


def fit_all(
    points: Sequence[Point],
) -> tuple[dict[str, tuple[float, ...]], dict[tuple[str, str], Steps]]:
    """Each mode's bias and weights, then each family and mode's table on the raw values they
    give."""
    weights = {
        mode: fit_weights([p for p in points if p.key[1] == mode])
        for mode in sorted({p.key[1] for p in points})
    }
    by_key: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
    for p in points:
        by_key[p.key].append((raw(p, weights), p.em))
    return weights, {key: fit(values) for key, values in sorted(by_key.items())}


def answered(
    points: Sequence[Point], fitted: Sequence[Point], threshold: float
) -> dict[tuple[str, str], list[bool]]:
    """Per family and mode, the exact matches of ``points`` whose confidence, by weights and
    tables fitted on ``fitted``, reaches ``threshold`` (``[]``: none; key missing: no point)."""
    weights, tables = fit_all(fitted)
    found: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for p in points:
        steps = tables.get(p.key, ())
        found.setdefault(p.key, [])
        if p.features is not None and builtin.calibrate(raw(p, weights), steps) >= threshold:
            found[p.key].append(p.em)
    return found


def report(points: Sequence[Point], threshold: float) -> None:
    """Answered share and EM among answered per family and mode, fitted and cross-validated
    (module doc)."""
    tasks: dict[tuple[str, str], int] = defaultdict(int)
    for p in points:
        tasks[p.key] += 1
    fitted = answered(points, points, threshold)
    crossed: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for project in sorted({p.project for p in points}):
        held = [p for p in points if p.project == project]
        for key, ems in answered(
            held, [p for p in points if p.project != project], threshold
        ).items():
            crossed[key] += ems

    def cell(ems: list[bool], n: int) -> str:
        em = f"{100 * sum(ems) / len(ems):.1f}" if ems else "-"
        return f"{100 * len(ems) / n:.1f} / {em} ({len(ems)})"

    print(f"at {threshold}: answered % / EM among answered % (answered), fitted | cross-validated")
    for key in sorted(tasks):
        print(
            f"{key[0]:>6} {key[1]:>4}: n {tasks[key]}, {cell(fitted[key], tasks[key])}"
            f" | {cell(crossed[key], tasks[key])}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dirs", nargs="+", type=Path, metavar="OUT_DIR")
    parser.add_argument(
        "--run",
        action="store_true",
        help="run the suite into the one OUT_DIR first; other options go to devsuite run",
    )
    args, suite_args = parser.parse_known_args(argv)
    if suite_args and not args.run:
        parser.error(f"unrecognized arguments: {' '.join(suite_args)}")
    if args.run:
        from repomem.cli import main as repomem

        if len(args.out_dirs) != 1:
            parser.error("--run takes one OUT_DIR")
        out = args.out_dirs[0]
        builtin.CALIBRATION = {}
        out.mkdir(parents=True, exist_ok=True)
        record_evidence(out)
        command = ["eval", "devsuite", "run", "--backend", "builtin", "--out", str(out)]
        code = repomem([*command, *suite_args])
        if code:
            return code
    points = read_points(args.out_dirs)
    weights, tables = fit_all(points)
    print("EVIDENCE_WEIGHTS: dict[str, tuple[float, ...]] = {")
    for mode, values in weights.items():
        print(f"    {mode!r}: {values!r},")
    print("}")
    print("CALIBRATION: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {")
    for key, steps in tables.items():
        print(f"    {key!r}: {steps!r},")
    print("}")
    report(points, Settings().completion.min_confidence)
    return 0


if __name__ == "__main__":
    sys.exit(main())
