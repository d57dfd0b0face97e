"""make-benchmark on a small repository built here: every RepoCoder rule, checked per task."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from repos import run_repomem

from repomem_eval.api_calls import repository_modules
from repomem_eval.make_benchmark import count_tokens, make_benchmark, trim_context
from repomem_eval.sources import BenchmarkError, load_python_files
from repomem_eval.tasks import Task, read_tasks

TINY = '''\
"""Tiny module docstring
spanning two lines."""
import tinymod_os
# a comment line
TINY_X = 1

def tiny_f(a):
    """Tiny doc."""
    tiny_b = a + 1
    # tiny note
    tiny_s = """tiny text
    more tiny text
    """
    return tiny_b


TINY_Y = 2
TINY_Z = 3
'''
# rows of TINY that may hold a line task (0-based)
TINY_ELIGIBLE = {2, 4, 8, 10, 13, 17}

UTIL = '''\
"""Helpers."""


def helper(x):
    return x * 2


class Widget:
    def __init__(self, name):
        self.name = name

    def render(self):
        return helper(len(self.name))

    def close(self):
        return None

    def reset(self):
        self.close()


class Sub(Widget):
    def __init__(self):
        super().__init__("s")
'''

MAIN = """\
import os
from os.path import join

from .util import Widget as W, helper


def run(items):
    total = 0
    w = W("a")
    total += helper(3)
    out = w.render()
    d = {}
    v = d.get("k")
    print(total)
    p = join("a", "b")
    w.close()
    result = helper(
        total,
    )
    if helper(1):
        pass
    x = [1,
         helper(2)]
    return W(
        "b"
    )
"""
# first lines of the statements that are API holes, by file
API_HOLES = {
    ("pkg", "util.py"): {"        return helper(len(self.name))", "        self.close()"},
    ("pkg", "main.py"): {
        '    w = W("a")',
        "    total += helper(3)",
        "    out = w.render()",
        "    result = helper(",
        "    return W(",
    },
}

DUPLICATES = """\
def first(value):
    value = value + 1
    return value


def second(value):
    value = value - 1
    return value


def third(value):
    value = value * 3
    return value
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repos" / "demo"
    _write(root, "pkg/__init__.py", "")
    _write(root, "pkg/tiny.py", TINY)
    _write(root, "pkg/util.py", UTIL)
    _write(root, "pkg/main.py", MAIN)
    _write(root, "pkg/dups.py", DUPLICATES)
    _write(root, "pkg/broken.py", "def broken(:\n    x = helper(1)\n    y = 2\n")
    _write(root, ".hidden/skipped.py", "import os\nhidden_value = helper(1)\n")
    _write(root, "pkg/crlf.py", "import os\r\ncrlf_value = 1\r\n")
    _write(root, "pkg/formfeed.py", "import os\n\x0cformfeed_value = 1\n")
    _write(root, "notes.txt", "not python\nat all\n")
    return root


def _lines(repos: Path, task: Task) -> list[str]:
    return task.file_path(repos).read_text(encoding="utf-8").splitlines()


def _check_prompt(repos: Path, task: Task, budget: int) -> list[str]:
    lines = _lines(repos, task)
    start, line_no = task.context_start_lineno, task.line_no
    assert task.prompt == "\n".join(lines[start:line_no])
    assert 0 <= start < line_no
    assert count_tokens(task.prompt) <= budget
    if start > 0:  # the budget stopped the prompt: one more line would not fit
        assert count_tokens("\n".join(lines[start - 1 : line_no])) > budget
    return lines


def test_line_tasks_obey_every_rule(repo: Path) -> None:
    repos = repo.parent
    tasks = make_benchmark(repo, "line", 1000, seed=7)
    assert tasks, "the fixture has eligible lines"
    assert [t.task_id for t in tasks] == [f"demo/{i}" for i in range(len(tasks))]
    seen: set[str] = set()
    for task in tasks:
        assert task.fpath_tuple[0] == "demo"
        assert task.fpath_tuple[1:] not in {
            (".hidden", "skipped.py"),
            ("pkg", "broken.py"),
            ("pkg", "formfeed.py"),
        }
        lines = _check_prompt(repos, task, 2000)
        assert task.ground_truth == lines[task.line_no]
        stripped = task.ground_truth.strip()
        assert stripped and not stripped.startswith("#")
        assert lines[task.line_no - 1].strip(), "the previous line must not be blank"
        assert stripped not in seen, "no two tasks share a line's text"
        seen.add(stripped)
    tiny_rows = {t.line_no for t in tasks if t.fpath_tuple[1:] == ("pkg", "tiny.py")}
    assert tiny_rows == TINY_ELIGIBLE
    crlf = [t for t in tasks if t.fpath_tuple[1:] == ("pkg", "crlf.py")]
    assert [t.ground_truth for t in crlf] == ["crlf_value = 1"]
    dup_texts = [t.ground_truth.strip() for t in tasks if t.fpath_tuple[1:] == ("pkg", "dups.py")]
    assert dup_texts.count("return value") == 1


