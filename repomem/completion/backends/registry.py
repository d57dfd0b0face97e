"""Turns ``BackendConfig`` into a backend (models to load are found by ``models.py``).

Backend modules are imported only when chosen: torch, transformers and vllm take seconds to
import and may not be installed, and ``import repomem`` must stay light.
"""

from __future__ import annotations

from dataclasses import fields

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
