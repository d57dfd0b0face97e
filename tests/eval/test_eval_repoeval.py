"""``repomem eval repoeval``: the RepoEval runner on benchmarks built here, driven as a subprocess,
and the leakage rule (DESIGN §2.6) checked against indexes built from scratch."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from repos import make_repo
from repos import run_repomem as repomem

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine, query_window
from repomem.config import CompletionConfig, IndexConfig
from repomem.core import Exclusion, RetrievedFragment
from repomem.index.fragments import shown_lines
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex
from repomem.settings import Settings
from repomem_eval.batch import MethodRun, evaluate_batch
from repomem_eval.make_benchmark import make_benchmark
from repomem_eval.methods import METHODS
from repomem_eval.metrics import aggregate, code_lines, hit_at_k, score_task
from repomem_eval.predictions import Prediction, load_predictions
from repomem_eval.runner import select_tasks
from repomem_eval.task_retrieval import SharedRetrieval
from repomem_eval.task_view import TaskView, oracle_window, task_view, view_order
from repomem_eval.tasks import Task, read_tasks, write_tasks

STORE = '''\
from pkg.util import helper


class {name}Store:
    """Keeps {name} records."""

    def __init__(self):
        self.items = {{}}
        self.log = []

    def fetch(self, key):
        record = self.items.get(key)
        if record is None:
            raise KeyError(key)
        return record

    def save(self, key, value):
        self.items[key] = helper(value)
        self.log.append(("save", key))
        return value

    def drop(self, key):
        self.log.append(("drop", key))
        return self.items.pop(key, None)


def make_{lower}(values):
    store = {name}Store()
    for key, value in values.items():
        store.save(key, value)
    total = helper(
        len(values),
    )
    store.save("total", total)
    return store
'''

STORES = {
    f"pkg/stores/{name.lower()}.py": STORE.format(name=name, lower=name.lower())
    for name in ("Alpha", "Beta", "Gamma", "Delta")
}

# A repository whose task file holds each task's ground truth again after the hole, and
# nowhere else: any method that retrieves it has leaked the answer.
FLOW = (
    """\
from pkg.answers import compute_answer_7731
from pkg.helpers import combine_sides, prepare_inputs, validate_merge


def first_block(alpha, beta):
    left = prepare_inputs(alpha)
    right = prepare_inputs(beta)
    merged = combine_sides(left, right)
    checked = validate_merge(merged)
    secret_value = compute_answer_7731(checked, merged)
    return secret_value


def tally(values):
    total = 0
    for value in values:
        total += value
    return total


def second_block(alpha, beta):
    left = prepare_inputs(alpha)
    right = prepare_inputs(beta)
    merged = combine_sides(left, right)
    checked = validate_merge(merged)
    other_answer = compute_answer_7731(merged, checked)
    return other_answer
"""
    + "".join(
        f"\n\ndef filler_{i}(items):\n    count = len(items) * {i}\n    return count\n"
        for i in range(8)
    )
    + """

def third_block(alpha, beta):
    left = prepare_inputs(alpha)
    right = prepare_inputs(beta)
    merged = combine_sides(left, right)
    checked = validate_merge(merged)
    secret_value = compute_answer_7731(checked, merged)
    other_answer = compute_answer_7731(merged, checked)
    return secret_value, other_answer
