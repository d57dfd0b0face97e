"""Doc memory measurement on real projects' docs: retrieval hit@k and completion EM.

Corpus: the dev-suite projects (requests, flask, click, rich, httpx, attrs, networkx) as
extracted sdists, and two projects whose docs are not Python's (:data:`EXTRA_SOURCES`): rxjs,
documented in the JSDoc of its TypeScript sources, and JPype, a Java bridge documented in
reStructuredText, fetched once into ``--extra`` (npm and PyPI, pinned). Each is copied into a
work directory (the originals are never written to),
indexed, and its doc memory opened with the built-in backend (extractive forms, no model).

1. ``questions.jsonl``: questions whose answer sits in a known doc passage (``path`` and a
   ``needle`` of text found exactly once in it). A source *hits* when it is in that file and
   its lines contain the needle's first line. hit@k (any of the first k sources hits) is
   reported per strategy and memory form, with code fragments competing for the k places
   (as ``repomem ask`` ranks them) and with docs only; ``alpha=0.0`` rows drop FragRel's
   environment score (plain BM25) for comparison.
   The same questions are asked again of ``.mdx`` copies (:data:`MDX_COPIES`): a project's
   Markdown docs rewritten as Docusaurus / Hugging Face pages (front matter, ``import`` and
   ``export`` lines, code blocks in ``<Tabs>``/``<TabItem>``, admonitions in ``<Tip>``), so
   that hit@k on a page read through its MDX can be set beside hit@k on the Markdown it wraps.
2. ``completion_tasks.jsonl``: a user's new file whose next line follows a documented example
   (the line's names occur in the docs, not in the code). Each task is completed with the
   built-in backend at the start of that line (RepoCoder line mode, two iterations), retrieving
   code fragments only, then code fragments merged with doc segments by
   ``DocMemory.retrieve_for_code``; exact match and edit similarity against the line.

    python eval/docqa/run_docqa.py [--repos DIR] [--extra DIR] [--work DIR] [--json OUT]
                                   [--only REPO...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine
from repomem.context.retriever import CodeRetriever
from repomem.core import Exclusion
from repomem.docmem.memory import DocMemory, Source
from repomem.docmem.model import TextModel
from repomem.docmem.retriever import DocAwareRetriever
from repomem.docmem.strategies import ask
from repomem.index.jit import cache_home
from repomem.index.repo import RepoIndex
from repomem.settings import Settings
from repomem_eval.devsuite import extract_archive
from repomem_eval.metrics import edit_similarity, exact_match

HERE = Path(__file__).parent
DEFAULT_REPOS = Path.home() / ".cache" / "repomem" / "devsuite" / "repos"
DEFAULT_EXTRA = cache_home() / "docqa"
# project -> how its pinned source release is fetched: ("npm", spec) or ("pypi", requirement)
EXTRA_SOURCES = {"rxjs": ("npm", "rxjs@7.8.1"), "jpype": ("pypi", "JPype1==1.5.0")}
KS = (1, 3, 5)
FORM_STRATEGIES = ("single", "rerank", "iterative", "factqa")
FORMS = ("chunk", "gist", "summary", "triple", "fact", "mixed")
# name of the .mdx copy -> (project, its folder of Markdown docs)
MDX_COPIES = {"attrs-mdx": ("attrs", "docs")}
MDX_HEADER = """---
title: {title}
sidebar_position: {position}
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
import Tip from '@site/src/components/Tip';

export const meta = {{
  source: '{source}',
}};

{{/* Generated from the project's Markdown docs. */}}

