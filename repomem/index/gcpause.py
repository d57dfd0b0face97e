"""Cyclic garbage collection paused around bulk index work.

Building, saving or loading an index allocates millions of small acyclic objects (locations,
symbol lists, fragment texts); every time the allocation count trips a threshold, a collection
walks the whole heap again; with collection paused, saving and loading take about half the
time (docs/MEASUREMENTS.md).

What a build or a load makes lives as long as the index, so those are also frozen
(``gc.freeze``): later collections skip them instead of walking them all, which otherwise
lands in the middle of an editor's update.
Frozen objects are still freed by reference counting; only cyclic garbage among them would
never be collected, and the index's structures hold no cycles.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
