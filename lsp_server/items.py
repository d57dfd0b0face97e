"""LSP completion items for a suggestion, saying which files its context came from.

A completion item replaces the word before the cursor (or, when the cursor does not follow a
word, the line's text after its indentation) by that text plus the suggestion, so that editors
filter and rank it by what the user typed. Inline completion items insert the suggestion at the
cursor. Both carry the ``repomem.accepted`` command, which editors run when the user accepts the
item; its title names the source files.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lsprotocol import types

from lsp_server.suggestion_cache import Suggestion

ACCEPTED_COMMAND = "repomem.accepted"
LABEL_CHARS = 80
SOURCES_IN_DETAIL = 3

_WORD_TAIL = re.compile(r"\w+$")


def replaced_prefix(line_prefix: str) -> str:
    """The part of the line before the cursor that a completion item replaces."""
    word = _WORD_TAIL.search(line_prefix)
    if word is not None:
        return word.group()
    return line_prefix.lstrip()


def sources_text(suggestion: Suggestion, limit: int | None = None) -> str:
    sources = suggestion.sources if limit is None else suggestion.sources[:limit]
    more = len(suggestion.sources) - len(sources)
    text = ", ".join(sources) + (f" and {more} more" if more > 0 else "")
    return text or "the current file only"


def accepted_command(uri: str, suggestion: Suggestion) -> types.Command:
    return types.Command(
        title=f"repomem: context from {sources_text(suggestion, SOURCES_IN_DETAIL)}",
        command=ACCEPTED_COMMAND,
        arguments=[{"uri": uri, "sources": list(suggestion.sources)}],
    )


def completion_item(
    uri: str,
    position: types.Position,
    line_prefix: str,
    suggestion: Suggestion,
    *,
    units: Callable[[str], int],
    markdown: bool,
    language: str = "",
) -> types.CompletionItem:
    """The item for ``suggestion`` at ``position`` (client units; ``units`` counts them)."""
    replaced = replaced_prefix(line_prefix)
    start = types.Position(position.line, position.character - units(replaced))
    new_text = replaced + suggestion.text
    label = new_text.strip()
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1] + "…"
    cached = " (cached)" if suggestion.cached else ""
    sources = sources_text(suggestion, SOURCES_IN_DETAIL)
    detail = f"repomem{cached} · {suggestion.backend} · from {sources}"
    return types.CompletionItem(
        label=label,
        kind=types.CompletionItemKind.Text,
        detail=detail,
        documentation=_documentation(line_prefix, suggestion, markdown, language),
        filter_text=new_text,
        sort_text="0",
        preselect=True,
        insert_text_format=types.InsertTextFormat.PlainText,
        text_edit=types.TextEdit(range=types.Range(start, position), new_text=new_text),
        command=accepted_command(uri, suggestion),
    )


def inline_item(
    uri: str, position: types.Position, suggestion: Suggestion
) -> types.InlineCompletionItem:
    return types.InlineCompletionItem(
        insert_text=suggestion.text,
        range=types.Range(position, position),
        command=accepted_command(uri, suggestion),
    )


def _documentation(
    line_prefix: str, suggestion: Suggestion, markdown: bool, language: str
) -> types.MarkupContent:
    line = line_prefix + suggestion.text
    if not markdown:
        sources = "\n".join(f"  {path}" for path in suggestion.sources) or "  (none)"
        cards = "".join(f"\n  {d}" for d in suggestion.definitions)
        defined = f"\n\nDefinitions shown:{cards}" if cards else ""
        return types.MarkupContent(
            kind=types.MarkupKind.PlainText,
            value=f"{line.strip()}\n\nContext from:\n{sources}{defined}",
        )
    sources = "\n".join(f"- `{path}`" for path in suggestion.sources) or "- (none)"
    cards = "".join(f"\n- {d}" for d in suggestion.definitions)
    defined = f"\n\nDefinitions shown:\n{cards}" if cards else ""
    return types.MarkupContent(
        kind=types.MarkupKind.Markdown,
        value=f"```{language}\n{line}\n```\n\nContext from:\n\n{sources}{defined}",
    )
