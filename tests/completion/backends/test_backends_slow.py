"""vLLM on a tiny model: in-process (``VLLMBackend``) and served (``OpenAIBackend``).

Run by ``.ci/slow_tests.sh`` in a virtual environment with vLLM's CPU build. vLLM starts worker
processes that re-import the main module, so the in-process engine runs in a small script of
its own. Both engines must write the same greedy text as ``transformers`` on the same weights.
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
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import tinymodel
from repos import free_port

from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.openai import OpenAIBackend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed"),
]

CONTEXT_WINDOW = 1024
SERVED_NAME = "tiny"
START_TIMEOUT_S = 400
PROMPTS = (
    "def parse(self, text):\n    ",
    "import os\n",
    "class Foo:\n    def __init__(self):\n        self.",
)
# On a GPU the served and the in-process engine share the card: each takes this fraction of its
# memory (vLLM's default, 0.9, leaves the second engine none). Unset on vLLM's CPU build.
GPU_MEMORY = os.environ.get("REPOMEM_TEST_VLLM_GPU_MEMORY")
ENGINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    # the tiny model needs a few MiB of KV cache; vLLM's CPU default reserves 4 GiB
    "VLLM_CPU_KVCACHE_SPACE": "1",
}

OFFLINE_SCRIPT = """
import asyncio, json, sys

from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.vllm import VLLMBackend

if __name__ == "__main__":
    model, context_window, requests_json, probe, engine_json = sys.argv[1:6]
    backend = VLLMBackend(
        model,
        context_window=int(context_window),
        engine_args={"dtype": "float32", "enforce_eager": True, **json.loads(engine_json)},
    )
    requests = [GenerationRequest(**r) for r in json.loads(requests_json)]
    texts = asyncio.run(backend.complete_batch(requests))
    print("RESULT " + json.dumps({
        "texts": texts,
        "count": backend.count_tokens(probe),
        "context_window": backend.context_window,
        "fim_style": backend.fim_style,
    }))
"""

PROBE = "def area(radius):\n    return 3.14 * radius ** 2\n"


def _requests(stop: str) -> list[GenerationRequest]:
    return [
        *(GenerationRequest(p, max_tokens=24) for p in PROMPTS),
        GenerationRequest(PROMPTS[0], max_tokens=24, stop=(stop,)),
    ]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tinymodel.build_tiny_model(tmp_path_factory.mktemp("tiny-llama"), fim="codellama")


@pytest.fixture(scope="module")
def reference(tiny_model: Path) -> dict[str, Any]:
    """Greedy texts from ``transformers``, and a stop string that cuts the first one."""
    from repomem.completion.backends.transformers import TransformersBackend

    backend = TransformersBackend(str(tiny_model), device="cpu")
    plain = asyncio.run(backend.complete_batch(_requests("\x00")[:-1]))
    stop = plain[0][len(plain[0]) // 2 : len(plain[0]) // 2 + 2]
    requests = _requests(stop)
    texts = asyncio.run(backend.complete_batch(requests))
    return {"requests": requests, "texts": texts, "count": backend.count_tokens(PROBE)}


@pytest.fixture(scope="module")
def server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """vLLM's OpenAI-compatible server on 127.0.0.1, started first so it loads while the
    in-process engine runs.

    It is started as a module: the ``vllm serve`` command of vllm-cpu 0.32.0 looks up its own
    version under the distribution name ``vllm`` and exits, as vllm-cpu is named otherwise.
    """
    port = free_port()
    log_path = tmp_path_factory.mktemp("vllm-serve") / "serve.log"
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model),
        "--host", "127.0.0.1", "--port", str(port),
        "--served-model-name", SERVED_NAME,
        "--dtype", "float32", "--enforce-eager",
        "--max-model-len", str(CONTEXT_WINDOW),
        *(("--gpu-memory-utilization", GPU_MEMORY) if GPU_MEMORY else ()),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **ENGINE_ENV},
            start_new_session=True,
        )
    info = {"process": process, "port": port, "log": log_path, "started": time.monotonic()}
    try:
        yield info
    finally:
        _stop_group(process)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """End the server and the engine processes it started (its own process group)."""
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_until_serving(info: dict[str, Any]) -> str:
    url = f"http://127.0.0.1:{info['port']}"
    deadline = info["started"] + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if info["process"].poll() is not None:
            pytest.fail(f"vllm serve exited:\n{info['log'].read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return f"{url}/v1"
        except OSError:
            time.sleep(1.0)
    pytest.fail(
        f"vllm serve did not start in {START_TIMEOUT_S} s:\n{info['log'].read_text()[-4000:]}"
    )


@pytest.fixture(scope="module")
def offline(
    tiny_model: Path,
    reference: dict[str, Any],
    server: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    script = tmp_path_factory.mktemp("vllm-offline") / "run_vllm.py"
    script.write_text(OFFLINE_SCRIPT)
    requests = json.dumps([asdict(r) for r in reference["requests"]])
    engine = json.dumps({"gpu_memory_utilization": float(GPU_MEMORY)} if GPU_MEMORY else {})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script), str(tiny_model), str(CONTEXT_WINDOW), requests, PROBE]
        + [engine],
        capture_output=True,
        text=True,
        env={**os.environ, **ENGINE_ENV},
        timeout=START_TIMEOUT_S,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        pytest.fail(f"the vLLM script failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result = json.loads(lines[-1].removeprefix("RESULT "))
    result["seconds"] = time.monotonic() - started
    return result


def test_vllm_in_process_writes_the_transformers_greedy_text(
    offline: dict[str, Any], reference: dict[str, Any]
) -> None:
    print(f"vLLM offline: {offline['seconds']:.1f} s; texts {offline['texts']!r}")
    assert all(offline["texts"])
    assert offline["texts"] == reference["texts"]
    assert len(offline["texts"][-1]) < len(offline["texts"][0]), "the stop string cut"
    assert offline["count"] == reference["count"]
    assert offline["context_window"] == CONTEXT_WINDOW
    assert offline["fim_style"] == "codellama"


def test_openai_backend_on_vllm_serve_writes_the_same_text(
    server: dict[str, Any], offline: dict[str, Any], reference: dict[str, Any]
) -> None:
    url = _wait_until_serving(server)
    print(f"vllm serve ready after {time.monotonic() - server['started']:.1f} s")
    backend = OpenAIBackend(url, SERVED_NAME, timeout=60.0)

    async def complete() -> list[str]:
        try:
            return await backend.complete_batch(reference["requests"])
        finally:
            await backend.aclose()

    texts = asyncio.run(complete())
    print(f"vllm serve texts {texts!r}")
    assert texts == offline["texts"]
    assert texts == reference["texts"]
    assert backend.count_tokens(PROBE) == reference["count"]
    assert backend.token_counter == "server"
