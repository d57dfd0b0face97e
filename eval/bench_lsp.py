"""Language-server benchmark: ``repomem serve`` driven over stdio as an editor would drive it.

Corpus (default): the first Python files of the standard library's source (sysconfig's stdlib
directory, without site-packages, test and idlelib directories) copied into a temporary
directory with ``git init``, up to ``--lines`` lines. The server indexes it from scratch.

Measured, with the built-in backend:

* **completion latency**: the replay re-types ``--steps`` lines of a real source file of the
  corpus: the line's first half as one incremental ``didChange``, a ``textDocument/completion``
  request at the cursor (timed from sending the request to receiving its response), then the
  rest of the line as a second ``didChange``, and a pause of ``--pause-ms`` (the user typing).
  The server runs with ``debounceMs`` = ``--debounce-ms`` (default 0, so the figures are the
  server's work; an editor configured with a debounce adds it on top).
* **edit-to-retrievable lag**: a line holding a new unique identifier is typed where it
  leaves the file free of syntax errors, at the indentation of the code around it (one
  ``didChange``; the probes stay in the document); the custom ``repomem/retrieve``
  request is then sent every ``--poll-ms`` until a fragment containing the identifier comes
  back. The lag runs from sending the ``didChange``
  to receiving that response, so it includes the server's ``indexDelayMs`` (the quiet time it
  waits for before indexing a document being typed in), the ``RepoIndex.update_file`` call and
  the transport. It is measured with the configured ``indexDelayMs`` and again with 0; the
  server-side ``update_file`` time of each edit (``lastUpdateMs`` of ``repomem/status``) is
  reported next to it.
* **memory**: the server's VmRSS (``/proc/<pid>/status``) sampled every 0.5 s during the replay;
  with ``--minutes M`` the replay repeats for M minutes (a soak) and the RSS after the first
  pass and the RSS slope (MB per minute, least squares after the first quarter of the run) are
  reported.
* **robustness**: ``--bad-messages`` malformed or random messages (bad params, wrong types,
  unknown methods, non-JSON bodies, stray cancellations, edits of unknown documents; never the
  lifecycle methods), then a check that the server still answers a status request and a
  completion.
* **doc memory**: the time the server takes to read the corpus's docs (here its module
  docstrings) after indexing (``repomem/docsReady``); the replay starts once they are read.
  ``--docs`` sets ``completion.docs``, so doc segments compete for the prompt.

    python eval/bench_lsp.py [--lines 100000] [--steps 200] [--minutes 0] [--docs] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from repomem.index.languages import language_for_path, parser

SKIP_DIRS = {"site-packages", "test", "tests", "idlelib", "__pycache__", "lib2to3"}
DEFAULT_FILE = "argparse.py"
LIFECYCLE = {"initialize", "initialized", "shutdown", "exit"}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def build_corpus(target_lines: int, dest: Path) -> tuple[int, int]:
    """Copy stdlib sources into ``dest`` (sorted, until ``target_lines``); (files, lines)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = lines = 0
    for src in sorted(stdlib.rglob("*.py")):
        rel = src.relative_to(stdlib)
        if any(part in SKIP_DIRS or part.startswith("test") for part in rel.parts[:-1]):
            continue
        try:
            text = src.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        files += 1
        lines += text.count("\n")
        if lines >= target_lines:
            break
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return files, lines


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Session:
    client: LanguageClient
    pid: int
    ready: asyncio.Future[Any]
    docs: asyncio.Future[Any]
    stderr_tail: list[str] = field(default_factory=list)
    rss: list[tuple[float, float]] = field(default_factory=list)


def editor_settings(debounce_ms: int, index_delay_ms: int | None, docs: bool) -> dict[str, Any]:
    settings: dict[str, Any] = {"debounceMs": debounce_ms, "completion": {"docs": docs}}
    if index_delay_ms is not None:
        settings["indexDelayMs"] = index_delay_ms
    return {"repomem": settings}


