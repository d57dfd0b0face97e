"""The configured backend as a text generator for the memory builders and retrieval loops.

The built-in backend has no language model, so it is never prompted: ``available`` is False
and every loop takes its extractive path instead (and says so). Prompts are fitted to the
model's context window with its own tokenizer: the passage part loses whole lines from its end
until prompt and answer fit (in a window smaller than the instructions, the instructions lose
their first lines), and the answer gets what the prompt leaves of the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from repomem.completion.backends.base import Backend, GenerationRequest
from repomem.completion.backends.builtin import BuiltinBackend

# Requests sent to the backend at once: enough to keep a batched engine busy, few enough that
# a slow CPU model reports progress between batches.
BATCH = 8
# Tokens kept free beyond the answer budget: per-piece counts can undercount the joined text.
_MARGIN = 8

EXTRACTIVE = "extractive"


class TextModel:
    """Prompts in, texts out; ``calls`` counts the prompts sent (for reports and tests)."""

    def __init__(self, backend: Backend | None) -> None:
        self.backend = backend
        self.available = backend is not None and not isinstance(backend, BuiltinBackend)
        self.calls = 0
        if self.available and backend is not None:
            model = getattr(backend, "model_name", None) or getattr(backend, "model", None)
            self.name = f"{backend.name}:{model}" if model else backend.name
        else:
            self.name = EXTRACTIVE

    async def generate(
        self, prompts: Sequence[str], *, max_tokens: int, stop: Sequence[str] = ()
    ) -> list[str]:
        """One completion per prompt (empty strings when no model is available)."""
        if not self.available or self.backend is None:
            return ["" for _ in prompts]
        out: list[str] = []
        window = self.backend.context_window
        for start in range(0, len(prompts), BATCH):
            batch = prompts[start : start + BATCH]
            requests = [
                GenerationRequest(
                    prompt=p,
                    stop=tuple(stop),
                    # whatever the prompt leaves of the window, never more than asked
                    max_tokens=max(
                        1, min(max_tokens, window - self.backend.count_tokens(p) - _MARGIN)
                    ),
                )
                for p in batch
            ]
            out.extend(await self.backend.complete_batch(requests))
            self.calls += len(batch)
        return out

    def fit(self, head: str, passage: str, tail: str, *, max_tokens: int) -> str:
        """``head + passage + tail`` with the passage shortened (whole lines from its end)
        until the prompt leaves ``max_tokens`` free in the context window (at most half of
        it, so that a large answer budget cannot leave no room for the prompt)."""
        if self.backend is None:
            return head + passage + tail
        count = self.backend.count_tokens
        window = self.backend.context_window
        room = window - min(max_tokens, window // 2) - _MARGIN
        if count(head + passage + tail) <= room:
            return head + passage + tail
        if count(head + tail) > room:  # a window smaller than the instructions themselves
            return _keep_end(head, room - count(tail), count) + tail
        lines = passage.split("\n")
        lo, hi = 0, len(lines)
        while lo < hi:  # the most lines that fit
            mid = (lo + hi + 1) // 2
            if count(head + "\n".join(lines[:mid]) + tail) <= room:
                lo = mid
            else:
                hi = mid - 1
        kept = "\n".join(lines[:lo])
        if lo == 0 and lines:  # not one whole line fits: keep what fits of the first
            first = lines[0]
            lo_c, hi_c = 0, len(first)
            while lo_c < hi_c:
                mid = (lo_c + hi_c + 1) // 2
                if count(head + first[:mid] + tail) <= room:
                    lo_c = mid
                else:
                    hi_c = mid - 1
            kept = first[:lo_c]
        return head + kept + tail

    async def complete(
        self, head: str, passage: str, tail: str, *, max_tokens: int, stop: Sequence[str] = ()
    ) -> str:
        """One completion of the prompt ``fit`` makes of ``head``, ``passage`` and ``tail``."""
        prompt = self.fit(head, passage, tail, max_tokens=max_tokens)
        return (await self.generate([prompt], max_tokens=max_tokens, stop=stop))[0]


def _keep_end(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest end of ``text`` within ``budget`` tokens, in whole lines (the lines
    nearest the passage and the question)."""
    lines = text.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi:  # the fewest lines to drop
        mid = (lo + hi) // 2
        if count("\n".join(lines[mid:])) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return "\n".join(lines[lo:])
