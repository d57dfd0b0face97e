"""The completion engine: RepoCoder's iterative retrieval, batching and what it records."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from repos import run_repomem

from repomem.completion.backends.base import Backend, GenerationRequest
from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine, CompletionTask, query_window
from repomem.config import CompletionConfig
from repomem.context.cards import Card, listing
from repomem.context.definitions import DefinitionHit
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.index.occurrences import Occurrence
from repomem.settings import Settings

LEFT = "".join(f"line_{i} = {i}\n" for i in range(30)) + "    "


def settings(**completion: object) -> Settings:
    return Settings(completion=dataclasses.replace(CompletionConfig(), **completion))


class RecordingRetriever:
    """Returns fixed fragments and records every call."""

    def __init__(
        self, fragments: Sequence[RetrievedFragment] = (), hits: Sequence[DefinitionHit] = ()
    ) -> None:
        self.fragments = list(fragments)
        self.hits = list(hits)
        self.calls: list[dict[str, object]] = []
        self.drafts: list[str] = []
        self.occurrence_calls: list[str] = []
        self.lifted: list[RetrievedFragment] = []
        self.usage_calls: list[dict[str, object]] = []

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        self.calls.append({"query": query, "k": k, "alpha": alpha, "exclusion": exclusion})
        return self.fragments[:k]

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        self.drafts.append(draft)
        return list(self.hits)

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        self.occurrence_calls.append(left_context)
        return []

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]:
        self.usage_calls.append({"query": query, "path": path, "k": k, "retrieved": retrieved})
        return [u for u in self.lifted if u not in retrieved][:k]

    @property
    def queries(self) -> list[str]:
        return [str(call["query"]) for call in self.calls]


class ScriptedBackend(Backend):
    """Answers each batch from a script of replies and records the requests."""

    name = "scripted"
    context_window = 2048

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.batches: list[list[GenerationRequest]] = []

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        self.batches.append(list(requests))
        return [self.replies.pop(0) for _ in requests]

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


def fragment(fid: int, text: str) -> RetrievedFragment:
    return RetrievedFragment(
        fid, (Location(f"lib/m{fid}.py", 0, 20),), text, text, 5.0 - fid, 1.0, 5.5 - fid
    )


def test_first_query_is_the_last_window_lines() -> None:
    retriever = RecordingRetriever()
    engine = CompletionEngine(retriever, ScriptedBackend("x = 1\n"), settings(iterations=1))
    asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert retriever.queries == ["\n".join(LEFT.splitlines()[-21:-1])]
    assert retriever.queries[0].splitlines()[0] == "line_10 = 10"


def test_the_backend_is_told_the_cursor_file_language() -> None:
    backend = ScriptedBackend("x = 1\n", "y := 2\n")
    engine = CompletionEngine(RecordingRetriever(), backend, settings(iterations=1))
    asyncio.run(engine.complete("pkg/a.py", LEFT))
    asyncio.run(engine.complete("cmd/main.go", LEFT))
    assert [batch[0].language for batch in backend.batches] == ["python", "go"]


def test_second_query_contains_the_first_completion_and_keeps_the_window() -> None:
    retriever = RecordingRetriever([fragment(1, "a = 1")])
    backend = ScriptedBackend("result = compute(line_29)\nignored()", "result = final()")
    exclusion = Exclusion("pkg/a.py", 10)
    engine = CompletionEngine(retriever, backend, settings(alpha=0.25, k=7))
    result = asyncio.run(engine.complete("pkg/a.py", LEFT, exclusion=exclusion))

    first, second = retriever.queries
    assert second.endswith("\n    result = compute(line_29)")
    assert "ignored()" not in second  # the post-processed completion, not the raw text
    assert len(second.splitlines()) == len(first.splitlines()) == 20
    assert second.splitlines()[:-1] == first.splitlines()[1:]  # one line pushed out on top
    for call in retriever.calls:  # FragRel settings and the exclusion apply every time
        assert call["alpha"] == 0.25 and call["k"] == 7 and call["exclusion"] is exclusion
    assert result.text == "result = final()"
    assert [it.completion for it in result.iterations] == [
        "result = compute(line_29)",
        "result = final()",
    ]
    assert len(backend.batches) == 2


def test_usages_of_the_definitions_are_lifted_after_the_best_fragment() -> None:
    card = Card("lib/geo.py", 0, "scale", "function", "def scale(v, w):")
    hit = DefinitionHit(card, "scale", "named here", 0.5, 1, 1)
    found = [fragment(1, "a = 1"), fragment(2, "b = 2"), fragment(3, "c = 3")]
    retriever = RecordingRetriever(found, [hit])
    retriever.lifted = [fragment(7, "y = scale(x, 2)")]
    engine = CompletionEngine(retriever, ScriptedBackend("x"), settings(iterations=1))
    result = asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert [f.fragment_id for f in result.iterations[0].retrieved] == [1, 7, 2, 3]
    assert retriever.usage_calls[0]["path"] == "pkg/a.py"
    assert retriever.usage_calls[0]["k"] == CompletionConfig().max_usages
    # turned off, or with no definition to call, nothing is asked for
    for options, hits in (({"max_usages": 0}, [hit]), ({}, [])):
        quiet = RecordingRetriever(found, hits)
        quiet.lifted = retriever.lifted
        engine = CompletionEngine(quiet, ScriptedBackend("x"), settings(iterations=1, **options))
        result = asyncio.run(engine.complete("pkg/a.py", LEFT))
        assert [f.fragment_id for f in result.iterations[0].retrieved] == [1, 2, 3]
        assert quiet.usage_calls == []


def test_a_listing_of_declarations_is_kept_after_the_capped_cards() -> None:
    """``max_definitions`` caps the definition cards; a listing of declarations alone comes
    after them whatever their number (it takes the room the cards leave)."""
    cards = [Card(f"lib/m{i}.c", 0, f"f{i}", "function", f"int f{i}(void);") for i in range(3)]
    hits = [DefinitionHit(c, c.name, "named here", 0.5, 1, 1) for c in cards]
    helpers = listing([("lib/common.h", 4, "void fail(const char *msg);")], "// helpers:")
    hits.append(DefinitionHit(helpers, "", "helpers", 0.0, 9, 0))
    engine = CompletionEngine(
        RecordingRetriever([], hits),
        ScriptedBackend("x"),
        settings(iterations=1, max_definitions=2),
    )
    result = asyncio.run(engine.complete("pkg/a.c", LEFT))
    shown = [h.card.name for h in result.iterations[0].definitions]
    assert shown == ["f0", "f1", ""]


def test_buffer_environment_lets_hidden_fragments_into_the_environment() -> None:
    exclusion = Exclusion("pkg/a.py", 10)
    for on in (False, True):
        retriever = RecordingRetriever()
        engine = CompletionEngine(
            retriever, ScriptedBackend("x = 1"), settings(iterations=1, buffer_environment=on)
        )
        asyncio.run(engine.complete("pkg/a.py", LEFT, exclusion=exclusion))
        (call,) = retriever.calls
        assert call["exclusion"] == Exclusion("pkg/a.py", 10, in_environment=on)


def test_iterations_are_configurable_and_stop_when_nothing_changes() -> None:
    retriever = RecordingRetriever()
    engine = CompletionEngine(
        retriever, ScriptedBackend("a()", "b()", "c()"), settings(iterations=3)
    )
    result = asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert len(retriever.calls) == 3 and result.text == "c()"

    retriever = RecordingRetriever()
    engine = CompletionEngine(retriever, ScriptedBackend("   \n"), settings(iterations=3))
    result = asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert len(retriever.calls) == 1  # an empty completion would only repeat the retrieval
    assert result.text == "" and len(result.iterations) == 1


def test_requests_carry_mode_limits_and_context() -> None:
    frags = [fragment(i, f"value_{i} = {i}") for i in range(3)]
    backend = ScriptedBackend("x = 1", "call(\n    a)\nmore()")
    engine = CompletionEngine(
        RecordingRetriever(frags),
        backend,
        settings(iterations=1, max_tokens_line=11, max_tokens_api=99),
    )
    asyncio.run(engine.complete("pkg/a.py", LEFT, "\nrest()\n", mode="line"))
    api = asyncio.run(engine.complete("pkg/a.py", LEFT, "\nrest()\n", mode="api"))
    line_request = backend.batches[0][0]
    api_request = backend.batches[1][0]
    assert line_request.stop == ("\n",) and line_request.max_tokens == 11
    assert not line_request.multiline
    assert api_request.stop == () and api_request.max_tokens == 99 and api_request.multiline
    assert line_request.left_context == LEFT and line_request.right_context == "\nrest()\n"
    assert line_request.fragments == tuple(frags)
    assert line_request.prompt.endswith(LEFT)
    assert api.text == "call(\n    a)"


def test_generation_budget_never_exceeds_the_window() -> None:
    backend = ScriptedBackend("x")
    backend.context_window = 300
    engine = CompletionEngine(None, backend, settings(iterations=1, max_tokens_api=256))
    asyncio.run(engine.complete("pkg/a.py", LEFT * 20, mode="api"))
    request = backend.batches[0][0]
    assert backend.count_tokens(request.prompt) + request.max_tokens <= 300


def test_result_records_fragments_prompt_and_timings() -> None:
    frags = [fragment(i, f"value_{i} = {i}") for i in range(3)]
    engine = CompletionEngine(
        RecordingRetriever(frags), ScriptedBackend("a = 1", "a = 2"), settings(max_fragments=2)
    )
    result = asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert len(result.iterations) == 2
    first = result.iterations[0]
    assert first.retrieved == tuple(frags)
    assert first.prompt.fragments == tuple(frags[:2])
    assert result.prompt is result.iterations[-1].prompt
    assert result.prompt.total_tokens > result.prompt.retrieved_tokens > 0
    assert set(result.timings) == {"retrieval", "prompt", "generation"}
    assert all(t >= 0 for t in result.timings.values())

    account = json.loads(json.dumps(result.to_dict()))
    assert account["text"] == "a = 2"
    shown = [f["in_prompt"] for f in account["iterations"][0]["fragments"]]
    assert shown == [True, True, False]
    assert account["iterations"][0]["fragments"][0]["locations"][0]["path"] == "lib/m0.py"
    assert account["iterations"][1]["prompt_tokens"]["total"] == result.prompt.total_tokens


def test_without_a_retriever_only_the_file_is_used() -> None:
    backend = ScriptedBackend("x = 1")
    engine = CompletionEngine(None, backend, settings(iterations=1))
    result = asyncio.run(engine.complete("pkg/a.py", LEFT))
    assert result.iterations[0].retrieved == ()
    assert backend.batches[0][0].prompt == LEFT


def test_batched_completion_makes_one_backend_call_per_iteration() -> None:
    retriever = RecordingRetriever([fragment(1, "a = 1")])
    backend = ScriptedBackend("t0()", "t1()", "t2()", "u0()", "u1()", "u2()")
    engine = CompletionEngine(retriever, backend, settings())
    tasks = [
        CompletionTask(f"pkg/t{i}.py", f"x = {i}\n", exclusion=Exclusion(f"pkg/t{i}.py", 0))
        for i in range(3)
    ]
    entered: list[str] = []

    @contextmanager
    def scope(task: CompletionTask) -> Iterator[None]:
        entered.append(task.path)
        yield

    results = asyncio.run(engine.complete_many(tasks, retrieval_scope=scope))
    assert [r.text for r in results] == ["u0()", "u1()", "u2()"]
    assert [len(batch) for batch in backend.batches] == [3, 3]
    assert entered == [t.path for t in tasks] * 2
    assert [call["exclusion"] for call in retriever.calls] == [t.exclusion for t in tasks] * 2
    assert retriever.queries[3] == "x = 0\nt0()"


def test_end_to_end_with_the_builtin_backend() -> None:
    source = "def load(self):\n    path = self.root\n    return read(path)\n"
    frag = RetrievedFragment(1, (Location("lib/io.py", 0, 3),), source, source, 2.0, 0.0, 2.0)
    engine = CompletionEngine(RecordingRetriever([frag]), BuiltinBackend(), settings())
    result = asyncio.run(engine.complete("app/x.py", "def load(self):\n    path = self.root\n    "))
    assert result.text == "return read(path)"


def test_query_window() -> None:
    assert query_window("a\nb\nc\n", 2) == "b\nc"
    assert query_window("a\nb\nc\n    ", 2) == "b\nc"
    assert query_window("a\n\nc\n", 2) == "\nc"
    assert query_window("a\nb\nc = f(", 2) == "b\nc = f("
    assert query_window("", 20) == ""


# ---------------------------------------------------------------------------------------------
# `repomem complete` as users run it: a subprocess on real files.


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOMEM_")} | (env or {})
    return run_repomem("complete", *args, cwd=cwd, env=env, timeout=120)


def assert_clean_error(proc: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("repomem: error: ") and fragment in lines[0], lines[0]


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "app.py").write_text("import os\n\nprint(os.getcwd())\n", encoding="utf-8")
    return repo


@pytest.mark.parametrize(
    ("location", "fragment"),
    [
        ("app.py", "expected FILE:LINE[:COL], got 'app.py'"),
        ("app.py:0", "count from 1"),
        ("app.py:9", "line 9 is past the end (app.py has 3 lines; a cursor goes on line 1 to 4)"),
        ("app.py:3:40", "app.py:3: column 40 is out of range (1 to 19)"),
        ("missing.py:1", "missing.py: no such file"),
    ],
)
def test_cli_rejects_bad_cursors(small_repo: Path, location: str, fragment: str) -> None:
    assert_clean_error(run_cli(location, cwd=small_repo), fragment)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            ".env",
            b"API_KEY=sk-live-4242\nAPI_KEY=\n",
            "is excluded as a secret file (pattern .env)",
        ),
        ("keys/id_rsa.py", b"KEY = 1\nKEY = 2\n", "is excluded as a secret file (pattern id_rsa*)"),
        (
            "vendor/lib.py",
            b"x = 1\ny = 2\n",
            "is ignored by index.ignore_patterns (pattern vendor/)",
        ),
        ("blob.py", b"x = 1\n\0\0\0\n", "looks like a binary file"),
        ("huge.py", b"x = 1\n" * 50, "is larger than index.max_file_bytes (200 bytes)"),
    ],
)
def test_cli_refuses_files_the_index_leaves_out(
    small_repo: Path, name: str, data: bytes, message: str
) -> None:
    (small_repo / ".repomem.toml").write_text(
        '[index]\nmax_file_bytes = 200\nignore_patterns = ["vendor/"]\n', encoding="utf-8"
    )
    path = small_repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    proc = run_cli(f"{name}:2", "--explain", cwd=small_repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert_clean_error(proc, f"{name} {message}; repomem does not complete it")


def test_cli_rejects_files_outside_a_repository(small_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "loose.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    assert_clean_error(run_cli(f"{outside}:1", cwd=tmp_path), "is not inside a repository")
    (small_repo / "link.py").symlink_to(outside)
    assert_clean_error(run_cli("link.py:1", cwd=small_repo), "is outside the repository")


def test_cli_reports_bad_settings_and_backends(small_repo: Path) -> None:
    assert_clean_error(run_cli("app.py:2", "--backend", "gpt9", cwd=small_repo), "gpt9")
    missing_model = run_cli(
        "app.py:2", "--backend", "transformers", "--model", "/no/such/model", cwd=small_repo
    )
    assert_clean_error(missing_model, "/no/such/model")
    (small_repo / ".repomem.toml").write_text("[completion]\nk = 'x'\n", encoding="utf-8")
    assert_clean_error(run_cli("app.py:2", cwd=small_repo), ".repomem.toml: completion.k")


def fixture_repository(root: Path) -> Path:
    """Handler classes sharing a pattern (what the built-in backend can complete from) among
    unrelated numeric helpers (so that BM25's document frequencies look like a real repo's)."""
    (root / ".repomem").mkdir(parents=True)  # marks the root; the index is built on first use
    (root / "app").mkdir()
    (root / "lib").mkdir()
    answers = {
        "get": "return self.render(record)",
        "post": "return self.save(record, status=201)",
        "delete": "return self.remove(record)",
    }
    orders = [("get", "post", "delete"), ("delete", "get", "post"), ("post", "delete", "get")]
    for i, name in enumerate(["user", "order", "invoice", "product", "customer", "shipment"]):
        lines = ["from app.base import Handler", "", "", f"class {name.title()}Handler(Handler):"]
        for method in orders[i % 3]:
            body = ["        record = self.lookup(request)", f"        {answers[method]}"]
            lines += ["", f"    def {method}(self, request):", *body]
        (root / "app" / f"{name}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    for i in range(24):
        lines = [f'"""Numeric helpers, part {i}."""', "", "import math"]
        for j in range(6):
            lines += [
                "",
                f"def {words[i % 8]}_{words[(3 * i + 1) % 8]}_{j}(value, scale={j + 1}):",
                f"    total = math.sqrt(value) * scale + {i}",
                f"    return round(total, {j})",
            ]
        (root / "lib" / f"num{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


TICKET = """from app.base import Handler