async def start_server(
    root: Path, settings: dict[str, Any], log_level: str = "INFO", log: Path | None = None
) -> Session:
    client = LanguageClient("repomem-bench", "1")
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[Any] = loop.create_future()
    docs: asyncio.Future[Any] = loop.create_future()

    @client.feature("repomem/indexReady")
    def on_ready(params: Any) -> None:
        if not ready.done():
            ready.set_result(params)

    @client.feature("repomem/docsReady")
    def on_docs(params: Any) -> None:
        if not docs.done():
            docs.set_result(params)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        pass

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_show(params: types.ShowMessageParams) -> None:
        print(f"server says: {params.message}", file=sys.stderr)

    # -P: the corpus is the working directory and holds copies of standard-library modules,
    # which must not shadow the interpreter's own (as ``repomem serve`` from a script would not)
    command = [sys.executable, "-P", "-m", "repomem.cli", "serve", "--log-level", log_level]
    await client.start_io(*command, cwd=str(root))
    server = client._server
    assert server is not None
    session = Session(client, server.pid, ready, docs)

    async def drain() -> None:  # an unread stderr pipe would block the server once full
        assert server.stderr is not None
        out = log.open("wb") if log is not None else None
        while line := await server.stderr.readline():
            session.stderr_tail = [*session.stderr_tail[-50:], line.decode(errors="replace")]
            if out is not None:
                out.write(line)
        if out is not None:
            out.close()

    asyncio.ensure_future(drain())
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            initialization_options=settings,
        )
    )
    client.initialized(types.InitializedParams())
    return session


async def sample_rss(session: Session, every: float = 0.5) -> None:
    started = time.monotonic()
    while True:
        session.rss.append((time.monotonic() - started, rss_mb(session.pid)))
        await asyncio.sleep(every)


def insert(client: LanguageClient, uri: str, version: int, line: int, col: int, text: str) -> None:
    at = types.Position(line, col)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)
            ],
        )
    )


def replace_all(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@dataclass
class Replay:
    """The replayed file: its lines, the block that is re-typed, and the document state."""

    uri: str
    lines: list[str]
    start: int
    steps: int
    version: int = 1

    def base_text(self) -> str:
        kept = self.lines[: self.start] + self.lines[self.start + self.steps :]
        return "\n".join(kept)


async def replay_once(
    session: Session, replay: Replay, pause_s: float, latencies: list[float], exact: list[bool]
) -> None:
    client = session.client
    replay.version += 1
    replace_all(client, replay.uri, replay.version, replay.base_text())
    for i in range(replay.steps):
        row = replay.start + i
        line = replay.lines[row]
        indent = len(line) - len(line.lstrip())
        cut = indent + (len(line) - indent) // 2
        replay.version += 1
        insert(client, replay.uri, replay.version, row, 0, line[:cut] + "\n")
        t0 = time.perf_counter()
        result = await client.text_document_completion_async(
            completion_params(replay.uri, row, cut)
        )
        latencies.append((time.perf_counter() - t0) * 1e3)
        items = result.items if isinstance(result, types.CompletionList) else (result or [])
        if line[cut:].strip():
            exact.append(bool(items) and _inserted(items[0], line[:cut]) == line)
        replay.version += 1
        insert(client, replay.uri, replay.version, row, cut, line[cut:])
        await asyncio.sleep(pause_s)


def completion_params(uri: str, line: int, col: int) -> types.CompletionParams:
    return types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(line, col))


def _inserted(item: types.CompletionItem, prefix: str) -> str:
    edit = item.text_edit
    assert isinstance(edit, types.TextEdit)
    return prefix[: edit.range.start.character] + edit.new_text


async def measure_lag(
    session: Session, replay: Replay, probes: int, poll_s: float, rng: random.Random
) -> tuple[list[float], list[float]]:
    client = session.client
    lags, server_ms = [], []
    for i in range(probes):
        name = f"probe_{i}_{rng.randrange(16**8):08x}"
        row, line = probe_line(replay, name, rng)
        replay.lines.insert(row, line)  # the document keeps it
        replay.version += 1
        t0 = time.perf_counter()
        insert(client, replay.uri, replay.version, row, 0, line + "\n")
        while True:
            found = await client.protocol.send_request_async(
                "repomem/retrieve", {"query": name, "k": 3}
            )
            if any(name in f.text for f in found.fragments):
                lags.append((time.perf_counter() - t0) * 1e3)
                break
            if time.perf_counter() - t0 > 30:
                lags.append(float("inf"))
                break
            await asyncio.sleep(poll_s)
        server_ms.append((await status(client)).lastUpdateMs)
        await asyncio.sleep(0.2)
    return lags, server_ms


def probe_line(replay: Replay, name: str, rng: random.Random) -> tuple[int, str]:
    """Where a user would type a new statement, and the line: between two statements, at
    the indentation of the code around it, leaving the file free of syntax errors (not
    inside a call's arguments or a class's unindented tail)."""
    language = language_for_path(replay.uri) or "python"
    for _ in range(100):
        row = replay.start + rng.randrange(replay.steps)
        code = next((line for line in replay.lines[row:] if line.strip()), "")
        line = f"{code[: len(code) - len(code.lstrip())]}{name} = compute_{name}(value)"
        text = "\n".join([*replay.lines[:row], line, *replay.lines[row:]])
        if not parser(language).parse(text.encode()).root_node.has_error:
            break
    return row, line


