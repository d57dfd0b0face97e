"""``repomem ask "QUESTION"``: answer a question about the repository from its docs.

The repository is the one the current directory (or ``--root``) is in; its code index is
loaded, or built on first use, and its doc memory (README, docs, module docstrings) opened or
updated for the documents that changed. With a language model backend the answer is written by
the model and cites its sources; with the built-in backend (no model) the best-matching
sources are printed instead, and the output says so. Every source is given as ``path:line``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from repomem.commands import (
    add_backend_arguments,
    backend_overrides,
    open_index,
    repository_settings,
)
from repomem.docmem.names import ALL_FORMS, LOOKUPS, STRATEGIES
from repomem.errors import RepomemError

if TYPE_CHECKING:
    from repomem.docmem.answer import AskResult
    from repomem.docmem.memory import DocMemory
    from repomem.docmem.model import TextModel

NAME = "ask"
HELP = "Answer a question about the repository from its docs, citing path:line."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", nargs="*", help="the question (quote it)")
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        help="single retrieval, model rerank, iterative query refinement, ReadAgent page"
        " look-up, QRMeM graph expansion, or iterative QA with fact extraction (default graph,"
        " the best on the doc-QA set; single for a --form other than chunk)",
    )
    parser.add_argument(
        "--form", choices=ALL_FORMS, default="chunk", help="memory form to retrieve (default chunk)"
    )
    parser.add_argument(
        "--lookup",
        choices=LOOKUPS,
        default="parallel",
        help="readagent: look pages up all at once or one at a time (default parallel)",
    )
    parser.add_argument("--k", type=int, default=5, help="sources to return (default 5)")
    add_backend_arguments(parser)
    parser.add_argument(
        "--embedding-model",
        metavar="DIR",
        help="local sentence-embedding model directory: adds the semantic relation"
        " (default: docmem.embedding_model)",
    )
    parser.add_argument(
        "--docs-only", action="store_true", help="leave code fragments out of the sources"
    )
    parser.add_argument("--root", help="the repository (default: the one around the cwd)")
    parser.add_argument(
        "--explain", action="store_true", help="also write the steps taken (to stderr)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON account")


def run(args: argparse.Namespace) -> int:
    from repomem.completion.backends.registry import create_backend
    from repomem.docmem.answer import render
    from repomem.docmem.memory import DocMemory
    from repomem.docmem.model import TextModel
    from repomem.workspace import find_root

    question = " ".join(" ".join(args.question).split())
    if not question:
        raise RepomemError('the question is empty: repomem ask "How do I ...?"')
    if args.k < 1:
        raise RepomemError(f"--k must be at least 1, got {args.k}")
    start = Path(args.root).expanduser() if args.root else Path.cwd()
    if not start.is_dir():
        raise RepomemError(f"--root {start} is not a directory")
    root = find_root(start)
    settings = repository_settings(
        root,
        overrides={
            "backend": backend_overrides(args),
            "docmem": {"embedding_model": args.embedding_model},
        },
    )
    index = open_index(root, settings.index, build=True)
    memory = DocMemory.open(index, settings.docmem)
    model = TextModel(create_backend(settings.backend))
    result = asyncio.run(_ask(memory, model, question, args))
    if args.explain:
        for step in result.steps:
            print(f"{step.action}: {step.detail}", file=sys.stderr)
    if args.json:
        print(json.dumps({"root": str(root), **result.to_dict()}, indent=2))
    else:
        print(render(result))
    return 0


async def _ask(
    memory: DocMemory, model: TextModel, question: str, args: argparse.Namespace
) -> AskResult:
    from repomem.docmem.strategies import ask

    try:
        return await ask(
            memory,
            question,
            model,
            strategy=args.strategy,
            form=args.form,
            k=args.k,
            lookup=args.lookup,
            code=not args.docs_only,
        )
    finally:
        if model.backend is not None:
            await model.backend.aclose()
