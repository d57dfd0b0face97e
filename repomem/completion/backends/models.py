"""Where a model backend loads its model from: a local directory, or the Hugging Face Hub when
the user names a model ``hf:ORG/NAME``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repomem.completion.backends.base import BackendError

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
