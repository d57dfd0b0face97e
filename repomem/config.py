"""Settings with documented defaults; one object per concern, all plain dataclasses, each
field's range in its metadata (:func:`out_of_range`), so that every way a value arrives is
checked the same."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any

from repomem.fim import FIM_OFF, FIM_TEMPLATES

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".htpasswd",
    "credentials",
    "credentials.*",
    "*credentials*.json",
    "secrets.*",
    "*.secret",
    ".npmrc",
    ".pypirc",
)

# Gitignore-style patterns of build output and installed packages: copies of the sources (or of
# other projects) that would outrank the code a developer edits. A matched directory holding an
# ``__init__.py`` is a Python package that happens to share the name, and stays.
DEFAULT_BUILD_OUTPUT_PATTERNS: tuple[str, ...] = (
    "dist/",
    "build/",
    "out/",
    "node_modules/",
    "*.map",
)


@dataclass(frozen=True)
class Check:
    """A setting's range: a value ``test`` rejects is an error saying it must be ``wanted``."""

    test: Callable[[Any], bool]
    wanted: str


def _range(test: Callable[[Any], bool], wanted: str) -> dict[str, Check]:
    return {"check": Check(test, wanted)}


def _at_least(n: float) -> dict[str, Check]:
    return _range(lambda v: v is None or (math.isfinite(v) and v >= n), f"at least {n}")


def _positive() -> dict[str, Check]:
    return _range(lambda v: v is None or (math.isfinite(v) and v > 0), "greater than 0")


def _below_one() -> dict[str, Check]:
    return _range(lambda v: 0 <= v < 1, "in [0, 1)")


_FIM = _range(
    lambda v: v is None or v in FIM_TEMPLATES or v == FIM_OFF,
    "one of " + ", ".join([*FIM_TEMPLATES, FIM_OFF]),
)
# a weight of its own: rows list neighbours by (cost, key), one block of cost per kind
_IMPORT_WEIGHT = _range(
    lambda v: v == 0 or (0 < v < 1 and v not in (0.3, 0.5, 0.8)),
    "0 (no import edges) or in (0, 1), other than the weights 0.3, 0.5 and 0.8",
)


#: keys renamed, by section (old name: new name): settings written with the old name still
#: apply, with a warning ("window" meant the fragments' lines in ``index`` and the query's in
#: ``completion``)
RENAMED: dict[str, dict[str, str]] = {
    "index": {"window": "fragment_lines"},
    "completion": {"window": "query_lines"},
}


def out_of_range(config: type, key: str, value: Any) -> str | None:
    """What field ``key`` of the section dataclass ``config`` must be, when ``value`` is not
    that (None: it is in range, or the field has no range): the one check settings files,
    the environment, flags, the editor and directly built backends all go through."""
    spec: Field[Any] = next(f for f in fields(config) if f.name == key)
    check = spec.metadata.get("check")
    return None if check is None or check.test(value) else check.wanted


@dataclass(frozen=True)
class IndexConfig:
    """How a repository is turned into fragments, a code graph and relations.

    The relation parameters trade exactness for speed: strengths below ``relation_epsilon``
    count as 0, each graph node keeps at most ``node_neighbours`` strongest nodes, each
    fragment keeps its ``fragment_neighbours`` strongest related fragments, and a path may
    end at, but not pass through, a node with more than ``hub_degree`` neighbours.
    ``import_weight`` above 0 adds a graph edge of that weight from each file's root to the
    root of every repository module it imports (not in the paper's graph; 0: none).
    """

    index_dir: str = ".repomem"
    max_file_bytes: int = field(default=1_000_000, metadata=_at_least(1))
    exclude_secrets: bool = True
    secret_patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS
    exclude_build_output: bool = True
    build_output_patterns: tuple[str, ...] = DEFAULT_BUILD_OUTPUT_PATTERNS
    ignore_patterns: tuple[str, ...] = ()
    fragment_lines: int = field(default=20, metadata=_at_least(1))
    stride: int = field(default=10, metadata=_at_least(1))
    relation_epsilon: float = field(default=0.05, metadata=_below_one())
    node_neighbours: int = field(default=64, metadata=_at_least(1))
    fragment_neighbours: int = field(default=32, metadata=_at_least(1))
    hub_degree: int = 64
    import_weight: float = field(default=0.0, metadata=_IMPORT_WEIGHT)


@dataclass(frozen=True)
class BackendConfig:
    """Which model writes completions, and how to reach it."""

    backend: str = "builtin"  # builtin | transformers | vllm | openai
    model: str | None = None  # model directory (transformers, vllm) or served model name (openai)
    url: str = "http://127.0.0.1:8000/v1"  # OpenAI-compatible base URL
    api_key_env: str = "REPOMEM_API_KEY"  # environment variable holding the key; never logged
    timeout: float = field(default=30.0, metadata=_positive())  # seconds per request
    max_retries: int = field(default=2, metadata=_at_least(0))
    # tokens; None: from the model's config, else 4096
    context_window: int | None = field(default=None, metadata=_at_least(16))
    # codellama | starcoder | deepseek | qwen | none; None: detect from the tokenizer
    fim: str | None = field(default=None, metadata=_FIM)
    device: str | None = None  # transformers: "cpu", "cuda", ...; None: best available
    temperature: float = field(default=0.0, metadata=_at_least(0))


