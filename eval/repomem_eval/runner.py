"""The RepoEval runner: every selected task, every method, scored and written to ``OUT_DIR``.

Protocol (DESIGN §2.6, §4): the model sees the task's ``prompt`` as the left context, with the
cursor at the start of line ``line_no``; there is no right context, because RepoEval completes
left to right. Retrieval sees the repository snapshot with the task's file as the user's buffer
and RepoEval's exclusion applied (see ``task_view``).

Work is done repository by repository: each repository's index is built once into the index
cache (``OUT_DIR/index/<repo>`` unless told otherwise; nothing is written into the repositories)
and reused by later runs while the snapshot is unchanged. Within a repository, each method
completes its pending tasks in batches grouped by file (``task_view.view_order``), one batched
backend call per iteration; a method's predictions for a batch are appended to
``predictions-<method>.jsonl`` as soon as they are made, so an interrupted run resumes where it
stopped. ``results.json`` and ``results.md`` summarise the selected tasks of the methods run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from repomem.completion.backends.base import Backend
from repomem.completion.backends.registry import create_backend
from repomem.completion.engine import CompletionEngine
from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index import opening
from repomem.index.files import scan_files
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex
from repomem.index.store import IndexUnreadable
from repomem.settings import Settings
from repomem_eval.batch import MethodRun, evaluate_batch
from repomem_eval.methods import TASK_MODES, Method
from repomem_eval.metrics import aggregate, code_lines
from repomem_eval.predictions import (
    Prediction,
    PredictionsError,
    append_predictions,
    load_predictions,
    predictions_path,
    task_digest,
)
from repomem_eval.report import write_results
from repomem_eval.task_retrieval import SharedRetrieval
from repomem_eval.task_view import TaskView, task_view, view_order
from repomem_eval.tasks import Task, TaskFileError, read_tasks, resolve_file

RUN_FILE = "run.json"
RIGHT_CONTEXT = "none: RepoEval completes left to right"
LEAKAGE = (
    "a fragment all of whose locations are in the task's file and end after"
    " context_start_lineno is excluded; while a task retrieves, the index holds the task's"
    " file as the user's buffer (its lines before the hole)"
)

Log = Callable[[str], None]


class RunError(RepomemError):
    """A run that cannot start: bad options, or an output directory it cannot use."""


@dataclass(frozen=True)
class RunOptions:
    """One evaluation run. ``settings`` carries the backend, the index configuration and the
    completion defaults (``k``, ``alpha``, ``iterations``, ...) the methods derive theirs from;
    ``mode`` is ``line``, ``api`` or ``auto`` (per task: ``api`` when the ground truth spans
    several lines); ``typescript``, the TypeScript compiler's folder, lets ``card_check``
    decide TypeScript cards with it."""

    tasks_path: Path
    repos_dir: Path
    out_dir: Path
    methods: tuple[Method, ...]
    settings: Settings
    mode: str = "auto"
    limit: int | None = None
    limit_per_repo: int | None = None
    batch_size: int = 64
    index_cache: Path | None = None
    typescript: Path | None = None

    @property
    def index_root(self) -> Path:
        return (self.index_cache or self.out_dir / "index").expanduser().absolute()

    def method_settings(self, method: Method) -> Settings:
        base = self.settings.completion
        completion = method.completion(base, alpha=base.alpha, iterations=base.iterations)
        return dataclasses.replace(self.settings, completion=completion)


def stderr_log(message: str, stream: TextIO = sys.stderr) -> None:
    print(message, file=stream, flush=True)


def select_tasks(
    tasks: Sequence[Task], *, limit: int | None = None, limit_per_repo: int | None = None
) -> list[Task]:
    """The first ``limit_per_repo`` tasks of each repository, then the first ``limit`` of
    those, in the task file's order."""
    per_repo: dict[str, int] = defaultdict(int)
    chosen: list[Task] = []
    for task in tasks:
        if limit_per_repo is not None and per_repo[task.repo] >= limit_per_repo:
            continue
        per_repo[task.repo] += 1
        chosen.append(task)
    return chosen[:limit] if limit is not None else chosen


def task_mode(task: Task, mode: str) -> str:
    if mode != "auto":
        return mode
    return "api" if len(code_lines(task.ground_truth)) > 1 else "line"


def _read_source(path: Path) -> str:
    """A file's text decoded as the index decodes it."""
    try:
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise TaskFileError(f"cannot read {path}: {exc.strerror or exc}") from exc


