"""Prose helpers shared by the memory forms and the retrieval loops.

Questions are written in English while docs mix English with code names, so doc retrieval
uses its own terms: identifiers are lower-cased and also split into their parts
(``SECRET_KEY`` gives ``secret_key``, ``secret`` and ``key``; ``maxRetries`` gives
``maxretries``, ``max`` and ``retries``), a plural ``s`` is dropped, and a short list of
function words is ignored. Code retrieval keeps ``repomem.index.bm25.tokenize`` (case kept), since a
code query matches names exactly.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (for word lists written as prose)."""
    return frozenset(text.split())


STOPWORDS = word_set(
    """a an the and or but if then else of to in on at by for with from into onto as is are
    was were be been being do does did doing have has had having it its this that these those
    there here i you he she we they me my your our their what which who whom whose when where
    why how can could should would will shall may might must not no nor so than too very just
    also any all some such only own same each other about above below over under again more
    most s t use used using get"""
)

# Sentence ends: a full stop, question or exclamation mark followed by space and a capital,
# a quote, a backtick or a bracket; common abbreviations are protected first.
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|resp)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*:])")
_PLACEHOLDER = "\u2024"  # one dot leader stands for a protected full stop

_RST_ROLE = re.compile(r":[\w:.-]+:`([^`]*)`")
_RST_LITERAL = re.compile(r"``([^`]*)``")
_MD_CODE = re.compile(r"`([^`\n]*)`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|`([^`<]*?)\s*<[^>]*>`_+")
_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")
_URL = re.compile(r"https?://\S+")


def words(text: str) -> int:
    """Words as pagination counts them (whitespace-separated)."""
    return len(text.split())


def _stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Doc retrieval terms of ``text`` (see the module docstring)."""
    out: list[str] = []
    for token in _WORD.findall(text):
        out.extend(_token_terms(token))
    return out


@lru_cache(maxsize=1 << 18)
def _token_terms(token: str) -> tuple[str, ...]:
    """One token's terms; cached, since code and docs repeat the same names throughout."""
    low = token.lower()
    parts = [p.lower() for p in re.split(r"_+", token) if p]
    if len(parts) == 1:
        parts = [p.lower() for p in _CAMEL.findall(token)] or [low]
    out = [_stem(low)] if low not in STOPWORDS else []
    if len(parts) > 1:
        out.extend(_stem(p) for p in parts if p not in STOPWORDS)
    return tuple(out)


def content_terms(text: str) -> list[str]:
    """Distinct terms in order of first appearance: what a question asks about."""
    return list(dict.fromkeys(terms(text)))


def clean_inline(text: str) -> str:
    """Markup removed from a line of Markdown or reStructuredText, code names kept."""
    text = _URL.sub("", text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _RST_ROLE.sub(lambda m: _role_target(m.group(1)), text)
    text = _RST_LITERAL.sub(r"\1", text)
    text = _MD_CODE.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return re.sub(r"[ \t]+", " ", text).strip()


def _role_target(inner: str) -> str:
    """``~flask.Flask.config`` shows as ``config``; ``text <target>`` as ``text``."""
    inner = inner.strip()
    if "<" in inner and inner.endswith(">"):
        return inner[: inner.index("<")].strip()
    if inner.startswith("~"):
        return inner[1:].rsplit(".", 1)[-1]
    return inner.lstrip("!")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (prose only; markup should be cleaned first)."""
    flat = re.sub(r"\s+", " ", text).strip()
    if not flat:
        return []
    protected = _ABBREVIATIONS.sub(lambda m: m.group(1) + _PLACEHOLDER, flat)
    parts = _SENTENCE_END.split(protected)
    return [p.replace(_PLACEHOLDER, ".").strip() for p in parts if p.strip()]


def first_sentence(text: str, max_words: int = 40) -> str:
    found = sentences(text)
    if not found:
        return ""
    head = found[0].split()
    return " ".join(head[:max_words]) + (" …" if len(head) > max_words else "")
