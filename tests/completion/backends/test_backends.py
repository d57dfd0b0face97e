"""Model backends on a real tiny model and a real HTTP server on 127.0.0.1, offline."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import logging
import math
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import tinymodel
from repos import free_port

from repomem.completion.backends.base import BackendError, GenerationRequest
from repomem.completion.backends.fim import resolve_fim_style
from repomem.completion.backends.openai import APPROXIMATE_BYTES_PER_TOKEN, OpenAIBackend
from repomem.completion.backends.registry import BACKEND_NAMES, create_backend
from repomem.config import BackendConfig
from repomem.fim import FIM_SENTINELS, detect_fim_style

if TYPE_CHECKING:
    from repomem.completion.backends.transformers import TransformersBackend

PROMPTS = (
    "def parse(self, text):\n    ",
    "import os\n",
    "class Foo:\n    def __init__(self):\n        self.",
)
MAX_POSITIONS = 3000


@pytest.fixture(scope="module")
def offline() -> Iterator[None]:
    """Any attempt to reach the Hugging Face Hub fails instead of downloading."""
    saved = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    if saved is None:
        del os.environ["HF_HUB_OFFLINE"]
    else:
        os.environ["HF_HUB_OFFLINE"] = saved


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, offline: None) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    directory = tmp_path_factory.mktemp("tiny-llama")
    return tinymodel.build_tiny_model(directory, fim="codellama", max_positions=MAX_POSITIONS)


def _devices() -> list[str]:
    """The CPU always, and a CUDA device where torch sees one: on a GPU machine every
    transformers test below runs there too, against the CPU's direct ``generate``."""
    if importlib.util.find_spec("torch") is None:
        return ["cpu"]
    import torch

    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@pytest.fixture(scope="module", params=_devices())
def backend(tiny_model: Path, request: pytest.FixtureRequest) -> TransformersBackend:
    from repomem.completion.backends.transformers import TransformersBackend

    return TransformersBackend(str(tiny_model), device=request.param)


