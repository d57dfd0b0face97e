"""A stand-in for a model's tokenizer, so that prompt budgets can be checked by hand."""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


@dataclass
class FakeModel:
    """Counts words, punctuation characters and whitespace runs as tokens."""

    context_window: int = 4096
    fim_style: str | None = None

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))
