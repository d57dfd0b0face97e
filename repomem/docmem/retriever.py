"""Doc segments in code completion: a retriever that merges them with code fragments.

:meth:`DocMemory.retrieve_for_code` scores doc segments and code fragments together, so the
doc segments it returns carry scores on the code fragments' scale; merging by ``s_rel`` lets
a README line that documents a configuration key or a command-line flag take a place in the
prompt when it ranks, within the same fragment count and token budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repomem.context.retriever import CodeRetriever
from repomem.core import Exclusion, RetrievedFragment

if TYPE_CHECKING:
    from repomem.docmem.memory import DocMemory
    from repomem.index.repo import RepoIndex


def merge_ranked(
    code: list[RetrievedFragment], docs: list[RetrievedFragment], k: int
) -> list[RetrievedFragment]:
    """Code and doc fragments in one list by ``s_rel``, best first, at most ``k``; a tie
    keeps the code fragment first."""
    return sorted([*code, *docs], key=lambda f: -f.s_rel)[:k]


class DocAwareRetriever(CodeRetriever):
    """The code retriever over an index, its fragments merged with its doc memory's."""

    def __init__(self, index: RepoIndex, memory: DocMemory) -> None:
        super().__init__(index)
        self.memory = memory

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        code = self.index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
        docs = self.memory.retrieve_for_code(
            query, k, alpha=alpha, exclusion=exclusion, retrieved=code
        )
        return merge_ranked(code, docs, k)
