"""Settings that arrive from the editor, validated one key at a time.

The editor sends ``{"repomem": {...}}`` (in ``initializationOptions``, in
``workspace/didChangeConfiguration`` or as the ``repomem`` section of
``workspace/configuration``). Inside, ``backend``, ``completion`` and ``index`` are the sections
of ``.repomem.toml`` (keys in snake_case or camelCase); ``enable``, ``debounceMs`` and
``indexDelayMs`` belong to the server. A language server must not die of a typo, so each bad
value is reported and replaced by the value it would otherwise have had, while the good values
around it still apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from repomem.settings import SECTIONS, Settings, SettingsError, merge_settings

SECTION = "repomem"
SOURCE = "editor settings"
DEFAULT_INDEX_DELAY_MS = 150
MAX_MS = 10_000

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class EditorSettings:
    """What the server runs with: the library's settings plus the server's own switches.

    ``enable``: answer completion requests at all. ``debounce_ms``: how long a completion
    request waits for a newer one from the same document (None: adaptive, see
    :class:`lsp_server.streams.Rhythm`). ``index_delay_ms``: how long a document must be quiet
    before its new text is indexed.
    """

    settings: Settings = field(default_factory=Settings)
    enable: bool = True
    debounce_ms: int | None = None
    index_delay_ms: int = DEFAULT_INDEX_DELAY_MS

    def to_dict(self) -> dict[str, Any]:
        """The effective settings as the editor would write them (for ``repomem/status``)."""
        return {
            "enable": self.enable,
            "debounceMs": self.debounce_ms,
            "indexDelayMs": self.index_delay_ms,
            **{name: asdict(getattr(self.settings, name)) for name in SECTIONS},
        }


def _is_ms(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MS


# the server's own switches: snake_case name -> (editor's spelling, valid?, what is valid)
_SWITCHES: dict[str, tuple[str, Any, str]] = {
    "enable": ("enable", lambda v: isinstance(v, bool), "true or false"),
    "debounce_ms": (
        "debounceMs",
        lambda v: v is None or _is_ms(v),
        f"an integer from 0 to {MAX_MS} (or null: adaptive)",
    ),
    "index_delay_ms": ("indexDelayMs", _is_ms, f"an integer from 0 to {MAX_MS}"),
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
    editor = EditorSettings(base)
    if data is None:
        return editor, []
    if not isinstance(data, Mapping):
        return editor, [
            f"{SOURCE}: `{SECTION}` must be an object, got {type(data).__name__}; using defaults"
        ]
    problems: list[str] = []
    settings = base
    for key, value in data.items():
        name = snake_case(str(key))
        if name in _SWITCHES:
            spelling, valid, expected = _SWITCHES[name]
            if valid(value):
                editor = replace(editor, **{name: value})
            else:
                problems.append(
                    f"{SOURCE}: {SECTION}.{spelling} must be {expected}, got {value!r};"
                    f" using {getattr(editor, name)!r}"
                )
        elif name in SECTIONS:
            settings = _merge_section(settings, name, value, problems)
        else:
            known = ", ".join([*(s[0] for s in _SWITCHES.values()), *SECTIONS])
            problems.append(f"{SOURCE}: unknown setting {SECTION}.{key} (known: {known})")
    return replace(editor, settings=settings), problems


def _merge_section(settings: Settings, section: str, values: Any, problems: list[str]) -> Settings:
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
            current = getattr(settings, section)
            keeping = f"; using {getattr(current, name)!r}" if hasattr(current, name) else ""
            problems.append(f"{exc}{keeping}")
    return settings
