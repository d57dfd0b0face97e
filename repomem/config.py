"""Settings with documented defaults; one object per concern, all plain dataclasses."""

from __future__ import annotations

from dataclasses import asdict, dataclass

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
    max_file_bytes: int = 1_000_000
    exclude_secrets: bool = True
    secret_patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS
    exclude_build_output: bool = True
    build_output_patterns: tuple[str, ...] = DEFAULT_BUILD_OUTPUT_PATTERNS
    ignore_patterns: tuple[str, ...] = ()
    window: int = 20
    stride: int = 10
    relation_epsilon: float = 0.05
    node_neighbours: int = 64
    fragment_neighbours: int = 32
    hub_degree: int = 64
    import_weight: float = 0.0


@dataclass(frozen=True)
class BackendConfig:
    """Which model writes completions, and how to reach it."""

    backend: str = "builtin"  # builtin | transformers | vllm | openai
    model: str | None = None  # model directory (transformers, vllm) or served model name (openai)
    url: str = "http://127.0.0.1:8000/v1"  # OpenAI-compatible base URL
    api_key_env: str = "REPOMEM_API_KEY"  # environment variable holding the key; never logged
    timeout: float = 30.0  # seconds per request
    max_retries: int = 2
    context_window: int | None = None  # tokens; None: from the model's config, else 4096
    fim: str | None = None  # codellama | starcoder | deepseek | qwen; None: detect from tokenizer
    device: str | None = None  # transformers: "cpu", "cuda", ...; None: best available
    temperature: float = 0.0


@dataclass(frozen=True)
class CompletionConfig:
    """How a completion is produced from retrieval (RepoCoder and FragRel defaults).

    ``k`` fragments are retrieved per iteration with FragRel weight ``alpha`` (0 is plain
    BM25); the query is the last ``window`` lines before the cursor; ``iterations`` rounds of
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
    """

    k: int = 10
    alpha: float = 0.0
    iterations: int = 2
    window: int = 20
    max_tokens_line: int = 64
    max_tokens_api: int = 256
    retrieved_budget_fraction: float = 0.5
    max_fragments: int = 10
    definitions_share: float = 0.4
    max_definitions: int = 16
    min_confidence: float = 0.3
    max_usages: int = 2
    merge_overlaps: bool = True
    docs: bool = True
    buffer_environment: bool = False


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

    min_segment_words: int = 40
    max_segment_words: int = 200
    min_page_words: int = 280
    max_page_words: int = 600
    w_rel: float = 0.3
    alpha: float = 0.5
    epsilon: float = 0.05
    neighbours: int = 32
    max_entity_segments: int = 20
    embedding_model: str | None = None

    def segmenting(self) -> dict[str, int]:
        """The parameters stored segments depend on."""
        keys = ("min_segment_words", "max_segment_words", "min_page_words", "max_page_words")
        return {k: v for k, v in asdict(self).items() if k in keys}
