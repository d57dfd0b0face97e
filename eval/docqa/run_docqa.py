"""Doc memory measurement on real projects' docs: retrieval hit@k and completion EM.

Corpus: the dev-suite projects (requests, flask, click, rich, httpx, attrs, networkx) as
extracted sdists. Each is copied into a work directory (the originals are never written to),
indexed, and its doc memory opened with the built-in backend (extractive forms, no model).

1. ``questions.jsonl``: questions whose answer sits in a known doc passage (``path`` and a
   ``needle`` of text found exactly once in it). A source *hits* when it is in that file and
   its lines contain the needle's first line. hit@k (any of the first k sources hits) is
   reported per strategy and memory form, with code fragments competing for the k places
   (as ``repomem ask`` ranks them) and with docs only; ``alpha=0.0`` rows drop FragRel's
   environment score (plain BM25) for comparison.
2. ``completion_tasks.jsonl``: a user's new file whose next line follows a documented example
   (the line's names occur in the docs, not in the code). Each task is completed with the
   built-in backend at the start of that line (RepoCoder line mode, two iterations), retrieving
   code fragments only, then code fragments merged with doc segments by
   ``DocMemory.retrieve_for_code``; exact match and edit similarity against the line.

    python eval/docqa/run_docqa.py [--repos DIR] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine
from repomem.context.scorer import Exclusion
from repomem.docmem.memory import DocMemory, Source
from repomem.docmem.model import TextModel
from repomem.docmem.retriever import DocAwareRetriever
from repomem.docmem.strategies import ask
from repomem.index.repo import RepoIndex
from repomem.settings import Settings
from repomem_eval.metrics import edit_similarity, exact_match

HERE = Path(__file__).parent
DEFAULT_REPOS = Path.home() / ".cache" / "repomem" / "devsuite" / "repos"
KS = (1, 3, 5)
FORM_STRATEGIES = ("single", "rerank", "iterative", "factqa")
FORMS = ("chunk", "gist", "summary", "triple", "fact", "mixed")


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def gold_line(root: Path, item: dict) -> int:
    text = (root / item["path"]).read_text(encoding="utf-8")
    return text[: text.index(item["needle"])].count("\n")


def hits(sources: list[Source], path: str, line: int) -> list[bool]:
    return [s.kind == "doc" and s.path == path and s.start <= line < s.end for s in sources]


def copy_repo(source: Path, work: Path) -> Path:
    target = work / source.name
    if not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".repomem"))
    return target


@dataclass
class Repo:
    root: Path
    index: RepoIndex
    memory: DocMemory


async def run_questions(repos: dict[str, Repo], questions: list[dict]) -> dict:
    model = TextModel(BuiltinBackend())
    configs = [(s, f, None) for s in FORM_STRATEGIES for f in FORMS]
    configs += [("readagent-parallel", "gist", None), ("readagent-sequential", "gist", None)]
    configs += [("graph", "chunk", None), ("single", "chunk", 0.0), ("single", "mixed", 0.0)]
    table: dict[str, dict] = {}
    for code in (True, False):
        for strategy, form, alpha in configs:
            found = {k: 0 for k in KS}
            seconds = []
            for item in questions:
                repo = repos[item["repo"]]
                line = gold_line(repo.root, item)
                name, _, lookup = strategy.partition("-")
                started = time.perf_counter()
                result = await ask(
                    repo.memory,
                    item["question"],
                    model,
                    strategy=name,
                    form=form,
                    k=max(KS),
                    lookup=lookup or "parallel",
                    code=code,
                    alpha=alpha,
                )
                seconds.append(time.perf_counter() - started)
                marks = hits(result.sources, item["path"], line)
                for k in KS:
                    found[k] += any(marks[:k])
            key = f"{strategy}/{form}/{'code+docs' if code else 'docs'}"
            if alpha is not None:
                key += f" alpha={alpha}"
            table[key] = {
                **{f"hit@{k}": found[k] / len(questions) for k in KS},
                "median_ms": 1000 * statistics.median(seconds),
            }
    return table


async def run_completion(repos: dict[str, Repo], tasks: list[dict]) -> dict:
    settings = Settings()
    out: dict[str, dict] = {}
    for label in ("code only", "code + docs"):
        em, es = [], []
        rows = []
        for task in tasks:
            index, memory = repos[task["repo"]].index, repos[task["repo"]].memory
            index.update_file(task["path"], task["left_context"])  # the user's buffer
            retriever = index if label == "code only" else DocAwareRetriever(index, memory)
            engine = CompletionEngine(retriever, BuiltinBackend(), settings)
            line0 = task["left_context"].count("\n")
            window = settings.completion.window
            exclusion = Exclusion(task["path"], max(0, line0 - window), line0 + window)
            result = await engine.complete(
                task["path"], task["left_context"], "", mode="line", exclusion=exclusion
            )
            index.update_file(task["path"], None)
            hit = exact_match(task["ground_truth"], result.text)
            em.append(hit)
            es.append(edit_similarity(task["ground_truth"], result.text))
            used = {f.path for f in result.prompt.fragments}
            rows.append(
                {
                    "id": task["id"],
                    "em": hit,
                    "prediction": result.text,
                    "doc_fragments": sorted(p for p in used if not p.endswith(".py")),
                }
            )
        out[label] = {"EM": sum(em) / len(em), "ES": sum(es) / len(es), "tasks": rows}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS)
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    questions = load_jsonl(HERE / "questions.jsonl")
    tasks = load_jsonl(HERE / "completion_tasks.jsonl")
    work = args.work or Path(tempfile.mkdtemp(prefix="docqa-"))
    repos: dict[str, Repo] = {}
    setup = {}
    for name in sorted({q["repo"] for q in questions} | {t["repo"] for t in tasks}):
        started = time.perf_counter()
        root = copy_repo(args.repos / name, work)
        index = RepoIndex.build(root)[0]
        built = time.perf_counter()
        memory = DocMemory.open(index)
        asyncio.run(memory.prepare(["mixed"], TextModel(None), pages=True))
        repos[name] = Repo(root, index, memory)
        setup[name] = {
            "index_s": built - started,
            "docmem_s": time.perf_counter() - built,
            "segments": len(memory.segments),
            "documents": len(memory.paths),
        }
        print(f"{name}: {setup[name]}", flush=True)
    table = asyncio.run(run_questions(repos, questions))
    print(f"\nretrieval over {len(questions)} questions (built-in backend, extractive forms)")
    print(f"{'strategy/form/candidates':44} " + " ".join(f"hit@{k:<3}" for k in KS) + "  median")
    for key, row in table.items():
        cells = " ".join(f"{row[f'hit@{k}']:.2f}  " for k in KS)
        print(f"{key:44} {cells} {row['median_ms']:6.0f} ms")
    completion = asyncio.run(run_completion(repos, tasks))
    print(f"\ncompletion over {len(tasks)} doc-example tasks (built-in backend)")
    for label, row in completion.items():
        print(f"{label:12} EM {row['EM']:.2f}  ES {row['ES']:.2f}")
    if args.json:
        args.json.write_text(
            json.dumps({"setup": setup, "retrieval": table, "completion": completion}, indent=2)
        )


if __name__ == "__main__":
    main()
