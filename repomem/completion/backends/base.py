"""The one interface every completion backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from repomem.context.scorer import RetrievedFragment
from repomem.errors import RepomemError


class BackendError(RepomemError):
    """A backend could not produce a completion; the message names the setting to fix."""


@dataclass(frozen=True)
class GenerationRequest:
    """One completion to generate.

    Model backends read ``prompt``; the built-in backend, which has no model, reads the
    structured context (``left_context``, ``right_context``, ``fragments``) the prompt was
    built from.
    """

    prompt: str
    stop: tuple[str, ...] = ()
    max_tokens: int = 64
    left_context: str = ""
    right_context: str = ""
    fragments: tuple[RetrievedFragment, ...] = ()
    multiline: bool = False


class Backend(ABC):
    """A completion model. Implementations are async and take batches."""

    name: str = "backend"
    #: the model's context window in tokens; prompts are budgeted against it
    context_window: int = 4096
    #: fill-in-the-middle template the model was trained with (see
    #: ``repomem.completion.prompt``), or None
    fim_style: str | None = None

    @abstractmethod
    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """One completion per request, in order."""

    async def complete(self, request: GenerationRequest) -> str:
        return (await self.complete_batch([request]))[0]

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes in this model's own tokenizer."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or engines."""
