"""Turns ``BackendConfig`` into a backend, and model settings into a place to load from.

Backend modules are imported only when chosen: torch, transformers and vllm take seconds to
import and may not be installed, and ``import repomem`` must stay light.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from repomem.completion.backends.base import Backend, BackendError
from repomem.config import BackendConfig, out_of_range

# "builtin-match" (copying from the retrieved fragments only) and "builtin-naive" (the copy
# baseline) are the built-in backend's earlier strategies, kept for side-by-side benchmarks
BUILTIN_STRATEGIES: dict[str, str] = {
    "builtin": "repo",
    "builtin-match": "match",
    "builtin-naive": "naive",
}
BACKEND_NAMES: tuple[str, ...] = (*BUILTIN_STRATEGIES, "transformers", "vllm", "openai")

#: a model named with this prefix is fetched from the Hugging Face Hub; anything else is a path
HUB_PREFIX = "hf:"


@dataclass(frozen=True)
class ModelSource:
    """A model to load: a local directory, or a Hub repository the user asked for by name."""

    name: str  # absolute directory path, or the Hub repository id (without ``hf:``)
    local: bool


def model_source(model: str | None, backend: str) -> ModelSource:
    """Resolve the ``model`` setting; only an explicit ``hf:ORG/NAME`` may reach the network."""
    if not model:
        raise BackendError(
            f"backend {backend!r} needs a model: set `backend.model` to a model directory"
        )
    if model.startswith(HUB_PREFIX):
        repo_id = model[len(HUB_PREFIX) :]
        if not repo_id:
            raise BackendError(f"`backend.model` is {model!r}: name the model as hf:ORG/NAME")
        return ModelSource(repo_id, local=False)
    path = Path(model).expanduser()
    if not path.is_dir():
        raise BackendError(
            f"no model directory at {path} (setting `backend.model`); to download a model from"
            f" the Hugging Face Hub instead, name it as {HUB_PREFIX}ORG/NAME"
        )
    if not (path / "config.json").is_file():
        raise BackendError(
            f"{path} is not a model directory: it has no config.json (setting `backend.model`)"
        )
    return ModelSource(str(path.resolve()), local=True)


def check_backend_config(config: BackendConfig) -> None:
    """Reject settings no backend can use, naming the setting: the backend's name, and each
    value's range as the settings check it (for a config built in code, not loaded)."""
    if config.backend not in BACKEND_NAMES:
        raise BackendError(
            f"unknown backend {config.backend!r} in setting `backend`:"
            f" choose one of {', '.join(BACKEND_NAMES)}"
        )
    for spec in fields(config):
        value = getattr(config, spec.name)
        wanted = out_of_range(BackendConfig, spec.name, value)
        if wanted is not None:
            raise BackendError(f"`backend.{spec.name}` must be {wanted}, not {value!r}")


def create_backend(config: BackendConfig) -> Backend:
    """The backend ``config`` asks for, ready to complete; errors name the setting to fix."""
    check_backend_config(config)
    if config.backend in BUILTIN_STRATEGIES:
        from repomem.completion.backends.builtin import BuiltinBackend

        return BuiltinBackend(BUILTIN_STRATEGIES[config.backend])
    if config.backend == "transformers":
        from repomem.completion.backends.transformers import TransformersBackend

        return TransformersBackend(
            config.model,
            device=config.device,
            context_window=config.context_window,
            fim=config.fim,
            temperature=config.temperature,
        )
    if config.backend == "vllm":
        from repomem.completion.backends.vllm import VLLMBackend

        return VLLMBackend(
            config.model,
            context_window=config.context_window,
            fim=config.fim,
            temperature=config.temperature,
        )
    from repomem.completion.backends.openai import OpenAIBackend

    return OpenAIBackend(
        config.url,
        config.model,
        api_key_env=config.api_key_env,
        timeout=config.timeout,
        max_retries=config.max_retries,
        context_window=config.context_window,
        fim=config.fim,
        temperature=config.temperature,
    )
