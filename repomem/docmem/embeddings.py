"""Sentence embeddings from a local model directory, for the semantic relation (Eq. 6).

Optional: only used when an embedding model directory is configured. The directory is loaded
with ``transformers`` (``local_files_only``; nothing is downloaded) and a text's embedding is
the attention-masked mean of the last hidden states, scaled to unit length, which is how
sentence-transformers models are pooled by default.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np

from repomem.errors import RepomemError

_MAX_TOKENS = 512
_BATCH = 16


class EmbeddingError(RepomemError):
    """The configured embedding model cannot be loaded or run."""


class Embedder:
    def __init__(self, directory: str | Path) -> None:
        path = Path(directory).expanduser()
        if not (path / "config.json").is_file():
            raise EmbeddingError(
                f"no embedding model at {path} (--embedding-model): expected a model directory"
                " with a config.json"
            )
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"an embedding model needs torch and transformers ({exc.name} is missing):"
                " in a clone of repomem, pip install '.[transformers]'"
            ) from exc
        self._torch: Any = torch
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self._model = AutoModel.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot load the embedding model in {path}: {exc}") from exc
        self._model.eval()
        # decoder models take no token_type_ids; pass only what forward() accepts
        self._inputs = set(inspect.signature(self._model.forward).parameters)
        if self._tokenizer.pad_token_id is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token or self._tokenizer.unk_token
        self.name = str(path.resolve())

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text."""
        torch = self._torch
        out = []
        for start in range(0, len(texts), _BATCH):
            batch = texts[start : start + _BATCH]
            enc = self._tokenizer(
                batch, padding=True, truncation=True, max_length=_MAX_TOKENS, return_tensors="pt"
            )
            inputs = {k: v for k, v in enc.items() if k in self._inputs}
            with torch.inference_mode():
                hidden = self._model(**inputs).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            out.append(pooled.float().cpu().numpy())
        if not out:
            return np.zeros((0, 0), np.float32)
        vectors = np.concatenate(out).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
