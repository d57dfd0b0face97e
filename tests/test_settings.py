"""Settings: sources, precedence (flags > environment > files > defaults) and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from repomem.config import BackendConfig, CompletionConfig, IndexConfig
from repomem.settings import (
    Settings,
    SettingsError,
    load_settings,
    merge_settings,
    repository_tables,
)
from repomem.trust import trust


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def trust_settings(root: Path) -> None:
    """As ``repomem trust ROOT``: the repository's files may set every key."""
    trust(root, {path.name: table for path, table, _ in repository_tables(root)})


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={})
    assert settings == Settings(IndexConfig(), BackendConfig(), CompletionConfig())
    assert settings.completion.k == 10
    assert settings.completion.alpha == 0.0  # plain BM25: FragRel measured no better
    assert settings.completion.iterations == 2
    assert settings.completion.query_lines == 20
    assert settings.completion.retrieved_budget_fraction == 0.5
    assert settings.completion.max_fragments == 10


def test_pyproject_tool_table_is_read(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n'
        "[tool.repomem.backend]\n"
        'backend = "openai"\nurl = "http://gpu:8000/v1"\ncontext_window = 8192\n\n'
        "[tool.repomem.completion]\nalpha = 0\niterations = 3\n\n"
        '[tool.repomem.index]\nignore_patterns = ["vendor/**"]\n',
    )
    trust_settings(tmp_path)
    settings = load_settings(tmp_path, environ={})
    assert settings.backend.backend == "openai"
    assert settings.backend.url == "http://gpu:8000/v1"
    assert settings.backend.context_window == 8192
    assert settings.completion.alpha == 0.0 and isinstance(settings.completion.alpha, float)
    assert settings.completion.iterations == 3
    assert settings.index.ignore_patterns == ("vendor/**",)
    assert settings.completion.k == 10  # untouched keys keep their defaults


def test_pyproject_without_tool_table_is_fine(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 90\n')
    assert load_settings(tmp_path, environ={}) == Settings()


def test_precedence_flags_over_environment_over_files(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.repomem.backend]\nurl = "http://pyproject/v1"\nmodel = "from-pyproject"\n'
        "timeout = 5\n[tool.repomem.completion]\nk = 3\n",
    )
    write(tmp_path / ".repomem.toml", '[backend]\nurl = "http://dotfile/v1"\ntimeout = 7\n')
    environ = {"REPOMEM_BACKEND_URL": "http://env/v1", "REPOMEM_COMPLETION_K": "4"}
    trust_settings(tmp_path)

    files_only = load_settings(tmp_path, environ={})
    assert files_only.backend.url == "http://dotfile/v1"  # .repomem.toml over pyproject.toml
    assert files_only.backend.model == "from-pyproject"
    assert files_only.backend.timeout == 7.0

    with_env = load_settings(tmp_path, environ=environ)
    assert with_env.backend.url == "http://env/v1"
    assert with_env.completion.k == 4
    assert with_env.backend.timeout == 7.0

    with_flags = load_settings(
        tmp_path,
        environ=environ,
        overrides={"backend": {"url": "http://flag/v1", "model": None}, "completion": {"k": 9}},
    )
    assert with_flags.backend.url == "http://flag/v1"
    assert with_flags.completion.k == 9
    assert with_flags.backend.model == "from-pyproject"  # a flag not given changes nothing


def test_environment_values_are_parsed_by_type(tmp_path: Path) -> None:
    settings = load_settings(
        None,
        environ={
            "REPOMEM_COMPLETION_ALPHA": "0.25",
            "REPOMEM_INDEX_EXCLUDE_SECRETS": "off",
            "REPOMEM_INDEX_IGNORE_PATTERNS": "build/**, *.min.js",
            "REPOMEM_BACKEND_CONTEXT_WINDOW": "",
            "REPOMEM_BACKEND_FIM": "none",
            "REPOMEM_API_KEY": "not a setting: names the key, read by the backend",
            "HOME": "/home/someone",
        },
    )
    assert settings.completion.alpha == 0.25
    assert settings.index.exclude_secrets is False
    assert settings.index.ignore_patterns == ("build/**", "*.min.js")
    assert settings.backend.context_window is None
    assert settings.backend.fim == "none"  # "none" switches infilling off; unset detects it


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[backend]\nurll = 'x'\n", "unknown key backend.urll"),
        ("[completion]\nk = 'ten'\n", "completion.k must be an integer"),
        ("[completion]\nk = true\n", "completion.k must be an integer"),
        ("[completion]\nalpha = -1\n", "completion.alpha must be at least 0"),
        ("[completion]\nretrieved_budget_fraction = 1.5\n", "between 0 and 1"),
        ("[backend]\nfim = 'gpt'\n", "backend.fim must be one of"),
        ("[index]\nignore_patterns = 'vendor'\n", "index.ignore_patterns must be a list"),
        ("[retrieval]\nk = 3\n", "unknown section 'retrieval'"),
        ("backend = 'openai'\n", "'backend' must be a table"),
        ("[backend\nurl = 1\n", "not valid TOML"),
    ],
)
def test_bad_file_values_name_the_key_and_the_file(
    tmp_path: Path, text: str, fragment: str
) -> None:
    dotfile = write(tmp_path / ".repomem.toml", text)
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, environ={})
    assert fragment in str(info.value)
    assert str(dotfile) in str(info.value)


