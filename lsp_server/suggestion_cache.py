"""Recent completions, so that repeating a request or typing along a suggestion costs no
model call.

An entry remembers where a suggestion was made: the document, a hash of everything before the
cursor and of everything after it. A later request in the same document whose text before the
cursor is that same text followed by the first characters of the suggestion (the user typed
them), with the same text after the cursor, is answered with the rest of the suggestion.
Entries hold hashes, not the document, so the cache stays small whatever the file size.

An entry also records the index ``epoch`` it was computed at: the number of index changes to
*other* files. Typing in the document itself does not invalidate it (that is what typing
along is), but an edit elsewhere that could change what retrieval finds does.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

DEFAULT_CAPACITY = 64


@dataclass(frozen=True)
class Suggestion:
    """A completion for the text at a cursor: what to insert, the repository files whose
    fragments the prompt showed, the backend that wrote it, and the definition cards the
    prompt showed (``path:line name``, and the name in the code that brought each).
    ``before_rest``: the engine cut the model's text where it re-typed the rest of the cursor's
    line, so the text is meant to go in before that rest. ``recent``: the ranges the user just
    edited or viewed that the prompt showed (``path:first-last (edited|viewed)``)."""

    text: str
    sources: tuple[str, ...] = ()
    backend: str = "builtin"
    cached: bool = False
    definitions: tuple[str, ...] = ()
    before_rest: bool = False
    recent: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Entry:
    uri: str
    left_len: int
    left_hash: int
    right_hash: int
    epoch: int
    suggestion: Suggestion


class SuggestionCache:
    """A least-recently-used set of suggestions (see the module doc)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, int, int, int], _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def put(self, uri: str, left: str, right: str, epoch: int, suggestion: Suggestion) -> None:
        if not suggestion.text:
            return
        entry = _Entry(uri, len(left), hash(left), hash(right), epoch, suggestion)
        key = (uri, entry.left_len, entry.left_hash, entry.right_hash)
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def get(self, uri: str, left: str, right: str, epoch: int) -> Suggestion | None:
        """The rest of a remembered suggestion the cursor is on, or None."""
        right_hash: int | None = None
        for key in reversed(self._entries):
            entry = self._entries[key]
            if entry.uri != uri or entry.epoch != epoch or entry.left_len > len(left):
                continue
            typed = left[entry.left_len :]
            text = entry.suggestion.text
            if len(typed) >= len(text) or not text.startswith(typed):
                continue
            if right_hash is None:
                right_hash = hash(right)
            if entry.right_hash != right_hash or hash(left[: entry.left_len]) != entry.left_hash:
                continue
            self._entries.move_to_end(key)
            return replace(entry.suggestion, text=text[len(typed) :], cached=True)
        return None
