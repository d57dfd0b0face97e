"""``repomem eval make-benchmark``: RepoEval-style line and API tasks from any repository.

Follows RepoCoder's construction (``make_dataset/random_benchmark.py``, ``api_benchmark.py``):

- line tasks: a random code line (not blank, not comment-only or docstring, not the first line,
  and the line before it not blank); no two tasks share the same stripped line text;
- API tasks: a random statement that begins a line with a call of a function or class the
  repository defines (see ``api_calls``); the ground truth is the whole statement.

The prompt is the file's lines before the hole, trimmed from the top to ``context_tokens``
tokens. Tokens are counted without a model tokenizer: each run of word characters and each
other non-blank character is one token (``\\w+|[^\\w\\s]``), which for code is close to the
BPE counts of code models. Whole lines are kept, so ``context_start_lineno`` (0-based) is the
first line the prompt shows. The same repository, kind, ``n`` and seed give the same tasks.
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from repomem_eval.api_calls import find_api_holes
from repomem_eval.code_langs import FAMILIES
from repomem_eval.sources import BenchmarkError, SourceFile, load_source_files
from repomem_eval.tasks import Task, write_tasks

NAME = "make-benchmark"
HELP = "Build RepoEval-style line or API completion tasks from a repository."

Kind = Literal["line", "api"]
KINDS: tuple[Kind, ...] = ("line", "api")
DEFAULT_CONTEXT_TOKENS = 2000
# Bumped whenever the construction changes, so that cached benchmarks get rebuilt.
BUILDER_VERSION = 2
_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """The model-free token count used for the prompt budget."""
    return len(_TOKEN.findall(text))


def trim_context(lines: Sequence[str], budget: int) -> tuple[list[str], int]:
    """The longest tail of ``lines`` within ``budget`` tokens, and the index of its first line."""
    start = len(lines)
    used = 0
    while start > 0:
        cost = count_tokens(lines[start - 1])
        if used + cost > budget:
            break
        used += cost
        start -= 1
    return list(lines[start:]), start


def _line_candidates(files: Sequence[SourceFile]) -> list[tuple[SourceFile, int, int]]:
    return [
        (f, row, row)
        for f in files
        for row in range(1, len(f.lines))
        if f.lines[row - 1].strip() and f.is_code_line(row)
    ]


def _api_candidates(files: Sequence[SourceFile]) -> list[tuple[SourceFile, int, int]]:
    return [(h.file, h.start, h.end) for h in find_api_holes(files)]


def make_benchmark(
    repo_dir: Path,
    kind: Kind,
    n: int,
    seed: int,
    *,
    repo_name: str | None = None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    language: str = "python",
) -> list[Task]:
    """Up to ``n`` tasks of ``kind`` from the files of ``language`` (a ``code_langs.FAMILIES``
    key: TypeScript takes ``.ts``, ``.tsx`` and ``.js`` files) in ``repo_dir``.

    ``fpath_tuple`` starts with ``repo_name`` (default: the directory's name), so the tasks
    resolve against the directory that holds the repository under that name.
    """
    if kind not in KINDS:
        raise BenchmarkError(f"unknown task kind {kind!r}; choose one of {', '.join(KINDS)}")
    if n < 1:
        raise BenchmarkError(f"--n must be at least 1, got {n}")
    if context_tokens < 1:
        raise BenchmarkError(f"--context-tokens must be at least 1, got {context_tokens}")
    if language not in FAMILIES:
        raise BenchmarkError(f"unknown language {language!r}; choose one of {', '.join(FAMILIES)}")
    repo_dir = Path(repo_dir)
    name = repo_name or repo_dir.resolve().name
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise BenchmarkError(f"repository name {name!r} must be a plain directory name")
    files = load_source_files(repo_dir, FAMILIES[language])
    candidates = _line_candidates(files) if kind == "line" else _api_candidates(files)
    random.Random(seed).shuffle(candidates)
    tasks: list[Task] = []
    chosen: set[str] = set()
    for f, start, end in candidates:
        ground_truth = "\n".join(f.lines[start : end + 1])
        key = "\n".join(line.strip() for line in f.lines[start : end + 1])
        if key in chosen:
            continue
        context, first = trim_context(f.lines[:start], context_tokens)
        if not context:
            continue
        chosen.add(key)
        tasks.append(
            Task(
                prompt="\n".join(context),
                task_id=f"{name}/{len(tasks)}",
                ground_truth=ground_truth,
                fpath_tuple=(name, *f.parts),
                context_start_lineno=first,
                line_no=start,
            )
        )
        if len(tasks) == n:
            break
    return tasks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=Path, required=True, metavar="DIR", help="repository")
    parser.add_argument("--kind", choices=KINDS, default="line", help="task kind (default line)")
    parser.add_argument("--n", type=int, default=200, help="number of tasks (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--language",
        choices=tuple(FAMILIES),
        default="python",
        help="the language whose files hold the tasks (default python)",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="TASKS.jsonl")
    parser.add_argument(
        "--repo-name", help="repository name in task ids and paths (default: the directory name)"
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=DEFAULT_CONTEXT_TOKENS,
        help=f"prompt budget in tokens (default {DEFAULT_CONTEXT_TOKENS})",
    )


def run(args: argparse.Namespace) -> int:
    tasks = make_benchmark(
        args.repo,
        args.kind,
        args.n,
        args.seed,
        repo_name=args.repo_name,
        context_tokens=args.context_tokens,
        language=args.language,
    )
    if not tasks:
        raise BenchmarkError(f"no {args.kind} tasks could be made from {args.repo}")
    write_tasks(args.out, tasks)
    print(f"wrote {len(tasks)} {args.kind} tasks to {args.out}")
    return 0
