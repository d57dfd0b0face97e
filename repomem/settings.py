"""One ``Settings`` object, assembled from every place a user can configure repomem.

Sources, later ones winning key by key: the documented defaults; the user's own settings
file (``$XDG_CONFIG_HOME/repomem/config.toml``, default ``~/.config/repomem/config.toml``,
sections as in ``.repomem.toml``); the repository's ``pyproject.toml``
(``[tool.repomem.<section>]``); its ``.repomem.toml`` (``[<section>]``); environment variables
``REPOMEM_<SECTION>_<KEY>`` (e.g. ``REPOMEM_BACKEND_URL``, ``REPOMEM_COMPLETION_ALPHA``);
command-line flags (and, in the language server, the editor's settings).

A repository is untrusted input: from its files, the keys that decide where the user's code,
prompts and credentials go or which code and weights run (:data:`PROTECTED`) take effect only
once the user trusts those files (``repomem trust``, :mod:`repomem.trust`), and until then a
repository may tighten the exclusion of secret files but not loosen it. What was ignored is
kept in ``Settings.untrusted`` for the front ends to say. Sections are ``index``
(:class:`~repomem.config.IndexConfig`), ``backend`` (:class:`~repomem.config.BackendConfig`),
``completion`` (:class:`~repomem.config.CompletionConfig`) and ``docmem``
(:class:`~repomem.config.DocMemoryConfig`).

A typo must not silently fall back to a default, so unknown sections, unknown keys, wrong
types and out-of-range values raise :class:`SettingsError` naming the key and where it came
from. In environment variables an empty value means "unset" for optional keys, and list-valued
keys take comma-separated items.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import tomllib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from repomem.config import (
    RENAMED,
    BackendConfig,
    CompletionConfig,
    DocMemoryConfig,
    IndexConfig,
    out_of_range,
)
from repomem.errors import RepomemError
from repomem.trust import is_trusted

logger = logging.getLogger(__name__)

ENV_PREFIX = "REPOMEM_"
FILE_NAME = ".repomem.toml"
PYPROJECT = "pyproject.toml"
USER_FILE = "config.toml"

#: Keys that send the user's code and prompts off the machine, name a credential, or load
#: code or weights: honoured from the user's own places, and from a repository's files only
#: once trusted. (``index.index_dir`` and the secret exclusions are narrowed instead, in
#: ``_merge_repository``.)
PROTECTED: frozenset[tuple[str, str]] = frozenset(
    {
        ("backend", "backend"),
        ("backend", "url"),
        ("backend", "api_key_env"),
        ("backend", "model"),
        ("docmem", "embedding_model"),
    }
)


class SettingsError(RepomemError):
    """A configuration value is unknown, of the wrong type or out of range."""


@dataclass(frozen=True)
class Settings:
    """Everything configurable, one frozen object per concern."""

    index: IndexConfig = field(default_factory=IndexConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    completion: CompletionConfig = field(default_factory=CompletionConfig)
    docmem: DocMemoryConfig = field(default_factory=DocMemoryConfig)
    #: settings of the repository's own files that were not applied, as it is not trusted
    untrusted: tuple[Untrusted, ...] = ()


@dataclass(frozen=True)
class Untrusted:
    """A repository setting left out until the user trusts the file it is in."""

    key: str  # "backend.url"
    source: Path  # the settings file

    def __str__(self) -> str:
        return f"{self.key} ({self.source.name})"


SECTIONS: dict[str, type] = {
    "index": IndexConfig,
    "backend": BackendConfig,
    "completion": CompletionConfig,
    "docmem": DocMemoryConfig,
}


def with_default(key: str) -> str:
    """``section.key (default VALUE)``: how a flag's help names the setting it sets, its
    default read from the definition."""
    section, _, name = key.partition(".")
    value = getattr(SECTIONS[section](), name)
    return f"{key} (default {value:g})"


def load_settings(
    root: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Settings for the repository at ``root`` (its files skipped when None).

    ``environ`` defaults to ``os.environ``; ``overrides`` are command-line values by section,
    e.g. ``{"backend": {"url": "http://host:8000/v1"}}`` (None values mean "flag not given").
    The user's settings file is found through ``os.environ`` in any case.
    """
    settings = Settings()
    user = user_settings_path()
    if user.is_file():
        settings = merge_settings(settings, _read_toml(user), str(user))
    untrusted: list[Untrusted] = []
    if root is not None:
        for path, table, source in repository_tables(root):
            trusted = is_trusted(root, path.name, table)
            settings, left_out = _merge_repository(settings, table, source, path, trusted)
            untrusted += left_out
    settings = dataclasses.replace(settings, untrusted=tuple(untrusted))
    settings = _merge_environment(settings, os.environ if environ is None else environ)
    if overrides:
        given = {
            section: {k: v for k, v in values.items() if v is not None}
            for section, values in overrides.items()
        }
        settings = merge_settings(settings, given, "command line")
    return settings