def check_tasks(tasks: Sequence[Task], repos_dir: Path) -> dict[tuple[str, ...], str]:
    """The text of every task's file; each task must point at its ground truth in it.

    A task whose hole is not where its file holds the ground truth means the repositories are
    not the snapshot the tasks were made from, and every number would be wrong.
    """
    texts: dict[tuple[str, ...], str] = {}
    for task in tasks:
        if task.fpath_tuple not in texts:
            texts[task.fpath_tuple] = _read_source(resolve_file(task, repos_dir))
        lines = split_lines(texts[task.fpath_tuple])
        path = task.file_path(repos_dir)
        if task.line_no >= len(lines):
            raise TaskFileError(
                f"task {task.task_id}: line_no {task.line_no} is past the end of {path}"
                f" ({len(lines)} lines)"
            )
        if lines[task.line_no].strip() != task.ground_truth.split("\n", 1)[0].strip():
            raise TaskFileError(
                f"task {task.task_id}: line {task.line_no + 1} of {path} is not the task's"
                " ground truth; the repositories do not match the tasks"
            )
    return texts


def open_index(repo_dir: Path, config: IndexConfig, log: Log) -> tuple[RepoIndex, float, bool]:
    """The repository's cached index if it matches the snapshot, else a freshly built one;
    returns the index, the seconds it took and whether it was built."""
    started = time.perf_counter()
    try:
        opened = opening.open_index(
            repo_dir,
            config,
            build=True,
            say=log,
            current=lambda index: opening.unchanged(
                index, scan_files(repo_dir, config, texts=False)
            ),
        )
    except IndexUnreadable:  # a damaged cache is built again
        log(f"{repo_dir.name}: indexing into {config.index_dir}")
        opened = opening.Opened(RepoIndex.build(repo_dir, config)[0], built=True)
    return opened.index, time.perf_counter() - started, opened.built


def _fingerprint(options: RunOptions, method: Method) -> dict[str, Any]:
    """What a method's predictions depend on; resuming with anything else is refused."""
    backend = options.settings.backend
    index = asdict(options.settings.index)
    index.pop("index_dir")
    return {
        "completion": asdict(options.method_settings(method).completion),
        "backend": {
            key: getattr(backend, key)
            for key in ("backend", "model", "context_window", "fim", "temperature")
        },
        "index": index,
        "mode": options.mode,
    }


