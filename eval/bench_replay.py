"""Commit replay: real commits of real git histories typed in as a user would, with and
without the recent edits channel (``repomem.context.recent``), in one run.

Per history (a git work tree or bare repository), the ``--commits`` most recent commits on the
first-parent line from ``--rev`` that change at least two code files (added or modified; no
merges, at most ``--max-added`` added lines) are replayed, oldest first:

1. the index holds the commit's parent: built once for the first commit's parent (a tree
   extracted with ``git archive``), then brought to each next parent with
   ``RepoIndex.update_file``, the update path the language server takes on ``didChange``;
2. the commit's hunks (``git diff -U0``) are applied file by file, top to bottom, as buffer
   edits: before each hunk the index is given the file as it stands (``update_file``), the
   hunk's old lines are removed and its new lines typed one by one; once done, the hunk is
   recorded as an edit (``RecentContext.edited``, the range and line count an editor's
   ``didChange`` would carry);
3. a **task** is an added line whose code (comments and literals left out) names an identifier
   which an earlier hunk of this commit added or changed in *another file* (on one of its added
   lines) and which at most two files of the parent name (a new name, or a rare one the commit
   touched): the line is
   completed from its start (the left context is the file as typed so far, the right context
   the file's old text after the hunk), in line mode, with the editor's exclusion of the
   cursor's ±``window`` lines, at most ``--tasks-per-commit`` per commit.

Each task is completed twice on the same index, by the built-in backend with the default
settings: without the recent channel and with it (the edits recorded so far). Measured:

* ``hit@10``: a fragment among the last iteration's first 10 (as fused and ranked) shows a
  *source* line of the task: an added line of another file holding the name that made it a
  task;
* ``def@prompt``: the final prompt shows the definition of a repository function, class or
  constant the line calls (``repomem_eval.context_metrics``, over the tasks that call one);
* ``EM``: the built-in's completion equals the line (an abstention below
  ``completion.min_confidence`` counts as a miss), and ``answered``.

    python eval/bench_replay.py /work/main /path/to/another/repo [--commits 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import builtins
import io
import json
import keyword
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine, CompletionResult
from repomem.config import IndexConfig
from repomem.context.lexer import code_only
from repomem.context.recent import RecentContext, identifiers
from repomem.context.retriever import CodeRetriever
from repomem.core import Exclusion, RetrievedFragment
from repomem.index.languages import language_for_path
from repomem.index.parsing import supported
from repomem.index.repo import RepoIndex
from repomem.settings import Settings
from repomem_eval.context_metrics import context_scores, definitions_by_name, task_targets
from repomem_eval.metrics import exact_match

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
COMMON = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls", "None"}
#: a name counts as the commit's own when at most this many files of the parent name it
MAX_PARENT_FILES = 2
HIT_K = 10


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def is_code(path: str) -> bool:
    language = language_for_path(path)
    return language is not None and supported(language)


def show(repo: Path, rev: str, path: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, text=True
    )
    return out.stdout if out.returncode == 0 else None


def pick_commits(repo: Path, rev: str, count: int, max_added: int) -> list[str]:
    """The ``count`` most recent qualifying commits (see the module doc), oldest first."""
    chosen: list[str] = []
    for sha in git(repo, "log", "--first-parent", "--no-merges", "--format=%H", rev).split():
        try:
            stats = git(
                repo, "diff", "--numstat", "--no-renames", "--diff-filter=AM", f"{sha}^", sha
            )
        except subprocess.CalledProcessError:  # the root commit
            break
        stats = stats.splitlines()
        code = [line.split("\t") for line in stats if is_code(line.split("\t")[-1])]
        added = sum(int(a) for a, _, _ in code if a.isdigit())
        if len(code) >= 2 and 0 < added <= max_added:
            chosen.append(sha)
        if len(chosen) == count:
            break
    return chosen[::-1]


@dataclass
class Hunk:
    old_start: int  # 0-based line of the old text where the removed lines begin / insertion
    removed: int
    added: list[str]


def hunks(repo: Path, parent: str, commit: str, path: str) -> list[Hunk]:
    out: list[Hunk] = []
    for line in git(repo, "diff", "-U0", "--no-color", parent, commit, "--", path).splitlines():
        m = HUNK.match(line)
        if m:
            a, b = int(m[1]), int(m[2] if m[2] is not None else 1)
            out.append(Hunk(a - 1 if b > 0 else a, b, []))
        elif out and line.startswith("+") and not line.startswith("+++"):
            out[-1].added.append(line[1:])
    return out


def names(code: str) -> set[str]:
    """The names in a line's code, of four characters or more, not the language's own."""
    return {n for n in identifiers(code) if len(n) >= 4 and n not in COMMON}


@dataclass
class Condition:
    hits: list[bool] = field(default_factory=list)
    defs: list[bool] = field(default_factory=list)
    em: list[bool] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def pct(v: list[bool]) -> float | None:
            return round(100 * sum(v) / len(v), 1) if v else None

        return {
            "tasks": len(self.em),
            f"hit@{HIT_K}": pct(self.hits),
            "def@prompt": pct(self.defs),
            "def_tasks": len(self.defs),
            "EM": pct(self.em),
            "answered": pct(self.answered),
        }


def shows(fragment: RetrievedFragment, sources: set[tuple[str, int]]) -> bool:
    for loc in fragment.locations:
        start = fragment.shown_start if fragment.shown_start is not None else loc.start
        count = (fragment.shown or fragment.text).count("\n") + 1
        if any(p == loc.path and start <= line < start + count for p, line in sources):
            return True
    return False


def _plain_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The archive's files and folders inside it: no links, devices, absolute paths or ``..``
    (what ``extractall``'s "data" filter refuses, which Python 3.11 before 3.11.4 lacks)."""
    return [
        m
        for m in tar.getmembers()
        if (m.isfile() or m.isdir())
        and not m.name.startswith("/")
        and ".." not in m.name.split("/")
    ]


