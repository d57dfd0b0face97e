"""The benchmark's context measures: the definitions a task's ground truth calls (its targets),
resolved as the context engine resolves names, whether a prompt shows them (def@prompt) or
code calling them (use@prompt), and the ``graph`` methods that add definition cards, measured
end to end with ``repomem eval repoeval``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from repos import run_repomem, write_files

from repomem.completion.prompt import Prompt
from repomem.config import CompletionConfig, IndexConfig
from repomem.context.cards import Card
from repomem.core import Location, RetrievedFragment
from repomem.index.repo import RepoIndex
from repomem_eval.context_metrics import Target, callees, shows_definition, shows_use
from repomem_eval.metrics import CONTEXT_KEYS
from repomem_eval.task_retrieval import SharedRetrieval
from repomem_eval.task_view import task_view
from repomem_eval.tasks import Task, write_tasks

WORKER = """\
import numpy as np

from pkg.base import Base
from pkg.client import Client
from pkg.tools import normalize


def local_helper(value):
    return value


class Worker(Base):
    def prepare(self):
        return 1

    def work(self, thing, client: Client):
        self.start()
        data = local_helper(thing)
        self.stop(force=True)
        client.send(normalize(data))
        thing.render_widget()
        local_helper(np.zeros(3))
        print("self.fake_call(x)")  # thing.commented()
        return data
"""

RESOLVING = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "class Base:\n    def start(self):\n        return 1\n\n"
        "    def stop(self, force=False):\n        return force\n"
    ),
    "pkg/client.py": "class Client:\n    def send(self, payload):\n        return payload\n",
    "pkg/tools.py": (
        "import json\n\n\ndef normalize(value):\n    return json.dumps(value)\n\n\n"
        "class Widget:\n    def render_widget(self):\n        return 'widget'\n"
    ),
    "pkg/panel.py": (
        "def zeros(n):\n    return [0] * n\n\n\n"
        "class Panel:\n    def render_widget(self):\n        return 'panel'\n\n"
        "    def fake_call(self, x):\n        return x\n\n"
        "    def commented(self):\n        return None\n"
    ),
    "pkg/worker.py": WORKER,
}


def worker_task() -> Task:
    """The hole after ``data = ...``: six lines of calls; the prompt starts at ``def work``,
    below the class line, as a prompt cut to a budget does."""
    lines = WORKER.splitlines()
    start, hole = lines.index("    def work(self, thing, client: Client):"), 18
    return Task(
        prompt="\n".join(lines[start:hole]),
        task_id="proj/0",
        ground_truth="\n".join(lines[hole:23]),
        fpath_tuple=("proj", "pkg", "worker.py"),
        context_start_lineno=start,
        line_no=hole,
    )


@pytest.fixture(scope="module")
def resolving_index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = write_files(tmp_path_factory.mktemp("resolving") / "proj", RESOLVING)
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(root.parent / "idx")), save=False)
    return index


def test_callees_leave_strings_comments_and_definitions_out() -> None:
    text = 'def f(x):\n    a.b .c(x)  # g(1)\n    s = "h(2)" + k()[0].m(y)\n'
    assert callees(text) == [("a.b.c", False), ("k", False), ("m", True)]


def test_targets_resolve_at_the_cursor_with_the_users_buffer(resolving_index: RepoIndex) -> None:
    index = resolving_index
    task = worker_task()
    view = task_view(task, index.file_text(task.rel_path) or "", mode="api", window=20)
    assert task.context_start_lineno > WORKER.splitlines().index("class Worker(Base):")
    shared = SharedRetrieval(index, k=10)
    shared.add(view)
    try:
        targets = shared.targets(view)
        # the buffer is what the lookup sees: the hole and what follows are not in the index
        assert "self.stop(force=True)" not in (index.file_text(task.rel_path) or "")
        with shared.scope(view.completion):
            cards = shared.retriever(oracle=False).definitions(
                task.rel_path, view.completion.left_context
            )
    finally:
        shared.finish()
    found = {(t.path, t.name) for t in targets}
    assert found == {
        ("pkg/base.py", "stop"),  # self. through the enclosing class's base, in another file
        ("pkg/client.py", "send"),  # a receiver typed by its parameter's annotation
        ("pkg/tools.py", "normalize"),  # an imported function
        ("pkg/tools.py", "render_widget"),  # an untyped receiver: every definition of the name
        ("pkg/panel.py", "render_widget"),
    }  # not local_helper (this file), np.zeros (numpy's), print, nor names in strings/comments
    stop = next(t for t in targets if t.name == "stop")
    assert stop.line == 4 and stop.header == "def stop(self, force=False):"
    # the cards of a prompt cut below the class line still know the enclosing class
    assert ("pkg/base.py", 1) in {(h.card.path, h.card.line) for h in cards}


def fragment(path: str, shown: str, fragment_id: int = 0) -> RetrievedFragment:
    return RetrievedFragment(
        fragment_id, (Location(path, 0, 10),), shown, shown, s_ind=1.0, s_env=0.0, s_rel=0.0
    )


def prompt_of(fragments: tuple[RetrievedFragment, ...], cards: tuple[Card, ...] = ()) -> Prompt:
    return Prompt("", fragments, "", "", None, 0, 0, 0, 0, cards)


TARGET = Target("pkg/tools.py", 3, "normalize", "def normalize(value):")
CARD = Card("pkg/tools.py", 3, "normalize", "function", "def normalize(value):")
SKELETON = Card("pkg/tools.py", 1, "Tools", "class", "class Tools: ...", methods=(3,))
DEFINING = fragment("pkg/tools.py", "import json\n\n\ndef normalize(value):\n    return 1\n")
CALLING = fragment("pkg/jobs.py", "def run(x):\n    return normalize (x)\n")


@pytest.mark.parametrize(
    ("shown", "definition", "use"),
    [
        (prompt_of((), (CARD,)), True, False),  # a card of the target
        (prompt_of((DEFINING,)), True, False),  # a fragment showing its def line
        (prompt_of((CALLING,)), False, True),  # a fragment calling it
        # the def line in another file, or a card of another definition, is not its definition
        (prompt_of((fragment("pkg/other.py", "def normalize(value):\n    pass\n"),)), False, False),
        (prompt_of((), (Card("pkg/tools.py", 9, "normalize", "function", "x"),)), False, False),
        # a class card whose skeleton lists it (a method's def line), or one that does not
        (prompt_of((), (SKELETON,)), True, False),
        (prompt_of((), (replace(SKELETON, methods=(5,)),)), False, False),
        # a type's card listing its declaration in another file (a C type's functions), or
        # a line of another file
        (
            prompt_of((), (replace(SKELETON, path="t.h", listed=(("pkg/tools.py", 3),)),)),
            True,
            False,
        ),
        (
            prompt_of((), (replace(SKELETON, path="t.h", listed=(("pkg/other.py", 3),)),)),
            False,
            False,
        ),
    ],
)
def test_def_and_use_at_prompt(shown: Prompt, definition: bool, use: bool) -> None:
    assert shows_definition([TARGET], shown.fragments, shown.cards) is definition
    assert shows_use([TARGET], shown.fragments) is use


# Twelve jobs like the task's, calling scale_vector: plain retrieval fills its ten fragments
# with them, never with the definition, which only a card shows.
JOB = """\
from pkg.geometry import scale_vector


