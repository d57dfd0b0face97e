"""The retriever protocol the completion engine reads an index through, and its
implementation over a code index.

The index finds fragments like the query (BM25, FragRel); the context modules find, in the
same index, the definitions the cursor's code uses (``definitions``), code calling them
(``usages``) and where the end of the left context reappears (``repomem.index.occurrences``).
The index knows nothing of them, so this is where the four meet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from repomem.context.definitions import DefinitionHit, find_definitions
from repomem.context.usages import find_usages
from repomem.core import Exclusion, RetrievedFragment
from repomem.index.occurrences import Occurrence, find_occurrences

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex


class Retriever(Protocol):
    """What the completion engine needs from an index (:class:`CodeRetriever` is one):
    fragments like the query, the definitions the cursor's code (and a draft) uses, code
    calling them, and where the end of the left context reappears in other files. Declared
    once, here; every retriever (the language server's, the eval's) subclasses it."""

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]: ...

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]: ...

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]: ...

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]: ...


class CodeRetriever(Retriever):
    """The retriever over one index."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        return self.index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        """Cards of the definitions the code before the cursor (and a first ``draft``) uses,
        ranked on the code graph."""
        return find_definitions(self.index, path, left_context, draft=draft, window=window)

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        """Lines of other files where the end of ``left_context`` may reappear, found through
        the BM25 postings: what the built-in backend copies from beyond the retrieved
        fragments."""
        return find_occurrences(self.index, path, left_context)

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None = None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]:
        """Up to ``k`` windows calling the definitions of ``hits`` (``repomem.context.usages``)."""
        return find_usages(
            self.index, query, path, hits, k=k, exclusion=exclusion, retrieved=retrieved
        )
