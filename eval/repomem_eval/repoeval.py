"""``repomem eval repoeval``: run RepoEval (or any task file in its format) for some methods.

Reads the benchmark's own files: ``--tasks`` (JSON lines with ``prompt`` and ``metadata``) and
``--repos`` (the directory holding ``<fpath_tuple...>``). Writes to ``--out``:
``results.json``, ``results.md``, ``predictions-<method>.jsonl``, the run's settings
(``run.json``) and, unless ``--index-cache`` says otherwise, the indexes (``index/<repo>``).
Running the same command again resumes: finished tasks are not recomputed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repomem.commands import add_backend_arguments, backend_overrides
from repomem_eval.methods import METHODS, PAPER_ALPHA, TASK_MODES, methods_named

if TYPE_CHECKING:
    from repomem_eval.runner import RunOptions

NAME = "repoeval"
HELP = (
    "Evaluate completion methods on RepoEval-format tasks (EM, ES, hit@k, the context the"
    " prompts show, time per task)."
)


def add_run_arguments(
    parser: argparse.ArgumentParser, default_methods: str = f"all of {', '.join(METHODS)}"
) -> None:
    """Flags shared with ``devsuite run``: methods (``default_methods`` says which run without
    ``--method``), backend, retrieval and batching."""
    parser.add_argument(
        "--method",
        action="append",
        metavar="METHOD",
        help=f"method to run, repeatable (default: {default_methods})",
    )
    add_backend_arguments(parser)
    parser.add_argument("--context-window", type=int, help="model context window in tokens")
    parser.add_argument("--k", type=int, help="fragments retrieved per iteration (default 10)")
    parser.add_argument(
        "--alpha",
        type=float,
        help=f"FragRel weight of the relation-aware methods (default {PAPER_ALPHA}, the paper's)",
    )
    parser.add_argument(
        "--iterations", type=int, help="rounds of the iterative methods (default 2)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="tasks per batched generation (default 64)"
    )
    parser.add_argument(
        "--index-cache",
        type=Path,
        metavar="DIR",
        help="where repository indexes are kept (default OUT_DIR/index)",
    )


def run_options(
    args: argparse.Namespace,
    *,
    tasks: Path,
    repos: Path,
    out: Path,
    mode: str,
    limit: int | None = None,
    limit_per_repo: int | None = None,
) -> RunOptions:
    """Options for one run from the shared flags; settings are validated here."""
    # Imported here: command modules are imported for `repomem --help`, which must stay fast.
    from repomem.settings import load_settings
    from repomem_eval.runner import RunOptions

    settings = load_settings(
        None,
        overrides={
            "backend": {**backend_overrides(args), "context_window": args.context_window},
            # the relation-aware methods run with FragRel's own alpha, whatever the product's
            "completion": {
                "k": args.k,
                "alpha": PAPER_ALPHA if args.alpha is None else args.alpha,
                "iterations": args.iterations,
            },
        },
    )
    return RunOptions(
        tasks_path=tasks,
        repos_dir=repos,
        out_dir=out,
        methods=methods_named(args.method),
        settings=settings,
        mode=mode,
        limit=limit,
        limit_per_repo=limit_per_repo,
        batch_size=args.batch_size,
        index_cache=args.index_cache,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", type=Path, required=True, metavar="TASKS.jsonl")
    parser.add_argument("--repos", type=Path, required=True, metavar="REPOS_DIR")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
    parser.add_argument(
        "--mode",
        default="auto",
        help=f"{' | '.join(TASK_MODES)}; auto (default) completes a task in api mode when its"
        " ground truth spans lines, else in line mode",
    )
    parser.add_argument("--limit", type=int, help="evaluate only the first N tasks")
    parser.add_argument("--limit-per-repo", type=int, help="only the first N tasks per repository")
    add_run_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from repomem_eval.runner import run_repoeval

    options = run_options(
        args,
        tasks=args.tasks,
        repos=args.repos,
        out=args.out,
        mode=args.mode,
        limit=args.limit,
        limit_per_repo=args.limit_per_repo,
    )
    run_repoeval(options)
    print((options.out_dir / "results.md").read_text(encoding="utf-8"))
    return 0
