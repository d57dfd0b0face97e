"""The built-in backend's confidence fit (``eval/calibrate_builtin.py``): the logistic
regression's weights take the sign of what the evidence says about exact matches, and the
cross-validated report fits without the project it applies to."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval"
sys.path.insert(0, str(EVAL))
import calibrate_builtin  # noqa: E402


def _write(out: Path, rows: list[dict[str, object]]) -> None:
    out.mkdir(parents=True)
    (out / calibrate_builtin.EVIDENCE_FILE).write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )


def test_weights_follow_the_evidence_and_the_report_cross_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(3)
    rows: list[dict[str, object]] = []
    for i in range(600):
        share, literal = rng.random(), rng.random() < 0.5
        # right mostly when the vote is unanimous and the line holds no literal
        em = rng.random() < 0.1 + 0.8 * share * (0.3 if literal else 1.0)
        features = [share, 0.5, 0.25, 0.0, float(literal), 0.0]
        rows.append(
            {
                "task_id": f"{'ab'[i % 2]}/{i}",
                "method": "graph",
                "language": "tsx" if i % 3 else "python",
                "mode": "line",
                "em": em,
                "features": features if i % 10 else None,
            }
        )
    _write(tmp_path / "run", rows)
    points = calibrate_builtin.read_points([tmp_path / "run"])
    assert {p.key for p in points} == {("js", "line"), ("python", "line")}
    assert sum(p.features is None for p in points) == 60
    _, *weights = calibrate_builtin.fit_weights(points)
    assert weights[0] > 1.0 and weights[4] < -0.5  # share helps, a literal hurts
    assert calibrate_builtin.main([str(tmp_path / "run")]) == 0
    printed = capsys.readouterr().out
    assert "EVIDENCE_WEIGHTS" in printed and "CALIBRATION" in printed
    assert "    js line: n 400," in printed and " | " in printed


def test_a_bin_of_few_tasks_is_valued_below_its_share_right() -> None:
    # six of six right says less than sixty of sixty: the table gives a lower bound
    few = calibrate_builtin.fit([(0.9, True)] * 6)
    many = calibrate_builtin.fit([(0.9, True)] * 60)
    assert few[0][0] == many[0][0] == 0.9
    assert few[0][1] < 0.8 < many[0][1] < 1.0
    # half right in a bin of ten stays under the default threshold's neighbourhood of 0.5
    assert calibrate_builtin.fit([(0.5, True)] * 5 + [(0.5, False)] * 5)[0][1] < 0.3