"""
_ADMONITION = re.compile(r"^:::\{(note|warning|caution|important|tip)\}")
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def gold_line(root: Path, item: dict) -> int:
    text = (root / item["path"]).read_text(encoding="utf-8")
    return text[: text.index(item["needle"])].count("\n")


def hits(sources: list[Source], path: str, line: int) -> list[bool]:
    return [s.kind == "doc" and s.path == path and s.start <= line < s.end for s in sources]


def fetch_extra(name: str, extra: Path) -> Path:
    """The extracted release of an :data:`EXTRA_SOURCES` project, fetched on first use."""
    target = extra / name
    if target.is_dir():
        return target
    kind, spec = EXTRA_SOURCES[name]
    download = extra / "downloads"
    download.mkdir(parents=True, exist_ok=True)
    if kind == "npm":
        cmd = ["npm", "pack", spec, "--silent"]
    else:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        cmd += [spec, "-d", "."]
    subprocess.run(cmd, cwd=download, check=True, stdout=subprocess.DEVNULL)
    stem = spec.split("@")[0] if kind == "npm" else spec.split("==")[0]
    pattern = f"{stem}-*.tgz" if kind == "npm" else f"{stem}-*.tar.gz"
    archive = next(download.glob(pattern))
    extract_archive(archive, target)
    return target


def copy_repo(source: Path, work: Path) -> Path:
    target = work / source.name
    if not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".repomem"))
    return target


def as_mdx(markdown: str, source: str, position: int) -> str:
    """The page as Docusaurus or Hugging Face docs write it: front matter, ESM lines, each
    top-level code block in ``<Tabs>``/``<TabItem>`` (every other one with its opening tag over
    several lines) and each admonition in ``<Tip>``; the Markdown itself is unchanged."""
    title = next((line[2:] for line in markdown.splitlines() if line.startswith("# ")), source)
    out = [MDX_HEADER.format(title=title.replace("*", ""), position=position, source=source)]
    fence = ""
    tabs = 0
    for line in markdown.split("\n"):
        if fence:
            out.append(line)
            if line.startswith(fence) and not line[len(fence) :].strip():
                fence = ""
                out.append("\n</TabItem>\n</Tabs>")
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            tabs += 1
            tag = '<Tabs\n  groupId="language"\n  defaultValue="py"\n>' if tabs % 2 else "<Tabs>"
            out.append(f'{tag}\n<TabItem value="py" label="Python" default>\n')
            out.append(line)
        elif _ADMONITION.match(line):
            out.append("<Tip warning={true}>\n")
        elif line == ":::":
            out.append("\n</Tip>")
        else:
            out.append(line)
    return "\n".join(out)


def copy_mdx(source: Path, work: Path, name: str, folder: str) -> Path:
    """A copy of ``source`` under ``name`` whose ``folder`` holds each Markdown page as MDX."""
    target = work / name
    if not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".repomem"))
        for position, page in enumerate(sorted((target / folder).glob("*.md")), 1):
            text = page.read_text(encoding="utf-8")
            source_path = f"{source.name}/{page.relative_to(target)}"
            page.with_suffix(".mdx").write_text(as_mdx(text, source_path, position))
            page.unlink()
    return target


def mdx_questions(questions: list[dict]) -> list[dict]:
    """The questions of each project with an .mdx copy, asked of the copy."""
    out = []
    for name, (project, folder) in MDX_COPIES.items():
        for item in questions:
            if item["repo"] == project:
                path = item["path"]
                if path.startswith(f"{folder}/") and path.endswith(".md"):
                    path += "x"
                out.append({**item, "id": f"{item['id']}-mdx", "repo": name, "path": path})
    return out


@dataclass
class Repo:
    root: Path
    index: RepoIndex
    memory: DocMemory


# config key -> question id -> (hits among the first k sources for each k, seconds)
Answers = dict[str, dict[str, tuple[dict[int, bool], float]]]


async def run_questions(repos: dict[str, Repo], questions: list[dict]) -> Answers:
    model = TextModel(BuiltinBackend())
    configs = [(s, f, None) for s in FORM_STRATEGIES for f in FORMS]
    configs += [("readagent-parallel", "gist", None), ("readagent-sequential", "gist", None)]
    configs += [("graph", "chunk", None), ("single", "chunk", 0.0), ("single", "mixed", 0.0)]
    answers: Answers = {}
    for code in (True, False):
        for strategy, form, alpha in configs:
            key = f"{strategy}/{form}/{'code+docs' if code else 'docs'}"
            if alpha is not None:
                key += f" alpha={alpha}"
            answers[key] = {}
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
                seconds = time.perf_counter() - started
                marks = hits(result.sources, item["path"], line)
                answers[key][item["id"]] = ({k: any(marks[:k]) for k in KS}, seconds)
    return answers


def summarize(answers: Answers, ids: list[str]) -> dict[str, dict]:
    """hit@k and median time per config over the questions ``ids``."""
    table = {}
    for key, rows in answers.items():
        picked = [rows[i] for i in ids]
        table[key] = {
            **{f"hit@{k}": sum(found[k] for found, _ in picked) / len(ids) for k in KS},
            "median_ms": 1000 * statistics.median(seconds for _, seconds in picked),
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
            retriever = (
                CodeRetriever(index) if label == "code only" else DocAwareRetriever(index, memory)
            )
            engine = CompletionEngine(retriever, BuiltinBackend(), settings)
            line0 = task["left_context"].count("\n")
            exclusion = Exclusion.around(task["path"], line0, settings.completion.query_lines)
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
    parser.add_argument("--extra", type=Path, default=DEFAULT_EXTRA, help="rxjs and JPype")
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--only", nargs="+", metavar="REPO", help="only these projects (and .mdx copies)"
    )
    args = parser.parse_args()
    originals = load_jsonl(HERE / "questions.jsonl")
    tasks = load_jsonl(HERE / "completion_tasks.jsonl")
    if args.only:
        known = {q["repo"] for q in originals} | set(MDX_COPIES)
        if unknown := set(args.only) - known:
            parser.error(f"unknown project {sorted(unknown)[0]!r}; known: {sorted(known)}")
        originals = [q for q in originals if q["repo"] in args.only]
        tasks = [t for t in tasks if t["repo"] in args.only]
    copies = mdx_questions(originals)
    if args.only:
        copies = [q for q in copies if q["repo"] in args.only]
    questions = originals + copies
    work = args.work or Path(tempfile.mkdtemp(prefix="docqa-"))
    repos: dict[str, Repo] = {}
    setup = {}
    for name in sorted({q["repo"] for q in questions} | {t["repo"] for t in tasks}):
        started = time.perf_counter()
        if name in MDX_COPIES:
            project, folder = MDX_COPIES[name]
            root = copy_mdx(args.repos / project, work, name, folder)
        elif name in EXTRA_SOURCES:
            root = copy_repo(fetch_extra(name, args.extra), work)
        else:
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
    answers = asyncio.run(run_questions(repos, questions))
    table = summarize(answers, [q["id"] for q in originals]) if originals else {}
    print(f"\nretrieval over {len(originals)} questions (built-in backend, extractive forms)")
    print(f"{'strategy/form/candidates':44} " + " ".join(f"hit@{k:<3}" for k in KS) + "  median")
    for key, row in table.items():
        cells = " ".join(f"{row[f'hit@{k}']:.2f}  " for k in KS)
        print(f"{key:44} {cells} {row['median_ms']:6.0f} ms")
    mdx = {}
    if copies:
        mdx = {
            "md": summarize(answers, [q["id"].removesuffix("-mdx") for q in copies]),
            "mdx": summarize(answers, [q["id"] for q in copies]),
        }
        print(f"\nthe same {len(copies)} questions on the .md pages and their .mdx copies")
        print(f"{'strategy/form/candidates':44} .md hit@1 @5   .mdx hit@1 @5")
        for key, row in mdx["md"].items():
            other = mdx["mdx"][key]
            print(
                f"{key:44}     {row['hit@1']:.2f} {row['hit@5']:.2f}"
                f"        {other['hit@1']:.2f} {other['hit@5']:.2f}"
            )
    completion = asyncio.run(run_completion(repos, tasks)) if tasks else {}
    print(f"\ncompletion over {len(tasks)} doc-example tasks (built-in backend)")
    for label, row in completion.items():
        print(f"{label:12} EM {row['EM']:.2f}  ES {row['ES']:.2f}")
    if args.json:
        result = {"setup": setup, "retrieval": table, "mdx": mdx, "completion": completion}
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
