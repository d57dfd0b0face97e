"""The data types every stage passes along: where a fragment stands, what retrieval returns,
and which lines it must not see."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where a fragment's text stands: repository-relative posix path, 0-based lines
    ``[start, end)``."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class RetrievedFragment:
    """One retrieval result, with the scores that explain its rank.

    ``text`` is the matched window; ``shown`` is what a prompt should show: the window moved
    forward by the stride (RepoCoder), since what follows similar code is what helps. A window
    lifted because it calls a definition the cursor's code uses names it in ``usage_of``
    (``repomem.context.usages``); it shows itself, the call included. ``shown_start`` is the
    0-based line of ``locations[0]``'s file where ``shown`` begins (None: not known), so
    that shown windows of one file that overlap can share a block. ``recent`` is ``edit`` or
    ``view`` for a range the user just changed or looked at (``repomem.context.recent``).
    """

    fragment_id: int
    locations: tuple[Location, ...]
    text: str
    shown: str
    s_ind: float
    s_env: float
    s_rel: float
    usage_of: str = ""
    shown_start: int | None = None
    recent: str = ""

    @property
    def path(self) -> str:
        return self.locations[0].path


@dataclass(frozen=True)
class Exclusion:
    """Lines retrieval must not see: a location is hidden when it is in ``path`` and overlaps
    ``[start, end)``; a fragment is excluded when *all* its locations are hidden.

    The editor hides the context around the cursor (the model sees it anyway); the RepoEval
    protocol hides everything of the task's file after ``context_start_lineno`` (``end`` left
    at its default), because the snapshot contains the answer.

    ``in_environment``: hidden fragments are still in other fragments' environment (Eq. 9).
    Where the index holds the user's buffer, they are code the model sees anyway, hidden only
    from retrieval, and leak nothing.
    """

    path: str
    start: int
    end: int = 2**62
    in_environment: bool = False

    @classmethod
    def around(cls, path: str, line: int, radius: int) -> Exclusion:
        """The lines within ``radius`` of a cursor on 0-based ``line``: the context the
        prompt shows anyway, which retrieval must not repeat."""
        return cls(path, max(0, line - radius), line + radius)

    def hides(self, loc: Location) -> bool:
        return loc.path == self.path and loc.end > self.start and loc.start < self.end

    def excludes(self, locations: tuple[Location, ...]) -> bool:
        return all(self.hides(loc) for loc in locations)
