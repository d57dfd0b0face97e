"""``repomem eval devsuite fetch|run``: a development benchmark from pinned, real Python projects.

RepoEval's own repositories are large and fixed; this suite is small enough to run often and
still real. Exact source releases from PyPI make it reproducible: the same pins, seeds and task
counts always give the same repositories and tasks. The cache (default
``$XDG_CACHE_HOME/repomem/devsuite``, else ``~/.cache/repomem/devsuite``) holds::

    sdists/<file>.tar.gz      the downloaded source distributions
    repos/<name>/             each release, extracted (the directory to evaluate against)
    tasks/line.jsonl          line tasks for every project
    tasks/api.jsonl           API tasks for every project
    manifest.json             what is done, so a second fetch skips it

``devsuite run --out OUT_DIR`` evaluates methods on it with ``repomem eval repoeval``'s runner:
one run per kind in ``OUT_DIR/<kind>`` (line tasks in line mode, API tasks in api mode), the
indexes shared in ``OUT_DIR/index``, and both kinds side by side in ``OUT_DIR/results.md``;
with matplotlib (the ``plot`` extra) the precision/coverage curves are also drawn in
``OUT_DIR/precision_coverage.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from repomem.errors import RepomemError
from repomem.index.jit import cache_home
from repomem_eval.make_benchmark import (
    BUILDER_VERSION,
    DEFAULT_CONTEXT_TOKENS,
    KINDS,
    Kind,
    make_benchmark,
)
from repomem_eval.repoeval import add_run_arguments, run_options
from repomem_eval.tasks import Task, write_tasks

NAME = "devsuite"
HELP = "Download and prepare the development benchmark (pinned PyPI source releases)."


@dataclass(frozen=True)
class Project:
    name: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


PROJECTS: tuple[Project, ...] = (
    Project("requests", "2.32.3"),
    Project("flask", "3.1.0"),
    Project("click", "8.1.8"),
    Project("rich", "13.9.4"),
    Project("httpx", "0.28.1"),
    Project("attrs", "24.3.0"),
    Project("networkx", "3.4.2"),
)
SEED = 20240601
DEFAULT_TASKS: dict[Kind, int] = {"line": 200, "api": 100}
_MANIFEST = "manifest.json"
PLOT_FILE = "precision_coverage.png"

Downloader = Callable[[Project, Path], Path]
Log = Callable[[str], None]


class DevSuiteError(RepomemError):
    """The development suite cannot be downloaded or unpacked."""


def default_cache() -> Path:
    return cache_home() / "devsuite"


def pip_download(project: Project, dest: Path) -> Path:
    """Download the project's source distribution with pip into ``dest``; returns its path."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".download-") as tmp:
        # -P: the interpreter's pip, never a folder named pip in the working directory
        cmd = [
            sys.executable, "-P", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            "--disable-pip-version-check", "--dest", tmp, project.requirement,
        ]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
            raise DevSuiteError(
                f"could not download {project.requirement} from PyPI (pip exited with "
                f"{proc.returncode}); check the network connection or proxy settings.\n{tail}"
            )
        archives = [p for p in Path(tmp).iterdir() if p.name.endswith(".tar.gz")]
        if len(archives) != 1:
            raise DevSuiteError(f"pip did not leave one .tar.gz for {project.requirement} in {tmp}")
        target = dest / archives[0].name
        os.replace(archives[0], target)
    return target


def _member_path(name: str) -> PurePosixPath | None:
    """The member's path below the archive's top directory, or None for the top itself.

    Raises for absolute paths and ``..``: a crafted archive must not write outside its target.
    """
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts:
        raise ValueError(f"unsafe member path {name!r}")
    return PurePosixPath(*parts[1:]) if len(parts) > 1 else None


