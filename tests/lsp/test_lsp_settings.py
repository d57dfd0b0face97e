"""Editor settings for the language server: validated key by key, bad values reported."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from lsp_server.editor_settings import (
    DEFAULT_INDEX_DELAY_MS,
    EditorSettings,
    resolve,
)
from repomem.settings import Settings, SettingsError, load_settings, merge_settings


def test_nothing_sent_means_the_base_settings() -> None:
    base = Settings()
    assert resolve(base, None) == (EditorSettings(base), [])
    assert resolve(base, {"other-extension": {"x": 1}})[0] == EditorSettings(base)


def test_values_apply_wrapped_or_not_and_in_either_case_style() -> None:
    data = {
        "enable": False,
        "debounceMs": 120,
        "index_delay_ms": 0,
        "completion": {"maxTokensLine": 32, "alpha": 0},
        "backend": {"backend": "openai", "url": "http://127.0.0.1:9/v1"},
        "index": {"ignore_patterns": ["build/"]},
    }
    editor, problems = resolve(Settings(), {"repomem": data})
    assert problems == []
    assert resolve(Settings(), data) == (editor, [])
    assert (editor.enable, editor.debounce_ms, editor.index_delay_ms) == (False, 120, 0)
    assert editor.settings.completion.max_tokens_line == 32
    assert editor.settings.completion.alpha == 0.0
    assert editor.settings.backend.url == "http://127.0.0.1:9/v1"
    assert editor.settings.index.ignore_patterns == ("build/",)


def test_each_bad_value_is_reported_and_the_good_ones_still_apply() -> None:
    base = Settings()
    base = replace(base, completion=replace(base.completion, k=5))
    data = {
        "completion": {"k": 0, "alpha": 0.25, "windows": 3},
        "backend": {"timeout": "soon"},
        "enable": "yes",
        "debounceMs": -1,
        "indexDelayMs": 1.5,
        "colour": "blue",
        "index": [],
    }
    editor, problems = resolve(base, data)
    assert editor.settings.completion.k == 5  # the value it had before, not the library default
    assert editor.settings.completion.alpha == 0.25
    assert editor.settings.backend.timeout == base.backend.timeout
    assert (editor.enable, editor.debounce_ms, editor.index_delay_ms) == (
        True,
        None,  # adaptive
        DEFAULT_INDEX_DELAY_MS,
    )
    assert len(problems) == 8
    joined = "\n".join(problems)
    for needle in (
        "completion.k must be at least 1, got 0; using 5",
        "unknown key completion.windows",
        "backend.timeout must be a number",
        "repomem.enable must be true or false, got 'yes'; using True",
        "repomem.debounceMs must be an integer from 0 to 10000 (or null: adaptive), got -1;"
        " using None",
        "repomem.indexDelayMs must be an integer",
        "unknown setting repomem.colour",
        "repomem.index must be an object",
    ):
        assert needle in joined


def test_a_value_that_is_not_an_object_keeps_the_defaults() -> None:
    editor, problems = resolve(Settings(), {"repomem": "fast"})
    assert editor == EditorSettings(Settings())
    assert problems and "must be an object" in problems[0]


def test_effective_settings_are_reported_in_the_editors_spelling() -> None:
    editor, _ = resolve(Settings(), {"debounceMs": 5, "completion": {"k": 3}})
    shown = editor.to_dict()
    assert (shown["debounceMs"], shown["enable"], shown["completion"]["k"]) == (5, True, 3)
    assert set(shown) == {
        "enable",
        "debounceMs",
        "indexDelayMs",
        "index",
        "backend",
        "completion",
        "docmem",
    }


def test_docmem_settings_are_validated_like_the_others(tmp_path: Path) -> None:
    (tmp_path / ".repomem.toml").write_text("[docmem]\nmax_segment_words = 120\nw_rel = 0.2\n")
    settings = load_settings(tmp_path, environ={"REPOMEM_DOCMEM_ALPHA": "0.25"})
    assert (settings.docmem.max_segment_words, settings.docmem.w_rel) == (120, 0.2)
    assert settings.docmem.alpha == 0.25
    with pytest.raises(SettingsError, match=r"docmem.w_rel must be in \[0, 1\), got 1.5"):
        load_settings(None, environ={"REPOMEM_DOCMEM_W_REL": "1.5"})
    with pytest.raises(SettingsError, match="unknown key docmem.segment_size"):
        merge_settings(Settings(), {"docmem": {"segment_size": 10}}, "test")
    editor, problems = resolve(Settings(), {"docmem": {"minSegmentWords": 0}})
    assert editor.settings.docmem.min_segment_words == 40
    assert problems == [
        "editor settings: docmem.min_segment_words must be at least 1, got 0; using 40"
    ]
