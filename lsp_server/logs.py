"""Logging for a process whose stdout is the protocol: stderr, and the editor's log.

Records of repomem's own loggers at INFO and above are also sent as ``window/logMessage``, from
whichever thread logs them, through the server's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable

from lsprotocol import types

OWN_LOGGERS = ("lsp_server", "repomem")

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


def configure(level: str) -> None:
    """Log to stderr: repomem at ``level``, libraries (pygls) at WARNING unless debugging."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if level == "DEBUG" else logging.WARNING)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(level)


class EditorLogHandler(logging.Handler):
    """Forwards records to the editor as ``window/logMessage`` once a loop is attached."""

    def __init__(self, send: Callable[[types.LogMessageParams], None]) -> None:
        super().__init__(logging.INFO)
        self._send = send
        self.loop: asyncio.AbstractEventLoop | None = None

    def emit(self, record: logging.LogRecord) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        kind = _LEVELS.get(record.levelno, types.MessageType.Log)
        if record.levelno >= logging.ERROR:
            kind = types.MessageType.Error
        params = types.LogMessageParams(type=kind, message=f"[repomem] {record.getMessage()}")
        if _running_loop() is loop:
            self._send(params)  # in order with what the server sends next
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._send, params)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        for name in OWN_LOGGERS:
            logging.getLogger(name).addHandler(self)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