def test_bad_pyproject_value_names_the_tool_table(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.repomem.completion]\niterations = 0\n")
    with pytest.raises(SettingsError, match=r"pyproject\.toml \[tool\.repomem\].*at least 1"):
        load_settings(tmp_path, environ={})


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("REPOMEM_COMPLETION_K", "many", "completion.k must be an integer"),
        ("REPOMEM_COMPLETION_ALPHA", "nan", "a finite number"),
        ("REPOMEM_INDEX_EXCLUDE_SECRETS", "maybe", "true or false"),
        ("REPOMEM_BACKEND_URLL", "http://x", "unknown setting"),
    ],
)
def test_bad_environment_values_name_the_variable(name: str, value: str, fragment: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(None, environ={name: value})
    assert name in str(info.value)
    assert fragment in str(info.value)


def test_bad_flag_value_names_the_command_line() -> None:
    with pytest.raises(SettingsError, match=r"command line: completion\.k must be at least 1"):
        load_settings(None, environ={}, overrides={"completion": {"k": 0}})


@pytest.mark.parametrize("weight", ["0.5", "1.0", "-0.1"])
def test_import_weight_needs_a_cost_of_its_own(weight: str) -> None:
    with pytest.raises(SettingsError, match=r"REPOMEM_INDEX_IMPORT_WEIGHT.*other than the weights"):
        load_settings(None, environ={"REPOMEM_INDEX_IMPORT_WEIGHT": weight})
    assert (
        load_settings(None, environ={"REPOMEM_INDEX_IMPORT_WEIGHT": "0.6"}).index.import_weight
        == 0.6
    )


def test_merge_settings_takes_editor_json() -> None:
    merged = merge_settings(
        Settings(), {"completion": {"iterations": 1}, "backend": {"fim": None}}, "editor"
    )
    assert merged.completion.iterations == 1
    assert merged.backend.fim is None
    with pytest.raises(SettingsError, match=r"^editor: expected a table"):
        merge_settings(Settings(), ["completion"], "editor")


def test_a_renamed_key_still_applies_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``completion.window`` became ``completion.query_lines``: settings files, the
    environment and the editor that still say ``window`` keep working, and the user is told
    once per process, not at every read."""
    from lsp_server.editor_settings import resolve
    from repomem import settings as settings_module

    monkeypatch.setattr(settings_module, "_told_renamed", set())
    write(tmp_path / ".repomem.toml", "[completion]\nwindow = 12\n")
    with caplog.at_level("WARNING", logger="repomem.settings"):
        assert load_settings(tmp_path, environ={}).completion.query_lines == 12
        assert load_settings(tmp_path, environ={}).completion.query_lines == 12
        from_env = load_settings(None, environ={"REPOMEM_COMPLETION_WINDOW": "7"})
        editor, problems = resolve(Settings(), {"completion": {"window": 9}})
    assert from_env.completion.query_lines == 7
    assert editor.settings.completion.query_lines == 9 and problems == []
    told = [r.getMessage() for r in caplog.records if "query_lines" in r.getMessage()]
    assert len(told) == 1 and "completion.window is now called completion.query_lines" in told[0]
    with pytest.raises(SettingsError, match="completion.query_lines must be at least 1"):
        merge_settings(Settings(), {"completion": {"window": 0}}, "test")


def test_the_index_window_is_now_fragment_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``index.window`` (a fragment's lines) became ``index.fragment_lines``; the old name in a
    settings file or the environment still sets it, and is range-checked under the new name."""
    from repomem import settings as settings_module

    monkeypatch.setattr(settings_module, "_told_renamed", set())
    write(tmp_path / ".repomem.toml", "[index]\nwindow = 30\n")
    assert load_settings(tmp_path, environ={}).index.fragment_lines == 30
    from_env = load_settings(None, environ={"REPOMEM_INDEX_WINDOW": "12"})
    assert from_env.index.fragment_lines == 12
    with pytest.raises(SettingsError, match="index.fragment_lines must be at least 1"):
        merge_settings(Settings(), {"index": {"window": 0}}, "test")