@pytest.fixture(scope="module")
def reference(tiny_model: Path) -> Callable[[str, int], str]:
    """Greedy text from calling ``generate`` on the model directly, one prompt at a time."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_model, local_files_only=True)

    @functools.cache
    def generate(prompt: str, max_new_tokens: int) -> str:
        inputs = tokenizer(prompt, return_tensors="pt")
        with torch.inference_mode():
            out = model.generate(
                **inputs,
                do_sample=False,
                max_new_tokens=max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)

    return generate


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- transformers --------------------------------------------------------------------------


def test_transformers_greedy_matches_direct_generate(backend, reference) -> None:
    requests = [GenerationRequest(p, max_tokens=16) for p in PROMPTS]
    texts = run(backend.complete_batch(requests))
    assert texts == [reference(p, 16) for p in PROMPTS]
    assert all(texts), "a random model still writes something"


def test_transformers_batch_of_different_lengths_equals_one_at_a_time(backend, reference) -> None:
    budgets = (5, 16, 10)
    requests = [GenerationRequest(p, max_tokens=n) for p, n in zip(PROMPTS, budgets, strict=True)]
    batched = run(backend.complete_batch(requests))
    single = [run(backend.complete(r)) for r in requests]
    assert batched == single
    assert batched == [reference(p, n) for p, n in zip(PROMPTS, budgets, strict=True)]
    assert len(set(map(len, batched))) > 1, "each request kept its own token budget"


def test_transformers_stop_strings_cut_at_first_occurrence(backend, reference) -> None:
    full = reference(PROMPTS[0], 16)
    stop = full[len(full) // 2 : len(full) // 2 + 2]
    cut = full.find(stop)
    earlier = full[cut // 2 : cut // 2 + 1]
    expected_earlier = full[: full.find(earlier)]
    texts = run(
        backend.complete_batch(
            [
                GenerationRequest(PROMPTS[0], stop=(stop,), max_tokens=16),
                GenerationRequest(PROMPTS[0], stop=(stop, earlier), max_tokens=16),
                GenerationRequest(PROMPTS[0], stop=("\x00never",), max_tokens=16),
            ]
        )
    )
    assert texts == [full[:cut], expected_earlier, full]


def test_transformers_reads_settings_from_the_model(backend, tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    from repomem.completion.backends.transformers import TransformersBackend

    tokenizer = AutoTokenizer.from_pretrained(tiny_model, local_files_only=True)
    text = "def foo(x):\n    return x + 1\n"
    assert backend.count_tokens(text) == len(tokenizer.encode(text, add_special_tokens=False))
    assert backend.context_window == MAX_POSITIONS
    assert backend.fim_style == "codellama"
    configured = TransformersBackend(str(tiny_model), context_window=1234, fim="none")
    assert configured.context_window == 1234
    assert configured.fim_style is None


def test_transformers_cancel_returns_promptly_and_stops_the_model(backend) -> None:
    async def scenario() -> tuple[float, int, float]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        long = asyncio.create_task(
            backend.complete(GenerationRequest(PROMPTS[0], max_tokens=MAX_POSITIONS - 50))
        )
        await asyncio.sleep(0.3)
        started = time.monotonic()
        long.cancel()
        with pytest.raises(asyncio.CancelledError):
            await long
        cancel_s = time.monotonic() - started
        # the model lock is free again only once the worker thread stopped generating
        started = time.monotonic()
        await backend.complete(GenerationRequest(PROMPTS[1], max_tokens=2))
        next_s = time.monotonic() - started
        ticking.cancel()
        return cancel_s, ticks, next_s

    cancel_s, ticks, next_s = run(scenario())
    assert cancel_s < 0.2
    assert ticks >= 5, "the event loop kept running during generation"
    assert next_s < 2.0


def test_transformers_loads_on_the_gpu_unless_told_otherwise(tiny_model: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    from repomem.completion.backends.transformers import TransformersBackend

    backend = TransformersBackend(str(tiny_model))
    assert backend.device.type == "cuda"
    texts = run(backend.complete_batch([GenerationRequest(p, max_tokens=8) for p in PROMPTS]))
    on_cpu = TransformersBackend(str(tiny_model), device="cpu")
    assert texts == run(
        on_cpu.complete_batch([GenerationRequest(p, max_tokens=8) for p in PROMPTS])
    )


def test_transformers_bad_device_names_the_setting(tiny_model: Path) -> None:
    from repomem.completion.backends.transformers import TransformersBackend

    with pytest.raises(BackendError, match="backend.device"):
        TransformersBackend(str(tiny_model), device="no-such-device")


def test_transformers_hub_name_is_not_fetched_offline(offline: None) -> None:
    pytest.importorskip("transformers")
    config = BackendConfig(backend="transformers", model="hf:repomem-tests/absent-model")
    with pytest.raises(BackendError) as error:
        create_backend(config)
    assert "HF_HUB_OFFLINE" in str(error.value)
    assert "backend.model" in str(error.value)


# -- fill-in-the-middle --------------------------------------------------------------------


@pytest.mark.parametrize("style", sorted(tinymodel.FIM_TOKENS))
def test_fim_style_detected_from_a_trained_tokenizer(style: str) -> None:
    pytest.importorskip("transformers")
    tokenizer = tinymodel.build_tokenizer(fim=style)
    assert detect_fim_style(tokenizer.get_vocab()) == style


def test_fim_none_without_sentinels_and_overrides() -> None:
    pytest.importorskip("transformers")
    vocabulary = tinymodel.build_tokenizer().get_vocab()
    assert detect_fim_style(vocabulary) is None
    assert resolve_fim_style("starcoder", vocabulary) == "starcoder"
    assert resolve_fim_style("none", ["<fim_prefix>", "<fim_suffix>", "<fim_middle>"]) is None
    assert resolve_fim_style(None, ["<PRE>", "<SUF>", "<MID>"]) == "codellama"
    with pytest.raises(BackendError, match="backend.fim"):
        resolve_fim_style("fancy", vocabulary)
    assert set(FIM_SENTINELS) == set(tinymodel.FIM_TOKENS)


# -- a fake OpenAI-compatible server -------------------------------------------------------


@dataclass
class FakeServer:
    """``/v1/completions`` and ``/tokenize`` on 127.0.0.1, answering from a script.

    Each completion request takes the next action from ``script`` (default ``"ok"``):
    ``"ok"`` answers a text derived from the prompt, an int answers that status, ``"hang"``
    answers nothing until the client goes away (or 5 s pass), ``("slow", s)`` waits s seconds
    then answers.
    """

    url: str = ""
    script: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    tokenize: bool = True
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    received: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)

    @staticmethod
    def text_for(prompt: str) -> str:
        return f"<{prompt[::-1]}>"


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _wait_for_disconnect(self, seconds: float) -> bool:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return True
            return False

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == "/tokenize":
                if not server.tokenize:
                    self._answer(404, {"detail": "Not Found"})
                else:
                    self._answer(200, {"count": len(body["prompt"].split()), "tokens": []})
                return
            with server.lock:
                action = server.script.pop(0) if server.script else "ok"
                server.requests.append({"headers": dict(self.headers), "body": body})
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            server.received.set()
            try:
                self._act(action, body)
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _act(self, action: Any, body: dict[str, Any]) -> None:
            if action == "hang":
                if self._wait_for_disconnect(5.0):
                    server.disconnected.set()
                return
            if isinstance(action, tuple) and action[0] == "slow":
                time.sleep(action[1])
                action = "ok"
            if action == "ok":
                text = FakeServer.text_for(body["prompt"])
                self._answer(200, {"object": "text_completion", "choices": [{"text": text}]})
                return
            echo = {"message": f"overloaded; you sent {self.headers.get('Authorization')}"}
            self._answer(action, {"object": "error", **echo})

    return Handler


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    httpd.shutdown()
    httpd.server_close()


def test_openai_batch_in_order_with_bounded_concurrency(fake_server: FakeServer) -> None:
    fake_server.script = [("slow", 0.2)] * 6
    backend = OpenAIBackend(fake_server.url, "tiny", concurrency=2, temperature=0.0)
    requests = [GenerationRequest(f"p{i}", stop=("\n",), max_tokens=7) for i in range(6)]
    texts = run(backend.complete_batch(requests))
    assert texts == [FakeServer.text_for(f"p{i}") for i in range(6)]
    assert fake_server.max_in_flight == 2
    sent = fake_server.requests[0]["body"]
    assert sent["model"] == "tiny"
    assert sent["max_tokens"] == 7
    assert sent["stop"] == ["\n"]
    assert sent["temperature"] == 0.0
    assert sent["repeat_penalty"] == 1.0, "no repetition penalty: greedy on llama.cpp too"


def test_openai_retries_busy_server_then_succeeds(
    fake_server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_server.script = [503, 429, "ok"]
    backend = OpenAIBackend(fake_server.url, max_retries=2, backoff=0.01)
    with caplog.at_level(logging.WARNING, logger="repomem.completion.backends.openai"):
        text = run(backend.complete(GenerationRequest("abc")))
    assert text == FakeServer.text_for("abc")
    assert len(fake_server.requests) == 3
    assert len(caplog.records) == 2


def test_openai_gives_up_after_max_retries(fake_server: FakeServer) -> None:
    fake_server.script = [503, 503, 503, "ok"]
    backend = OpenAIBackend(fake_server.url, max_retries=2, backoff=0.01)
    with pytest.raises(BackendError) as error:
        run(backend.complete(GenerationRequest("abc")))
    assert len(fake_server.requests) == 3
    assert fake_server.url in str(error.value)
    assert "503" in str(error.value)


def test_openai_slow_server_times_out_naming_the_url(fake_server: FakeServer) -> None:
    fake_server.script = ["hang"]
    backend = OpenAIBackend(fake_server.url, timeout=0.3, max_retries=2, backoff=0.01)
    started = time.monotonic()
    with pytest.raises(BackendError) as error:
        run(backend.complete(GenerationRequest("abc")))
    assert time.monotonic() - started < 2.0
    message = str(error.value)
    assert fake_server.url in message
    assert "backend.timeout" in message
    assert len(fake_server.requests) == 1, "a slow server is not asked again"
    assert fake_server.disconnected.wait(2.0), "the timed-out request was closed"


def test_openai_connection_refused_names_url_and_setting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = OpenAIBackend(url, max_retries=1, backoff=0.01)
    with (
        caplog.at_level(logging.WARNING, logger="repomem.completion.backends.openai"),
        pytest.raises(BackendError) as error,
    ):
        run(backend.complete(GenerationRequest("abc")))
    message = str(error.value)
    assert url in message
    assert "backend.url" in message and "REPOMEM_BACKEND_URL" in message
    assert "\n" not in message
    assert len(caplog.records) == 1, "one retry before giving up"


def test_openai_api_key_sent_but_never_shown(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-test-0123456789"
    monkeypatch.setenv("REPOMEM_TEST_KEY", secret)
    backend = OpenAIBackend(
        fake_server.url, api_key_env="REPOMEM_TEST_KEY", max_retries=1, backoff=0.01
    )
    run(backend.complete(GenerationRequest("abc")))
    assert fake_server.requests[-1]["headers"]["Authorization"] == f"Bearer {secret}"
    fake_server.script = [500, 500, 401]
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(BackendError) as failing:
            run(backend.complete(GenerationRequest("abc")))
        with pytest.raises(BackendError) as refused:
            run(backend.complete(GenerationRequest("abc")))
    # the failing server echoed the Authorization header into its error message
    assert "overloaded" in str(failing.value) and "***" in str(failing.value)
    assert "REPOMEM_TEST_KEY" in str(refused.value), "a refused key names its variable"
    assert caplog.records, "retries and requests were logged"
    for text in (str(failing.value), str(refused.value), caplog.text, repr(vars(backend))):
        assert secret not in text


def test_openai_cancel_closes_the_request(fake_server: FakeServer) -> None:
    fake_server.script = ["hang"]
    backend = OpenAIBackend(fake_server.url, timeout=10.0)

    async def scenario() -> float:
        task = asyncio.create_task(backend.complete(GenerationRequest("abc")))
        assert await asyncio.to_thread(fake_server.received.wait, 5.0)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert run(scenario()) < 0.5
    assert fake_server.disconnected.wait(2.0), "the server saw the connection close"


def test_openai_error_status_names_url_and_detail(fake_server: FakeServer) -> None:
    fake_server.script = [404]
    backend = OpenAIBackend(fake_server.url, "absent")
    with pytest.raises(BackendError) as error:
        run(backend.complete(GenerationRequest("abc")))
    message = str(error.value)
    assert fake_server.url in message and "overloaded" in message and "backend.model" in message


def test_openai_counts_tokens_with_server_then_approximately(fake_server: FakeServer) -> None:
    backend = OpenAIBackend(fake_server.url, "served-name")
    assert backend.count_tokens("a b c d") == 4
    assert backend.token_counter == "server"
    fake_server.tokenize = False
    other = OpenAIBackend(fake_server.url, "served-name")
    text = "def foo(bar):\n    return bar\n"
    assert other.count_tokens(text) == math.ceil(len(text.encode()) / APPROXIMATE_BYTES_PER_TOKEN)
    assert other.token_counter == "approximate"
    assert other.context_window == 4096
    assert other.fim_style is None


def test_openai_uses_a_local_tokenizer(fake_server: FakeServer, tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    backend = OpenAIBackend(fake_server.url, str(tiny_model))
    tokenizer = AutoTokenizer.from_pretrained(tiny_model, local_files_only=True)
    text = "for key, value in items:\n"
    assert backend.token_counter == "tokenizer"
    assert backend.count_tokens(text) == len(tokenizer.encode(text, add_special_tokens=False))
    assert backend.context_window == MAX_POSITIONS
    assert backend.fim_style == "codellama"
    named = OpenAIBackend(fake_server.url, "served-name", tokenizer=str(tiny_model), fim="none")
    assert named.token_counter == "tokenizer" and named.fim_style is None


def test_openai_rejects_a_url_that_is_not_http() -> None:
    with pytest.raises(BackendError, match="backend.url"):
        OpenAIBackend("localhost:8000")


# -- registry ------------------------------------------------------------------------------


def test_registry_unknown_backend_lists_choices() -> None:
    with pytest.raises(BackendError) as error:
        create_backend(BackendConfig(backend="llamafile"))
    message = str(error.value)
    assert "`backend`" in message and "llamafile" in message
    assert all(name in message for name in BACKEND_NAMES)


@pytest.mark.parametrize("backend_name", ["transformers", "vllm"])
def test_registry_model_directory_errors(backend_name: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(BackendError) as error:
        create_backend(BackendConfig(backend=backend_name, model=str(missing)))
    assert str(missing) in str(error.value) and "backend.model" in str(error.value)
    with pytest.raises(BackendError, match="config.json"):
        create_backend(BackendConfig(backend=backend_name, model=str(tmp_path)))
    with pytest.raises(BackendError, match="backend.model"):
        create_backend(BackendConfig(backend=backend_name))


@pytest.mark.parametrize(
    ("settings", "setting"),
    [
        ({"timeout": 0.0}, "backend.timeout"),
        ({"max_retries": -1}, "backend.max_retries"),
        ({"context_window": 0}, "backend.context_window"),
        # the bound the settings set: one check for a config loaded or built in code
        ({"context_window": 8}, "backend.context_window` must be at least 16"),
        ({"temperature": -0.5}, "backend.temperature"),
        ({"fim": "fancy"}, "backend.fim"),
    ],
)
def test_registry_rejects_bad_numbers_naming_the_setting(
    settings: dict[str, Any], setting: str
) -> None:
    with pytest.raises(BackendError, match=setting):
        create_backend(BackendConfig(backend="openai", **settings))


def test_registry_builds_openai_from_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config = BackendConfig(
        backend="openai", url="http://127.0.0.1:9/v1", timeout=4.0, max_retries=5, fim="qwen"
    )
    backend = create_backend(config)
    assert isinstance(backend, OpenAIBackend)
    assert (backend.url, backend.timeout, backend.max_retries) == (config.url, 4.0, 5)
    assert backend.fim_style == "qwen"


def test_registry_transformers_from_config(tiny_model: Path) -> None:
    from repomem.completion.backends.transformers import TransformersBackend

    backend = create_backend(BackendConfig(backend="transformers", model=str(tiny_model)))
    assert isinstance(backend, TransformersBackend)


def test_registry_builtin_needs_no_model() -> None:
    builtin = pytest.importorskip("repomem.completion.backends.builtin")
    assert isinstance(create_backend(BackendConfig()), builtin.BuiltinBackend)


def test_vllm_missing_says_which_extra(tmp_path: Path) -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed; tests/completion/backends/test_backends_slow.py runs it")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BackendError, match="`vllm` extra"):
        create_backend(BackendConfig(backend="vllm", model=str(tmp_path)))


def test_importing_backends_loads_no_heavy_library() -> None:
    code = (
        "import sys, repomem.completion.backends.registry,"
        " repomem.completion.backends.transformers, repomem.completion.backends.openai,"
        " repomem.completion.backends.vllm, repomem.completion.backends.fim;"
        " print(sorted({'torch', 'transformers', 'vllm', 'numba'} & set(sys.modules)))"
    )
    # numba too: a model engine's workers import the script that started them, and vLLM's
    # CPU workers fail to start where that import has loaded numba
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