def test_api_tasks_are_calls_of_repository_definitions(repo: Path) -> None:
    repos = repo.parent
    tasks = make_benchmark(repo, "api", 1000, seed=3)
    found: dict[tuple[str, ...], set[str]] = {}
    for task in tasks:
        lines = _check_prompt(repos, task, 2000)
        gt_lines = task.ground_truth.split("\n")
        assert gt_lines == lines[task.line_no : task.line_no + len(gt_lines)]
        found.setdefault(task.fpath_tuple[1:], set()).add(gt_lines[0])
    assert found == API_HOLES
    multi = {t.ground_truth for t in tasks if t.ground_truth.startswith("    result")}
    assert multi == {"    result = helper(\n        total,\n    )"}


def test_same_seed_same_tasks_other_seed_other_order(repo: Path) -> None:
    a = make_benchmark(repo, "line", 5, seed=11)
    b = make_benchmark(repo, "line", 5, seed=11)
    c = make_benchmark(repo, "line", 5, seed=12)
    assert len(a) == 5
    assert [t.to_json() for t in a] == [t.to_json() for t in b]
    assert [t.ground_truth for t in a] != [t.ground_truth for t in c]


def test_small_budget_trims_from_the_top(repo: Path) -> None:
    tasks = make_benchmark(repo, "line", 1000, seed=1, context_tokens=12)
    assert any(t.context_start_lineno > 0 for t in tasks)
    for task in tasks:
        _check_prompt(repo.parent, task, 12)


def test_trim_context_and_token_count() -> None:
    assert count_tokens("x = foo(a_b, 10)  # hi") == 10
    lines = ["a b c", "d e", "f"]
    assert trim_context(lines, 3) == (["d e", "f"], 1)
    assert trim_context(lines, 6) == (lines, 0)
    assert trim_context(lines, 0) == ([], 3)


def test_repository_modules_follow_packages(tmp_path: Path) -> None:
    _write(tmp_path, "src/pkg/__init__.py", "")
    _write(tmp_path, "src/pkg/sub/__init__.py", "")
    _write(tmp_path, "src/pkg/sub/mod.py", "x = 1\n")
    _write(tmp_path, "tests/test_x.py", "y = 2\n")
    _write(tmp_path, "setup.py", "z = 3\n")
    assert repository_modules(load_python_files(tmp_path)) == {"pkg", "test_x", "setup"}


def test_repo_name_and_bad_settings(repo: Path, tmp_path: Path) -> None:
    tasks = make_benchmark(repo, "line", 2, seed=0, repo_name="other")
    assert all(t.task_id.startswith("other/") and t.repo == "other" for t in tasks)
    with pytest.raises(BenchmarkError, match="not a directory"):
        make_benchmark(tmp_path / "nowhere", "line", 2, seed=0)
    with pytest.raises(BenchmarkError, match="at least 1"):
        make_benchmark(repo, "line", 0, seed=0)
    with pytest.raises(BenchmarkError, match="unknown task kind"):
        make_benchmark(repo, "block", 2, seed=0)  # type: ignore[arg-type]


def _repomem(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_repomem(*args, timeout=120)


def test_cli_make_benchmark(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "api.jsonl"
    proc = _repomem(
        "eval", "make-benchmark", "--repo", repo, "--kind", "api", "--n", "4",
        "--seed", "5", "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"wrote 4 api tasks to {out}" in proc.stdout
    assert read_tasks(out) == make_benchmark(repo, "api", 4, seed=5)


def test_cli_make_benchmark_reports_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text(textwrap.dedent("no code here\n"))
    proc = _repomem("eval", "make-benchmark", "--repo", empty, "--out", tmp_path / "t.jsonl")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"repomem: error: no line tasks could be made from {empty}"
    proc = _repomem(
        "eval", "make-benchmark", "--repo", tmp_path / "missing", "--out", tmp_path / "t.jsonl"
    )
    assert proc.returncode == 2
    assert "missing is not a directory" in proc.stderr
    assert not (tmp_path / "t.jsonl").exists()
