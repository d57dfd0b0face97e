"""Doc segments in code completion: a retriever that merges them with code fragments.

:meth:`DocMemory.retrieve_for_code` scores doc segments and code fragments together, so the
doc segments it returns carry scores on the code fragments' scale; merging by ``s_rel`` lets
a README line that documents a configuration key or a command-line flag take a place in the
prompt when it ranks, within the same fragment count and token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from repomem.context.definitions import find_definitions
from repomem.context.usages import find_usages
from repomem.core import Exclusion, RetrievedFragment
from repomem.index.occurrences import find_occurrences

if TYPE_CHECKING:
    from repomem.context.definitions import DefinitionHit
    from repomem.docmem.memory import DocMemory
    from repomem.index.occurrences import Occurrence
    from repomem.index.repo import RepoIndex


def merge_ranked(
    code: list[RetrievedFragment], docs: list[RetrievedFragment], k: int
) -> list[RetrievedFragment]:
    """Code and doc fragments in one list by ``s_rel``, best first, at most ``k``; a tie
    keeps the code fragment first."""
    return sorted([*code, *docs], key=lambda f: -f.s_rel)[:k]


class DocAwareRetriever:
    """The completion engine's retriever protocol over an index and its doc memory."""

    def __init__(self, index: RepoIndex, memory: DocMemory) -> None:
        self.index = index
        self.memory = memory

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        code = self.index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
        docs = self.memory.retrieve_for_code(query, k, alpha=alpha, exclusion=exclusion)
        return merge_ranked(code, docs, k)

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        return find_definitions(self.index, path, left_context, draft=draft, window=window)

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        return find_occurrences(self.index, path, left_context)

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]:
        return find_usages(
            self.index, query, path, hits, k=k, exclusion=exclusion, retrieved=retrieved
        )