async def status(client: LanguageClient) -> Any:
    return await client.protocol.send_request_async("repomem/status", {})


def bad_messages(n: int, rng: random.Random, uri: str) -> list[tuple[str | None, bytes]]:
    """``n`` malformed or random messages: (request id to expect an answer for, body)."""
    methods = [
        types.TEXT_DOCUMENT_COMPLETION,
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CLOSE,
        types.TEXT_DOCUMENT_DID_SAVE,
        types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        types.WORKSPACE_EXECUTE_COMMAND,
        types.TEXT_DOCUMENT_HOVER,
        "repomem/status",
        "repomem/retrieve",
        "repomem/nope",
        "$/cancelRequest",
        "$/setTrace",
    ]
    junk: list[Any] = [
        None,
        0,
        -1,
        2**70,
        3.5,
        "",
        "x" * 1000,
        [],
        [1, "a"],
        {},
        {"uri": 5},
        {"textDocument": {"uri": uri}, "position": {"line": -4, "character": "x"}},
        {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": uri}, "position": {"line": 10**9, "character": 0}},
        {
            "textDocument": {"uri": "file:///nowhere.py", "version": 3},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 5, "character": 0},
                        "end": {"line": 1, "character": 0},
                    },
                    "text": "x",
                }
            ],
        },
        {"settings": {"repomem": {"completion": {"k": "many"}, "debounceMs": -5}}},
        {"settings": {"repomem": []}},
        {"changes": [{"uri": "file:///etc/passwd", "type": 1}, {"uri": 7, "type": 9}]},
        {"command": "repomem.nope", "arguments": [1, 2]},
        {"query": ["not", "a", "string"], "k": -3},
        {"id": "never-sent"},
    ]
    out: list[tuple[str | None, bytes]] = []
    for i in range(n):
        kind = rng.randrange(10)
        if kind == 0:
            out.append((None, rng.choice([b"not json", b"{", b"[1,2,3]", b"42", b'"s"', b"null"])))
            continue
        method = rng.choice(methods)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": rng.choice(junk)}
        if kind == 1:
            message["jsonrpc"] = rng.choice(["1.0", 2, None])
        if kind == 2:
            message["method"] = rng.choice([5, None, "", "initialize/"])
        msg_id = None
        if kind >= 5 and method not in LIFECYCLE:
            msg_id = f"bad-{i}"
            message["id"] = msg_id
        elif kind == 4:
            message["id"] = rng.choice([{"a": 1}, [1], 1.5, None])
        if message.get("method") in LIFECYCLE:
            continue
        answerable = msg_id is not None and kind not in (1, 2)
        out.append((msg_id if answerable else None, json.dumps(message).encode()))
    return out


