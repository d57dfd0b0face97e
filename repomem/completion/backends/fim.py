"""Which fill-in-the-middle format a backend's model uses: the ``fim`` setting, checked, else
the one its vocabulary shows (the formats are in :mod:`repomem.fim`)."""

from __future__ import annotations

from collections.abc import Iterable

from repomem.completion.backends.base import BackendError
from repomem.fim import FIM_OFF, FIM_SENTINELS, detect_fim_style


def fim_style_setting(value: str | None) -> str | None:
    """Check a configured ``fim`` value; returns the style, or None when infilling is off."""
    if value is None or value == FIM_OFF:
        return None
    if value not in FIM_SENTINELS:
        choices = ", ".join([*FIM_SENTINELS, FIM_OFF])
        raise BackendError(
            f"unknown fill-in-the-middle style {value!r} in setting `backend.fim`:"
            f" choose one of {choices}"
        )
    return value


def resolve_fim_style(configured: str | None, vocabulary: Iterable[str] | None) -> str | None:
    """The configured style when set (``none`` turns it off), else the detected one."""
    if configured is not None:
        return fim_style_setting(configured)
    return detect_fim_style(vocabulary) if vocabulary is not None else None
