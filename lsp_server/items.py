"""LSP completion items for a suggestion, saying which files its context came from.

A completion item replaces the word before the cursor (or, when the cursor does not follow a
word, the line's text after its indentation) by that text plus the suggestion, so that editors
filter and rank it by what the user typed. Inline completion items insert the suggestion at the
cursor. Both carry the ``repomem.accepted`` command, which editors run when the user accepts the
item; its title names the source files.

In the middle of a line, both items follow :func:`fit_to_line`: a suggestion goes in before the
rest of the line only where the line stays whole, replaces the rest where it re-types it and
goes on, and is not offered otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types

from lsp_server.suggestion_cache import Suggestion

ACCEPTED_COMMAND = "repomem.accepted"
LABEL_CHARS = 80
SOURCES_IN_DETAIL = 3

_WORD_TAIL = re.compile(r"\w+$")
# What may follow the cursor for a suggestion to go in before it: closing brackets and quotes,
# then at most one `:`, `{`, `;` or `,` (GitHub Copilot's "middle of the line" rule).
_CLOSERS_ONLY = re.compile(r"\s*[)\]}>\"'`]*\s*[:{;,]?\s*")


@dataclass(frozen=True)
class Fit:
    """How a suggestion goes into its line: ``text`` inserted at the cursor, in place of the
    rest of the line when ``replaces_rest``."""

    text: str
    replaces_rest: bool = False


def fit_to_line(text: str, rest: str, *, before_rest: bool = False) -> Fit | None:
    """How the suggestion ``text`` goes in before ``rest``, the line's text after the cursor;
    None where it would leave the line broken.

    Inserted as it is when the rest is blank or only closing brackets, quotes and the like, or
    when the engine already cut it where it re-typed the rest (``before_rest``); without its end
    when that end re-types the rest; in place of the rest when it starts by re-typing it.
    """
    typed = rest.rstrip()
    if before_rest or _CLOSERS_ONLY.fullmatch(typed):
        return Fit(text)
    if text.endswith(typed):
        inserted = text[: -len(typed)]
        return Fit(inserted) if inserted.strip() else None
    if text.startswith(typed):
        return Fit(text, replaces_rest=True)
    return None


def rest_of_line(right: str) -> str:
    """The cursor line's text after the cursor, from the document's text after it."""
    end = right.find("\n")
    return (right if end < 0 else right[:end]).removesuffix("\r")


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
    rest: str,
    suggestion: Suggestion,
    *,
    units: Callable[[str], int],
    markdown: bool,
    language: str = "",
) -> types.CompletionItem | None:
    """The item for ``suggestion`` at ``position`` (client units; ``units`` counts them)
    between ``line_prefix`` and ``rest``; None where it does not fit the line."""
    fit = fit_to_line(suggestion.text, rest, before_rest=suggestion.before_rest)
    if fit is None:
        return None
    replaced = replaced_prefix(line_prefix)
    start = types.Position(position.line, position.character - units(replaced))
    new_text = replaced + fit.text
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
        documentation=_documentation(line_prefix, rest, fit, suggestion, markdown, language),
        filter_text=new_text,
        sort_text="0",
        preselect=True,
        insert_text_format=types.InsertTextFormat.PlainText,
        text_edit=types.TextEdit(
            range=types.Range(start, _end(position, rest, fit, units)), new_text=new_text
        ),
        command=accepted_command(uri, suggestion),
    )


def inline_item(
    uri: str,
    position: types.Position,
    rest: str,
    suggestion: Suggestion,
    *,
    units: Callable[[str], int],
) -> types.InlineCompletionItem | None:
    """The inline item for ``suggestion`` at ``position``, before ``rest``; None where it does
    not fit the line (the same rule as :func:`completion_item`)."""
    fit = fit_to_line(suggestion.text, rest, before_rest=suggestion.before_rest)
    if fit is None:
        return None
    return types.InlineCompletionItem(
        insert_text=fit.text,
        range=types.Range(position, _end(position, rest, fit, units)),
        command=accepted_command(uri, suggestion),
    )


def _end(
    position: types.Position, rest: str, fit: Fit, units: Callable[[str], int]
) -> types.Position:
    """Where an item's range ends: the cursor, or the end of the line it replaces to."""
    if not fit.replaces_rest:
        return position
    return types.Position(position.line, position.character + units(rest))


def _documentation(
    line_prefix: str,
    rest: str,
    fit: Fit,
    suggestion: Suggestion,
    markdown: bool,
    language: str,
) -> types.MarkupContent:
    line = line_prefix + fit.text + ("" if fit.replaces_rest else rest)
    if not markdown:
        sources = "\n".join(f"  {path}" for path in suggestion.sources) or "  (none)"
        cards = "".join(f"\n  {d}" for d in suggestion.definitions)
        defined = f"\n\nDefinitions shown:{cards}" if cards else ""
        ranges = "".join(f"\n  {r}" for r in suggestion.recent)
        recent = f"\n\nRecently edited or viewed:{ranges}" if ranges else ""
        return types.MarkupContent(
            kind=types.MarkupKind.PlainText,
            value=f"{line.strip()}\n\nContext from:\n{sources}{defined}{recent}",
        )
    sources = "\n".join(f"- `{path}`" for path in suggestion.sources) or "- (none)"
    cards = "".join(f"\n- {d}" for d in suggestion.definitions)
    defined = f"\n\nDefinitions shown:\n{cards}" if cards else ""
    ranges = "".join(f"\n- `{r}`" for r in suggestion.recent)
    recent = f"\n\nRecently edited or viewed:\n{ranges}" if ranges else ""
    return types.MarkupContent(
        kind=types.MarkupKind.Markdown,
        value=f"```{language}\n{line}\n```\n\nContext from:\n\n{sources}{defined}{recent}",
    )