class TicketHandler(Handler):
    def get(self, request):
        record = self.lookup(request)
        return self.render(record)

    def {method}(self, request):
        record = self.lookup(request)

"""


def test_cli_completes_from_the_repository_end_to_end(tmp_path: Path) -> None:
    repo = fixture_repository(tmp_path / "repo")
    ticket = repo / "app" / "ticket.py"
    ticket.write_text(TICKET.format(method="post"), encoding="utf-8")
    cursor = "app/ticket.py:11"  # the empty line after the lookup in `post`

    first = run_cli(cursor, cwd=repo)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "        return self.save(record, status=201)\n"
    assert "indexing" in first.stderr
    assert (repo / ".repomem" / "CURRENT").is_file()  # built once, then reused

    second = run_cli(cursor, "--json", "--explain", "--iterations", "2", cwd=repo)
    assert second.returncode == 0, second.stderr
    assert "indexing" not in second.stderr
    account = json.loads(second.stdout)
    assert account["text"] == "        return self.save(record, status=201)"
    assert (account["file"], account["line"], account["backend"]) == (
        "app/ticket.py",
        11,
        "builtin",
    )
    assert len(account["iterations"]) == 2
    fragments = account["iterations"][0]["fragments"]
    assert 0 < len(fragments) <= 10
    assert any(f["in_prompt"] for f in fragments)
    assert fragments[0]["locations"][0]["path"].startswith("app/")
    for f in fragments:
        assert all(loc["path"] != "app/ticket.py" for loc in f["locations"])  # the cursor's own
        assert f["s_rel"] == pytest.approx(f["s_ind"] + 0.5 * f["s_env"])
    assert account["iterations"][1]["query"].endswith("return self.save(record, status=201)")
    assert "iteration 2" in second.stderr and "ranked by BM25" in second.stderr
    assert "s_env" not in second.stderr  # zero at alpha 0: not shown
    assert "prompt: " in second.stderr and "of 4096 tokens" in second.stderr

    plain_bm25 = json.loads(run_cli(cursor, "--json", "--alpha", "0", cwd=repo).stdout)
    for f in plain_bm25["iterations"][0]["fragments"]:
        assert f["s_env"] == 0 and f["s_rel"] == f["s_ind"]

    server_down = run_cli(
        cursor,
        *("--backend", "openai", "--url", "http://127.0.0.1:9/v1", "--model", "m"),
        cwd=repo,
        env={"REPOMEM_BACKEND_MAX_RETRIES": "0"},
    )
    assert_clean_error(server_down, "http://127.0.0.1:9/v1")

    # the file on disk is the buffer: after an edit the cursor is in `delete` (a weaker
    # match, shown at any confidence)
    ticket.write_text(TICKET.format(method="delete"), encoding="utf-8")
    shown = {"REPOMEM_COMPLETION_MIN_CONFIDENCE": "0"}
    edited = run_cli(cursor, "--iterations", "1", cwd=repo, env=shown)
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout == "        return self.remove(record)\n"
