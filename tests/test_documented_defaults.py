"""Every default the project states outside the settings' own definitions (``--help``, the
READMEs, the VS Code extension's settings) is the definition's value: a changed default that
one place still states the old way fails here."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from repos import run_repomem

from lsp_server.editor_settings import EditorSettings, snake_case
from repomem.config import CompletionConfig, out_of_range
from repomem.settings import SECTIONS, Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    "README.md",
    "lsp_server/README.md",
    "editors/vscode/README.md",
    "editors/nvim/README.md",
]
SWITCHES = {"enable": "enable", "debounceMs": "debounce_ms", "indexDelayMs": "index_delay_ms"}
# `section.key` (default VALUE), as --help and the prose say it
_PROSE = re.compile(r"`?\b([a-z]+)\.([a-z_]+)`?\s+\(default:?\s+`?([^)`;,]+)`?[);,]")
# a table row: | `key` | `default` | ...
_ROW = re.compile(r"^\|\s*`([A-Za-z_.]+)`\s*\|\s*`([^`]*)`\s*\|", re.M)


def defined(key: str) -> Any:
    """The definition's default for a documented key: ``section.key`` (snake or camelCase,
    with or without the ``repomem.`` prefix) or one of the server's own switches."""
    key = key.removeprefix("repomem.")
    if key in SWITCHES:
        return getattr(EditorSettings(), SWITCHES[key])
    section, _, name = key.partition(".")
    assert section in SECTIONS, f"{key}: not a setting"
    value = getattr(getattr(Settings(), section), snake_case(name))
    return list(value) if isinstance(value, tuple) else value


def same(documented: Any, value: Any) -> bool:
    if isinstance(documented, str):
        text = documented.strip()
        if value is None:
            return text in ("null", "None")
        if isinstance(value, bool):
            return text == str(value).lower()
        if isinstance(value, int | float):
            try:
                return float(text.replace("_", "")) == value
            except ValueError:
                return False
        # a path in the repository, as --help says it
        return text.strip("\"'").removeprefix("PATH/") == value
    return documented == value


def help_claims() -> list[tuple[str, str, str]]:
    claims = []
    for command in ("complete", "retrieve", "index"):
        out = run_repomem(command, "--help", env={**os.environ, "COLUMNS": "1000"})
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())
        claims += [(f"repomem {command} --help", f"{s}.{k}", v) for s, k, v in _PROSE.findall(text)]
    return claims


def doc_claims() -> list[tuple[str, str, str]]:
    claims = []
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        prose = " ".join(text.split())
        claims += [(name, f"{s}.{k}", v) for s, k, v in _PROSE.findall(prose) if s in SECTIONS]
        claims += [(name, key, value) for key, value in _ROW.findall(text) if is_setting(key)]
    return claims


def is_setting(key: str) -> bool:
    key = key.removeprefix("repomem.")
    return key in SWITCHES or key.partition(".")[0] in SECTIONS


def test_help_states_the_defaults_of_the_settings_it_sets():
    claims = help_claims()
    # the flags that set a setting name it, each with its default
    assert {key for _, key, _ in claims} >= {
        "completion.alpha",
        "completion.k",
        "completion.iterations",
        "index.relation_epsilon",
    }
    wrong = [c for c in claims if not same(c[2], defined(c[1]))]
    assert not wrong, [f"{w}: says {v}, defined {defined(k)!r}" for w, k, v in wrong]


def test_readmes_state_the_defined_defaults():
    claims = doc_claims()
    assert len(claims) >= 20  # the editors' tables are read
    wrong = [c for c in claims if not same(c[2], defined(c[1]))]
    assert not wrong, [f"{w}: {k} says {v}, defined {defined(k)!r}" for w, k, v in wrong]


def test_vscode_settings_default_to_the_defined_values():
    package = json.loads((ROOT / "editors/vscode/package.json").read_text(encoding="utf-8"))
    properties = package["contributes"]["configuration"]["properties"]
    checked = 0
    for name, schema in properties.items():
        if not is_setting(name) or "default" not in schema:
            continue  # the extension's own: serverPath, trace.server
        assert same(schema["default"], defined(name)), f"package.json {name}: {schema['default']!r}"
        checked += 1
    assert checked >= 20


def test_vscode_settings_bounds_and_choices_are_the_definitions():
    """Each bound and choice package.json states is the definition's range
    (``repomem.config.out_of_range``): in range on its side, out of range just past it."""
    package = json.loads((ROOT / "editors/vscode/package.json").read_text(encoding="utf-8"))
    properties = package["contributes"]["configuration"]["properties"]
    checked = 0
    for name, schema in properties.items():
        key = name.removeprefix("repomem.")
        section, _, field_name = key.partition(".")
        if section not in SECTIONS:
            continue  # the server's own switches and the extension's settings
        config, field_name = SECTIONS[section], snake_case(field_name)
        assert field_name in {f.name for f in fields(config)}, f"package.json {name}: no such key"

        step = 1 if "integer" in schema["type"] else 1e-9
        # a bound's value plus (a value in range, a value out of range)
        sides = {
            "minimum": (0, -step),
            "maximum": (0, step),
            "exclusiveMinimum": (step, 0),
            "exclusiveMaximum": (-step, 0),
        }
        for bound, (inside, outside) in sides.items():
            if bound in schema:
                value = schema[bound]
                assert out_of_range(config, field_name, value + inside) is None, (name, bound)
                assert out_of_range(config, field_name, value + outside), (name, bound)
                checked += 1
        for choice in schema.get("enum", ()):
            assert out_of_range(config, field_name, choice) is None, (name, choice)
    assert checked >= 15


def readme_section_keys() -> dict[str, set[str]]:
    """Per section, the keys the README's configuration paragraph lists
    ("Sections: `backend` (`backend` = ..., `model`, ...), ...")."""
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    start = text.index("Sections: ")
    listed = {}
    for section in SECTIONS:
        at = text.index(f"`{section}` (", start) + len(f"`{section}` (")
        depth, end = 1, at
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        listed[section] = set(re.findall(r"`([a-z_]+)`", text[at : end - 1]))
    return listed


def test_readme_lists_every_setting_of_every_section():
    listed = readme_section_keys()
    for section, config in SECTIONS.items():
        keys = {f.name for f in fields(config)}
        assert listed[section] == keys, (
            f"README's {section} keys: missing {sorted(keys - listed[section])},"
            f" not settings {sorted(listed[section] - keys)}"
        )


def test_help_defaults_come_from_the_definitions(monkeypatch):
    from repomem import settings

    changed = {**settings.SECTIONS, "completion": make_dataclass_with(CompletionConfig, k=7)}
    monkeypatch.setattr(settings, "SECTIONS", changed)
    assert settings.with_default("completion.k") == "completion.k (default 7)"
    assert settings.with_default("completion.alpha") == "completion.alpha (default 0)"
    assert (
        settings.with_default("index.relation_epsilon") == "index.relation_epsilon (default 0.05)"
    )


def make_dataclass_with(config: type, **defaults: Any) -> type:
    """``config`` with other defaults, as a changed definition would have them."""
    return dataclasses.make_dataclass(
        config.__name__,
        [
            (f.name, f.type, dataclasses.field(default=defaults.get(f.name, f.default)))
            for f in fields(config)
        ],
    )