async def robustness(session: Session, n: int, rng: random.Random, uri: str) -> dict[str, Any]:
    client = session.client
    stdin = client._server.stdin  # type: ignore[union-attr]
    messages = bad_messages(n, rng, uri)
    answers: list[Future[Any]] = []
    for msg_id, body in messages:
        if msg_id is not None:
            future: Future[Any] = Future()
            client.protocol._request_futures[msg_id] = future
            answers.append(future)
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        if len(answers) % 50 == 0:
            await stdin.drain()
    await stdin.drain()
    done, _ = await asyncio.wait([asyncio.wrap_future(f) for f in answers], timeout=60)
    errors = sum(1 for f in done if f.exception() is not None)
    t0 = time.perf_counter()
    state = await asyncio.wait_for(status(client), 30)
    status_ms = (time.perf_counter() - t0) * 1e3
    return {
        "sent": len(messages),
        "requests_expecting_answers": len(answers),
        "answered": len(done),
        "answered_with_error": errors,
        "alive": session.client._server.returncode is None,  # type: ignore[union-attr]
        "status_after_ms": status_ms,
        "state_after": state.state,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="repomem-bench-lsp-"))
    results: dict[str, Any] = {}
    session: Session | None = None
    try:
        root = workdir / "repo"
        root.mkdir()
        if args.root:
            shutil.copytree(args.root, root, dirs_exist_ok=True)
            subprocess.run(["git", "init", "-q", str(root)], check=True)
            n_lines = sum(p.read_text(errors="replace").count("\n") for p in root.rglob("*.py"))
            n_files = sum(1 for _ in root.rglob("*.py"))
        else:
            n_files, n_lines = build_corpus(args.lines, root)
        results["corpus"] = {"files": n_files, "lines": n_lines}
        print(f"corpus: {n_files} files, {n_lines:,} lines in {root}", file=sys.stderr)

        target = root / args.file
        if not target.is_file():
            target = max(root.rglob("*.py"), key=lambda p: p.stat().st_size)
        lines = target.read_text(encoding="utf-8").split("\n")
        steps = min(args.steps, max(1, len(lines) - 60))
        replay = Replay(target.as_uri(), lines, start=min(40, len(lines) // 4), steps=steps)
        results["replay_file"] = {"path": str(target.relative_to(root)), "lines": len(lines)}

        t0 = time.perf_counter()
        settings = editor_settings(args.debounce_ms, args.index_delay_ms, args.docs)
        session = await start_server(root, settings, args.log_level, args.server_log)
        ready = await asyncio.wait_for(session.ready, args.index_timeout)
        results["index"] = {
            "ready_s": time.perf_counter() - t0,
            "server_reported_s": ready.seconds,
            "files": ready.files,
            "fragments": ready.fragments,
        }
        print(f"index ready: {ready.files} files in {ready.seconds:.1f} s", file=sys.stderr)
        docs = await asyncio.wait_for(session.docs, args.index_timeout)
        results["docs"] = {
            "state": docs.state,
            "documents": docs.documents,
            "segments": docs.segments,
            "server_reported_s": docs.seconds,
            "in_completions": args.docs,
        }
        print(f"doc memory: {docs.segments} segments in {docs.seconds:.1f} s", file=sys.stderr)
        client = session.client
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(replay.uri, "python", replay.version, "\n".join(lines))
            )
        )
        sampler = asyncio.ensure_future(sample_rss(session))
        latencies: list[float] = []
        exact: list[bool] = []
        started = time.monotonic()
        passes = 0
        first_pass_rss = float("nan")
        while True:
            await replay_once(session, replay, args.pause_ms / 1e3, latencies, exact)
            passes += 1
            if passes == 1:
                first_pass_rss = session.rss[-1][1]
            elapsed = time.monotonic() - started
            print(
                f"replay pass {passes}: {len(latencies)} completions, {elapsed:.0f} s,"
                f" RSS {session.rss[-1][1]:.0f} MB",
                file=sys.stderr,
            )
            if elapsed >= args.minutes * 60:
                break
        sampler.cancel()
        results["completion_ms"] = {
            "n": len(latencies),
            "p50": pct(latencies, 50),
            "p95": pct(latencies, 95),
            "max": max(latencies),
            "exact_line_rate": sum(exact) / max(1, len(exact)),
            "all": [round(x, 2) for x in latencies],
        }
        results["memory"] = memory_summary(session.rss, first_pass_rss)
        delay_ms = (await status(client)).settings.indexDelayMs
        for name, delay in (("edit_to_retrievable_ms", delay_ms), ("edit_to_retrievable_ms_0", 0)):
            client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(
                    settings={"repomem": {**settings["repomem"], "indexDelayMs": delay}}
                )
            )
            lags, server_ms = await measure_lag(
                session, replay, args.probes, args.poll_ms / 1e3, rng
            )
            results[name] = {
                "index_delay_ms": delay,
                "n": len(lags),
                "p50": pct(lags, 50),
                "p95": pct(lags, 95),
                "max": max(lags),
                "server_update_p50": pct(server_ms, 50),
                "server_update_p95": pct(server_ms, 95),
            }
        results["robustness"] = await robustness(session, args.bad_messages, rng, replay.uri)
        # the random messages may have closed the document (a didClose naming it is valid)
        replay.version += 1
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(replay.uri, "python", replay.version, replay.base_text())
            )
        )
        row = replay.start
        cut = len(lines[row]) // 2
        replay.version += 1
        insert(client, replay.uri, replay.version, row, 0, lines[row][:cut] + "\n")
        after = await asyncio.wait_for(
            client.text_document_completion_async(completion_params(replay.uri, row, cut)), 30
        )
        results["robustness"]["completion_after"] = after is not None
        final = await status(client)
        results["server_stats"] = {
            k: getattr(final, k)
            for k in ("completions", "cacheHits", "superseded", "indexUpdates", "pendingUpdates")
        }
        await asyncio.wait_for(client.shutdown_async(None), 60)
        client.exit(None)
        await asyncio.wait_for(client._server.wait(), 60)  # type: ignore[union-attr]
    except BaseException:
        if session is not None:
            print("".join(session.stderr_tail), file=sys.stderr)
        raise
    finally:
        if session is not None and session.client._server.returncode is None:  # type: ignore[union-attr]
            session.client._server.kill()  # type: ignore[union-attr]
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def memory_summary(samples: list[tuple[float, float]], first_pass_mb: float) -> dict[str, float]:
    """RSS figures; ``first_pass_mb`` is the RSS once the first replay pass is done (the
    server's caches and the index's working set are warm from then on)."""
    t = np.array([s[0] for s in samples])
    mb = np.array([s[1] for s in samples])
    tail = t >= t[-1] / 4
    slope = float(np.polyfit(t[tail] / 60, mb[tail], 1)[0]) if tail.sum() >= 3 else float("nan")
    return {
        "samples": len(samples),
        "minutes": float(t[-1] / 60),
        "rss_start_mb": float(mb[0]),
        "rss_first_pass_mb": first_pass_mb,
        "rss_end_mb": float(mb[-1]),
        "rss_max_mb": float(mb.max()),
        "rss_median_mb": float(statistics.median(mb)),
        "slope_mb_per_min": slope,
    }


