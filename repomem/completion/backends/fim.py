"""Which fill-in-the-middle template a model was trained with, read off its vocabulary.

A model only infills well with the exact sentinel tokens it was trained on, and those are in
its tokenizer's vocabulary as special tokens; their spelling tells the template apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from repomem.completion.backends.base import BackendError

#: per style, alternative spellings of the (prefix, suffix, middle) sentinels; any one
#: complete spelling in a vocabulary means the model infills in that style
FIM_SENTINELS: dict[str, tuple[tuple[str, str, str], ...]] = {
    # CodeLlama's sentencepiece vocabulary stores them with the word-start marker
    "codellama": (("▁<PRE>", "▁<SUF>", "▁<MID>"), ("<PRE>", "<SUF>", "<MID>")),
    "starcoder": (
        ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
        ("<fim-prefix>", "<fim-suffix>", "<fim-middle>"),
    ),
    "deepseek": (("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),),
    "qwen": (("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),),
}

#: the value of the ``fim`` setting that turns infilling off for a model that has sentinels
FIM_OFF = "none"


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


def detect_fim_style(vocabulary: Iterable[str]) -> str | None:
    """The style whose sentinels are all in ``vocabulary``, or None when the model has none."""
    tokens = set(vocabulary)
    for style, spellings in FIM_SENTINELS.items():
        if any(all(token in tokens for token in spelling) for spelling in spellings):
            return style
    return None


def resolve_fim_style(configured: str | None, vocabulary: Iterable[str] | None) -> str | None:
    """The configured style when set (``none`` turns it off), else the detected one."""
    if configured is not None:
        return fim_style_setting(configured)
    return detect_fim_style(vocabulary) if vocabulary is not None else None
