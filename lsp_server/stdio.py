"""The protocol over stdin and stdout, read on the server's event loop.

pygls reads each header line and each body in its thread pool (``StdinAsyncReader``): three
thread hops a message, each a wake-up that waits for the interpreter lock and, on a busy
machine, for a core (a status request just after a ``didChange`` took 5 ms at the median with
the machine loaded 4x over its cores). Where stdin is a pipe or a socket, as an editor starts a
language server, it is read on the loop itself; anything else (a file, a terminal, whose
shared file status the loop would make non-blocking) is read the pygls way.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)


class PipeReader:
    """pygls's reader interface over a stream the loop reads."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await self._stream.readline()

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes, or fewer at the end of the input (b"": nothing more comes)."""
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError as end:
            return end.partial


def is_pipe(stdin: BinaryIO) -> bool:
    """Whether ``stdin`` is a pipe or a socket the loop can read (on POSIX systems: Windows
    loops read only pipes opened for overlapped reads)."""
    if os.name != "posix":
        return False
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def start_io(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """``server.start_io(stdin, stdout)``, with ``stdin`` read on the loop where it is a pipe."""
    if not is_pipe(stdin):
        server.start_io(stdin, stdout)
        return
    server._stop_event = stop = threading.Event()  # what pygls's shutdown() sets
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(_serve(server, stdin, stop))
    except BrokenPipeError:
        logger.error("the connection to the client is lost: shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _serve(server: LanguageServer, stdin: BinaryIO, stop: threading.Event) -> None:
    stream = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    await run_async(
        stop_event=stop,
        reader=PipeReader(stream),
        protocol=server.protocol,
        logger=logger,
        error_handler=server.report_server_error,
    )
