"""The one interface every completion backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repomem.errors import RepomemError

if TYPE_CHECKING:
    # for annotations only: importing the index loads numba, which a model engine's spawned
    # workers (they import the script that started them) must not initialise
    from repomem.core import RetrievedFragment
    from repomem.index.occurrences import Occurrence


class BackendError(RepomemError):
    """A backend could not produce a completion; the message names the setting to fix."""


@dataclass(frozen=True)
class GenerationRequest:
    """One completion to generate.

    Model backends read ``prompt``; the built-in backend, which has no model, reads the
    structured context (``left_context``, ``right_context``, ``fragments``) the prompt was
    built from, and the repository's ``occurrences`` of the context's end when it asks for
    them (``Backend.reads_occurrences``). ``language``: the cursor file's (None: unknown),
    which the built-in backend's confidence is calibrated by.
    """

    prompt: str
    stop: tuple[str, ...] = ()
    max_tokens: int = 64
    left_context: str = ""
    right_context: str = ""
    fragments: tuple[RetrievedFragment, ...] = ()
    multiline: bool = False
    occurrences: tuple[Occurrence, ...] = ()
    language: str | None = None


@dataclass(frozen=True)
class Generation:
    """A backend's text and how sure it is of it, from 0 to 1 (None: it does not say)."""

    text: str
    confidence: float | None = None


class Backend(ABC):
    """A completion model. Implementations are async and take batches."""

    name: str = "backend"
    #: the model's context window in tokens; prompts are budgeted against it
    context_window: int = 4096
    #: fill-in-the-middle template the model was trained with (see
    #: ``repomem.completion.prompt``), or None
    fim_style: str | None = None
    #: whether requests should carry the repository's occurrences of the context's end
    reads_occurrences: bool = False
    #: whether :meth:`stream` gives the text in pieces as the model writes them
    streams: bool = False

    @abstractmethod
    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """One completion per request, in order."""

    async def generate_batch(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """``complete_batch`` with each text's confidence, for a backend that estimates one."""
        return [Generation(text) for text in await self.complete_batch(requests)]

    async def complete(self, request: GenerationRequest) -> str:
        return (await self.complete_batch([request]))[0]

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        """The completion in pieces as the model writes them, so that an editor can show a
        line before the model has finished the next ones; a backend that cannot stream gives
        the whole text as one piece."""
        yield await self.complete(request)

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes in this model's own tokenizer."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or engines."""
