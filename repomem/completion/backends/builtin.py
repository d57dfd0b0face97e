"""The built-in backend: no model, continuation copied from the retrieved code.

It exists so that repomem does something useful on a fresh machine, and it is measured on the
benchmark like any other backend; it is not a language model. Three strategies:

``repo`` (default, backend ``builtin``)
    ``match`` over more places: besides the retrieved fragments and the file's own earlier
    text, every place in the repository where the context's trailing names co-occur
    (``repomem.index.occurrences``, read from the BM25 postings, so current after every edit),
    weighted by nearness (same directory, same top-level package, elsewhere). A line of the
    repository is counted once, however many sources show it. A match may pass a few
    identifiers its source names differently, and the copied text takes the cursor's names
    (near-duplicate code is common: tests, handlers, one function per variant).

``match`` (backend ``builtin-match``)
    Finds where the end of the left context reappears, token by token, in each retrieved
    fragment (matched window plus the lines shown after it) and earlier in the file itself,
    and copies what follows the longest such match. A candidate's score is its match length
    weighted by its source's retrieval rank; candidates proposing the same line pool their
    scores, so a pattern repeated across the repository wins over a one-off. In the middle of a
    line, candidates whose copied line ends with the rest of the cursor's line (and so fits
    around it) win over the others. Indentation is
    re-based from the source onto the cursor's block. Matching works on tokens (identifiers,
    numbers, single punctuation characters), so spacing and line breaks do not break a match.

``naive`` (backend ``builtin-naive``)
    The baseline they are compared with: find the last non-empty line of the context in the
    shown windows, best fragment first, and copy the line that follows.

Every completion carries a confidence from 0 to 1, from what the winning line rests on
(``Evidence``): how much of the candidates' pooled score it has, how long its match is, how
many places (lines of the repository, or of the file's earlier text) propose it, and three
signs of a guess that the dev suite's wrong answers showed: the line names an identifier the
file has not written before the cursor (it continues some other function whose preceding line
happens to be the same), holds a string or number literal (variants of near-duplicate code
differ in them: ``== 131`` in one test, ``== 53`` in the next), or is a comment where the
cursor's line is code. Its raw form is a logistic regression of exact matches on these,
one set of weights per mode (one line or a statement) for every language
(``EVIDENCE_WEIGHTS``). How often a raw value is right
still differs by language (repeated code is commoner in some), so ``repo`` reports the share
of exact matches the dev suite's tasks of the cursor's language family and mode (one line or
a statement) had at that raw value (``CALIBRATION``), told cautiously: each bin's value is the
lower end of its share right's Wilson interval at 1.5 standard errors, so that a bin of few
tasks, or of one lucky project's, does not reach the threshold by chance; both are fitted by
``eval/calibrate_builtin.py``, which also reports them cross-validated across projects: a
confidence of 0.4 means at least about 40 % right in every language; a language without a
table keeps the raw value. The caller hides a completion below ``completion.min_confidence``;
``match`` gives the raw value; ``naive`` says 1 when it found a line, 0 when not.

Multi-line requests get the source's continuation up to ``max_tokens``; where the statement
ends is decided by :func:`repomem.completion.postprocess.postprocess`, which knows the language.

The backend has no tokenizer of its own, so :meth:`BuiltinBackend.count_tokens` counts with a
regular expression: each identifier or number, each punctuation character and each run of
whitespace is one token, and a run of one repeated punctuation character is one token per 8
characters (BPE vocabularies hold such runs whole: the 50 dashes of a prompt's separator
line are a few tokens, not 50). That is close to what BPE tokenizers give for code, and is
only used to budget the prompt, which this backend shows in ``--explain`` but does not read.
"""

from __future__ import annotations

import contextlib
import keyword
import math
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Generic, TypeVar

from repomem.completion.backends.base import Backend, BackendError, Generation, GenerationRequest
from repomem.context.lexer import comment_line
from repomem.core import RetrievedFragment

STRATEGIES = ("repo", "match", "naive")

