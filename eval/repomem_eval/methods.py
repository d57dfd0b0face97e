"""The retrieval methods RepoEval results are reported for, side by side (DESIGN §4).

Each method is a choice of four things: whether fragments are retrieved at all, whether
retrieval iterates (RepoCoder), whether FragRel's relation-aware score is used (``alpha``) and
whether the prompt also shows definition cards of the names the cursor's code uses
(``repomem.context``; in RepoCoder's second iteration, also those of the first draft). The
oracle queries with the ground-truth window instead of the left context, as RepoCoder's ``gt``
windows do, so it bounds what better queries could bring; it scores with plain BM25.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repomem.errors import RepomemError

if TYPE_CHECKING:
    from repomem.config import CompletionConfig

# How a task is completed: one line, a whole (possibly multi-line) statement, or per task:
# ``api`` when the ground truth spans lines (scores cut predictions to the target's lines anyway).
TASK_MODES: tuple[str, ...] = ("auto", "line", "api")

# FragRel's alpha as the paper sets it: the relation-aware methods use it unless told otherwise
# (the product's own default, ``completion.alpha``, follows measurement: plain BM25).
PAPER_ALPHA = 0.5


class MethodError(RepomemError):
    """An unknown method name or a setting no method can run with."""


@dataclass(frozen=True)
class Method:
    name: str
    retrieves: bool
    iterative: bool
    relation_aware: bool
    oracle: bool = False
    definitions: bool = False

    def completion(
        self, base: CompletionConfig, *, alpha: float, iterations: int
    ) -> CompletionConfig:
        """``base`` with this method's number of iterations and relation weight; a method
        with the context engine's definitions keeps the base's cards, usages and merged
        blocks, the papers' methods get RepoCoder's prompt (none of them)."""
        return dataclasses.replace(
            base,
            iterations=iterations if self.iterative else 1,
            alpha=alpha if self.relation_aware else 0.0,
            definitions_share=base.definitions_share if self.definitions else 0.0,
            max_usages=base.max_usages if self.definitions else 0,
            merge_overlaps=base.merge_overlaps and self.definitions,
        )


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("infile", retrieves=False, iterative=False, relation_aware=False),
        Method("vanilla", retrieves=True, iterative=False, relation_aware=False),
        Method("fragrel", retrieves=True, iterative=False, relation_aware=True),
        Method("repocoder", retrieves=True, iterative=True, relation_aware=False),
        Method("repocoder-fragrel", retrieves=True, iterative=True, relation_aware=True),
        Method("oracle", retrieves=True, iterative=False, relation_aware=False, oracle=True),
        Method("graph", retrieves=True, iterative=False, relation_aware=False, definitions=True),
        Method(
            "repocoder-graph",
            retrieves=True,
            iterative=True,
            relation_aware=False,
            definitions=True,
        ),
    )
}


def methods_named(names: list[str] | tuple[str, ...] | None) -> tuple[Method, ...]:
    """The methods to run, in the order given (all of them when ``names`` is empty)."""
    if not names:
        return tuple(METHODS.values())
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise MethodError(f"unknown method {unknown[0]!r}: choose from {', '.join(METHODS)}")
    return tuple(METHODS[n] for n in dict.fromkeys(names))
