"""When a changed file is indexed: the debounce of typing, and the yield to completions.

A completion that arrives with a keystroke should not queue behind that keystroke's index
update (the update holds the index's lock for as long as it takes, and it competes for the
interpreter meanwhile). So a document being typed in is re-indexed once typing pauses for
``delay_s`` (or, during non-stop typing, every ``MAX_STALE_S``, right after a completion
finished, when the next keystroke is furthest away), and an update waits a little for
completions in progress (:meth:`UpdateSchedule.priority`). Files changed on disk are due at once.
The worker's other jobs that hold the lock (a tidy) ask :meth:`UpdateSchedule.typing` whether
to wait for the next completion to finish in the same way.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator

#: an update waits at least this long, so a completion sent right after a keystroke goes first
SETTLE_S = 0.01
#: how long a document must be quiet before its new text is indexed, unless configured
DEFAULT_UPDATE_DELAY_S = 0.15
#: during non-stop typing, a document is re-indexed at least this often
MAX_STALE_S = 3.0
#: and never waits longer than this for completions in progress
MAX_YIELD_S = 0.25
#: nor, for a document being typed in, longer than this for the next completion to finish
MAX_TYPING_YIELD_S = 1.0


class UpdateSchedule:
    """The paths waiting to be indexed, each with when it first and last changed, and the
    completions in progress. It shares the worker's condition ``cond``: the methods that do
    not take it are called with it held, so that a change and its job state move together."""

    def __init__(self, cond: threading.Condition) -> None:
        self._cond = cond
        self._pending: dict[str, tuple[float, float]] = {}  # path: (first, last) change time
        self._readers = 0
        self._finished = 0
        self._typed_at = -math.inf
        self.delay_s = DEFAULT_UPDATE_DELAY_S

    def __len__(self) -> int:
        return len(self._pending)

    def typed(self, path: str) -> None:
        """``path``'s buffer changed: due once typing in it pauses."""
        now = time.monotonic()
        first = self._pending.get(path, (now, 0.0))[0]
        self._pending[path] = (first, now)
        self._typed_at = now

    def typing(self, now: float) -> bool:
        """Whether the user is typing: a keystroke came within the quiet time that ends a
        burst of typing (``delay_s``)."""
        return now - self._typed_at < max(self.delay_s, SETTLE_S)

    def now(self, path: str) -> None:
        """``path`` is due at once (changed on disk, saved, closed, or to be re-applied)."""
        self._pending[path] = (-math.inf, -math.inf)

    def ready(self, now: float) -> tuple[list[str], float | None, bool]:
        """Pending paths due for indexing, when the next one is due (None: none left), and
        whether one is due only because the user has been typing in it for too long."""
        delay = max(self.delay_s, SETTLE_S)
        ready, next_due, stale = [], None, False
        for path, (first, last) in self._pending.items():
            due = min(first + MAX_STALE_S, last + delay)
            if due <= now:
                ready.append(path)
                stale = stale or last + delay > now
            elif next_due is None or due < next_due:
                next_due = due
        return ready, next_due, stale

    def take(self, paths: Iterable[str]) -> None:
        """``paths`` are being indexed: no longer pending."""
        for path in paths:
            del self._pending[path]

    @contextlib.contextmanager
    def priority(self) -> Iterator[None]:
        """Held while a completion is being computed: index updates wait (a little) for it."""
        with self._cond:
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._finished += 1
                self._cond.notify_all()

    def yield_to_completions(self, typing: bool, stopping: Callable[[], bool]) -> None:
        """Wait until no completion is being computed (at most ``MAX_YIELD_S``). While the
        user is ``typing``, wait for the next completion to finish instead (at most
        ``MAX_TYPING_YIELD_S``): the next keystroke, and its completion, are then furthest away."""
        if typing:
            seen = self._finished
            deadline = time.monotonic() + MAX_TYPING_YIELD_S
            with self._cond:
                while self._finished == seen and not stopping():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
        deadline = time.monotonic() + MAX_YIELD_S
        with self._cond:
            while self._readers > 0 and not stopping():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
