"""``repomem eval compare`` on results written here, driven as a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from repos import run_repomem

from repomem_eval.compare import ResultsError, comparison_rows, load_run, markdown_table
from repomem_eval.metrics import CONTEXT_KEYS, aggregate, score_task


def _summary(em: float, es: float, hit: float | None, n: int, secs: float) -> dict[str, object]:
    return {"em": em, "es": es, "hit_at_k": hit, "n": n, "seconds_per_task": secs}


def _write_run(out: Path, methods: dict[str, object], config: dict[str, object]) -> Path:
    out.mkdir(parents=True)
    (out / "results.json").write_text(json.dumps({"methods": methods, "config": config}))
    return out


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    context = {**dict.fromkeys(CONTEXT_KEYS, False), "def_prompt": True, "use_prompt": True}
    scores = [
        score_task("alpha/0", "x = 1", "x = 1", shown_texts=["x = 1"], seconds=0.5),
        score_task("alpha/1", "abcd", "abce", shown_texts=["no"], seconds=1.5, context=context),
        score_task(
            "beta/0",
            "y = 2",
            "y = 2",
            shown_texts=["y = 2"],
            seconds=1.0,
            context={**context, "def_prompt": False},
        ),
    ]
    first = _write_run(
        tmp_path / "run-a",
        {
            "in-file": {
                "overall": _summary(12.5, 40.0, None, 3, 0.25),
                "per_repo": {"alpha": _summary(0.0, 30.0, None, 2, 0.2)},
            },
            "vanilla": aggregate(scores, 0.0),
        },
        {"model": "tiny", "top_k": 10},
    )
    second = _write_run(
        tmp_path / "run-b",
        {"fragrel": {"overall": _summary(66.6667, 80.1234, 90.0, 3, 2.0), "per_repo": {}}},
        {"model": "tiny", "alpha": 0.5},
    )
    return first, second


def _repomem(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_repomem(*args, timeout=120)


def _table(stdout: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in stdout.splitlines()]


def test_cli_prints_methods_side_by_side(runs: tuple[Path, Path]) -> None:
    a, b = runs
    proc = _repomem("eval", "compare", a, b)
    assert proc.returncode == 0, proc.stderr
    table = _table(proc.stdout)
    assert table[0] == [
        "run", "method", "EM", "ES", "hit@k", "def@prompt", "use@prompt", "def@10", "use@10",
        "n", "ctx n", "s/task", "answered", "EM answered",
    ]  # fmt: skip
    assert table[1] == ["---", "---", *["---:"] * 12]
    # results written before the context measures existed show "–" in their columns
    assert table[2:] == [
        [str(a), "in-file", "12.50", "40.00", "–", "–", "–", "–", "–", "3", "–", "0.250", "–",
         "–"],
        [str(a), "vanilla", "66.67", "91.67", "66.67", "50.0", "100.0", "0.0", "0.0", "3", "2",
         "1.000", "–", "–"],
        [str(b), "fragrel", "66.67", "80.12", "90.00", "–", "–", "–", "–", "3", "–", "2.000", "–",
         "–"],
    ]  # fmt: skip


def test_cli_per_repo_and_json(runs: tuple[Path, Path]) -> None:
    a, b = runs
    proc = _repomem("eval", "compare", "--per-repo", a)
    assert proc.returncode == 0, proc.stderr
    rows = _table(proc.stdout)[2:]
    assert [(r[1], r[2]) for r in rows] == [
        ("in-file", "all"),
        ("in-file", "alpha"),
        ("vanilla", "all"),
        ("vanilla", "alpha"),
        ("vanilla", "beta"),
    ]
    assert rows[3][3:] == ["50.00", "87.50", "50.00", "100.0", "100.0", "0.0", "0.0", "2", "1",
                           "1.000", "–", "–"]  # fmt: skip

    proc = _repomem("eval", "compare", "--json", a, b)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["runs"][str(a)]["config"] == {"model": "tiny", "top_k": 10}
    assert data["runs"][str(b)]["config"]["alpha"] == 0.5
    by_method = {row["method"]: row for row in data["rows"]}
    assert by_method["fragrel"]["es"] == pytest.approx(80.1234)
    assert by_method["in-file"]["hit_at_k"] is None
    assert by_method["vanilla"]["n"] == 3


def test_cli_reports_a_missing_or_broken_results_file(tmp_path: Path) -> None:
    proc = _repomem("eval", "compare", tmp_path / "nothing")
    assert proc.returncode == 2
    assert proc.stderr.startswith("repomem: error: cannot read ")
    assert str(tmp_path / "nothing" / "results.json") in proc.stderr

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text("{oops")
    proc = _repomem("eval", "compare", broken)
    assert proc.returncode == 2
    assert f"{broken / 'results.json'} is not valid JSON" in proc.stderr


@pytest.mark.parametrize(
    ("methods", "message"),
    [
        ([], '"methods" object'),
        ({"m": {"per_repo": {}}}, "methods.m.overall must be an object"),
        ({"m": {"overall": {"em": 1.0}}}, "methods.m.overall lacks es, hit_at_k, n"),
        ({"m": {"overall": _summary(1.0, "high", None, 1, 0.1)}}, "not a number or null"),  # type: ignore[arg-type]
        ({"m": {"overall": _summary(1.0, 2.0, None, 1.5, 0.1)}}, "n must be a non-negative"),  # type: ignore[arg-type]
        (
            {"m": {"overall": _summary(1, 2, 3, 4, 5), "per_repo": {"r": {}}}},
            "methods.m.per_repo.r lacks",
        ),
    ],
)
def test_malformed_results_name_the_file_and_field(
    tmp_path: Path, methods: object, message: str
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"methods": methods}))
    with pytest.raises(ResultsError) as info:
        load_run(out)
    assert str(out / "results.json") in str(info.value)
    assert message in str(info.value)


def test_table_escapes_pipes(tmp_path: Path) -> None:
    out = _write_run(
        tmp_path / "r",
        {"a|b": {"overall": _summary(1.0, 2.0, None, 1, 0.5)}},
        {},
    )
    table = markdown_table(comparison_rows([load_run(out)]))
    assert "| a\\|b |" in table
