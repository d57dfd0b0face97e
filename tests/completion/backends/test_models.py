"""Where a model backend loads its model from (``models.model_source``), and the in-process
vLLM backend's errors when it cannot start: only an explicit ``hf:`` name reaches the network,
and every bad setting says which setting to fix."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from repomem.completion.backends.base import BackendError
from repomem.completion.backends.models import HUB_PREFIX, ModelSource, model_source
from repomem.completion.backends.vllm import VLLMBackend


def test_a_model_directory_is_local(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    assert model_source(str(tmp_path), "transformers") == ModelSource(str(tmp_path.resolve()), True)


def test_a_hub_name_is_not_local() -> None:
    assert model_source(f"{HUB_PREFIX}org/tiny", "vllm") == ModelSource("org/tiny", local=False)


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (None, "needs a model"),
        ("", "needs a model"),
        (HUB_PREFIX, "hf:ORG/NAME"),
        ("org/tiny", "no model directory"),  # a bare Hub id is a path: no silent download
    ],
)
def test_bad_models_name_the_setting(model: str | None, says: str) -> None:
    with pytest.raises(BackendError, match="backend.model") as caught:
        model_source(model, "transformers")
    assert says in str(caught.value)


def test_a_directory_without_config_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="no config.json"):
        model_source(str(tmp_path), "transformers")


def test_vllm_checks_the_model_before_the_engine() -> None:
    with pytest.raises(BackendError, match="backend 'vllm' needs a model"):
        VLLMBackend(None)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_missing_says_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BackendError, match="needs the vllm package") as caught:
        VLLMBackend(str(tmp_path))
    assert "pip install" in str(caught.value)
