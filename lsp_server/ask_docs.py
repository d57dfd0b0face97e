"""``repomem.ask``: a question answered from a folder's doc memory, as ``repomem ask`` answers
it, waiting for the memory where the question comes before it is read."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from lsp_server.folders import Folder
from lsp_server.status import Progress
from repomem.docmem.answer import render
from repomem.docmem.memory import DocMemory
from repomem.docmem.names import ALL_FORMS, STRATEGIES
from repomem.docmem.strategies import AskError

ASK_COMMAND = "repomem.ask"
#: how long ``repomem.ask`` waits for the doc memory (indexing, then reading the docs)
DOCS_WAIT_S = 60.0


def ask_arguments(args: tuple[Any, ...]) -> tuple[str, str | None, str, Any]:
    """The command's arguments ``[question]`` or ``[question, {"strategy"?, "form"?,
    "folder"?}]``: the question, strategy, form and folder."""
    values = list(args)
    options = values[1] if len(values) == 2 else {}
    if (
        not values
        or len(values) > 2
        or not isinstance(values[0], str)
        or not values[0].strip()
        or not isinstance(options, dict)
        or set(options) - {"strategy", "form", "folder"}
    ):
        raise JsonRpcInvalidParams(
            f"{ASK_COMMAND} expects [question] or [question, {{strategy?, form?, folder?}}],"
            f" got {values!r}"
        )
    form = options.get("form", "chunk")
    strategy = options.get("strategy")
    if strategy not in (*STRATEGIES, None) or form not in ALL_FORMS:
        raise JsonRpcInvalidParams(
            f"{ASK_COMMAND}: strategy must be one of {', '.join(STRATEGIES)} and form one of"
            f" {', '.join(ALL_FORMS)}, got {strategy!r} and {form!r}"
        )
    return values[0], strategy, form, options.get("folder")


async def answer(
    folder: Folder, question: str, strategy: str | None, form: str, progress: Progress
) -> dict[str, Any]:
    """The answer with its ``path:line`` sources, and the text ``repomem ask`` prints."""
    memory = folder.index.docs.memory
    if memory is None:
        memory = await _wait_for_docs(folder, progress)
    if memory is None:
        raise JsonRpcInternalError(f"{ASK_COMMAND}: {_no_docs_reason(folder)}")
    hold = folder.index.asking()
    await asyncio.to_thread(hold.__enter__)
    try:
        result = await folder.completer.ask(memory, question, strategy, form)
    except AskError as exc:
        raise JsonRpcInvalidParams(f"{ASK_COMMAND}: {exc}") from None
    finally:
        hold.__exit__(None, None, None)
    return {**result.to_dict(), "text": render(result), "root": str(folder.root)}


async def _wait_for_docs(folder: Folder, progress: Progress) -> DocMemory | None:
    """The doc memory once the index and the docs are read, for a question asked before:
    the user cannot know when that is. Waits at most ``DOCS_WAIT_S``, with a progress
    bar where the client shows them."""
    if not folder.index.docs_pending():
        return folder.index.docs.memory
    token = await progress.create("repomem-ask")
    stage = None
    deadline = time.monotonic() + DOCS_WAIT_S
    try:
        while folder.index.docs_pending() and (left := deadline - time.monotonic()) > 0:
            now = "indexing" if folder.index.state == "indexing" else "reading the docs"
            if token is not None and now != stage:
                title = "repomem: waiting for the doc memory" if stage is None else None
                progress.show(token, now, title)
                stage = now
            await asyncio.to_thread(folder.index.wait_for_docs, min(left, 0.5))
    finally:
        if token is not None and stage is not None:
            progress.close(token)
    return folder.index.docs.memory


def _no_docs_reason(folder: Folder) -> str:
    """Why no doc memory answers a question."""
    if folder.index.docs.state == "none":
        return "the repository has no docs to answer from"
    if folder.index.docs.state == "failed":
        return "the doc memory could not be opened (see the log)"
    if folder.index.docs_pending():
        return (
            f"the doc memory is still being read after {DOCS_WAIT_S:.0f} s; ask again once"
            " its progress ends"
        )
    if folder.root is None:
        return "no workspace folder is open, so there are no docs to answer from"
    return "there is no index to read the docs from (indexing failed; see the log)"