@dataclass(frozen=True)
class CompletionConfig:
    """How a completion is produced from retrieval (RepoCoder and FragRel defaults).

    ``k`` fragments are retrieved per iteration with FragRel weight ``alpha`` (0 is plain
    BM25); the query window is the last ``query_lines`` lines before the cursor, and as many lines
    either side of the cursor are hidden from retrieval (the exclusion radius: the prompt
    shows them anyway); ``iterations`` rounds of
    retrieve-then-generate are run (1 disables RepoCoder's iteration). The prompt gives at most
    ``retrieved_budget_fraction`` of the model's context window and ``max_fragments`` blocks to
    retrieved code; up to ``definitions_share`` of that goes to at most ``max_definitions``
    cards of the definitions the cursor's code uses (``repomem.context``; 0 turns them off),
    and up to ``max_usages`` windows calling the best of those definitions are lifted in
    among the fragments (0 turns them off). ``merge_overlaps`` shows fragments of one file
    whose shown lines overlap as one block (off: RepoCoder's layout, a block per fragment).
    ``max_tokens_line`` / ``max_tokens_api`` bound the generated text in line and API
    (multi-line) mode. A completion whose backend gives a confidence (the built-in one) below
    ``min_confidence`` is not shown: ``repomem complete`` says so and the language server
    offers no item (0 shows every completion). ``docs`` lets segments of the repository's docs
    compete with code fragments for the retrieved places (``repomem.docmem.retriever``); on by
    default, as it completes documented names and cost the language server no measurable
    latency.
    ``buffer_environment``: the fragments hidden around the cursor (the model sees them
    anyway) still count in other fragments' FragRel environment (Eq. 9).
    ``recent``: in the language server, up to ``max_recent`` ranges the user just edited
    (``recent_lines`` lines around each change) or has on screen compete for the fragments'
    places (``repomem.context.recent``); without an editor there are none.
    """

    k: int = field(default=10, metadata=_at_least(1))
    alpha: float = field(default=0.0, metadata=_at_least(0))
    iterations: int = field(default=2, metadata=_at_least(1))
    query_lines: int = field(default=20, metadata=_at_least(1))
    max_tokens_line: int = field(default=64, metadata=_at_least(1))
    max_tokens_api: int = field(default=256, metadata=_at_least(1))
    retrieved_budget_fraction: float = field(
        default=0.5, metadata=_range(lambda v: 0 < v < 1, "between 0 and 1")
    )
    max_fragments: int = field(default=10, metadata=_at_least(0))
    definitions_share: float = field(default=0.4, metadata=_below_one())
    max_definitions: int = field(default=16, metadata=_at_least(0))
    min_confidence: float = field(
        default=0.3, metadata=_range(lambda v: 0 <= v <= 1, "between 0 and 1")
    )
    max_usages: int = field(default=2, metadata=_at_least(0))
    merge_overlaps: bool = True
    docs: bool = True
    buffer_environment: bool = False
    recent: bool = True
    max_recent: int = field(default=3, metadata=_at_least(0))
    recent_lines: int = field(default=10, metadata=_at_least(0))


@dataclass(frozen=True)
class DocMemoryConfig:
    """How docs are segmented, paginated and related.

    ``min/max_segment_words`` bound a segment (blocks join or split to stay within them);
    ``min/max_page_words`` are ReadAgent's pagination limits (its QuALITY values). Relations:
    ``w_rel`` is FragRel's context-structure base, strengths below ``epsilon`` count as 0,
    each item keeps ``neighbours`` relations, and an entity mentioned by more than
    ``max_entity_segments`` segments relates none of them. ``alpha`` weighs the environment
    score. ``embedding_model`` (a local model directory) adds the semantic relation.
    """

    min_segment_words: int = field(default=40, metadata=_at_least(1))
    max_segment_words: int = field(default=200, metadata=_at_least(1))
    min_page_words: int = field(default=280, metadata=_at_least(1))
    max_page_words: int = field(default=600, metadata=_at_least(1))
    w_rel: float = field(default=0.3, metadata=_below_one())
    alpha: float = field(default=0.5, metadata=_at_least(0))
    epsilon: float = field(default=0.05, metadata=_below_one())
    neighbours: int = field(default=32, metadata=_at_least(1))
    max_entity_segments: int = field(default=20, metadata=_at_least(1))
    embedding_model: str | None = None

    def segmenting(self) -> dict[str, int]:
        """The parameters stored segments depend on."""
        keys = ("min_segment_words", "max_segment_words", "min_page_words", "max_page_words")
        return {k: v for k, v in asdict(self).items() if k in keys}