def run_{name}(points, weight):
    cleaned = [p for p in points if p]
    ordered = sorted(cleaned)
    total = sum(ordered)
    scaled = scale_vector(ordered, weight)
    return total, scaled
"""
CARDS_REPO = {
    "pkg/__init__.py": "",
    "pkg/geometry.py": (
        "def scale_vector(vec, factor):\n"
        '    """Multiplies each coordinate by a factor."""\n'
        "    return [coordinate * factor for coordinate in vec]\n"
    ),
    **{f"pkg/jobs/job_{i}.py": JOB.format(name=f"job_{i}") for i in range(12)},
    **{f"pkg/tasks/task_{i}.py": JOB.format(name=f"task_{i}") for i in range(3)},
}


def cards_tasks() -> list[Task]:
    holes = [7, 7, 7, 6]  # the scale_vector call in each task file; one without a target
    tasks = []
    for n, hole in enumerate(holes):
        lines = JOB.format(name=f"task_{n % 3}").splitlines()
        tasks.append(
            Task(
                prompt="\n".join(lines[:hole]),
                task_id=f"proj/{n}",
                ground_truth=lines[hole],
                fpath_tuple=("proj", "pkg", "tasks", f"task_{n % 3}.py"),
                context_start_lineno=0,
                line_no=hole,
            )
        )
    return tasks


def test_graph_shows_the_definitions_plain_retrieval_misses(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    write_files(repos / "proj", CARDS_REPO)
    write_tasks(tmp_path / "tasks.jsonl", cards_tasks())
    out = tmp_path / "out"
    proc = run_repomem(
        "eval", "repoeval", "--tasks", tmp_path / "tasks.jsonl", "--repos", repos,
        "--out", out, "--method", "vanilla", "--method", "graph", "--backend", "builtin",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    vanilla, graph = (results["methods"][m]["overall"] for m in ("vanilla", "graph"))
    for summary in (vanilla, graph):
        assert set(CONTEXT_KEYS) <= set(summary)
        assert summary["context_n"] == 3 and summary["n"] == 4
        assert summary["use_prompt"] == 100.0
    assert vanilla["def_prompt"] == 0.0 and vanilla["def_at_10"] == 0.0
    assert graph["def_prompt"] == 100.0 and graph["def_at_10"] == 100.0
    assert results["config"]["methods"]["vanilla"]["definitions_share"] == 0.0
    default_share = CompletionConfig().definitions_share
    assert results["config"]["methods"]["graph"]["definitions_share"] == default_share
    # what a resumed run must match: a share of cards other than the predictions' is refused
    fingerprints = json.loads((out / "run.json").read_text())["methods"]
    assert fingerprints["vanilla"]["completion"]["definitions_share"] == 0.0
    assert fingerprints["graph"]["completion"]["definitions_share"] == default_share
    lines = (out / "predictions-graph.jsonl").read_text().splitlines()
    made = [json.loads(line) for line in lines]
    by_id = {p["task_id"]: p for p in made}
    assert by_id["proj/0"]["targets"] == [["pkg/geometry.py", 0, "scale_vector"]]
    assert by_id["proj/3"]["targets"] == [] and by_id["proj/3"]["context"] is None
    table = (out / "results.md").read_text()
    assert "| EM | ES | hit@k | def@prompt | use@prompt | def@10 | use@10 | n | ctx n |" in table
    per_repo = [line for line in table.splitlines() if " | proj | " in line]
    rows = {line.split(" | ")[1]: line.split(" | ")[6:12] for line in per_repo}
    assert rows == {
        "vanilla": ["0.0", "100.0", "0.0", "100.0", "4", "3"],
        "graph": ["100.0", "100.0", "100.0", "100.0", "4", "3"],
    }
    assert "graph (left-context window + definition cards" in table
    assert "vanilla (left-context window, 1 iteration(s)" in table
