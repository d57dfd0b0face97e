"""The protocol over stdin (lsp_server.stdio): a pipe is read on the server's event loop, with
no thread hop per message; anything else the pygls way."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from pathlib import Path

from pygls.lsp.server import LanguageServer

from lsp_server import stdio


def _framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_pipes_and_sockets_are_read_on_the_loop(tmp_path: Path) -> None:
    read, write = os.pipe()
    left, right = socket.socketpair()
    file = tmp_path / "input"
    file.write_bytes(b"")
    with os.fdopen(read, "rb") as pipe, open(file, "rb") as plain:
        assert stdio.is_pipe(pipe)
        assert stdio.is_pipe(left.makefile("rb"))
        assert not stdio.is_pipe(plain)
    os.close(write)
    left.close()
    right.close()


def test_a_server_on_a_pipe_answers_without_its_thread_pool() -> None:
    """pygls read each header line and body in its thread pool: three hops a message."""
    server = LanguageServer("test", "1")
    read, write = os.pipe()
    out_read, out_write = os.pipe()
    request = {"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None}
    os.write(write, _framed(request) + _framed({"jsonrpc": "2.0", "method": "exit"}))
    os.close(write)
    with os.fdopen(read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout:
        worker = threading.Thread(target=stdio.start_io, args=(server, stdin, stdout))
        worker.start()
        worker.join(30)
    assert not worker.is_alive()
    with os.fdopen(out_read, "rb") as answers:
        answer = answers.read()
    assert b'"id": 1' in answer and b'"result": null' in answer
    assert server._thread_pool is None  # never made


def test_the_input_ending_mid_message_ends_the_read() -> None:
    async def read() -> tuple[bytes, bytes, bytes]:
        stream = asyncio.StreamReader()
        stream.feed_data(b"Content-Length: 10\r\n{}")
        stream.feed_eof()
        reader = stdio.PipeReader(stream)
        return await reader.readline(), await reader.readexactly(10), await reader.readline()

    assert asyncio.run(read()) == (b"Content-Length: 10\r\n", b"{}", b"")