def user_settings_path() -> Path:
    """The user's own settings file (XDG's config directory, else ``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "repomem" / USER_FILE


def repository_tables(root: Path) -> list[tuple[Path, dict[str, Any], str]]:
    """The repository's own settings: (file, its repomem table, how errors name it) for
    ``pyproject.toml``'s ``[tool.repomem]`` and ``.repomem.toml``, in the order they apply."""
    out = []
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {})
        table = tool.get("repomem") if isinstance(tool, dict) else None
        if table is not None:
            out.append((pyproject, table, f"{pyproject} [tool.repomem]"))
    dotfile = root / FILE_NAME
    if dotfile.is_file():
        out.append((dotfile, _read_toml(dotfile), str(dotfile)))
    return out


def _merge_repository(
    settings: Settings, table: Any, source: str, path: Path, trusted: bool
) -> tuple[Settings, list[Untrusted]]:
    """A repository file's settings applied: all of them once trusted; else all but the
    protected keys, with the index kept inside the repository (where the code's text is
    written) and secret files excluded at least as the settings so far exclude them (its
    ``secret_patterns`` are added to theirs, never replace them)."""
    merged = merge_settings(settings, table, source)  # a typo is an error, trusted or not
    if trusted:
        return merged, []
    kept: dict[str, dict[str, Any]] = {}
    left_out: list[Untrusted] = []
    for section, values in table.items():
        for key, value in values.items():
            loosens = (section, key) == ("index", "exclude_secrets") and not value
            outside = (section, key) == ("index", "index_dir") and not _inside(path.parent, value)
            if (
                (section, key) in PROTECTED
                or (loosens and settings.index.exclude_secrets)
                or outside
            ):
                left_out.append(Untrusted(f"{section}.{key}", path))
                continue
            if (section, key) == ("index", "secret_patterns"):
                mine = settings.index.secret_patterns
                if not set(mine) <= set(value):
                    left_out.append(Untrusted(f"{section}.{key}", path))
                value = (*mine, *(p for p in value if p not in mine))
            kept.setdefault(section, {})[key] = value
    return merge_settings(settings, kept, source), left_out


def _inside(root: Path, directory: str) -> bool:
    """Whether ``directory`` (as the index reads it: relative to ``root``) stays in ``root``."""
    return not Path(directory).is_absolute() and (root / directory).resolve().is_relative_to(
        root.resolve()
    )


def untrusted_notice(settings: Settings, root: Path) -> str | None:
    """One line for the user about the repository settings left out, or None."""
    if not settings.untrusted:
        return None
    keys = ", ".join(str(u) for u in settings.untrusted)
    return (
        f"ignoring repository settings that only you may set: {keys}; they choose where your "
        f"code and credentials go. If you trust them, run `repomem trust {root}`"
    )


