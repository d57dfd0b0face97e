"""Any OpenAI-compatible ``/v1/completions`` server: vLLM's server, llama.cpp's, Ollama.

Requests are async (``httpx``), run concurrently up to a bound, retried with exponential
back-off when the server is unreachable, busy (429) or failing (5xx), and closed when the
awaiting task is cancelled, which is what happens when the editor cancels a completion. The
API key is read from the environment at request time and kept out of logs and messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from repomem.completion.backends.base import Backend, BackendError, GenerationRequest
from repomem.completion.backends.fim import resolve_fim_style

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 4096
#: bytes per token assumed when no tokenizer can be reached; code in common BPE vocabularies
#: takes 3.5 to 4.5 bytes a token, so this overestimates and prompts stay inside the window
APPROXIMATE_BYTES_PER_TOKEN = 3
#: HTTP statuses worth retrying: the server is busy or failing, not refusing the request
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: statuses that mean the server has no ``/tokenize`` endpoint
_NO_ENDPOINT_STATUSES = frozenset({404, 405, 501})
_URL_SETTING = "`backend.url` / REPOMEM_BACKEND_URL"
_MAX_ERROR_DETAIL = 300


def _local_tokenizer_dir(tokenizer: str | None, model: str | None) -> Path | None:
    for candidate in (tokenizer, model):
        if candidate and (Path(candidate).expanduser() / "tokenizer.json").is_file():
            return Path(candidate).expanduser()
    return None


def _context_window_of(model_dir: Path | None) -> int | None:
    if model_dir is None:
        return None
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = config.get("max_position_embeddings") if isinstance(config, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def sse_text(line: str, url: str) -> str | None:
    """The text of one line of an OpenAI completion stream: "" for a line that carries none
    (blank, a comment, another field, a chunk holding only ``finish_reason``), None at the
    end (``data: [DONE]``); a chunk that is not a completion or an error event raise
    :class:`BackendError`."""
    if not line.startswith("data:"):
        return ""
    data = line[5:].strip()
    if data == "[DONE]":
        return None
    try:
        chunk = json.loads(data)
    except ValueError:
        chunk = None
    if isinstance(chunk, dict) and "error" in chunk:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise BackendError(
            f"the completion server at {url} ended the stream with an error:"
            f" {str(message)[:_MAX_ERROR_DETAIL]}"
        )
    try:
        choice = chunk["choices"][0] if isinstance(chunk, dict) else None
    except (KeyError, IndexError, TypeError):
        choice = None
    text = choice.get("text", "") if isinstance(choice, dict) else None
    if text is None and isinstance(choice, dict):
        text = ""  # a chunk with only a finish_reason
    if not isinstance(text, str):
        raise BackendError(
            f"the completion server at {url} sent a stream chunk that is not an OpenAI"
            f" completion: {data[:_MAX_ERROR_DETAIL]!r}; check {_URL_SETTING}"
        )
    return text


class OpenAIBackend(Backend):
    """Completions from an OpenAI-compatible HTTP server.

    ``token_counter`` says how ``count_tokens`` counts: ``"tokenizer"`` (a local
    ``tokenizer.json``, from the ``tokenizer`` argument or a model directory), ``"server"``
    (the server's ``/tokenize`` endpoint, which vLLM offers) or ``"approximate"`` (a byte count
    over ``APPROXIMATE_BYTES_PER_TOKEN``, an overestimate for code).
    """

    name = "openai"
    streams = True

    def __init__(
        self,
        url: str,
        model: str | None = None,
        *,
        api_key_env: str = "REPOMEM_API_KEY",
        timeout: float = 30.0,
        max_retries: int = 2,
        temperature: float = 0.0,
        context_window: int | None = None,
        fim: str | None = None,
        tokenizer: str | None = None,
        concurrency: int = 8,
        backoff: float = 0.5,
    ) -> None:
        parsed = self._parse_url(url)
        self.url = str(parsed).rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.concurrency = max(1, concurrency)
        self.backoff = backoff
        root = self.url.removesuffix("/v1")
        self._completions_url = f"{self.url}/completions"
        self._tokenize_url = f"{root}/tokenize"
        self._tokenizer = None
        self._counter: str | None = None
        local_dir = _local_tokenizer_dir(tokenizer, model)
        vocabulary = None
        if local_dir is not None:
            self._tokenizer = self._load_tokenizer(local_dir)
        if self._tokenizer is not None:
            self._counter = "tokenizer"
            vocabulary = self._tokenizer.get_vocab(with_added_tokens=True)
        self.context_window = (
            context_window or _context_window_of(local_dir) or DEFAULT_CONTEXT_WINDOW
        )
        self.fim_style = resolve_fim_style(fim, vocabulary)
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._sync_client: httpx.Client | None = None

    @staticmethod
    def _parse_url(url: str) -> httpx.URL:
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise BackendError(f"{url!r} is not a URL (setting {_URL_SETTING})") from exc
        if parsed.scheme not in {"http", "https"} or not parsed.host:
            raise BackendError(
                f"{url!r} is not an http(s) URL (setting {_URL_SETTING}),"
                " e.g. http://127.0.0.1:8000/v1"
            )
        return parsed

    @staticmethod
    def _load_tokenizer(directory: Path) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            return None
        try:
            return Tokenizer.from_file(str(directory / "tokenizer.json"))
        except Exception as exc:  # the tokenizers library raises plain Exception on bad files
            raise BackendError(f"cannot read the tokenizer in {directory}: {exc}") from exc

    # -- secrets ---------------------------------------------------------------------------

    def _api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def _headers(self) -> dict[str, str]:
        key = self._api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _redact(self, text: str) -> str:
        key = self._api_key()
        return text.replace(key, "***") if key else text

    # -- errors ----------------------------------------------------------------------------

    def _unreachable(self, exc: Exception) -> BackendError:
        reason = self._redact(str(exc) or type(exc).__name__)
        return BackendError(
            f"cannot reach the completion server at {self.url} ({reason});"
            f" start it or set {_URL_SETTING}"
        )

    def _dropped(self, exc: Exception, received: int) -> BackendError:
        reason = self._redact(str(exc) or type(exc).__name__)
        return BackendError(
            f"the completion server at {self.url} closed the stream before its end, after"
            f" {received} characters ({reason})"
        )

    def _too_slow(self) -> BackendError:
        return BackendError(
            f"the completion server at {self.url} did not answer within {self.timeout:g} s"
            f" (setting `backend.timeout`; server: {_URL_SETTING})"
        )

    def _status_error(self, response: httpx.Response, attempts: int) -> BackendError:
        detail = self._redact(self._error_detail(response))
        where = f"the completion server at {self.url}"
        status = f"{response.status_code} {response.reason_phrase}".strip()
        if response.status_code in {401, 403}:
            return BackendError(
                f"{where} refused the request ({status}): put the API key in the environment"
                f" variable {self.api_key_env} (setting `backend.api_key_env`); {detail}"
            )
        if response.status_code == 404:
            return BackendError(
                f"{where} answered {status} for /completions: {detail}; check {_URL_SETTING}"
                " (it usually ends in /v1) and `backend.model`"
            )
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return BackendError(f"{where} answered {status}{tries}: {detail}")

    @staticmethod
    def _error_detail(response: httpx.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            return response.text[:_MAX_ERROR_DETAIL] or "no details"
        if isinstance(body, dict):
            error = body.get("error", body)
            message = error.get("message") if isinstance(error, dict) else error
            if message:
                return str(message)[:_MAX_ERROR_DETAIL]
        return json.dumps(body)[:_MAX_ERROR_DETAIL]

    # -- completions -----------------------------------------------------------------------

    def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # connections belong to the loop that opened them; a new loop needs a new client
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=self.concurrency),
            )
            self._client_loop = loop
        return self._client

    def _payload(self, request: GenerationRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "prompt": request.prompt,
            "max_tokens": request.max_tokens,
            "temperature": self.temperature,
            # llama.cpp's servers take this field (llama-cpp-python's defaults to 1.1, which
            # makes temperature 0 no longer greedy); the others ignore it
            "repeat_penalty": 1.0,
        }
        if self.model:
            payload["model"] = self.model
        if request.stop:
            payload["stop"] = list(request.stop)
        return payload

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        client = self._async_client()
        limit = asyncio.Semaphore(self.concurrency)

        async def one(request: GenerationRequest) -> str:
            async with limit:
                return await self._complete_one(client, request)

        tasks = [asyncio.ensure_future(one(r)) for r in requests]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            # a failure or a cancellation ends the whole batch: close the other requests too
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _complete_one(self, client: httpx.AsyncClient, request: GenerationRequest) -> str:
        if request.max_tokens <= 0:
            return ""
        response = await self._open(client, self._payload(request), stream=False)
        return self._completion_text(response)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        """The completion as the server streams it (``"stream": true``: server-sent events,
        one ``data:`` line per piece, ``data: [DONE]`` at the end), a piece per chunk, empty
        ones included (a chunk is a token whose text may be held back to a later one). A
        server that answers the whole completion at once instead is read as one piece. A chunk
        that is not a completion, an error event, or a connection dropped before the end raise
        :class:`BackendError` (the pieces already given stay given)."""
        if request.max_tokens <= 0:
            return
        client = self._async_client()
        payload = {**self._payload(request), "stream": True}
        response = await self._open(client, payload, stream=True)
        try:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                await response.aread()
                yield self._completion_text(response)
                return
            received = 0
            lines = response.aiter_lines()
            while True:
                try:
                    async with asyncio.timeout(self.timeout):
                        line = await anext(lines)
                except StopAsyncIteration:
                    return
                except (TimeoutError, httpx.TimeoutException):
                    raise self._too_slow() from None
                except httpx.TransportError as exc:
                    raise self._dropped(exc, received) from None
                text = sse_text(line, self.url)
                if text is None:
                    return
                if line.startswith("data:"):  # one chunk a token: an empty one counts too
                    received += len(text)
                    yield text
        finally:
            await response.aclose()

    async def _open(
        self, client: httpx.AsyncClient, payload: dict[str, Any], *, stream: bool
    ) -> httpx.Response:
        """The server's 200 response to ``payload`` (its body still to read when ``stream``),
        retrying what is worth retrying; a :class:`BackendError` otherwise."""
        attempt = 0
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self.timeout):
                    sent = client.build_request(
                        "POST", self._completions_url, json=payload, headers=self._headers()
                    )
                    response = await client.send(sent, stream=stream)
            except (TimeoutError, httpx.TimeoutException) as exc:
                if isinstance(exc, httpx.ConnectTimeout) and attempt <= self.max_retries:
                    await self._back_off(attempt, "connection timed out")
                    continue
                raise self._too_slow() from None
            except httpx.TransportError as exc:
                if attempt <= self.max_retries:
                    await self._back_off(attempt, self._redact(str(exc) or type(exc).__name__))
                    continue
                raise self._unreachable(exc) from None
            if response.status_code == 200:
                return response
            if stream:
                await response.aread()
                await response.aclose()
            if response.status_code in _RETRY_STATUSES and attempt <= self.max_retries:
                await self._back_off(
                    attempt, f"status {response.status_code}", response.headers.get("retry-after")
                )
                continue
            raise self._status_error(response, attempt)

    async def _back_off(self, attempt: int, reason: str, retry_after: str | None = None) -> None:
        delay = self.backoff * 2 ** (attempt - 1)
        if retry_after is not None:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(float(retry_after), self.timeout))
        logger.warning(
            "completion server %s: %s; retry %d of %d in %.2f s",
            self.url,
            reason,
            attempt,
            self.max_retries,
            delay,
        )
        await asyncio.sleep(delay)

    def _completion_text(self, response: httpx.Response) -> str:
        try:
            text = response.json()["choices"][0]["text"]
        except (ValueError, KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            raise BackendError(
                f"the completion server at {self.url} sent something that is not an OpenAI"
                f" completion; check {_URL_SETTING}"
            )
        return text

    # -- tokens ----------------------------------------------------------------------------

    @property
    def token_counter(self) -> str:
        """``tokenizer``, ``server`` or ``approximate``; asks the server once if needed."""
        if self._counter is None:
            self.count_tokens("def")
        return self._counter or "approximate"

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is not None:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        if self._counter in (None, "server"):
            count = self._count_with_server(text)
            if count is not None:
                self._counter = "server"
                return count
            self._counter = "approximate"
            logger.info(
                "completion server %s has no /tokenize endpoint: counting tokens approximately",
                self.url,
            )
        return math.ceil(len(text.encode("utf-8")) / APPROXIMATE_BYTES_PER_TOKEN)

    def _count_with_server(self, text: str) -> int | None:
        """Tokens by the server's own tokenizer, or None when it offers no ``/tokenize``."""
        if self._sync_client is None:
            self._sync_client = httpx.Client(timeout=httpx.Timeout(self.timeout))
        body: dict[str, Any] = {"prompt": text, "add_special_tokens": False}
        if self.model:
            body["model"] = self.model
        try:
            response = self._sync_client.post(
                self._tokenize_url, json=body, headers=self._headers()
            )
        except httpx.TimeoutException:
            raise self._too_slow() from None
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        if response.status_code in _NO_ENDPOINT_STATUSES:
            return None
        if response.status_code != 200:
            raise self._status_error(response, 1)
        try:
            data = response.json()
        except ValueError:
            return None
        if isinstance(data, dict) and isinstance(data.get("count"), int):
            return data["count"]
        if isinstance(data, dict) and isinstance(data.get("tokens"), list):
            return len(data["tokens"])
        return None

    async def aclose(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None
        self._client_loop = None
        if self._sync_client is not None:
            self._sync_client.close()
            self._sync_client = None
