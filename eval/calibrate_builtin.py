"""Fit the built-in backend's confidence calibration (``builtin.CALIBRATION``) on the dev suite.

The built-in backend's raw confidence (its winner's share of the vote times its match length)
does not mean the same in every language: on the dev suite a raw 0.8 was right a third of the
time on a Python line, a quarter on a TypeScript line and almost never in a Java statement.
The table maps it, per language family and completion mode (one line, or a multi-line
statement), to the share of exact matches the dev suite's
tasks at that raw confidence have: bins of 0.05, each shrunk toward its language and mode's
overall EM (five pseudo-tasks), made increasing by pooling adjacent bins that are not, so that
``completion.min_confidence`` = m answers the tasks whose estimated EM is at least m.

    python eval/calibrate_builtin.py --run OUT_DIR    # run the suite with raw confidences, fit
    python eval/calibrate_builtin.py OUT_DIR [...]    # fit on such runs' predictions

``--run`` empties the table in this process and runs ``repomem eval devsuite run --backend
builtin --out OUT_DIR`` (resumable); the fit prints the table to paste into ``builtin.py`` and
each language's EM among answered tasks at the default threshold, before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from repomem.completion.backends import builtin
from repomem.completion.backends.builtin import FAMILY_OF
from repomem.settings import Settings

BIN = 0.05
PRIOR = 5.0


def read_predictions(out_dirs: list[Path]) -> dict[tuple[str, str], list[tuple[float, bool]]]:
    """(family, mode) -> (confidence, exact match) of every prediction of every method in
    ``OUT_DIR/<language>/<kind>/predictions-<method>.jsonl``."""
    found: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
    for out in out_dirs:
        for path in sorted(out.glob("*/*/predictions-*.jsonl")):
            language, kind = path.parent.parent.name, path.parent.name
            key = (FAMILY_OF.get(language, language), "api" if kind == "api" else "line")
            for line in path.read_text(encoding="utf-8").splitlines():
                p = json.loads(line)
                found[key].append((float(p.get("confidence") or 0.0), bool(p["em"])))
    return found


def fit(points: list[tuple[float, bool]]) -> tuple[tuple[float, float], ...]:
    """(lower bound of the raw bin, estimated EM) for each run of bins, non-decreasing (module
    doc)."""
    base = sum(em for _, em in points) / len(points)
    bins: dict[int, list[bool]] = defaultdict(list)
    for raw, em in points:
        bins[min(int(raw / BIN), int(1 / BIN) - 1)].append(em)
    blocks: list[list[float]] = []  # [first bin, estimate, weight]
    for b in sorted(bins):
        weight = len(bins[b]) + PRIOR
        blocks.append([b, (sum(bins[b]) + PRIOR * base) / weight, weight])
        while len(blocks) > 1 and blocks[-2][1] >= blocks[-1][1]:
            _, value, weight = blocks.pop()
            first = blocks[-1]
            first[1] = (first[1] * first[2] + value * weight) / (first[2] + weight)
            first[2] += weight
    return tuple((round(b * BIN, 2), round(value, 3)) for b, value, _ in blocks)


def precision(points: list[tuple[float, bool]], threshold: float) -> tuple[float, float | None]:
    """Share answered and EM among them (%) at ``threshold``."""
    answered = [em for c, em in points if c >= threshold]
    share = 100.0 * len(answered) / len(points)
    return share, (100.0 * sum(answered) / len(answered) if answered else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dirs", nargs="+", type=Path, metavar="OUT_DIR")
    parser.add_argument("--run", action="store_true", help="run the suite first (raw confidence)")
    args = parser.parse_args(argv)
    if args.run:
        from repomem.cli import main as repomem

        builtin.CALIBRATION = {}
        for out in args.out_dirs:
            code = repomem(["eval", "devsuite", "run", "--backend", "builtin", "--out", str(out)])
            if code:
                return code
    points = read_predictions(args.out_dirs)
    table = {key: fit(values) for key, values in sorted(points.items())}
    print("CALIBRATION: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {")
    for key, steps in table.items():
        print(f"    {key!r}: {steps!r},")
    print("}")
    threshold = Settings().completion.min_confidence
    for key, values in sorted(points.items()):
        calibrated = [(builtin.calibrate(c, table[key]), em) for c, em in values]
        before, after = precision(values, threshold), precision(calibrated, threshold)
        print(
            f"{key[0]:>6} {key[1]:>4}: n {len(values)}, at {threshold}: answered / EM"
            f" {before[0]:.1f} / {before[1] or 0:.1f} raw, {after[0]:.1f} / {after[1] or 0:.1f}"
            " calibrated"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