class Replay:
    """One history's replay (see the module doc)."""

    def __init__(
        self, repo: Path, work: Path, settings: Settings, per_commit: int, *, verbose: bool
    ) -> None:
        self.repo = repo
        self.verbose = verbose
        self.work = work
        self.settings = settings
        self.per_commit = per_commit
        self.index: RepoIndex | None = None
        self.at: str | None = None
        self.without = Condition()
        self.with_recent = Condition()
        self.replayed = 0

    def move_to(self, rev: str) -> None:
        """The index holds the code files of ``rev``."""
        if self.index is None:
            data = subprocess.run(
                ["git", "-C", str(self.repo), "archive", rev], capture_output=True, check=True
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(self.work, members=_plain_members(tar))
            self.index, _ = RepoIndex.build(self.work, IndexConfig(), save=False)
        else:
            assert self.at is not None
            changed = git(self.repo, "diff", "--name-only", "--no-renames", self.at, rev)
            changed = changed.splitlines()
            for path in filter(is_code, changed):
                self.index.update_file(path, show(self.repo, rev, path))
        self.at = rev

    def replay(self, commit: str) -> None:
        parent = f"{commit}^"
        self.move_to(git(self.repo, "rev-parse", parent).strip())
        index = self.index
        assert index is not None
        files = git(
            self.repo, "diff", "--name-only", "--no-renames", "--diff-filter=AM", parent, commit
        )
        paths = [p for p in files.splitlines() if is_code(p)]
        df: Counter[str] = Counter()
        for path, _, _ in index.indexed_files():
            df.update(identifiers(index.file_text(path) or ""))
        buffers: dict[str, str] = {}
        recent = RecentContext(
            lambda p: buffers.get(p) or index.file_text(p),
            context_lines=self.settings.completion.recent_lines,
        )
        touched: dict[str, set[tuple[str, int]]] = {}  # name: (path, line) added elsewhere
        tasks = 0
        for path in paths:
            language = language_for_path(path) or ""
            lines = (show(self.repo, parent, path) or "").split("\n")
            mine: dict[str, set[tuple[str, int]]] = {}
            offset = 0
            for hunk in hunks(self.repo, parent, commit, path):
                start = hunk.old_start + offset
                buffers[path] = "\n".join(lines)
                index.update_file(path, buffers[path])
                named = None
                rest = lines[start + hunk.removed :]
                # the added lines' code, lexed from the file's top (a docstring opened above)
                typed = "\n".join([*lines[:start], *hunk.added])
                code = code_only(typed, language).split("\n")[start:]
                for i, line in enumerate(hunk.added):
                    sources = {
                        place
                        for name in names(code[i])
                        if df[name] <= MAX_PARENT_FILES
                        for place in touched.get(name, ())
                        if place[0] != path
                    }
                    if sources and line.strip() and tasks < self.per_commit:
                        named = named or definitions_by_name(index)
                        left = "".join(f"{x}\n" for x in [*lines[:start], *hunk.added[:i]])
                        self.task(path, left, "\n".join(rest), line, sources, named, recent)
                        tasks += 1
                    for name in names(code[i]):
                        mine.setdefault(name, set()).add((path, start + i))
                lines[start : start + hunk.removed] = hunk.added
                # as an editor's didChange: lines start..start+removed replaced by the new ones
                recent.edited(path, start, start + hunk.removed, len(hunk.added))
                offset += len(hunk.added) - hunk.removed
            buffers[path] = "\n".join(lines)
            index.update_file(path, buffers[path])
            for name, places in mine.items():
                touched.setdefault(name, set()).update(places)
        # what the hunks did not bring: deleted files (and renamed ones' old paths)
        for path in filter(
            is_code,
            git(self.repo, "diff", "--name-only", "--no-renames", parent, commit).splitlines(),
        ):
            if path not in paths:
                index.update_file(path, show(self.repo, commit, path))
        self.at = commit
        self.replayed += 1

    def task(
        self,
        path: str,
        left: str,
        right: str,
        truth: str,
        sources: set[tuple[str, int]],
        named: Any,
        recent: RecentContext,
    ) -> None:
        index = self.index
        assert index is not None
        line = left.count("\n")
        exclusion = Exclusion.around(path, line, self.settings.completion.query_lines)
        targets = task_targets(index, path, left, truth, named)
        outcome = []
        for condition, source in ((self.without, None), (self.with_recent, recent)):
            engine = CompletionEngine(CodeRetriever(index), BuiltinBackend(), self.settings, source)
            result: CompletionResult = asyncio.run(
                engine.complete(path, left, right, mode="line", exclusion=exclusion)
            )
            last = result.iterations[-1]
            condition.hits.append(any(shows(f, sources) for f in last.retrieved[:HIT_K]))
            scores = context_scores(targets, last.prompt, last.retrieved, last.definitions)
            if scores is not None:
                condition.defs.append(scores["def_prompt"])
            answered = result.confident(self.settings.completion.min_confidence)
            condition.answered.append(answered)
            condition.em.append(answered and exact_match(truth, result.text))
            outcome.append(f"hit {condition.hits[-1]:d} em {condition.em[-1]:d}")
        if self.verbose:
            where = ", ".join(f"{p}:{n + 1}" for p, n in sorted(sources)[:3])
            print(f"  {path}:{line + 1} {truth.strip()!r} <- {where}: {outcome}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="git work trees or bare repositories")
    parser.add_argument("--rev", default="HEAD", help="replay the history up to this revision")
    parser.add_argument("--commits", type=int, default=40, help="commits per history")
    parser.add_argument("--tasks-per-commit", type=int, default=8)
    parser.add_argument("--max-added", type=int, default=300, help="added lines per commit")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--verbose", action="store_true", help="list each task on stderr")
    args = parser.parse_args(argv)
    settings = Settings()
    report: dict[str, Any] = {}
    for repo in args.repos:
        started = time.perf_counter()
        commits = pick_commits(repo, args.rev, args.commits, args.max_added)
        with tempfile.TemporaryDirectory(prefix="repomem-replay-") as work:
            replay = Replay(repo, Path(work), settings, args.tasks_per_commit, verbose=args.verbose)
            for commit in commits:
                replay.replay(commit)
        report[str(repo)] = {
            "commits": len(commits),
            "first": commits[0] if commits else None,
            "last": commits[-1] if commits else None,
            "without": replay.without.summary(),
            "with_recent": replay.with_recent.summary(),
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(f"{repo}: {len(commits)} commits", file=sys.stderr)
    _print(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def _print(report: dict[str, Any]) -> None:
    keys = ("tasks", f"hit@{HIT_K}", "def@prompt", "def_tasks", "EM", "answered")
    print("| history | commits | recent | " + " | ".join(keys) + " |")
    print("|---|---:|---|" + "---:|" * len(keys))
    for repo, r in report.items():
        path = Path(repo).resolve()
        name = path.parent.name if path.name in ("repo", ".git") else path.name
        for label, key in (("off", "without"), ("on", "with_recent")):
            values = " | ".join(str(r[key][k]) for k in keys)
            print(f"| {name} | {r['commits']} | {label} | {values} |")


if __name__ == "__main__":
    sys.exit(main())
