"""A local Hugging Face model directory, run with ``transformers`` on the CPU or a GPU.

Only an explicit ``hf:ORG/NAME`` model may be downloaded (and ``HF_HUB_OFFLINE`` still
forbids it); a plain path is loaded with ``local_files_only=True``. Generation runs in a worker
thread so the event loop keeps serving the editor, and a cancelled request stops the model at
its next token instead of finishing the batch.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from repomem.completion.backends.base import Backend, BackendError, GenerationRequest
from repomem.completion.backends.fim import resolve_fim_style
from repomem.completion.backends.models import HUB_PREFIX, model_source

if TYPE_CHECKING:
    import torch

DEFAULT_CONTEXT_WINDOW = 4096
#: config fields different architectures use for the longest sequence they were trained on
_POSITION_FIELDS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the earliest stop string, which is what OpenAI-compatible servers return."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    return text[:cut]


def _import_torch_transformers() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise BackendError(
            f"backend 'transformers' needs torch and transformers ({exc.name or exc} is missing):"
            " install the `transformers` extra (in a clone of repomem: pip install"
            " '.[transformers]')"
        ) from exc
    return torch, transformers


def _pick_device(torch: Any, device: str | None) -> Any:
    if device is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        chosen = torch.device(device)
    except RuntimeError as exc:
        raise BackendError(f"`backend.device` {device!r} is not a torch device: {exc}") from exc
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise BackendError(
            f"`backend.device` is {device!r} but torch sees no CUDA device; set it to 'cpu'"
        )
    return chosen


class _StopPerRequest:
    """Stops each row of a batch at its own stop strings and token budget, or all on cancel.

    ``generate`` pads the finished rows and ends the batch once every row is done, rather than
    at the largest budget; a cancelled batch ends at the next token.
    """

    def __init__(
        self,
        tokenizer: Any,
        prompt_length: int,
        requests: Sequence[GenerationRequest],
        cancelled: threading.Event,
    ) -> None:
        self._tokenizer = tokenizer
        self._prompt_length = prompt_length
        self._requests = requests
        self._cancelled = cancelled

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        import torch

        if self._cancelled.is_set():
            return torch.ones(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        generated = input_ids[:, self._prompt_length :]
        done = []
        for row, request in zip(generated, self._requests, strict=True):
            if generated.shape[1] >= request.max_tokens:
                done.append(True)
                continue
            text = self._tokenizer.decode(row, skip_special_tokens=True) if request.stop else ""
            done.append(any(stop in text for stop in request.stop))
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class TransformersBackend(Backend):
    """Completions from a causal language model loaded with ``transformers``."""

    name = "transformers"

    def __init__(
        self,
        model: str | None,
        *,
        device: str | None = None,
        context_window: int | None = None,
        fim: str | None = None,
        temperature: float = 0.0,
    ) -> None:
        source = model_source(model, self.name)
        torch, transformers = _import_torch_transformers()
        self._torch = torch
        self.device = _pick_device(torch, device)
        self.temperature = temperature
        self.model_name = source.name
        load_args: dict[str, Any] = {"local_files_only": True} if source.local else {}
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(source.name, **load_args)
            self._model = transformers.AutoModelForCausalLM.from_pretrained(
                source.name,
                dtype=torch.float32 if self.device.type == "cpu" else "auto",
                **load_args,
            )
        except (OSError, ValueError) as exc:
            raise BackendError(self._load_error(model or "", source.local, exc)) from exc
        try:
            self._model.to(self.device)
        except RuntimeError as exc:
            raise BackendError(
                f"cannot put the model on `backend.device` {str(self.device)!r}: {exc}"
            ) from exc
        self._model.eval()
        self._tokenizer.padding_side = "left"
        self._pad_id = self._tokenizer.pad_token_id
        if self._pad_id is None:
            self._pad_id = self._tokenizer.eos_token_id
        self._tokenizer.pad_token_id = self._pad_id
        self.context_window = context_window or self._model_context_window()
        self.fim_style = resolve_fim_style(fim, self._tokenizer.get_vocab())
        self._lock = threading.Lock()

    @staticmethod
    def _load_error(model: str, local: bool, exc: Exception) -> str:
        if local:
            return f"cannot load the model in {model} (setting `backend.model`): {exc}"
        hint = ""
        if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
            hint = "; HF_HUB_OFFLINE is set, so only models already in the local cache load"
        return (
            f"cannot load {model} from the Hugging Face Hub (setting `backend.model`{hint}):"
            f" {exc}; for a local model give its directory without {HUB_PREFIX}"
        )

    def _model_context_window(self) -> int:
        config = self._model.config
        for field in _POSITION_FIELDS:
            value = getattr(config, field, None)
            if isinstance(value, int) and value > 0:
                return value
        return DEFAULT_CONTEXT_WINDOW

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        if not requests:
            return []
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._generate, list(requests), cancelled)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def _prompt_ids(self, prompt: str) -> list[int]:
        ids = self._tokenizer(prompt)["input_ids"]
        if not ids and self._tokenizer.bos_token_id is not None:
            ids = [self._tokenizer.bos_token_id]
        return ids

    def _generate(self, requests: list[GenerationRequest], cancelled: threading.Event) -> list[str]:
        texts = [""] * len(requests)
        prompts = [self._prompt_ids(r.prompt) for r in requests]
        todo = [i for i, r in enumerate(requests) if r.max_tokens > 0 and prompts[i]]
        if not todo:
            return texts
        batch = [requests[i] for i in todo]
        with self._lock:
            if cancelled.is_set():
                return texts
            output, prompt_length = self._run_model([prompts[i] for i in todo], batch, cancelled)
        for i, row, request in zip(todo, output, batch, strict=True):
            new_tokens = row[prompt_length : prompt_length + request.max_tokens]
            text = self._tokenizer.decode(new_tokens, skip_special_tokens=True)
            texts[i] = cut_at_stop(text, request.stop)
        return texts

    def _run_model(
        self,
        prompts: list[list[int]],
        requests: list[GenerationRequest],
        cancelled: threading.Event,
    ) -> tuple[Any, int]:
        torch = self._torch
        from transformers import StoppingCriteriaList

        inputs = self._tokenizer.pad({"input_ids": prompts}, return_tensors="pt").to(self.device)
        prompt_length = inputs["input_ids"].shape[1]
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": self.temperature}
            if self.temperature > 0
            else {"do_sample": False}
        )
        stop = _StopPerRequest(self._tokenizer, prompt_length, requests, cancelled)
        try:
            with torch.inference_mode():
                output = self._model.generate(
                    **inputs,
                    max_new_tokens=max(r.max_tokens for r in requests),
                    stopping_criteria=StoppingCriteriaList([stop]),
                    pad_token_id=self._pad_id,
                    **sampling,
                )
        except RuntimeError as exc:
            raise BackendError(
                f"the model in {self.model_name} failed to generate on {self.device}: {exc}"
            ) from exc
        return output.cpu(), prompt_length
