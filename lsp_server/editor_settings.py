"""Settings that arrive from the editor, validated one key at a time.

The editor sends ``{"repomem": {...}}`` (in ``initializationOptions``, in
``workspace/didChangeConfiguration`` or as the ``repomem`` section of
``workspace/configuration``). Inside, ``backend``, ``completion`` and ``index`` are the sections
of ``.repomem.toml`` (keys in snake_case or camelCase); ``enable`` and ``debounceMs`` belong to
the server. A language server must not die of a typo, so each bad value is reported and
replaced by the value it would otherwise have had, while the good values around it still apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from repomem.settings import SECTIONS, Settings, SettingsError, merge_settings

SECTION = "repomem"
DEFAULT_DEBOUNCE_MS = 30
MAX_DEBOUNCE_MS = 5000
SOURCE = "editor settings"

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class EditorSettings:
    """What the server runs with: the library's settings plus the server's own switches."""

    settings: Settings = field(default_factory=Settings)
    enable: bool = True
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    def to_dict(self) -> dict[str, Any]:
        """The effective settings as the editor would write them (for ``repomem/status``)."""
        return {
            "enable": self.enable,
            "debounceMs": self.debounce_ms,
            **{name: asdict(getattr(self.settings, name)) for name in SECTIONS},
        }


def snake_case(key: str) -> str:
    return _CAMEL.sub("_", key).lower()


def unwrap(data: Any) -> Any:
    """The ``repomem`` object inside whatever the editor sent (``None`` when nothing)."""
    if isinstance(data, Mapping) and SECTION in data:
        return data[SECTION]
    return data


def resolve(base: Settings, data: Any) -> tuple[EditorSettings, list[str]]:
    """``base`` with the editor's values applied, and one message per value that was rejected.

    ``data`` is the ``repomem`` object, or a mapping holding it under ``"repomem"``.
    """
    data = unwrap(data)
    if data is None:
        return EditorSettings(base), []
    if not isinstance(data, Mapping):
        return EditorSettings(base), [
            f"{SOURCE}: `{SECTION}` must be an object, got {type(data).__name__}; using defaults"
        ]
    problems: list[str] = []
    settings = base
    enable = True
    debounce_ms = DEFAULT_DEBOUNCE_MS
    for key, value in data.items():
        name = snake_case(str(key))
        if name == "enable":
            if isinstance(value, bool):
                enable = value
            else:
                problems.append(f"{SOURCE}: {SECTION}.enable must be true or false, got {value!r}")
        elif name == "debounce_ms":
            if _is_int(value) and 0 <= value <= MAX_DEBOUNCE_MS:
                debounce_ms = value
            else:
                problems.append(
                    f"{SOURCE}: {SECTION}.debounceMs must be an integer from 0 to"
                    f" {MAX_DEBOUNCE_MS}, got {value!r}; using {DEFAULT_DEBOUNCE_MS}"
                )
        elif name in SECTIONS:
            settings = _merge_section(settings, name, value, problems)
        else:
            known = ", ".join(["enable", "debounceMs", *SECTIONS])
            problems.append(f"{SOURCE}: unknown setting {SECTION}.{key} (known: {known})")
    return EditorSettings(settings, enable, debounce_ms), problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _merge_section(
    settings: Settings, section: str, values: Any, problems: list[str]
) -> Settings:
    if not isinstance(values, Mapping):
        problems.append(
            f"{SOURCE}: {SECTION}.{section} must be an object, got {type(values).__name__}"
        )
        return settings
    for key, value in values.items():
        name = snake_case(str(key))
        try:
            settings = merge_settings(settings, {section: {name: value}}, SOURCE)
        except SettingsError as exc:
            current = getattr(getattr(settings, section), name, None)
            keeping = f"; using {current!r}" if hasattr(getattr(settings, section), name) else ""
            problems.append(f"{exc}{keeping}")
    return settings