def merge_settings(settings: Settings, data: Any, source: str) -> Settings:
    """``settings`` with the typed values in ``data`` (``{section: {key: value}}``) applied.

    Also the entry point for settings that arrive as JSON (an editor's configuration).
    """
    if not isinstance(data, Mapping):
        raise SettingsError(f"{source}: expected a table of sections, got {_kind(data)}")
    changes: dict[str, dict[str, Any]] = {}
    for section, values in data.items():
        if section not in SECTIONS:
            raise SettingsError(
                f"{source}: unknown section {section!r} (known: {', '.join(SECTIONS)})"
            )
        if not isinstance(values, Mapping):
            raise SettingsError(f"{source}: {section!r} must be a table, got {_kind(values)}")
        hints = _field_types(section)
        for old, value in values.items():
            key = _current_name(section, old, source)
            if key not in hints:
                raise SettingsError(
                    f"{source}: unknown key {section}.{key} (known: {', '.join(hints)})"
                )
            typed = _coerce(value, hints[key], f"{section}.{key}", source, text=False)
            changes.setdefault(section, {})[key] = _checked(section, key, typed, source)
    return _apply(settings, changes)


def _merge_environment(settings: Settings, environ: Mapping[str, str]) -> Settings:
    changes: dict[str, dict[str, Any]] = {}
    for name, raw in sorted(environ.items()):
        for section in SECTIONS:
            prefix = f"{ENV_PREFIX}{section.upper()}_"
            if not name.startswith(prefix):
                continue
            hints = _field_types(section)
            source = f"environment variable {name}"
            key = _current_name(section, name[len(prefix) :].lower(), source)
            if key not in hints:
                known = ", ".join(prefix + k.upper() for k in hints)
                raise SettingsError(f"{source}: unknown setting (known: {known})")
            typed = _coerce(raw, hints[key], f"{section}.{key}", source, text=True)
            changes.setdefault(section, {})[key] = _checked(section, key, typed, source)
    return _apply(settings, changes)


_told_renamed: set[tuple[str, str]] = set()


def _current_name(section: str, key: str, source: str) -> str:
    """``key``'s name now: a renamed key's old name still works, with a warning (once per key
    and process, not once per settings read)."""
    new = RENAMED.get(section, {}).get(key)
    if new is None:
        return key
    if (section, key) not in _told_renamed:
        _told_renamed.add((section, key))
        logger.warning(
            "%s: %s.%s is now called %s.%s; please rename it (the old name still works)",
            source,
            section,
            key,
            section,
            new,
        )
    return new


def _apply(settings: Settings, changes: Mapping[str, Mapping[str, Any]]) -> Settings:
    parts = {
        section: dataclasses.replace(getattr(settings, section), **values)
        for section, values in changes.items()
    }
    return dataclasses.replace(settings, **parts)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror}") from None


def _field_types(section: str) -> dict[str, Any]:
    cls = SECTIONS[section]
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _checked(section: str, key: str, value: Any, source: str) -> Any:
    wanted = out_of_range(SECTIONS[section], key, value)
    if wanted is not None:
        raise SettingsError(f"{source}: {section}.{key} must be {wanted}, got {value!r}")
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _coerce(value: Any, hint: Any, key: str, source: str, *, text: bool) -> Any:
    """``value`` as type ``hint``; ``text`` values (environment) are parsed from strings."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        if value is None or (text and not value.strip()):
            return None
        return _coerce(value, inner, key, source, text=text)

    def wrong(expected: str) -> SettingsError:
        got = repr(value) if text else f"{_kind(value)} {value!r}"
        return SettingsError(f"{source}: {key} must be {expected}, got {got}")

    if hint is bool:
        if text:
            word = value.strip().lower()
            if word in _TRUE | _FALSE:
                return word in _TRUE
        elif isinstance(value, bool):
            return value
        raise wrong("true or false")
    if hint is int:
        if text:
            try:
                return int(value.strip())
            except ValueError:
                raise wrong("an integer") from None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise wrong("an integer")
    if hint is float:
        if text:
            try:
                number = float(value.strip())
            except ValueError:
                raise wrong("a number") from None
        elif isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        else:
            raise wrong("a number")
        if not math.isfinite(number):
            raise wrong("a finite number")
        return number
    if hint is str:
        if isinstance(value, str):
            return value
        raise wrong("a string")
    if origin is tuple:
        items = [s.strip() for s in value.split(",") if s.strip()] if text else value
        if isinstance(items, list | tuple) and all(isinstance(s, str) for s in items):
            return tuple(items)
        raise wrong("a list of strings")
    raise wrong(str(hint))


def _kind(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "table",
    }.get(type(value), type(value).__name__)
