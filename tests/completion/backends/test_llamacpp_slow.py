"""llama.cpp (``llama-cpp-python``) on the tiny model written as GGUF: the library and its server.

Run by ``.ci/slow_tests.sh``. The tiny random Llama of ``tinymodel`` is written as a float32
GGUF file; llama.cpp must write the same greedy text as ``transformers`` on it (the conversion
is right), and its OpenAI-compatible server, driven by ``OpenAIBackend``, ``repomem complete``
and the language server, the same text as the library (in a process of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
import tinymodel
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from repos import free_port, make_repo, run_repomem

from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.openai import OpenAIBackend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
    ),
]

CONTEXT_WINDOW = 1024
SERVED_NAME = "tiny"
START_TIMEOUT_S = 120
MAX_TOKENS = 24
PROMPTS = (
    "def parse(self, text):\n    ",
    "import os\n",
    "class Foo:\n    def __init__(self):\n        self.",
)
#: ``completion.max_tokens_line`` by default: the most tokens a line completion asks for
MAX_TOKENS_LINE = 64
# the cursor (1-based line and column): at the end of pkg/core.py's "from pkg.util import Base,
# helper", a line the language server's item replaces from "helper" on
CURSOR = ("pkg/core.py", 2, 34)
#: layers llama.cpp offloads to a GPU, library and server alike: 0 (CPU) unless a CUDA build of
#: llama-cpp-python is installed and ``REPOMEM_TEST_GPU_LAYERS`` says so (``eval/gpu_llamacpp.sh``)
GPU_LAYERS = os.environ.get("REPOMEM_TEST_GPU_LAYERS", "0")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tinymodel.build_tiny_model(tmp_path_factory.mktemp("tiny-llama"), fim="codellama")


@pytest.fixture(scope="module")
def gguf_path(tiny_model: Path) -> Path:
    return tinymodel.write_gguf(tiny_model)


#: the library's side of the comparison, run in a process of its own: a CUDA build of llama.cpp
#: crashed loading a model in a process where torch (with its own CUDA libraries) was loaded
LIBRARY_PROCESS = """
import json, sys
from llama_cpp import Llama
llama = Llama(model_path=sys.argv[1], n_ctx=int(sys.argv[2]), seed=0,
              n_gpu_layers=int(sys.argv[3]), verbose=False)
for line in sys.stdin:
    ask = json.loads(line)
    out = llama.create_completion(ask["prompt"], max_tokens=ask["max_tokens"], temperature=0.0,
                                  repeat_penalty=1.0, stop=ask["stop"])
    print(json.dumps(out["choices"][0]["text"]), flush=True)
