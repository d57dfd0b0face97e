"""An event loop in its own thread, for completions.

The completion engine retrieves synchronously (milliseconds, under the index lock) and the
built-in backend computes in the same call, so running the engine on the language server's
loop would stall every message behind it. On a loop of their own, completions keep the
engine's async model calls, and cancelling the awaiting task on the server's loop cancels the
engine's task here, which closes the model request.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """A daemon thread running an asyncio loop until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the background loop; cancelling the caller cancels it there."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a blocking ``fn(*args)`` in the loop's thread (e.g. to load a model there)."""

        async def wrapper() -> T:
            return fn(*args)

        return await self.run(wrapper())

    def stop(self, timeout: float = 2.0) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