def _check_run_file(options: RunOptions, done: dict[str, dict[str, Prediction]]) -> None:
    path = options.out_dir / RUN_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read {path}: {exc}; choose another --out") from exc
    methods = recorded.get("methods", {}) if isinstance(recorded, dict) else {}
    for method in options.methods:
        before = methods.get(method.name)
        now = json.loads(json.dumps(_fingerprint(options, method)))  # as run.json holds it
        if done[method.name] and before is not None and before != now:
            changed = sorted(k for k in now if before.get(k) != now[k])
            raise RunError(
                f"{predictions_path(options.out_dir, method.name)} was made with other settings"
                f" ({', '.join(changed)}); choose another --out or delete that file"
            )
        methods[method.name] = now
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"methods": methods}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def _exclusive(out_dir: Path) -> Iterator[None]:
    with open(out_dir / ".lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunError(f"another run is writing to {out_dir}") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _load_done(options: RunOptions, tasks: Sequence[Task]) -> dict[str, dict[str, Prediction]]:
    digests = {t.task_id: task_digest(t) for t in tasks}
    done: dict[str, dict[str, Prediction]] = {}
    for method in options.methods:
        path = predictions_path(options.out_dir, method.name)
        found = load_predictions(path)
        for task_id, prediction in found.items():
            if task_id in digests and prediction.task_digest != digests[task_id]:
                raise PredictionsError(
                    f"{path} holds a prediction for another version of task {task_id};"
                    " choose another --out or delete that file"
                )
        done[method.name] = found
    return done


def _batches(items: Sequence[TaskView], size: int) -> Iterator[Sequence[TaskView]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def _run_repo(
    options: RunOptions,
    backend: Backend,
    repo: str,
    tasks: Sequence[Task],
    texts: dict[tuple[str, ...], str],
    done: dict[str, dict[str, Prediction]],
    stats: dict[str, dict[str, Any]],
    log: Log,
) -> None:
    todo = {m.name: [t for t in tasks if t.task_id not in done[m.name]] for m in options.methods}
    if not any(todo.values()):
        return
    shared: SharedRetrieval | None = None
    index: RepoIndex | None = None
    if any(todo[m.name] for m in options.methods if m.retrieves):
        config = dataclasses.replace(
            options.settings.index, index_dir=str(options.index_root / repo)
        )
        index, seconds, built = open_index(options.repos_dir / repo, config, log)
        stats[repo] = {"index_seconds": seconds, "index_built": built}
        shared = SharedRetrieval(
            index, options.settings.completion.k, typescript=options.typescript
        )
    window = options.settings.completion.query_lines
    views: dict[str, TaskView] = {}
    for task in tasks:
        indexed = index.file_text(task.rel_path) if index is not None else None
        text = indexed if indexed is not None else texts[task.fpath_tuple]
        views[task.task_id] = task_view(
            task, text, mode=task_mode(task, options.mode), window=window
        )
    runs = [
        MethodRun(
            m,
            CompletionEngine(
                shared.retriever(oracle=m.oracle) if shared is not None and m.retrieves else None,
                backend,
                options.method_settings(m),
            ),
        )
        for m in options.methods
    ]

    def record(method: Method, predictions: list[Prediction]) -> None:
        append_predictions(predictions_path(options.out_dir, method.name), predictions)
        done[method.name].update((p.task_id, p) for p in predictions)

    unfinished = {t.task_id for m in options.methods for t in todo[m.name]}
    pending = sorted((views[i] for i in unfinished), key=view_order)
    finished, started = 0, time.perf_counter()
    try:
        for batch in _batches(pending, options.batch_size):
            per_method = {
                m.name: [v for v in batch if v.task.task_id not in done[m.name]]
                for m in options.methods
            }
            await evaluate_batch(runs, per_method, shared, record)
            finished += len(batch)
            log(f"{repo}: {finished}/{len(pending)} tasks, {time.perf_counter() - started:.1f} s")
    finally:
        if shared is not None:
            shared.close()
    if shared is not None:
        stats[repo].update(
            buffer_updates=shared.swap.updates, buffer_update_seconds=shared.swap.seconds
        )


def _check_options(options: RunOptions) -> None:
    if options.mode not in TASK_MODES:
        raise RunError(f"--mode must be one of {', '.join(TASK_MODES)}, got {options.mode!r}")
    if options.batch_size < 1:
        raise RunError(f"--batch-size must be at least 1, got {options.batch_size}")
    for flag, value in (("--limit", options.limit), ("--limit-per-repo", options.limit_per_repo)):
        if value is not None and value < 1:
            raise RunError(f"{flag} must be at least 1, got {value}")
    if not options.methods:
        raise RunError("no method to run")
    if not options.repos_dir.is_dir():
        raise RunError(f"repositories directory {options.repos_dir} does not exist")


def run_repoeval(options: RunOptions, *, log: Log = stderr_log) -> dict[str, Any]:
    """Run (or resume) the evaluation and write its outputs; returns ``results.json``'s data."""
    _check_options(options)
    all_tasks = read_tasks(options.tasks_path)
    tasks = select_tasks(all_tasks, limit=options.limit, limit_per_repo=options.limit_per_repo)
    if not tasks:
        raise RunError(f"{options.tasks_path} holds no tasks")
    texts = check_tasks(tasks, options.repos_dir)
    try:
        options.out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot create output directory {options.out_dir}: {exc}") from exc
    with _exclusive(options.out_dir):
        done = _load_done(options, tasks)
        _check_run_file(options, done)
        by_repo: dict[str, list[Task]] = defaultdict(list)
        for task in tasks:
            by_repo[task.repo].append(task)
        repo_stats: dict[str, dict[str, Any]] = {}
        started = time.perf_counter()
        backend = create_backend(options.settings.backend)

        async def run_all() -> None:
            try:
                for repo, repo_tasks in by_repo.items():
                    await _run_repo(
                        options, backend, repo, repo_tasks, texts, done, repo_stats, log
                    )
            finally:
                await backend.aclose()

        asyncio.run(run_all())
        wall = time.perf_counter() - started
        threshold = options.settings.completion.min_confidence
        scores = {
            m.name: aggregate((done[m.name][t.task_id].score() for t in tasks), threshold)
            for m in options.methods
        }
        config = _run_config(options, backend, len(all_tasks), len(tasks), repo_stats, wall)
        return write_results(options.out_dir, scores, config)


def _run_config(
    options: RunOptions,
    backend: Backend,
    available: int,
    selected: int,
    repo_stats: dict[str, dict[str, Any]],
    wall: float,
) -> dict[str, Any]:
    """The exact configuration a results file was produced with."""
    backend_settings = asdict(options.settings.backend)
    return {
        "tasks": str(options.tasks_path),
        "repos": str(options.repos_dir),
        "tasks_available": available,
        "tasks_selected": selected,
        "limit": options.limit,
        "limit_per_repo": options.limit_per_repo,
        "mode": options.mode,
        "right_context": RIGHT_CONTEXT,
        "leakage": LEAKAGE,
        "methods": {m.name: _method_config(options, m) for m in options.methods},
        "completion": asdict(options.settings.completion),
        "backend": {
            **backend_settings,
            "name": backend.name,
            "context_window_tokens": backend.context_window,
        },
        "index": {**asdict(options.settings.index), "index_dir": str(options.index_root)},
        "batch_size": options.batch_size,
        "repositories": repo_stats,
        "wall_seconds": wall,
    }


def _method_config(options: RunOptions, method: Method) -> dict[str, Any]:
    """How a method retrieves: its query, iterations, relation weight and the share of the
    retrieved-code budget its definition cards may take (0: it shows none)."""
    completion = options.method_settings(method).completion
    return {
        "retrieval": "none"
        if not method.retrieves
        else ("ground-truth window" if method.oracle else "left-context window"),
        "iterations": completion.iterations,
        "alpha": completion.alpha,
        "definitions_share": completion.definitions_share,
    }