def extract_sdist(archive: Path, dest: Path) -> None:
    """Unpack a ``.tar.gz`` source distribution's top directory into ``dest`` (replacing it).

    Only regular files and directories are written; links and devices are skipped. ``dest``
    appears only once complete, so an interrupted fetch never leaves half a repository.
    """
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                rel = _member_path(member.name)
                if rel is None or not (member.isfile() or member.isdir()):
                    continue
                target = partial / rel
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                if source is None:
                    continue
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
    except (OSError, tarfile.TarError, ValueError, EOFError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise DevSuiteError(f"cannot unpack {archive}: {exc}") from exc
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(partial, dest)


def _load_manifest(cache: Path) -> dict[str, Any]:
    path = cache / _MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_manifest(cache: Path, manifest: dict[str, Any]) -> None:
    path = cache / _MANIFEST
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _fetch_project(
    project: Project, cache: Path, manifest: dict[str, Any], downloader: Downloader, log: Log
) -> None:
    repos = manifest.setdefault("repos", {})
    if repos.get(project.name) == project.version and (cache / "repos" / project.name).is_dir():
        log(f"{project.requirement}: already prepared")
        return
    sdists = manifest.setdefault("sdists", {})
    known = sdists.get(project.name, {})
    archive = cache / "sdists" / str(known.get("file", ""))
    if known.get("version") != project.version or not archive.is_file():
        log(f"{project.requirement}: downloading")
        archive = downloader(project, cache / "sdists")
        sdists[project.name] = {"version": project.version, "file": archive.name}
        _save_manifest(cache, manifest)
    log(f"{project.requirement}: unpacking into {cache / 'repos' / project.name}")
    extract_sdist(archive, cache / "repos" / project.name)
    repos[project.name] = project.version
    _save_manifest(cache, manifest)


def fetch(
    cache: Path,
    *,
    projects: Sequence[Project] = PROJECTS,
    tasks_per_repo: dict[Kind, int] | None = None,
    downloader: Downloader = pip_download,
    log: Log = print,
) -> dict[Kind, Path]:
    """Make sure every project is extracted and every task file is current; returns the task
    files by kind. Steps already done with the same pins and settings are skipped."""
    counts = {**DEFAULT_TASKS, **(tasks_per_repo or {})}
    for kind, n in counts.items():
        if n < 1:
            raise DevSuiteError(f"tasks per repository for {kind} must be at least 1, got {n}")
    cache = Path(cache).expanduser()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DevSuiteError(f"cannot create cache directory {cache}: {exc}") from exc
    manifest = _load_manifest(cache)
    for project in projects:
        _fetch_project(project, cache, manifest, downloader, log)
    outputs: dict[Kind, Path] = {}
    for kind in KINDS:
        out = cache / "tasks" / f"{kind}.jsonl"
        outputs[kind] = out
        spec = {
            "n": counts[kind],
            "seed": SEED,
            "context_tokens": DEFAULT_CONTEXT_TOKENS,
            "builder": BUILDER_VERSION,
            "repos": {p.name: p.version for p in projects},
        }
        if manifest.get("tasks", {}).get(kind) == spec and out.is_file():
            log(f"{out}: up to date")
            continue
        tasks: list[Task] = []
        for project in projects:
            made = make_benchmark(
                cache / "repos" / project.name, kind, counts[kind], SEED, repo_name=project.name
            )
            log(f"{project.name}: {len(made)} {kind} tasks")
            tasks.extend(made)
        write_tasks(out, tasks)
        manifest.setdefault("tasks", {})[kind] = spec
        _save_manifest(cache, manifest)
        log(f"{out}: {len(tasks)} tasks")
    return outputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="devsuite_command", required=True, metavar="ACTION")
    summary = "Download, unpack and build the task files; steps already done are skipped."
    p = sub.add_parser("fetch", help=summary, description=summary)
    p.add_argument("--cache", type=Path, default=None, help=f"cache directory ({default_cache()})")
    p.add_argument("--n-line", type=int, default=DEFAULT_TASKS["line"], help="line tasks per repo")
    p.add_argument("--n-api", type=int, default=DEFAULT_TASKS["api"], help="API tasks per repo")
    p.set_defaults(_devsuite_run=_run_fetch)

    summary = "Evaluate methods on the fetched suite and write the comparison table."
    r = sub.add_parser("run", help=summary, description=summary)
    r.add_argument("--cache", type=Path, default=None, help=f"cache directory ({default_cache()})")
    r.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
    r.add_argument(
        "--kind", choices=(*KINDS, "both"), default="both", help="task kind (default both)"
    )
    r.add_argument("--limit-per-repo", type=int, help="only the first N tasks per repository")
    add_run_arguments(r)
    r.set_defaults(_devsuite_run=_run_suite)


def run(args: argparse.Namespace) -> int:
    return int(args._devsuite_run(args))


def _run_fetch(args: argparse.Namespace) -> int:
    cache = args.cache or default_cache()
    outputs = fetch(cache, tasks_per_repo={"line": args.n_line, "api": args.n_api})
    print(f"repositories: {Path(cache).expanduser() / 'repos'}")
    for kind, path in outputs.items():
        print(f"{kind} tasks: {path}")
    return 0


def prepared_suite(cache: Path, kinds: Sequence[Kind]) -> tuple[Path, dict[Kind, Path]]:
    """The fetched repositories and task files; an error says to fetch when any is missing."""
    cache = Path(cache).expanduser()
    repos = cache / "repos"
    tasks = {kind: cache / "tasks" / f"{kind}.jsonl" for kind in kinds}
    missing = [p for p in (repos, *tasks.values()) if not p.exists()]
    if missing:
        raise DevSuiteError(
            f"the development suite is not prepared in {cache} ({missing[0]} is missing):"
            " run `repomem eval devsuite fetch` first"
        )
    return repos, tasks


def _run_suite(args: argparse.Namespace) -> int:
    from repomem_eval.compare import (
        Run,
        comparison_rows,
        curve_plot,
        curve_table,
        markdown_table,
    )
    from repomem_eval.runner import run_repoeval

    kinds: tuple[Kind, ...] = KINDS if args.kind == "both" else (args.kind,)
    repos, task_files = prepared_suite(args.cache or default_cache(), kinds)
    if args.index_cache is None:
        args.index_cache = args.out / "index"
    runs = []
    for kind in kinds:
        options = run_options(
            args,
            tasks=task_files[kind],
            repos=repos,
            out=args.out / kind,
            mode=kind,
            limit_per_repo=args.limit_per_repo,
        )
        data = run_repoeval(options)
        runs.append(Run(kind, data["methods"], data["config"]))
    table = "\n".join(
        [
            "# Development suite",
            "",
            markdown_table(comparison_rows(runs)),
            "",
            "## Per repository",
            "",
            markdown_table(comparison_rows(runs, per_repo=True), per_repo=True),
            "",
        ]
    )
    curve = curve_table(runs)
    if curve:
        table += f"\n## Precision and coverage by confidence threshold\n\n{curve}\n"
    (args.out / "results.md").write_text(table, encoding="utf-8")
    print(table)
    plotted = curve_plot(runs, args.out / PLOT_FILE)
    if plotted:
        print(plotted, file=sys.stderr)
    return 0