"""


class LlamaLibrary:
    """llama.cpp's library on the file the server loads, asked one prompt at a time."""

    def __init__(self, gguf_path: Path) -> None:
        command = [sys.executable, "-c", LIBRARY_PROCESS, str(gguf_path), str(CONTEXT_WINDOW)]
        self.process = subprocess.Popen(
            [*command, GPU_LAYERS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def complete(self, prompt: str, max_tokens: int, stop: tuple[str, ...]) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        ask = {"prompt": prompt, "max_tokens": max_tokens, "stop": list(stop)}
        self.process.stdin.write(json.dumps(ask) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            pytest.fail(f"the llama.cpp library process exited ({self.process.wait()})")
        return json.loads(answer)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def llama(gguf_path: Path) -> Iterator[LlamaLibrary]:
    library = LlamaLibrary(gguf_path)
    yield library
    library.close()


def direct(llama: LlamaLibrary, prompt: str, max_tokens: int, stop: tuple[str, ...] = ()) -> str:
    """Greedy text from the library: temperature 0 and no repetition penalty."""
    return llama.complete(prompt, max_tokens, stop)


@pytest.fixture(scope="module")
def server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1; yields its ``/v1`` URL."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-serve") / "serve.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path),
        "--model_alias", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(CONTEXT_WINDOW), "--seed", "0", "--n_gpu_layers", GPU_LAYERS,
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"the llama.cpp server exited:\n{log_path.read_text()[-4000:]}")
            if time.monotonic() - started > START_TIMEOUT_S:
                pytest.fail(f"the llama.cpp server did not start:\n{log_path.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        print(f"llama.cpp server ready after {time.monotonic() - started:.1f} s")
        yield f"{url}/v1"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_llama_cpp_writes_the_transformers_greedy_text_on_the_gguf(
    tiny_model: Path, llama: LlamaLibrary
) -> None:
    from repomem.completion.backends.transformers import TransformersBackend

    reference = TransformersBackend(str(tiny_model), device="cpu")
    requests = [GenerationRequest(p, max_tokens=MAX_TOKENS) for p in PROMPTS]
    expected = asyncio.run(reference.complete_batch(requests))
    texts = [direct(llama, p, MAX_TOKENS) for p in PROMPTS]
    print(f"llama.cpp texts {texts!r}")
    assert all(texts)
    assert texts == expected


def test_openai_backend_on_the_llama_cpp_server_writes_the_greedy_text(
    server: str, llama: LlamaLibrary
) -> None:
    first = direct(llama, PROMPTS[0], MAX_TOKENS)
    stop = first[len(first) // 2 : len(first) // 2 + 2]
    requests = [
        *(GenerationRequest(p, max_tokens=MAX_TOKENS) for p in PROMPTS),
        GenerationRequest(PROMPTS[0], max_tokens=MAX_TOKENS, stop=(stop,)),
    ]
    backend = OpenAIBackend(server, SERVED_NAME, timeout=60.0)

    async def complete() -> list[str]:
        try:
            return await backend.complete_batch(requests)
        finally:
            await backend.aclose()

    texts = asyncio.run(complete())
    print(f"llama.cpp server texts {texts!r}")
    assert texts == [direct(llama, r.prompt, r.max_tokens, r.stop) for r in requests]
    assert len(texts[-1]) < len(texts[0]), "the stop string cut"


def test_openai_backend_streams_the_llama_cpp_servers_greedy_text(
    server: str, llama: LlamaLibrary
) -> None:
    """llama.cpp's server-sent events, read piece by piece, make the same greedy text."""
    backend = OpenAIBackend(server, SERVED_NAME, timeout=60.0)

    async def stream() -> list[str]:
        pieces: list[str] = []
        try:
            request = GenerationRequest(PROMPTS[0], max_tokens=MAX_TOKENS)
            async for piece in backend.stream(request):
                pieces.append(piece)
        finally:
            await backend.aclose()
        return pieces

    pieces = asyncio.run(stream())
    print(f"llama.cpp streamed {pieces!r}")
    assert len(pieces) > 1
    assert "".join(pieces) == direct(llama, PROMPTS[0], MAX_TOKENS)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("repo") / "repo")


@pytest.fixture(scope="module")
def backend_settings(server: str, tiny_model: Path) -> dict[str, Any]:
    """The server with the model named by its directory, as a user who has it locally may:
    llama-cpp-python serves its one model under any name, and repomem reads the tokenizer
    there, so the prompt fits the window exactly and is in the model's fill-in-the-middle
    format."""
    return {
        "backend": "openai",
        "url": server,
        "model": str(tiny_model),
        "context_window": CONTEXT_WINDOW,
        "timeout": 60,
    }


@pytest.fixture(scope="module")
def cli_account(repo: Path, backend_settings: dict[str, Any]) -> dict[str, Any]:
    env = {
        **os.environ,
        **{f"REPOMEM_BACKEND_{k.upper()}": str(v) for k, v in backend_settings.items()},
    }
    path, line, column = CURSOR
    done = run_repomem("complete", f"{path}:{line}:{column}", "--json", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_greedy(account: dict[str, Any], llama: LlamaLibrary) -> None:
    """Each round of a ``repomem complete --json`` account got the library's greedy text for
    its prompt, a prompt in the model's fill-in-the-middle format."""
    assert account["backend"] == "openai"
    assert len(account["iterations"]) == 2
    for it in account["iterations"]:
        assert it["fim"]
        max_tokens = min(MAX_TOKENS_LINE, CONTEXT_WINDOW - it["prompt_tokens"]["total"])
        assert it["raw"] == direct(llama, it["prompt"], max_tokens, ("\n",))


def test_repomem_complete_on_the_llama_cpp_server_writes_the_greedy_text(
    cli_account: dict[str, Any], llama: LlamaLibrary
) -> None:
    print(f"repomem complete: {cli_account['text']!r}")
    assert_greedy(cli_account, llama)
    assert cli_account["text"]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "repomem.cli", "serve"])
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_language_server_on_the_llama_cpp_server_completes_as_the_cli(
    client: LanguageClient,
    repo: Path,
    backend_settings: dict[str, Any],
    cli_account: dict[str, Any],
    llama: LlamaLibrary,
) -> None:
    ready = client.protocol.wait_for_notification("repomem/indexReady")

    @client.feature("client/registerCapability")
    def register(params: types.RegistrationParams) -> None:
        """Accepted: the server registers its file watchers."""

    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=repo.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=repo.as_uri(), name=repo.name)],
            initialization_options={"repomem": {"backend": backend_settings, "debounceMs": 0}},
        )
    )
    await asyncio.wait_for(asyncio.wrap_future(ready), 60)
    path, line, column = CURSOR
    uri = (repo / path).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, (repo / path).read_text())
        )
    )
    result = await client.text_document_completion_async(
        types.CompletionParams(
            types.TextDocumentIdentifier(uri), types.Position(line - 1, column - 1)
        )
    )
    assert isinstance(result, types.CompletionList)
    (item,) = result.items
    assert "openai" in item.detail
    assert item.text_edit.new_text == "helper" + cli_account["text"]
    assert_greedy(cli_account, llama)
    state = await client.protocol.send_request_async("repomem/status", {})
    assert state.backend == "openai" and not state.fallback
