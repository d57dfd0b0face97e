"""``repomem complete FILE:LINE[:COL]``: one completion at a cursor, from the command line.

LINE and COL are 1-based. COL defaults to 1, the start of the line, so the whole line is
completed: the line's existing text and everything below it are the right context. The
repository is the nearest root above FILE (``repomem.workspace.find_root``); its index is
loaded, or built on first use. The file's text on disk is the buffer: if it changed since
indexing, the index is updated in memory for this run. Retrieval does not see the file's own
lines around the cursor (``completion.query_lines`` lines either side): the prompt shows them
anyway. A file the index leaves out as secret or ignored (``index.secret_patterns``,
``index.ignore_patterns``), too large or binary is refused with an error, so that its text
reaches no prompt.

Output: the completion on stdout (``--json``: a JSON account of every iteration instead);
``--explain`` writes to stderr, per iteration, what the prompt holds top to bottom (similar
code, code calling a definition, definition cards), its token counts, the completion and the
time spent; ``--explain-all`` also lists what was found and left out. A completion the
backend is not confident of (the built-in backend's confidence below
``completion.min_confidence``), or an empty one, is not printed: stderr says
so and the exit status is 1 (``--json`` still prints the account, with ``"answered": false``).
Errors exit with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import io
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
from repomem.errors import RepomemError
from repomem.settings import with_default
from repomem.workspace import check_cursor_line, parse_position

if TYPE_CHECKING:
    from repomem.completion.engine import CompletionEngine, CompletionResult
    from repomem.config import IndexConfig
    from repomem.context.retriever import Retriever
    from repomem.core import Exclusion
    from repomem.index.repo import RepoIndex
    from repomem.settings import Settings

NAME = "complete"
HELP = "Complete the code at FILE:LINE[:COL] with fragments retrieved from its repository."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "location",
        metavar="FILE:LINE[:COL]",
        help="the cursor: 1-based line and column (default column 1: complete the whole line)",
    )
    add_backend_arguments(parser)
    parser.add_argument(
        "--iterations",
        type=int,
        help="retrieve-then-generate rounds, RepoCoder: " + with_default("completion.iterations"),
    )
    parser.add_argument(
        "--alpha",
        type=float,
        help="FragRel relation weight, 0 is plain BM25: " + with_default("completion.alpha"),
    )
    parser.add_argument(
        "--k",
        type=int,
        help="fragments retrieved per iteration: " + with_default("completion.k"),
    )
    parser.add_argument(
        "--mode",
        choices=("line", "api"),
        default="line",
        help="line: the rest of the line; api: a whole statement, possibly several lines",
    )
    parser.add_argument(
        "--docs",
        action=argparse.BooleanOptionalAction,
        help="let segments of the repository's docs (README, docs/) compete for places in the"
        " prompt, e.g. to complete a documented config key or flag (default: completion.docs)",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also write what the prompt holds per iteration, labelled by channel, and its token"
        " counts (to stderr)",
    )
    parser.add_argument(
        "--typing",
        action="store_true",
        help="complete as while the line is being typed: the rest of the cursor's line is not"
        " there (without it, FILE:LINE:COL keeps that text as right context)",
    )
    parser.add_argument(
        "--explain-all",
        action="store_true",
        help="--explain, and list the fragments and definitions found but left out",
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON account instead of the plain text"
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: every command module is imported for `repomem --help`, which must stay fast.
    from repomem.completion.backends.registry import create_backend
    from repomem.completion.engine import CompletionEngine
    from repomem.context.retriever import CodeRetriever
    from repomem.core import Exclusion

    pos = parse_position(args.location)
    root, rel = pos.root, pos.path
    file_arg, line, column = pos.name, pos.line + 1, pos.column + 1
    settings = repository_settings(
        root,
        overrides={
            "backend": backend_overrides(args),
            "completion": {
                "iterations": args.iterations,
                "alpha": args.alpha,
                "k": args.k,
                "docs": args.docs,
            },
        },
    )
    text = _read(root, rel, file_arg, settings.index)
    left, right = split_at(text, line, column, file_arg)
    if args.typing:
        right = right[right.find("\n") :] if "\n" in right else ""
    exclusion = Exclusion.around(rel, line - 1, settings.completion.query_lines)
    backend = create_backend(settings.backend)
    index = open_index(root, settings.index, build=True)
    index.apply_buffer(rel, text)
    retriever = (
        _retriever(index, settings, asked=args.docs)
        if settings.completion.docs
        else CodeRetriever(index)
    )
    engine = CompletionEngine(retriever, backend, settings)
    result = asyncio.run(_complete(engine, rel, left, right, args.mode, exclusion))
    if args.explain or args.explain_all:
        from repomem.commands._explain import explain

        alpha = settings.completion.alpha
        explain(result, backend.context_window, alpha, sys.stderr, every=args.explain_all)
    threshold = settings.completion.min_confidence
    answered = result.confident(threshold)
    if args.json:
        account = {
            "file": rel,
            "line": line,
            "column": column,
            "mode": args.mode,
            "backend": backend.name,
            "answered": answered,
            **result.to_dict(),
        }
        print(json.dumps(account, indent=2))
    elif answered:
        print(result.text)
    elif not result.text:
        print(f"repomem: nothing to complete at {file_arg}:{line}", file=sys.stderr)
    else:
        print(
            f"repomem: nothing confident to complete at {file_arg}:{line} (confidence"
            f" {result.confidence:.2f} is below completion.min_confidence {threshold})",
            file=sys.stderr,
        )
    return 0 if answered else 1


def split_at(text: str, line: int, column: int, name: str) -> tuple[str, str]:
    """The text before and after the 1-based (line, column) cursor."""
    check_cursor_line(text, line, name)
    lines = text.split("\n")
    current = lines[line - 1]
    if column > len(current) + 1:
        raise RepomemError(
            f"{name}:{line}: column {column} is out of range (1 to {len(current) + 1})"
        )
    offset = sum(len(ln) + 1 for ln in lines[: line - 1]) + column - 1
    return text[:offset], text[offset:]


def _read(root: Path, rel: str, name: str, config: IndexConfig) -> str:
    """The file's text; an error for a file whose text must not reach a prompt (a secret,
    ignored, too large or binary file), as the index leaves it out."""
    from repomem.index.files import FileSkipped, check_prompt_text, skip_explanation

    try:
        with (root / rel).open("rb") as handle:
            data = handle.read(config.max_file_bytes + 1)
    except OSError as exc:
        raise RepomemError(f"{name}: cannot read: {exc.strerror}") from None
    try:
        check_prompt_text(root, rel, config, data)
    except FileSkipped as skip:
        raise RepomemError(
            f"{name} {skip_explanation(skip, config)}; repomem does not complete it"
        ) from None
    # as Path.read_text reads it: universal newlines, undecodable bytes replaced
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()


def _retriever(index: RepoIndex, settings: Settings, *, asked: bool | None) -> Retriever:
    """The index with its doc memory, or the index alone when the repository has no docs
    (said on stderr only when ``--docs`` asked for them: docs are on by default)."""
    from repomem.context.retriever import CodeRetriever
    from repomem.docmem.memory import DocMemory, NoDocs
    from repomem.docmem.retriever import DocAwareRetriever

    try:
        return DocAwareRetriever(index, DocMemory.open(index, settings.docmem))
    except NoDocs as exc:
        if asked:
            print(f"repomem: {exc}; completing from code only", file=sys.stderr)
        return CodeRetriever(index)


async def _complete(
    engine: CompletionEngine,
    rel: str,
    left: str,
    right: str,
    mode: str,
    exclusion: Exclusion,
) -> CompletionResult:
    try:
        return await engine.complete(rel, left, right, mode=mode, exclusion=exclusion)
    finally:
        await engine.backend.aclose()