_WORD = re.compile(r"\w+|[^\w\s]")
_WORD_SPLIT = re.compile(rf"({_WORD.pattern})")
_COUNTED = re.compile(r"\w+|([^\w\s])\1{0,7}|\s+")
#: the texts whose token counts a backend keeps, in characters (``_Kept``)
_COUNTS_KEPT = 1 << 20
#: the texts whose tokens a backend keeps, in characters (``_Kept``)
_TOKENS_KEPT = 1 << 19
_INDENT = re.compile(r"[ \t]*")
# a name after these is being defined: never renamed (see ``_candidates``)
_DEFINING = frozenset(("def", "class"))

# Longest match considered, in tokens: beyond this, longer matches are no better evidence.
_MAX_MATCH = 64
# Lines copied at most in multi-line mode (``max_tokens`` usually stops earlier).
_MAX_COPIED_LINES = 64
# The file's own earlier text is searched as far back as this (characters).
_IN_FILE_CHARS = 200_000
# Weight of the i-th retrieved fragment (0-based): 1 / (1 + _RANK_DECAY * i).
_RANK_DECAY = 0.1


@dataclass(frozen=True)
class _Weights:
    """How a strategy scores candidates: a candidate's score is its source's weight times its
    match length to the power ``length_power`` (long matches are much stronger evidence than
    many short ones); ``per_source`` candidate positions (the longest matches) are scored per
    source; the file's own earlier text weighs ``in_file`` relative to the best fragment, a
    repository occurrence ``near[Occurrence.near]`` (other top-level package, same package,
    same directory); a match may pass up to ``renames`` identifiers named differently in its
    source, each multiplying the candidate's weight by ``renamed``."""

    length_power: float
    per_source: int
    in_file: float
    near: tuple[float, float, float] = (0.0, 0.0, 0.0)
    renames: int = 0
    renamed: float = 1.0


# ``repo``'s values were chosen on the dev suite's line tasks (README); ``match`` keeps its own.
_WEIGHTS = {
    "match": _Weights(length_power=3.0, per_source=8, in_file=1.0),
    "repo": _Weights(
        length_power=4.0,
        per_source=16,
        in_file=2.0,
        near=(0.4, 0.6, 0.8),
        renames=3,
        renamed=0.5,
    ),
}


@dataclass(frozen=True)
class Evidence:
    """What a winning continuation rests on (module doc): its share of the candidates' pooled
    score, its longest match (tokens), how many places (lines of the repository, or of the
    file's earlier text) propose its first line, and three signs of a guess about that line:
    it names an identifier the text before the cursor never does, holds a literal (a string,
    or a number but 0 and 1: the variants of near-duplicate code differ in them), or is a
    comment where the cursor's line is code."""

    share: float
    length: float
    support: int
    unseen_name: bool
    literal: bool
    comment: bool

    def features(self) -> tuple[float, ...]:
        """The values ``EVIDENCE_WEIGHTS`` weigh, in its order."""
        return (
            self.share,
            math.log2(max(self.length, 1.0)) / math.log2(_MAX_MATCH),
            min(self.support, _SUPPORT_COUNTED) / _SUPPORT_COUNTED,
            float(self.unseen_name),
            float(self.literal),
            float(self.comment),
        )

    def raw(self, mode: str) -> float:
        """The raw confidence in ``mode`` ("line" or "api"): the logistic of the features
        weighted by ``EVIDENCE_WEIGHTS[mode]``."""
        return logistic(EVIDENCE_WEIGHTS[mode], self.features())


def logistic(weights: Sequence[float], features: Sequence[float]) -> float:
    """The logistic of ``weights``' bias (its first value) plus its other values times
    ``features`` (``Evidence.features``' order): a raw confidence, here and in the fit."""
    bias, *each = weights
    score = bias + sum(w * x for w, x in zip(each, features, strict=True))
    return 1.0 / (1.0 + math.exp(-score))


# mode ("line": one line, "api": a statement) -> ``Evidence.raw``'s bias and weights, in
# ``Evidence.features``' order: a logistic regression of exact matches on the dev suite's
# tasks of that mode in every language, fitted by eval/calibrate_builtin.py
EVIDENCE_WEIGHTS: dict[str, tuple[float, ...]] = {
    "api": (-5.711, 2.525, 3.606, 0.957, -0.423, 0.096, -1.803),
    "line": (-6.229, 3.503, 2.94, 2.275, -0.845, -0.424, -1.201),
}
# Places proposing a line counted at most (more agree no more).
_SUPPORT_COUNTED = 4
# A string literal, or a number but 0 and 1 (``Evidence.literal``).
_LITERAL = re.compile(r"\"[^\"]*\"|'[^']*'|\b(?![01]\b)\d[\w.]*")
_NAME = re.compile(r"[^\W\d]\w*")

