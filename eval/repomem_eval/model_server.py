"""A small OpenAI-compatible completion server with a fixed latency, for tests and benchmarks.

``POST /v1/completions`` waits ``latency_s`` (the model's time to its first token), then
answers what :meth:`ModelServer.continuation` writes: with ``"stream": true`` as server-sent
events (``data: {"choices": [{"text": ...}]}`` every few characters at ``chars_per_s``, then
``data: [DONE]``), else as one JSON completion once the whole text is written. ``stop``
strings and ``max_tokens`` (four characters a token) bound the text. ``/tokenize`` is not
offered (404), as on llama.cpp's server.

The "model" continues the prompt from ``corpus``: it finds the last characters (48, else 32,
else 16) of the text before the cursor (the prompt, or a fill-in-the-middle prompt's prefix)
in one of the texts given and writes what follows there, so a typing replay of those texts
gets the suggestions a good model would make. A share ``error_rate`` of the
lines it writes (chosen by a hash of the prompt's end and the line's number, so a run repeats)
get a wrong word, so that a typist who types the real text leaves the model's. Every completion is
logged (prompt, text) so that a benchmark can check that a suggestion shown was written by the
model after the text shown.

Faults for tests: ``drop_after`` closes the connection after that many streamed characters,
``malformed`` sends a chunk that is not JSON after the first one.

With ``upstream`` (another server's ``/v1`` URL, e.g. llama.cpp's), the requests are passed on
to it after the latency and its answers relayed as they come, counted and logged the same way.

    python -m repomem_eval.model_server --corpus FILE... [--port 8012] [--latency-ms 300]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from repomem.fim import FIM_TEMPLATES

#: how many of the prompt's last characters are looked up in the corpus (fewer, then, where
#: the prompt's end holds more than the text: the file's start below the retrieved code)
ANCHOR_CHARS = (48, 32, 16)
CHARS_PER_TOKEN = 4
#: how much of the text before the cursor a suggestion must follow to count as the model's
LEFT_CHECKED = 200
#: what the model writes where the corpus does not continue the prompt
FALLBACK_TEXT = "pass\n"


@dataclass
class ModelServer:
    """The server (see the module doc); :meth:`start` runs it on a thread of its own."""

    corpus: Sequence[str] = ()
    latency_s: float = 0.3
    chars_per_s: float = 2000.0
    chunk_chars: int = 4
    error_rate: float = 0.0
    drop_after: int | None = None
    malformed: bool = False
    port: int = 0
    requests: int = 0
    log: list[tuple[str, str]] = field(default_factory=list)
    closed_early: int = 0  # requests the client closed before their end
    upstream_dropped: int = 0  # relayed streams the upstream ended before their end
    upstream: str | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- the "model" -----------------------------------------------------------------------
    def continuation(self, prompt: str, max_tokens: int, stop: Sequence[str]) -> str:
        """What follows the prompt's end in the corpus (see the module doc)."""
        prompt = before_cursor(prompt)
        text, anchor = FALLBACK_TEXT, prompt[-ANCHOR_CHARS[0] :]
        for size in ANCHOR_CHARS:
            found = [
                doc[at + size :]
                for doc in self.corpus
                if len(prompt) >= size and (at := doc.find(prompt[-size:])) >= 0
            ]
            if found:
                text, anchor = found[0], prompt[-size:]
                break
        text = text[: max(1, max_tokens) * CHARS_PER_TOKEN]
        lines = text.split("\n")
        for i, line in enumerate(lines):
            digest = hashlib.sha256(f"{i}:{anchor}".encode()).digest()
            if line.strip() and digest[0] < 256 * self.error_rate:
                at = digest[1] % (len(line) + 1)
                lines[i] = line[:at] + "wrong_" + line[at:]
        text = "\n".join(lines)
        for s in stop:
            if s and s in text:
                text = text[: text.index(s)]
        return text

    def wrote(self, left: str, shown: str) -> bool:
        """Whether the model wrote ``shown`` right after text ending like ``left`` (its last
        ``LEFT_CHECKED`` characters): some answer ``g`` to a prompt ``p`` with ``p + g[:k]``
        ending there and ``g[k:]`` starting with ``shown``. A suggestion shown that it did not
        write is stale: made for other text than the one before the cursor."""
        tail = left[-LEFT_CHECKED:]
        for prompt, text in reversed(self.log):
            k = text.find(shown)
            while k >= 0:
                if (before_cursor(prompt) + text[:k]).endswith(tail):
                    return True
                k = text.find(shown, k + 1)
        return False

    # -- HTTP -------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *headers = head.decode("latin-1").split("\r\n")
                length = 0
                for header in headers:
                    name, _, value = header.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                if not request_line.startswith("POST /v1/completions"):
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                if not await self._complete(json.loads(body), writer):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            return  # the client went, or the server stops
        finally:
            writer.close()

    async def _complete(self, payload: dict[str, Any], writer: asyncio.StreamWriter) -> bool:
        """Answer one completion; False when the connection is to be dropped."""
        self.requests += 1
        prompt = str(payload.get("prompt", ""))
        if self.upstream is not None:
            await asyncio.sleep(self.latency_s)
            return await self._relay(prompt, payload, writer)
        stop = payload.get("stop") or ()
        text = self.continuation(prompt, int(payload.get("max_tokens", 16)), stop)
        self.log.append((prompt, text))
        await asyncio.sleep(self.latency_s)
        per_chunk = self.chunk_chars / self.chars_per_s
        if not payload.get("stream"):
            await asyncio.sleep(len(text) / self.chars_per_s)
            data = json.dumps({"object": "text_completion", "choices": [{"text": text}]})
            body = data.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
            return True
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        sent = 0
        try:
            for i in range(0, len(text), self.chunk_chars):
                piece = text[i : i + self.chunk_chars]
                if self.drop_after is not None and sent >= self.drop_after:
                    writer.write(b"5\r\ndata:")  # half a chunk, then the connection goes
                    await writer.drain()
                    writer.transport.abort()
                    return False
                chunk = {"object": "text_completion", "choices": [{"text": piece}]}
                line = f"data: {json.dumps(chunk)}\n\n"
                if self.malformed and i > 0:
                    line = "data: {not json\n\n"
                _write_chunk(writer, line)
                sent += len(piece)
                await writer.drain()
                await asyncio.sleep(per_chunk)
            _write_chunk(writer, 'data: {"choices": [{"text": "", "finish_reason": "stop"}]}\n\n')
            _write_chunk(writer, "data: [DONE]\n\n")
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            self.closed_early += 1
            return False
        return True

    async def _relay(
        self, prompt: str, payload: dict[str, Any], writer: asyncio.StreamWriter
    ) -> bool:
        """Pass the request on to ``upstream`` and its answer back, logging the text as it
        grows (a suggestion may be shown before the answer ends)."""
        entry = len(self.log)
        self.log.append((prompt, ""))
        text = ""
        url = f"{self.upstream}/completions"
        async with (
            httpx.AsyncClient(timeout=60) as client,
            client.stream("POST", url, json=payload) as response,
        ):
            if not payload.get("stream") or response.status_code != 200:
                body = await response.aread()
                if response.status_code == 200:
                    self.log[entry] = (prompt, json.loads(body)["choices"][0]["text"])
                writer.write(
                    b"HTTP/1.1 %d OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (response.status_code, len(body), body)
                )
                await writer.drain()
                return True
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            try:
                async for line in response.aiter_lines():
                    data = line[5:].strip() if line.startswith("data:") else ""
                    if data and data != "[DONE]":
                        text += json.loads(data)["choices"][0].get("text") or ""
                        self.log[entry] = (prompt, text)
                    _write_chunk(writer, line + "\n")
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            except ConnectionError:
                self.closed_early += 1
                return False
            except httpx.TransportError:
                # the upstream dropped the stream (llama-cpp-python's server drops a running
                # request for a newer one): dropped here too, as the client would see it
                self.upstream_dropped += 1
                writer.transport.abort()
                return False
        return True

    # -- running --------------------------------------------------------------------------
    def start(self) -> ModelServer:
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self.port)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()
            loop.run_forever()
            self._server.close()
            handlers = asyncio.all_tasks(loop)
            for task in handlers:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*handlers, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=run, name="model-server", daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)


def before_cursor(prompt: str) -> str:
    """The text a prompt puts right before what the model writes: a fill-in-the-middle
    prompt's prefix (between its prefix and suffix sentinels), else the whole prompt."""
    for opener, between, closer in FIM_TEMPLATES.values():
        if prompt.startswith(opener) and prompt.endswith(closer) and between in prompt:
            return prompt[len(opener) : prompt.index(between)]
    return prompt


def _write_chunk(writer: asyncio.StreamWriter, line: str) -> None:
    data = line.encode()
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="*", default=[], type=Path)
    parser.add_argument("--port", type=int, default=8012)
    parser.add_argument("--latency-ms", type=float, default=300)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--upstream", help="pass requests on to this /v1 URL")
    args = parser.parse_args(argv)
    corpus = [p.read_text(encoding="utf-8") for p in args.corpus]
    server = ModelServer(
        corpus,
        args.latency_ms / 1000,
        error_rate=args.error_rate,
        port=args.port,
        upstream=args.upstream,
    )
    server.start()
    print(f"serving {server.url} (latency {args.latency_ms:g} ms); Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