def report(r: dict[str, Any]) -> str:
    c, m, b = r["completion_ms"], r["memory"], r["robustness"]
    e, e0 = r["edit_to_retrievable_ms"], r["edit_to_retrievable_ms_0"]
    rows = [
        ("corpus", f"{r['corpus']['files']} files, {r['corpus']['lines']:,} lines"),
        ("index ready (from scratch)", f"{r['index']['ready_s']:.1f} s"),
        (
            "doc memory read after indexing",
            f"{r['docs']['server_reported_s']:.1f} s ({r['docs']['documents']} documents,"
            f" {r['docs']['segments']} segments; in completions: {r['docs']['in_completions']})",
        ),
        (
            "completion p50 / p95 / max",
            f"{c['p50']:.1f} / {c['p95']:.1f} / {c['max']:.1f} ms"
            f" (n={c['n']}, pause {r['config']['pause_ms']:.0f} ms, target p95 <= 50 ms)",
        ),
        ("completion = rest of the line", f"{c['exact_line_rate']:.1%}"),
        (
            f"edit -> retrievable p50 / p95 (indexDelayMs {e['index_delay_ms']})",
            f"{e['p50']:.0f} / {e['p95']:.0f} ms (n={e['n']}, target <= 100 ms)",
        ),
        (
            "edit -> retrievable p50 / p95 (indexDelayMs 0)",
            f"{e0['p50']:.0f} / {e0['p95']:.0f} ms (n={e0['n']})",
        ),
        (
            "server update_file p50 / p95",
            f"{e0['server_update_p50']:.0f} / {e0['server_update_p95']:.0f} ms",
        ),
        (
            "RSS start / after the first pass / end / max",
            f"{m['rss_start_mb']:.0f} / {m['rss_first_pass_mb']:.0f} / {m['rss_end_mb']:.0f} /"
            f" {m['rss_max_mb']:.0f} MB over {m['minutes']:.1f} min",
        ),
        ("RSS slope", f"{m['slope_mb_per_min']:+.2f} MB/min"),
        (
            "bad messages",
            f"{b['sent']} sent, {b['answered']}/{b['requests_expecting_answers']}"
            f" requests answered, alive={b['alive']}, completion after={b['completion_after']}",
        ),
    ]
    return "\n".join(["| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lines", type=int, default=100_000, help="corpus size (stdlib lines)")
    ap.add_argument("--root", type=Path, help="benchmark this directory (copied) instead")
    ap.add_argument("--file", default=DEFAULT_FILE, help="file to replay (default: argparse.py)")
    ap.add_argument("--steps", type=int, default=200, help="lines re-typed per replay pass")
    ap.add_argument("--minutes", type=float, default=0.0, help="repeat the replay this long")
    ap.add_argument("--pause-ms", type=float, default=100.0, help="pause after each line")
    ap.add_argument("--debounce-ms", type=int, default=0, help="the server's debounceMs")
    ap.add_argument(
        "--index-delay-ms", type=int, help="the server's indexDelayMs (default: its default)"
    )
    ap.add_argument(
        "--docs", action="store_true", help="completion.docs: doc segments compete for the prompt"
    )
    ap.add_argument("--probes", type=int, default=20, help="edit-to-retrievable measurements")
    ap.add_argument("--poll-ms", type=float, default=5.0, help="repomem/retrieve poll interval")
    ap.add_argument("--bad-messages", type=int, default=1000)
    ap.add_argument("--index-timeout", type=float, default=900.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-level", default="INFO", help="the server's --log-level")
    ap.add_argument("--server-log", type=Path, help="write the server's stderr here")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    results = asyncio.run(run(args))
    results["config"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(report(results), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