# language -> the family whose calibration it shares
FAMILY_OF: dict[str, str] = {"typescript": "js", "tsx": "js", "javascript": "js", "cpp": "c"}
# (family, "line" or "api") -> (lowest raw confidence, cautious share of exact matches) steps, raw
# ascending; fitted on the dev suite by eval/calibrate_builtin.py (see the module doc), all
# seven languages and both kinds in one run
# fmt: off
CALIBRATION: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {
    ("c", "api"): ((0.0, 0.001), (0.05, 0.081), (0.25, 0.157), (0.3, 0.167), (0.4, 0.187),
        (0.45, 0.484), (0.5, 0.498), (0.7, 0.624),),
    ("c", "line"): ((0.0, 0.005), (0.05, 0.084), (0.25, 0.191), (0.45, 0.205), (0.6, 0.371),
        (0.65, 0.433), (0.7, 0.703), (0.9, 0.727),),
    ("go", "api"): ((0.0, 0.0), (0.05, 0.061), (0.1, 0.063), (0.2, 0.284), (0.5, 0.514),
        (0.6, 0.732),),
    ("go", "line"): ((0.0, 0.0), (0.1, 0.046), (0.15, 0.1), (0.3, 0.2), (0.35, 0.279),
        (0.55, 0.485), (0.6, 0.748),),
    ("java", "api"): ((0.0, 0.005), (0.05, 0.079), (0.1, 0.143), (0.35, 0.236), (0.6, 0.842),
        (0.75, 0.877),),
    ("java", "line"): ((0.0, 0.006), (0.05, 0.07), (0.2, 0.181), (0.45, 0.41), (0.6, 0.574),
        (0.8, 0.926),),
    ("js", "api"): ((0.0, 0.007), (0.05, 0.019), (0.15, 0.119), (0.5, 0.371), (0.55, 0.565),),
    ("js", "line"): ((0.0, 0.014), (0.15, 0.187), (0.35, 0.301), (0.5, 0.514), (0.85, 0.64),),
    ("python", "api"): ((0.0, 0.005), (0.05, 0.083), (0.1, 0.096), (0.2, 0.141), (0.3, 0.22),
        (0.4, 0.341), (0.45, 0.498), (0.75, 0.78),),
    ("python", "line"): ((0.0, 0.015), (0.05, 0.041), (0.1, 0.096), (0.2, 0.203), (0.35, 0.239),
        (0.5, 0.791),),
    ("rust", "api"): ((0.0, 0.008), (0.1, 0.082), (0.25, 0.095), (0.3, 0.111), (0.45, 0.128),
        (0.5, 0.556), (0.75, 0.727),),
    ("rust", "line"): ((0.0, 0.0), (0.1, 0.0), (0.15, 0.104), (0.45, 0.371), (0.5, 0.377),
        (0.6, 0.451), (0.75, 0.485), (0.85, 0.862),),
}
# fmt: on


def calibrate(raw: float, steps: Sequence[tuple[float, float]]) -> float:
    """The estimate of the highest step whose lowest raw confidence ``raw`` reaches."""
    value = steps[0][1] if steps else raw
    for low, estimate in steps:
        if raw < low:
            break
        value = estimate
    return value


