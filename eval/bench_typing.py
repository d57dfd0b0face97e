"""Typing replay: a typist re-types real files of this repository through ``repomem serve``,
against a model server with a fixed latency, and what it costs and shows is counted.

The corpus is a copy of ``--dirs`` of this repository (a git repository of its own, indexed by
the server from scratch). ``--regions`` blocks of ``--lines`` lines of its Python files (chosen
with ``--seed``) are cut out of their documents and typed back in, one key at a time, as an
editor would send them: a ``didChange`` per key, then an inline completion request at the
cursor, the previous request still waiting cancelled with ``$/cancelRequest`` (as VS Code
does). Keys come every 100–200 ms (5–10 keys/s); Enter inserts the line break and the next
line's indentation (the editor's auto-indent). Where the line has more to type, the typist
pauses for 1–2 s after 35 % of the Enters and after 5 % of the other non-word characters; at
the end of a pause, a suggestion that shows exactly what comes next is accepted (one key).
Before typing, one completion in another file warms the server up (its first completion loads
what the later ones reuse); the model's count starts after it.

The model is ``repomem_eval.model_server``: an OpenAI-compatible server answering after
``--latency-ms`` (300) with what follows the prompt in the typed files, streamed when asked so
(``--error-rate`` of the lines it writes, 25 %, get a wrong word); or, with ``--upstream URL``,
a real server (llama.cpp's) that it relays to, adding the latency given (``--latency-ms 0``:
none); give it ``--context-window`` (the server's window) and ``--model`` (a directory with the
model's tokenizer), so that the prompt is counted in the model's tokens and fits.

Reported, per server code (``--code DIR``, repeatable: run main's code beside this checkout's
in one run, each on the same keys and model):

* **model requests per 100 keystrokes** (counted by the model server);
* **pause → ghost text**: from the last key before a pause to the first suggestion shown
  (p50, p90, and how many pauses showed one);
* **stale suggestions shown**: a suggestion shown (the answer to the last request, the
  document unchanged since) that the model did not write after exactly the text before the
  cursor, checked against the model server's log of prompts and answers.

``--debounce-ms`` sets ``debounceMs`` for every server (unset: each version's default).

    python eval/bench_typing.py [--code DIR ...] [--regions 6] [--lines 8] [--keys 600] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from repomem_eval.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Region:
    path: str
    start: int  # offset in the file's text where the typed block starts
    end: int  # offset where it ends (the newline after its last line stays)


@dataclass
class Counts:
    keys: int = 0
    accepted: int = 0
    accepted_chars: int = 0
    shown: int = 0
    stale: int = 0
    pauses: int = 0
    ghost_ms: list[float] = field(default_factory=list)
    stale_examples: list[dict[str, str]] = field(default_factory=list)


def build_corpus(dest: Path, dirs: Sequence[str]) -> list[str]:
    for rel in dirs:
        shutil.copytree(ROOT / rel, dest / rel, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*.py"))


def choose_regions(root: Path, files: list[str], n: int, lines: int, seed: int) -> list[Region]:
    """``n`` blocks of ``lines`` lines, in different files, of code (no blank first line)."""
    rng = random.Random(seed)
    regions: list[Region] = []
    for path in rng.sample(files, len(files)):
        text = (root / path).read_text(encoding="utf-8")
        rows = text.split("\n")
        if len(rows) < lines + 20:
            continue
        first = rng.randrange(10, len(rows) - lines - 5)
        if not rows[first].strip() or max(len(r) for r in rows[first : first + lines]) > 90:
            continue
        start = sum(len(r) + 1 for r in rows[:first])
        end = start + sum(len(r) + 1 for r in rows[first : first + lines]) - 1
        regions.append(Region(path, start, end))
        if len(regions) == n:
            break
    return regions


class Typist:
    """Types the regions through one server session (see the module doc)."""

    def __init__(
        self, client: LanguageClient, root: Path, model: ModelServer, seed: int, keys: int
    ) -> None:
        self.client, self.root, self.model = client, root, model
        self.rng = random.Random(seed)
        self.max_keys = keys
        self.counts = Counts()
        self.version = 1
        self.request = 0
        self.latest: tuple[str, asyncio.Future[Any]] | None = None
        self.ghost: tuple[str, float] | None = None  # the suggestion shown, when it came
        self.last_key_at = 0.0

    async def type_region(self, region: Region) -> None:
        text = (self.root / region.path).read_text(encoding="utf-8")
        block = text[region.start : region.end]
        doc = text[: region.start] + text[region.end :]
        uri = (self.root / region.path).as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, doc))
        )
        self.version = 1
        at = region.start  # the cursor's offset in doc
        pos = 0  # how much of block is typed
        while pos < len(block) and self.counts.keys < self.max_keys:
            if block[pos] == "\n" or (pos == 0 and block[0] in " \t"):
                # Enter and the editor's auto-indent, or the first line's indentation: one key
                line_start = pos + 1 if block[pos] == "\n" else 0
                line = block[line_start:].split("\n", 1)[0]
                key = block[pos:line_start] + line[: len(line) - len(line.lstrip())]
            else:
                key = block[pos]
            doc, at = self.edit(uri, doc, at, key)
            pos += len(key)
            left, right = doc[:at], doc[at:]
            self.ask(uri, doc, at, left)
            rest = block[pos:]
            rest_of_line = rest.split("\n", 1)[0]
            if rest_of_line.strip() and (
                (key.startswith("\n") and self.rng.random() < 0.35)
                or (not key[-1].isalnum() and self.rng.random() < 0.05)
            ):
                shown = await self.pause(self.rng.uniform(1.0, 2.0))
                if shown and rest.startswith(shown) and shown.strip():
                    doc, at = self.edit(uri, doc, at, shown)
                    pos += len(shown)
                    self.counts.accepted += 1
                    self.counts.accepted_chars += len(shown)
                    self.ask(uri, doc, at, doc[:at])
            else:
                await asyncio.sleep(self.rng.uniform(0.1, 0.2))
            assert doc[at:] == right or doc[at:] == text[region.start + pos :]
        self.cancel_latest()
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )

    def edit(self, uri: str, doc: str, at: int, text: str) -> tuple[str, int]:
        line = doc.count("\n", 0, at)
        col = at - (doc.rfind("\n", 0, at) + 1)
        self.version += 1
        pos = types.Position(line, col)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
                [types.TextDocumentContentChangePartial(range=types.Range(pos, pos), text=text)],
            )
        )
        self.counts.keys += 1
        self.ghost = None
        self.last_key_at = time.monotonic()
        return doc[:at] + text + doc[at:], at + len(text)

    def ask(self, uri: str, doc: str, at: int, left: str) -> None:
        self.cancel_latest()
        self.request += 1
        msg_id = f"typing-{self.request}"
        line = doc.count("\n", 0, at)
        col = at - (doc.rfind("\n", 0, at) + 1)
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line, col),
        )
        future = self.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
        )
        self.latest = (msg_id, future)
        future.add_done_callback(lambda f: self.answered(msg_id, f, left))

    def answered(self, msg_id: str, future: asyncio.Future[Any], left: str) -> None:
        if future.cancelled() or future.exception() is not None:
            return  # cancelled: the typist typed on
        if self.latest is None or self.latest[0] != msg_id:
            return  # an editor shows only the answer to its last request
        result = future.result()
        items = getattr(result, "items", None) or []
        if not items:
            return
        shown = items[0].insert_text
        if not isinstance(shown, str) or not shown:
            return
        self.counts.shown += 1
        self.ghost = (shown, time.monotonic())
        if not self.model.wrote(left, shown):
            self.counts.stale += 1
            if len(self.counts.stale_examples) < 5:
                self.counts.stale_examples.append({"left": left[-80:], "shown": shown})

    def cancel_latest(self) -> None:
        if self.latest is not None and not self.latest[1].done():
            self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=self.latest[0]))
        self.latest = None if self.latest is None or self.latest[1].done() else self.latest

    async def pause(self, seconds: float) -> str | None:
        """Wait ``seconds``; the suggestion shown at the end, timing the first one shown."""
        started = time.monotonic()
        self.counts.pauses += 1
        timed = False
        while time.monotonic() - started < seconds:
            if self.ghost is not None and not timed:
                self.counts.ghost_ms.append((self.ghost[1] - self.last_key_at) * 1e3)
                timed = True
            await asyncio.sleep(0.005)
        return self.ghost[0] if self.ghost is not None else None


async def warm_up(client: LanguageClient, root: Path, regions: list[Region]) -> None:
    """One completion in a file that is not typed, answered before the replay starts."""
    typed = {r.path for r in regions}
    path = next(p for p in sorted(root.rglob("*.py")) if str(p.relative_to(root)) not in typed)
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    line = min(10, text.count("\n"))
    params = types.InlineCompletionParams(
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
        text_document=types.TextDocumentIdentifier(uri),
        position=types.Position(line, 0),
    )
    await client.protocol.send_request_async(types.TEXT_DOCUMENT_INLINE_COMPLETION, params)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
    )


async def run_one(
    code: Path, root: Path, regions: list[Region], args: argparse.Namespace
) -> dict[str, Any]:
    corpus = [(root / r.path).read_text(encoding="utf-8") for r in regions]
    model = ModelServer(
        corpus, args.latency_ms / 1000, error_rate=args.error_rate, upstream=args.upstream
    ).start()
    client = LanguageClient("repomem-typing-bench", "1")
    ready = asyncio.get_running_loop().create_future()

    @client.feature("repomem/docsReady")
    def on_docs(params: Any) -> None:
        if not ready.done():
            ready.set_result(params)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: Any) -> None:
        pass

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_show(params: types.ShowMessageParams) -> None:
        print(f"server says: {params.message}", file=sys.stderr)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(code / "eval")])}
    command = [sys.executable, "-P", "-m", "repomem.cli", "serve", "--log-level", "WARNING"]
    await client.start_io(*command, cwd=str(root), env=env)
    server = client._server
    assert server is not None and server.stderr is not None
    stderr = server.stderr

    async def drain() -> None:  # an unread stderr pipe would block the server once full
        while line := await stderr.readline():
            if b"Traceback" in line or b"ERROR" in line:
                print(line.decode(errors="replace").rstrip(), file=sys.stderr)

    draining = asyncio.ensure_future(drain())
    backend = {"backend": "openai", "url": model.url, "max_retries": 0, "timeout": 10}
    if args.context_window:
        backend["context_window"] = args.context_window
    if args.model:
        backend["model"] = str(args.model)
    settings: dict[str, Any] = {"backend": backend, "completion": {"iterations": 1}}
    if args.debounce_ms is not None:
        settings["debounceMs"] = args.debounce_ms
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            inline_completion=types.InlineCompletionClientCapabilities()
        )
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            initialization_options={"repomem": settings},
        )
    )
    client.initialized(types.InitializedParams())
    await asyncio.wait_for(ready, 300)
    await warm_up(client, root, regions)
    model.requests = 0
    typist = Typist(client, root, model, args.seed, args.keys)
    started = time.monotonic()
    for region in regions:
        if typist.counts.keys >= args.keys:
            break
        await typist.type_region(region)
    await asyncio.sleep(1.0)
    state = await client.protocol.send_request_async("repomem/status", {})
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    draining.cancel()
    model.stop()
    c = typist.counts
    ghost = sorted(c.ghost_ms)
    return {
        "code": str(code),
        "seconds": round(time.monotonic() - started, 1),
        "keys": c.keys,
        "model_requests": model.requests,
        "requests_per_100_keys": round(100 * model.requests / max(c.keys, 1), 1),
        "pauses": c.pauses,
        "pauses_with_ghost": len(ghost),
        "pause_to_ghost_p50_ms": round(statistics.median(ghost), 1) if ghost else None,
        "pause_to_ghost_p90_ms": round(_p90(ghost), 1) if ghost else None,
        "shown": c.shown,
        "stale_shown": c.stale,
        "stale_examples": c.stale_examples,
        "accepted": c.accepted,
        "accepted_chars": c.accepted_chars,
        "upstream_dropped": model.upstream_dropped,
        "server": {
            k: getattr(state, k, None)
            for k in (
                "completions",
                "cacheHits",
                "superseded",
                "cancelled",
                "reused",
                "debounceNowMs",
            )
        },
    }


def _p90(values: list[float]) -> float:
    """Interpolated as the median is (the lower value's index alone put a p90 of two pauses
    below their median)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    head = (
        f"typing replay: {args.regions} regions x {args.lines} lines, <= {args.keys} keys,"
        f" model latency {args.latency_ms:g} ms, error rate {args.error_rate:g}, seed {args.seed}"
        + (f", relayed to {args.upstream}" if args.upstream else "")
        + (f", debounceMs {args.debounce_ms}" if args.debounce_ms is not None else "")
    )
    rows = [
        "| code | keys | model requests / 100 keys | pause -> ghost p50 / p90 ms (pauses with"
        " ghost) | shown | stale shown | accepted (chars) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r['code']} | {r['keys']} | {r['requests_per_100_keys']} |"
            f" {r['pause_to_ghost_p50_ms']} / {r['pause_to_ghost_p90_ms']}"
            f" ({r['pauses_with_ghost']} of {r['pauses']}) | {r['shown']} | {r['stale_shown']} |"
            f" {r['accepted']} ({r['accepted_chars']}) |"
        )
    return "\n".join([head, "", *rows])


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="repomem-typing-") as tmp:
        root = Path(tmp) / "repo"
        files = build_corpus(root, args.dirs)
        regions = choose_regions(root, files, args.regions, args.lines, args.seed)
        for code in args.code or [ROOT]:
            shutil.rmtree(root / ".repomem", ignore_errors=True)
            results.append(await run_one(Path(code).resolve(), root, regions, args))
            print(json.dumps(results[-1]), file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", action="append", type=Path, help="server code (a checkout)")
    parser.add_argument("--dirs", nargs="*", default=["lsp_server", "repomem/completion"])
    parser.add_argument("--regions", type=int, default=6)
    parser.add_argument("--lines", type=int, default=8)
    parser.add_argument("--keys", type=int, default=600)
    parser.add_argument("--latency-ms", type=float, default=300)
    parser.add_argument("--error-rate", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--upstream", help="a real server's /v1 URL (llama.cpp's): the model server relays to it"
    )
    parser.add_argument("--context-window", type=int, help="backend.context_window (its n_ctx)")
    parser.add_argument("--model", type=Path, help="backend.model: a directory with its tokenizer")
    parser.add_argument(
        "--debounce-ms", type=int, help="debounceMs for every server (unset: each one's default)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = asyncio.run(main_async(args))
    print(report(results, args))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
