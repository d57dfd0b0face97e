"""Fill-in-the-middle formats, per model family: the sentinel tokens its vocabulary spells and
the template a prompt is built with; the prompt, the backends and the settings read them here.

A model only infills well with the exact sentinel tokens it was trained on, and those are in
its tokenizer's vocabulary as special tokens; their spelling tells the template apart.
"""

from __future__ import annotations

from collections.abc import Iterable

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

# (before prefix, between prefix and suffix, after suffix), from each model family's tokenizer
# and reference code. CodeLlama's spaces are part of its trained format ("<PRE> {pre} <SUF>{suf}
# <MID>"); infilling quality drops without them.
FIM_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "codellama": ("<PRE> ", " <SUF>", " <MID>"),
    "starcoder": ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
    "deepseek": ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
    "qwen": ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
}


def detect_fim_style(vocabulary: Iterable[str]) -> str | None:
    """The style whose sentinels are all in ``vocabulary``, or None when the model has none."""
    tokens = set(vocabulary)
    for style, spellings in FIM_SENTINELS.items():
        if any(all(token in tokens for token in spelling) for spelling in spellings):
            return style
    return None