"""
)

LEAKY_FILES = {
    "pkg/__init__.py": "",
    "pkg/answers.py": "def compute_answer_7731(first, second):\n    return first, second\n",
    "pkg/helpers.py": (
        "def prepare_inputs(value):\n    return [value]\n\n\n"
        "def combine_sides(left, right):\n    return left + right\n\n\n"
        "def validate_merge(merged):\n    assert merged\n    return merged\n"
    ),
    "pkg/flow.py": FLOW,
}

# (hole line, first prompt line): the first hole's prompt is the whole file above it; the
# second's is five lines, so the window before it, shifted forward as prompts show windows,
# reaches the hole in the snapshot but not in the user's buffer.
LEAKY_HOLES = ((9, 0), (25, 20))
ALL_METHODS = tuple(METHODS)


def leaky_tasks() -> list[Task]:
    lines = FLOW.splitlines()
    return [
        Task(
            prompt="\n".join(lines[start:hole]),
            task_id=f"leaky/{n}",
            ground_truth=lines[hole],
            fpath_tuple=("leaky", "pkg", "flow.py"),
            context_start_lineno=start,
            line_no=hole,
        )
        for n, (hole, start) in enumerate(LEAKY_HOLES)
    ]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Task]]:
    root = tmp_path_factory.mktemp("bench")
    repos = root / "repos"
    make_repo(repos / "proj", STORES)
    make_repo(repos / "leaky", LEAKY_FILES, use_git=False)
    tasks = make_benchmark(repos / "proj", "line", 24, seed=3)
    api = make_benchmark(repos / "proj", "api", 6, seed=3)
    tasks += [dataclasses.replace(t, task_id=f"proj/{len(tasks) + i}") for i, t in enumerate(api)]
    tasks += leaky_tasks()
    write_tasks(root / "tasks.jsonl", tasks)
    return root / "tasks.jsonl", repos, tasks


def run_eval(tasks: Path, repos: Path, out: Path, *extra: str | Path) -> dict[str, object]:
    proc = repomem("eval", "repoeval", "--tasks", tasks, "--repos", repos, "--out", out, *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "results.json").read_text())


def predictions(out: Path, method: str) -> list[Prediction]:
    lines = (out / f"predictions-{method}.jsonl").read_text().splitlines()
    return [Prediction(**json.loads(line)) for line in lines]


def shown_texts(p: Prediction, task: Task, repos: Path) -> list[str]:
    """What the prompt showed of each fragment, rebuilt from the recorded locations: the index
    holds the task's file as the user's buffer (its lines before the hole)."""
    texts = []
    for locations in p.fragments:
        path, start, end = locations[0]
        text = (repos / task.repo / path).read_text()
        if path == task.rel_path:
            text = "".join(text.splitlines(keepends=True)[: task.line_no])
        texts.append(shown_lines(split_lines(text), start, end, 10))
    return texts


@pytest.fixture(scope="module")
def full_run(
    bench: tuple[Path, Path, list[Task]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, object]]:
    tasks_file, repos, _ = bench
    out = tmp_path_factory.mktemp("run") / "out"
    return out, run_eval(tasks_file, repos, out, "--backend", "builtin", "--batch-size", "8")


def test_results_have_every_method_and_match_the_predictions(
    bench: tuple[Path, Path, list[Task]], full_run: tuple[Path, dict[str, object]]
) -> None:
    _, repos, tasks = bench
    out, results = full_run
    by_id = {t.task_id: t for t in tasks}
    methods = results["methods"]
    assert isinstance(methods, dict)
    assert list(methods) == list(ALL_METHODS)
    for method, result in methods.items():
        made = predictions(out, method)
        assert sorted(p.task_id for p in made) == sorted(by_id)
        scores = []
        for p in made:
            task = by_id[p.task_id]
            shown = shown_texts(p, task, repos) if METHODS[method].retrieves else None
            if shown is None:
                assert p.hit is None and p.fragments == []
                assert p.targets is None and p.context is None
            else:
                assert p.hit == hit_at_k(task.ground_truth, shown)
                assert p.targets is not None and (p.context is None) == (p.targets == [])
            assert p.seconds == pytest.approx(sum(p.timings.values()))
            if METHODS[method].definitions:
                assert p.cards is not None and p.cards["shown"] >= p.cards["wrong"]
            else:
                assert p.cards is None
            scores.append(
                score_task(
                    p.task_id,
                    task.ground_truth,
                    p.prediction,
                    shown_texts=shown,
                    seconds=p.seconds,
                    context=p.context,
                    confidence=p.confidence,
                    cards=p.cards,
                )
            )
        expected = aggregate(scores, Settings().completion.min_confidence)
        assert result["overall"] == pytest.approx(expected["overall"])
        assert result["per_repo"].keys() == expected["per_repo"].keys()
        for repo, summary in expected["per_repo"].items():
            assert result["per_repo"][repo] == pytest.approx(summary)
        assert set(result["per_repo"]) == {"proj", "leaky"}
        assert result["overall"]["n"] == len(tasks)
    assert methods["infile"]["overall"]["hit_at_k"] is None
    assert all(p.iterations == 1 for p in predictions(out, "vanilla"))
    assert max(p.iterations for p in predictions(out, "repocoder")) == 2
    api_ids = {t.task_id for t in tasks if len(code_lines(t.ground_truth)) > 1}
    assert api_ids and {p.mode for p in predictions(out, "vanilla") if p.task_id in api_ids} == {
        "api"
    }
    config = results["config"]
    assert config["completion"]["k"] == 10 and config["backend"]["backend"] == "builtin"
    # the built-in backend's confidences: answered share and EM among them, and the curve
    vanilla = methods["vanilla"]
    assert all(p.confidence is not None for p in predictions(out, "vanilla"))
    assert 0 <= vanilla["overall"]["coverage"] <= 100
    assert [p["threshold"] for p in vanilla["curve"]][:3] == [0.0, 0.05, 0.1]
    assert vanilla["curve"][0]["coverage"] == 100.0
    assert vanilla["curve"][0]["precision"] == pytest.approx(vanilla["overall"]["em"])
    report = (out / "results.md").read_text()
    assert "## Precision and coverage by confidence threshold" in report
    assert "| 0.25 |" in report and "EM answered" in report
    assert config["methods"]["repocoder-fragrel"] == {
        "retrieval": "left-context window",
        "iterations": 2,
        "alpha": 0.5,
        "definitions_share": 0.0,
    }
    assert (
        config["methods"]["repocoder-graph"]["definitions_share"]
        == CompletionConfig().definitions_share
    )
    table = (out / "results.md").read_text()
    assert all(f"| {m} |" in table for m in ALL_METHODS)
    assert (out / "index" / "proj").is_dir() and not (repos / "proj" / ".repomem").exists()


def test_no_method_sees_the_answer_the_snapshot_holds_after_the_hole(
    full_run: tuple[Path, dict[str, object]],
) -> None:
    out, _ = full_run
    for method in ALL_METHODS:
        for p in predictions(out, method):
            if p.task_id.startswith("leaky/"):
                assert p.hit is not True, (method, p.task_id)
                assert code_lines(p.prediction)[:1] != code_lines(p.ground_truth), method
                assert all(
                    loc[0] != "pkg/flow.py" or loc[2] <= 20 for f in p.fragments for loc in f
                )


def test_the_leaky_fixture_leaks_without_the_protocol(tmp_path: Path) -> None:
    """Both leakage channels are real here: without the exclusion the later copy of the
    answer is retrieved; with it but without the user's buffer, the window shown before a
    short prompt reaches into the hole."""
    repo = make_repo(tmp_path / "leaky", LEAKY_FILES, use_git=False)
    index, _ = RepoIndex.build(repo, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    first, second = leaky_tasks()

    def hit(task: Task, exclusion: Exclusion | None) -> bool:
        query = query_window(task.prompt + "\n", 20)
        found = index.retrieve(query, k=10, alpha=0.0, exclusion=exclusion)
        return hit_at_k(task.ground_truth, [f.shown for f in found])

    assert hit(first, None)
    assert not hit(first, Exclusion(first.rel_path, first.context_start_lineno))
    assert hit(second, Exclusion(second.rel_path, second.context_start_lineno))


def signature(found: list[RetrievedFragment]) -> dict[tuple[object, ...], tuple[float, ...]]:
    return {
        tuple((loc.path, loc.start, loc.end) for loc in f.locations): (
            round(f.s_ind, 9),
            round(f.s_env, 9),
            round(f.s_rel, 9),
        )
        for f in found
    }


QUERIES = (
    "secret_value = compute_answer_7731(checked, merged)",
    "merged = combine_sides(left, right)\nchecked = validate_merge(merged)",
    "def compute_answer_7731(first, second):",
    "record = self.items.get(key)\nif record is None:",
)


def retrieve_all(index: RepoIndex, exclusion: Exclusion | None = None) -> list[object]:
    return [signature(index.retrieve(q, k=1000, alpha=0.5, exclusion=exclusion)) for q in QUERIES]


def test_a_task_retrieves_from_the_index_of_the_users_buffer_and_restores(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "leaky", LEAKY_FILES, use_git=False)
    index, _ = RepoIndex.build(repo, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    before = retrieve_all(index)
    for task in leaky_tasks():
        view = task_view(task, index.file_text(task.rel_path) or "", mode="line", window=20)
        shared = SharedRetrieval(index, k=10)
        shared.add(view)
        exclusion = view.completion.exclusion
        with shared.scope(view.completion):
            oracle = shared.retriever(oracle=True).retrieve(
                "x", k=10, alpha=0.0, exclusion=exclusion
            )
            during = retrieve_all(index, exclusion)
            assert oracle == index.retrieve(view.oracle_query, k=10, alpha=0.0, exclusion=exclusion)
        shared.finish()
        buffer_repo = tmp_path / f"buffer-{task.line_no}"
        shutil.copytree(repo, buffer_repo)
        (buffer_repo / task.rel_path).write_text(view.buffer)
        fresh, _ = RepoIndex.build(
            buffer_repo, IndexConfig(index_dir=str(tmp_path / f"i{task.line_no}")), save=False
        )
        assert during == retrieve_all(fresh, exclusion)
        assert retrieve_all(index) == before


def test_a_whole_evaluation_leaves_the_index_as_it_was(
    bench: tuple[Path, Path, list[Task]], tmp_path: Path
) -> None:
    _, repos, tasks = bench
    index, _ = RepoIndex.build(
        repos / "proj", IndexConfig(index_dir=str(tmp_path / "idx")), save=False
    )
    before = retrieve_all(index)
    views = sorted(
        (
            task_view(t, index.file_text(t.rel_path) or "", mode="line", window=20)
            for t in tasks
            if t.repo == "proj"
        ),
        key=view_order,
    )
    shared = SharedRetrieval(index, k=10)
    runs = [
        MethodRun(
            m, CompletionEngine(shared.retriever(oracle=m.oracle), BuiltinBackend(), Settings())
        )
        for m in METHODS.values()
        if m.retrieves
    ]
    made: dict[str, int] = {}

    def record(method: object, found: list[Prediction]) -> None:
        made[str(getattr(method, "name", method))] = len(found)

    asyncio.run(evaluate_batch(runs, {r.method.name: views for r in runs}, shared, record))
    assert made == {r.method.name: len(views) for r in runs}
    assert len({v.task.rel_path for v in views}) > 1 and shared.swap.updates > len(views)
    assert retrieve_all(index) == before


def test_the_oracle_queries_with_repocoders_ground_truth_window() -> None:
    text = "".join(f"line {i}\n" for i in range(40))
    lines = text.splitlines()
    task = Task("x", "r/0", "line 20", ("r", "a.py"), context_start_lineno=15, line_no=20)
    assert oracle_window(text, task, 20) == "\n".join(lines[15:30])
    far = dataclasses.replace(task, context_start_lineno=0, line_no=35)
    assert oracle_window(text, far, 20) == "\n".join(lines[25:40])


def test_resume_skips_finished_tasks_and_recovers_a_cut_line(
    bench: tuple[Path, Path, list[Task]], tmp_path: Path
) -> None:
    tasks_file, repos, _ = bench
    out = tmp_path / "out"
    common = ("--method", "vanilla", "--method", "infile")
    run_eval(tasks_file, repos, out, *common, "--limit", "6")
    first = (out / "predictions-vanilla.jsonl").read_text().splitlines()
    assert len(first) == 6
    results = run_eval(tasks_file, repos, out, *common, "--limit", "10")
    second = (out / "predictions-vanilla.jsonl").read_text().splitlines()
    assert second[:6] == first and len(second) == 10
    assert results["methods"]["vanilla"]["overall"]["n"] == 10
    # a run killed while writing leaves half a line: it is dropped and only that task redone
    path = out / "predictions-vanilla.jsonl"
    path.write_text("\n".join(second[:9]) + "\n" + second[9][: len(second[9]) // 2])
    run_eval(tasks_file, repos, out, *common, "--limit", "10")
    third = path.read_text().splitlines()
    assert third[:9] == second[:9] and len(third) == 10
    assert len(load_predictions(path)) == 10
    proc = repomem(
        "eval",
        "repoeval",
        "--tasks",
        tasks_file,
        "--repos",
        repos,
        "--out",
        out,
        *common,
        "--limit",
        "10",
        "--k",
        "3",
    )
    assert proc.returncode == 2
    assert "predictions-" in proc.stderr and "other settings" in proc.stderr


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("repomem: error:"), proc.stderr
    return lines[0]


def test_bad_inputs_give_one_clean_line(
    bench: tuple[Path, Path, list[Task]], tmp_path: Path
) -> None:
    tasks_file, repos, tasks = bench
    out = tmp_path / "out"
    base = ("eval", "repoeval", "--out", out)
    missing = tmp_path / "nope.jsonl"
    assert str(missing) in one_error_line(repomem(*base, "--tasks", missing, "--repos", repos))
    assert "nowhere" in one_error_line(
        repomem(*base, "--tasks", tasks_file, "--repos", tmp_path / "nowhere")
    )
    assert "'bm99'" in one_error_line(
        repomem(*base, "--tasks", tasks_file, "--repos", repos, "--method", "bm99")
    )
    shifted = [dataclasses.replace(tasks[0], line_no=tasks[0].line_no + 1)]
    write_tasks(tmp_path / "shifted.jsonl", shifted)
    assert "do not match" in one_error_line(
        repomem(*base, "--tasks", tmp_path / "shifted.jsonl", "--repos", repos)
    )
    assert "devsuite fetch" in one_error_line(
        repomem("eval", "devsuite", "run", "--cache", tmp_path / "empty", "--out", out)
    )


def test_devsuite_run_compares_both_kinds(
    bench: tuple[Path, Path, list[Task]], tmp_path: Path
) -> None:
    _, repos, _ = bench
    cache = tmp_path / "cache"
    shutil.copytree(repos / "proj", cache / "repos" / "proj")
    tasks = cache / "tasks" / "python"
    write_tasks(tasks / "line.jsonl", make_benchmark(repos / "proj", "line", 8, seed=1))
    write_tasks(tasks / "api.jsonl", make_benchmark(repos / "proj", "api", 4, seed=1))
    out = tmp_path / "out"
    proc = repomem(
        "eval",
        "devsuite",
        "run",
        "--cache",
        cache,
        "--out",
        out,
        "--languages",
        "python",
        "--method",
        "vanilla",
        "--method",
        "fragrel",
        "--limit-per-repo",
        "3",
    )
    assert proc.returncode == 0, proc.stderr
    for kind in ("line", "api"):
        results = json.loads((out / "python" / kind / "results.json").read_text())
        assert list(results["methods"]) == ["vanilla", "fragrel"]
        assert results["methods"]["fragrel"]["overall"]["n"] == 3
        assert results["config"]["mode"] == kind
    assert {p.mode for p in predictions(out / "python" / "api", "vanilla")} == {"api"}
    assert (out / "index" / "proj").is_dir()
    table = (out / "results.md").read_text()
    assert "| python | line | vanilla | 3 |" in table and "| python | api | fragrel | 3 |" in table

    proc = repomem("eval", "devsuite", "run", "--cache", cache, "--out", out, "--languages", "pl1")
    assert "unknown language 'pl1'" in one_error_line(proc)
    # the held-out set has languages of its own, and its cache must be fetched for it
    held = ("eval", "devsuite", "run", "--set", "heldout", "--cache", cache, "--out", out)
    assert "unknown language 'cpp'" in one_error_line(repomem(*held, "--languages", "cpp"))
    assert "with the same --set and --cache" in one_error_line(repomem(*held, "--languages", "go"))
    proc = repomem("eval", "devsuite", "fetch", "--set", "heldout", "--git", "no-path")
    assert proc.returncode == 2 and "expected OWNER/NAME=GIT_DIR" in proc.stderr


def test_limits_keep_the_task_files_order(bench: tuple[Path, Path, list[Task]]) -> None:
    tasks_file, _, _ = bench
    tasks = read_tasks(tasks_file)
    assert select_tasks(tasks, limit=5) == tasks[:5]
    per_repo = select_tasks(tasks, limit_per_repo=1)
    assert [t.task_id for t in per_repo] == ["proj/0", "leaky/0"]


def test_views_of_a_file_come_last_hole_first(bench: tuple[Path, Path, list[Task]]) -> None:
    views: list[TaskView] = [task_view(t, FLOW, mode="line", window=20) for t in leaky_tasks()]
    ordered = sorted(views, key=view_order)
    assert [v.task.line_no for v in ordered] == [25, 9]
    assert ordered[0].buffer.startswith(ordered[1].buffer)
    assert ordered[1].buffer == "".join(FLOW.splitlines(keepends=True)[:9])