class BuiltinBackend(Backend):
    """Continuation by longest token match inside the retrieved fragments (see module doc)."""

    name = "builtin"
    fim_style = None

    def __init__(self, strategy: str = "repo") -> None:
        if strategy not in STRATEGIES:
            raise BackendError(
                f"unknown built-in strategy {strategy!r} (choose from {', '.join(STRATEGIES)})"
            )
        self.strategy = strategy
        self.reads_occurrences = strategy == "repo"
        if strategy != "repo":
            self.name = f"builtin-{strategy}"
        self._counts: _Kept[int] = _Kept(_COUNTS_KEPT)
        self._tokens: _Kept[_Tokens] = _Kept(_TOKENS_KEPT)
        # the last file text before a cursor, and its tokens
        self._in_file = ("", _Tokens([], array("q"), array("q")))

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        return [self.continuation(request).text for request in requests]

    async def generate_batch(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        return [self.continuation(request) for request in requests]

    def count_tokens(self, text: str) -> int:
        """Kept per text: each request's prompt counts its fragments and cards, mostly the
        previous request's (in a language server replay, three quarters of the 55k characters
        a request counted had been counted before: ~8 ms of a ~25 ms completion). A text not
        counted before is counted from its lines' counts (``_by_lines``)."""
        return self._counts.get(text, self._by_lines)

    def _by_lines(self, text: str) -> int:
        """``_count(text)`` from the kept counts of its lines: a new prompt, and the left
        context a keystroke further on, are mostly lines counted before (they were 12 % of a
        language server's completion, counted whole). Each line counts with its line break;
        where the next line starts with whitespace, that whitespace and the line break before
        it are one ``\\s+`` token, counted in both lines: one less. No other token spans a
        line break (every line boundary ``splitlines`` knows is whitespace)."""
        lines = text.splitlines(keepends=True)
        if len(lines) < 2:
            return _count(text)
        get = self._counts.get
        joined = sum(line[0].isspace() for line in lines[1:])
        return sum(get(line, _count) for line in lines) - joined

    def continuation(self, request: GenerationRequest) -> Generation:
        """The text this backend proposes for ``request`` and its confidence (synchronous)."""
        if self.strategy == "naive":
            text = _naive(_Cursor.of(request.left_context), request.left_context, request.fragments)
            return Generation(_limit(text, request.stop, request.max_tokens), float(bool(text)))
        text, evidence = self.choice(request)
        mode = "api" if request.multiline else "line"
        confidence = 0.0 if evidence is None else evidence.raw(mode)
        if self.strategy == "repo" and evidence is not None:
            language = request.language or ""
            steps = CALIBRATION.get((FAMILY_OF.get(language, language), mode))
            if steps is not None:
                confidence = calibrate(confidence, steps)
        return Generation(_limit(text, request.stop, request.max_tokens), confidence)

    def choice(self, request: GenerationRequest) -> tuple[str, Evidence | None]:
        """The ``match`` or ``repo`` strategy's whole continuation for ``request`` (before
        ``max_tokens`` and the stop sequences) and what it rests on (None: nothing found)."""
        weights = _WEIGHTS[self.strategy]
        sources = _sources(request, weights, placed=self.strategy == "repo")
        self._tokens.get(sources[-1].text, self._in_file_tokens)  # kept for _best_match
        return _best_match(
            _Cursor.of(request.left_context),
            request.left_context,
            request.right_context.split("\n", 1)[0].rstrip(),
            sources,
            request.multiline,
            weights,
            _comment_line(request.left_context, request.language or ""),
            tokens=self._tokens,
        )

    def _in_file_tokens(self, text: str) -> _Tokens:
        """The tokens of the file's text before the cursor: where the last request's is its
        start (the user typed on), only what follows that text's last whole token is read
        (the file's own text was 60 % of what a language server's requests tokenized)."""
        last, tokens = self._in_file
        tokens = tokens.grown(text, len(last)) if text.startswith(last) else _Tokens.of(text)
        self._in_file = (text, tokens)
        return tokens


@dataclass(frozen=True)
class _Cursor:
    """Where the completion starts, as far as copying text is concerned."""

    typed: str  # what is already on the cursor's line
    at_line_start: bool  # nothing but indentation typed on the line
    block_indent: str  # the indentation the copied text is re-based onto
    partial: str  # an identifier being typed, matched as a token prefix

    @staticmethod
    def of(left: str) -> _Cursor:
        typed = left[left.rfind("\n") + 1 :]
        at_line_start = not typed.strip()
        indent = _indent(typed)
        end = len(left) - len(typed) - 1
        while at_line_start and end > 0:  # the indentation of the last non-blank line
            start = left.rfind("\n", 0, end) + 1
            if left[start:end].strip():
                indent = _indent(left[start:end])
                break
            end = start - 1
        word = re.search(r"\w+$", typed)
        return _Cursor(typed, at_line_start, indent, word.group() if word else "")


@dataclass(frozen=True)
class _Source:
    """Text to copy from; ``place`` (path, first line) when it is known where it lies, so that
    a line two sources show is counted once."""

    text: str
    weight: float
    place: tuple[str, int] | None = None


@dataclass(frozen=True)
class _Candidate:
    length: float
    weight: float
    text: str
    at: int  # offset in its source's text where the copied text starts


T = TypeVar("T")


class _Kept(Generic[T]):
    """Values computed from texts, kept for the texts of later requests (a language server's
    requests mostly show the fragments the previous ones showed). Two generations of at most
    half of ``chars`` characters each: a text read again moves to the newer one, and when that
    is full the older one is forgotten, so what the last requests read stays (forgetting all
    at once would make one request compute everything again)."""

    def __init__(self, chars: int) -> None:
        self._half = chars // 2
        self._new: dict[str, T] = {}
        self._old: dict[str, T] = {}
        self._chars = 0  # of the texts in ``_new``

    def get(self, text: str, make: Callable[[str], T]) -> T:
        value = self._new.get(text)
        if value is not None:
            return value
        value = self._old.get(text)
        if value is None:
            value = make(text)
        if self._chars + len(text) > self._half:
            self._old, self._new, self._chars = self._new, {}, 0
        self._new[text] = value
        self._chars += len(text)
        return value


def _count(text: str) -> int:
    return len(_COUNTED.findall(text))


@dataclass(frozen=True)
class _Tokens:
    """A text's tokens (``_WORD``): each one's text, start and end (arrays: a few bytes a
    token while kept, and nothing for the collector to walk)."""

    words: list[str]
    starts: array[int]
    ends: array[int]

    @staticmethod
    def of(text: str) -> _Tokens:
        # ``_WORD`` matches every character but whitespace, so the text splits into
        # whitespace, token, whitespace, ..., whitespace, and the bounds follow from the
        # lengths (a match object per token would cost twice as much)
        parts = _WORD_SPLIT.split(text)
        bounds = list(accumulate(map(len, parts)))
        starts, ends = array("q", bounds[0 : len(parts) - 1 : 2]), array("q", bounds[1::2])
        return _Tokens(parts[1::2], starts, ends)

    def grown(self, text: str, shared: int) -> _Tokens:
        """``_Tokens.of(text)`` where these are the tokens of ``text[:shared]``: a token ending
        before ``shared`` ends there in ``text`` too (the character after it is the same), so
        only the text after the last of those is read."""
        keep = bisect_left(self.ends, shared)
        resume = self.ends[keep - 1] if keep else 0
        tail = _Tokens.of(text[resume:])
        return _Tokens(
            self.words[:keep] + tail.words,
            self.starts[:keep] + array("q", [start + resume for start in tail.starts]),
            self.ends[:keep] + array("q", [end + resume for end in tail.ends]),
        )


def _sources(request: GenerationRequest, weights: _Weights, *, placed: bool) -> list[_Source]:
    """The retrieved fragments by rank, the repository's occurrences by nearness (``repo``)
    and the file's own earlier text."""
    sources = [
        _Source(
            _merged_text(f),
            1.0 / (1.0 + _RANK_DECAY * rank),
            (f.locations[0].path, f.locations[0].start) if placed and f.locations else None,
        )
        for rank, f in enumerate(request.fragments)
    ]
    if placed:
        sources += [
            _Source(o.text, weights.near[o.near], (o.path, o.start)) for o in request.occurrences
        ]
    sources.append(_Source(request.left_context[-_IN_FILE_CHARS:], weights.in_file))
    return sources


def _comment_line(left: str, language: str) -> re.Pattern[str] | None:
    """The pattern of a comment line of ``language``, unless the cursor's line (the last
    non-blank one where nothing is typed yet) is one itself: a match ending in one is a doc
    comment's example, no evidence for the code around the cursor (``_candidates``)."""
    pattern = comment_line(language)
    lines = [line for line in left.split("\n")[-2:] if line.strip()] or [""]
    return None if pattern is None or pattern.match(lines[-1]) else pattern


def _best_match(
    cursor: _Cursor,
    left: str,
    rest: str,
    sources: Sequence[_Source],
    multiline: bool,
    weights: _Weights,
    comment: re.Pattern[str] | None = None,
    *,
    tokens: _Kept[_Tokens],
) -> tuple[str, Evidence | None]:
    """The winning continuation and what it rests on (None: no candidate; module doc);
    ``comment``: the pattern of a comment line, where the cursor's line is code
    (``_candidates``); ``tokens``: the sources' tokens, kept from earlier requests."""
    query = [m.group() for m in _WORD.finditer(left[-20 * _MAX_MATCH :])][-_MAX_MATCH - 1 :]
    if cursor.partial:
        query = query[:-1]
    # per place in the repository, the strongest candidate any source found there
    placed: dict[tuple[str, int], tuple[str, _Candidate]] = {}
    found: list[tuple[str, _Candidate]] = []
    for source in sources:
        found_here = _candidates(
            source.text,
            tokens.get(source.text, _Tokens.of),
            query,
            cursor,
            multiline,
            source.weight,
            weights,
            comment=comment,
        )
        for candidate in found_here:
            key = candidate.text.split("\n", 1)[0].strip()
            if source.place is None:
                found.append((key, candidate))
                continue
            path, first = source.place
            where = (path, first + source.text.count("\n", 0, candidate.at))
            kept = placed.get(where)
            if kept is None or _score(candidate, weights) > _score(kept[1], weights):
                placed[where] = (key, candidate)
    votes: dict[str, float] = {}
    support: dict[str, int] = {}
    best: dict[str, _Candidate] = {}
    for key, candidate in [*found, *placed.values()]:
        votes[key] = votes.get(key, 0.0) + _score(candidate, weights)
        support[key] = support.get(key, 0) + 1
        kept_best = best.get(key)
        if kept_best is None or candidate.length > kept_best.length:
            best[key] = candidate
    if not votes:
        return "", None
    fitting = [k for k in votes if best[k].text.split("\n", 1)[0].rstrip().endswith(rest)]
    winner = max(fitting or votes, key=lambda k: (votes[k], best[k].length))
    names = set(_NAME.findall(winner))
    evidence = Evidence(
        share=votes[winner] / (sum(votes.values()) or 1.0),
        length=best[winner].length,
        support=support[winner],
        unseen_name=any(_unseen(name, left) for name in names),
        literal=_LITERAL.search(winner) is not None,
        comment=comment is not None and comment.match(winner) is not None,
    )
    return best[winner].text, evidence


def _unseen(name: str, left: str) -> bool:
    """Whether ``left`` never has ``name`` as a whole word. The pattern starts with the name,
    so the text is scanned for it in C, and the character before it is looked at only
    there (a pattern starting with that look was tried at every character: up to ~1 ms a
    name in a file's first 12k characters)."""
    pattern = rf"{re.escape(name)}(?<!\w{'.' * len(name)})(?!\w)"
    return re.search(pattern, left) is None


def _score(candidate: _Candidate, weights: _Weights) -> float:
    return candidate.length**weights.length_power * candidate.weight


def _candidates(
    text: str,
    tokens: _Tokens,
    query: list[str],
    cursor: _Cursor,
    multiline: bool,
    weight: float,
    weights: _Weights,
    *,
    comment: re.Pattern[str] | None = None,
) -> list[_Candidate]:
    """The continuations ``text`` offers after its longest matches of the query's end, but
    those ending on a ``comment`` line where the cursor's line is code: a doc comment's
    example (`` *     feed(parser, buf);``) is no evidence for code, and would be copied
    with its `` * ``.

    A match may pass up to ``weights.renames`` identifiers that ``text`` names differently
    (one name for one name throughout: ``fh = io.BytesIO(data.encode())`` matches
    ``f = io.BytesIO(s.encode())``); renamed tokens do not count in its length, and the copied
    text is renamed the same way, so near-duplicate code continues with the cursor's names.
    A name being defined (after ``def`` or ``class``, in the cursor's code or the source) is
    never renamed: it is what tells one variant of near-duplicate code from another.
    """
    words = tokens.words
    found: list[tuple[int, int, dict[str, str]]] = []
    if cursor.partial:
        ends = _starting_with(text, tokens, cursor.partial)
    elif query:
        ends = _equal_to(words, query[-1])
    else:
        return []
    for end in ends:
        length, span = 1, 1
        q = len(query) - (0 if cursor.partial else 1)
        names: dict[str, str] = {}  # the source's identifiers -> the cursor's, one to one
        renames = 0
        while span < _MAX_MATCH and q - 1 >= 0 and end - span >= 0:
            theirs, mine = words[end - span], query[q - 1]
            if not (_renamable(theirs) and _renamable(mine)):
                if theirs != mine:
                    break
            elif theirs in names or mine in names.values():
                if names.get(theirs) != mine:
                    break
            elif theirs == mine or (
                renames < weights.renames
                and (end - span < 1 or words[end - span - 1] not in _DEFINING)
                and (q < 2 or query[q - 2] not in _DEFINING)
            ):
                names[theirs] = mine
                renames += theirs != mine
            else:
                break
            length += theirs == mine
            span += 1
            q -= 1
        line_start = text.rfind("\n", 0, tokens.starts[end]) + 1
        if comment is None or not comment.match(text, line_start):
            found.append((length, end, {k: v for k, v in names.items() if k != v}))
    found.sort(key=lambda item: (-item[0], item[1]))
    result: list[_Candidate] = []
    for length, end, renamed in found:
        start = tokens.starts[end] + len(cursor.partial) if cursor.partial else tokens.ends[end]
        copied = _continuation(text, start, cursor, multiline)
        if copied and renamed:
            copied = _renamed(copied, renamed)
        if copied:
            discount = weights.renamed ** len(renamed)
            result.append(_Candidate(float(length), weight * discount, copied, start))
            if len(result) >= weights.per_source:
                break
    return result


def _starting_with(text: str, tokens: _Tokens, prefix: str) -> list[int]:
    """The indices of the tokens of ``text`` that start with ``prefix`` (an identifier's
    start): where it follows no word character. The pattern starts with the prefix, so the
    text is scanned for it in C (the word before it is looked at only there); comparing
    every token took 5 % of a language server's completion."""
    pattern = rf"{re.escape(prefix)}(?<!\w{'.' * len(prefix)})"
    return [bisect_left(tokens.starts, m.start()) for m in re.finditer(pattern, text)]


def _equal_to(words: list[str], word: str) -> list[int]:
    """The indices of ``word`` in ``words``, found by ``list.index`` (a scan in C)."""
    found: list[int] = []
    at = -1
    with contextlib.suppress(ValueError):
        while True:
            at = words.index(word, at + 1)
            found.append(at)
    return found


def _renamable(word: str) -> bool:
    """An identifier a near-duplicate may name differently (not a keyword, not ``self``)."""
    return word.isidentifier() and not keyword.iskeyword(word) and word != "self"


def _renamed(text: str, names: dict[str, str]) -> str:
    """``text`` with the source's names the match renamed taking the cursor's, and in its
    other ``_``-joined names the word a rename changed (``cmark_reference_map_new`` renamed
    ``cmark_footnote_map_new`` makes ``reference_free`` ``footnote_free``): near-duplicate
    code names its variants' helpers alike."""
    words = _word_renames(names)

    def rename(m: re.Match[str]) -> str:
        name = m.group()
        if name in names:
            return names[name]
        if not words or "_" not in name:
            return name
        return "_".join(words.get(w, w) for w in name.split("_"))

    return _WORD.sub(rename, text)


def _word_renames(names: dict[str, str]) -> dict[str, str]:
    """The one ``_``-separated word each rename changes, where it changes one word of a name
    of several (``cmark_reference_map_new`` -> ``cmark_footnote_map_new``: ``reference`` ->
    ``footnote``), words of three or more letters, each word renamed one way only."""
    out: dict[str, str] = {}
    clashes: set[str] = set()
    for theirs, mine in names.items():
        a, b = theirs.split("_"), mine.split("_")
        if len(a) != len(b) or len(a) < 2:
            continue
        changed = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if len(changed) != 1:
            continue
        old, new = changed[0]
        if len(old) < 3 or len(new) < 3 or not old.isalpha() or not new.isalpha():
            continue
        if out.get(old, new) != new:
            clashes.add(old)
        out[old] = new
    return {k: v for k, v in out.items() if k not in clashes}


def _continuation(text: str, start: int, cursor: _Cursor, multiline: bool) -> str:
    """What follows position ``start`` of ``text``, fitted to the cursor; "" if unusable."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = _line_end(text, start)
    source_indent = _indent(text[line_start:line_end])
    rest_of_line = text[start:line_end]
    count = _MAX_COPIED_LINES if multiline else 1
    if cursor.at_line_start:
        if rest_of_line.strip():
            return ""  # the source's line goes on where the cursor's line has ended
        lines = _lines_after(text, line_end, count, skip_blank=True)
        if not lines:
            return ""
        fitted = [_reindent(ln, source_indent, cursor.block_indent) for ln in lines]
        first = fitted[0]
        first = first[len(cursor.typed) :] if first.startswith(cursor.typed) else first.lstrip()
        return "\n".join([first, *fitted[1:]]).rstrip()
    if not rest_of_line.strip() and not multiline:
        return ""
    if cursor.typed[-1:].isspace():
        rest_of_line = rest_of_line.lstrip(" \t")
    if not multiline:
        return rest_of_line.rstrip()
    following = _lines_after(text, line_end, count, skip_blank=False)
    fitted = [_reindent(ln, source_indent, cursor.block_indent) for ln in following]
    return "\n".join([rest_of_line, *fitted]).rstrip()


def _lines_after(text: str, line_end: int, count: int, *, skip_blank: bool) -> list[str]:
    """Up to ``count`` lines after the line ending at ``line_end``, after any blank lines when
    ``skip_blank``."""
    lines: list[str] = []
    pos = line_end
    while pos < len(text) and len(lines) < count:
        end = _line_end(text, pos + 1)
        line = text[pos + 1 : end]
        if lines or not skip_blank or line.strip():
            lines.append(line)
        pos = end
    return lines


def _naive(cursor: _Cursor, left: str, fragments: Sequence[RetrievedFragment]) -> str:
    """Copy the line after the first occurrence of the context's last non-empty line."""
    before = left[: left.rfind("\n") + 1].splitlines()
    target = next((ln.strip() for ln in reversed(before) if ln.strip()), None)
    if target is None:
        return ""
    for fragment in fragments[:10]:
        shown = fragment.shown.splitlines()
        for i, line in enumerate(shown):
            if line.strip() != target:
                continue
            following = next((ln for ln in shown[i + 1 :] if ln.strip()), None)
            if following is None:
                continue
            fitted = _reindent(following, _indent(line), cursor.block_indent)
            if fitted.startswith(cursor.typed):
                return fitted[len(cursor.typed) :].rstrip()
            if cursor.at_line_start:
                return fitted.strip()
    return ""


def _merged_text(fragment: RetrievedFragment) -> str:
    """The matched window followed by the lines shown after it (they overlap by the window
    size minus the stride; the longest overlap is taken)."""
    window = fragment.text.splitlines()
    shown = fragment.shown.splitlines()
    for overlap in range(min(len(window), len(shown)), 0, -1):
        if window[-overlap:] == shown[:overlap]:
            return "\n".join(window + shown[overlap:])
    return "\n".join(window + shown)


def _reindent(line: str, source_indent: str, target_indent: str) -> str:
    """``line`` with its indentation relative to ``source_indent`` moved onto
    ``target_indent``."""
    indent = _indent(line)
    body = line[len(indent) :]
    if not body:
        return ""
    if indent.startswith(source_indent):
        return target_indent + indent[len(source_indent) :] + body
    dedent = len(source_indent) - len(indent)
    return target_indent[: max(len(target_indent) - dedent, 0)] + body


def _indent(line: str) -> str:
    match = _INDENT.match(line)
    return match.group() if match else ""


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _limit(text: str, stop: Sequence[str], max_tokens: int) -> str:
    """Cut at the first stop sequence and after ``max_tokens`` counted tokens, as a model
    server would."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    text = text[:cut]
    for i, match in enumerate(_COUNTED.finditer(text)):
        if i == max_tokens:
            return text[: match.start()]
    return text
