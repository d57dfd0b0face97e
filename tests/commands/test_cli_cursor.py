"""The cursor a user names on the command line: ``complete`` and ``retrieve`` judge it alike,
and a path that is not a file says what it is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from repos import run_repomem

from repomem.errors import RepomemError
from repomem.workspace import check_cursor_line

TWELVE = "x = 1\n" * 12


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cursor")
    (root / ".git").mkdir()
    (root / "pkg").mkdir()
    (root / "pkg/f.py").write_text(TWELVE, encoding="utf-8")
    (root / "pkg/loop_a").symlink_to("loop_b")
    (root / "pkg/loop_b").symlink_to("loop_a")
    (root / "pkg/broken.py").symlink_to("gone.py")
    indexed = run_repomem("index", root, "--no-progress")
    assert indexed.returncode == 0, indexed.stderr
    return root


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["complete", "retrieve"])
def test_a_line_past_the_end_gets_one_message_from_both_commands(repo: Path, command: str):
    line = error_line(run_repomem(command, "pkg/f.py:99", cwd=repo))
    assert line == (
        "repomem: error: pkg/f.py: line 99 is past the end"
        " (pkg/f.py has 12 lines; a cursor goes on line 1 to 13)"
    )


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("pkg/loop_a:1", "pkg/loop_a: a loop of symbolic links"),
        ("pkg/broken.py:1", "pkg/broken.py: a broken symbolic link (to gone.py"),
        ("pkg:1", "pkg: is a directory, not a file"),
        ("pkg/missing.py:1", "pkg/missing.py: no such file"),
    ],
)
@pytest.mark.parametrize("command", ["complete", "retrieve"])
def test_a_path_that_is_not_a_file_says_what_it_is(
    repo: Path, command: str, location: str, message: str
):
    assert message in error_line(run_repomem(command, location, cwd=repo))


@pytest.mark.parametrize(
    ("text", "lines", "last"),
    [("", 0, 1), ("a\n", 1, 2), ("a", 1, 1), ("a\nb", 2, 2), (TWELVE, 12, 13)],
)
def test_the_cursor_may_sit_after_a_final_newline_and_no_further(text: str, lines: int, last: int):
    check_cursor_line(text, last, "f.py")
    with pytest.raises(
        RepomemError, match=rf"f.py has {lines} lines?; a cursor goes on line 1 to {last}\)"
    ):
        check_cursor_line(text, last + 1, "f.py")


@pytest.mark.parametrize(
    ("marker", "text"),
    [
        (".repomem.toml", "[completion]\nk = 5\n"),
        ("pyproject.toml", '[project]\nname = "e"\n\n[tool.repomem.completion]\nk = 5\n'),
    ],
)
def test_a_folder_without_git_is_a_repository_by_its_settings_file(
    tmp_path: Path, marker: str, text: str
):
    (tmp_path / "src").mkdir()
    (tmp_path / marker).write_text(text, encoding="utf-8")
    (tmp_path / "src/e.py").write_text("def e(x):\n    return x\n", encoding="utf-8")
    out = run_repomem("complete", "e.py:2", "--json", cwd=tmp_path / "src")
    assert out.returncode in (0, 1), out.stderr  # answered or not, the repository was found
    assert (tmp_path / ".repomem").is_dir()


def test_a_pyproject_without_a_repomem_table_is_no_root(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "e"\n', encoding="utf-8")
    (tmp_path / "e.py").write_text("x = 1\n", encoding="utf-8")
    assert "is not inside a repository" in error_line(
        run_repomem("retrieve", "e.py:1", cwd=tmp_path)
    )


def test_typing_leaves_the_rest_of_the_cursors_line_out(tmp_path: Path) -> None:
    from repos import make_repo

    call = "    client = make_client(opts.host, opts.port, timeout=opts.timeout)\n"
    root = make_repo(
        tmp_path / "r",
        {
            "pkg/config.py": "def connect(opts):\n" + call + "    return client\n",
            "pkg/app.py": "def run(opts):\n" + call + "    return client\n",
            ".repomem.toml": "[completion]\nmin_confidence = 0\n",
        },
    )
    cursor = f"pkg/app.py:2:{call.index('(') + 2}"
    written = run_repomem("complete", cursor, cwd=root)
    assert written.stdout == ""  # the line's own text is its right context: nothing to add
    typing = run_repomem("complete", cursor, "--typing", cwd=root)
    assert typing.returncode == 0, typing.stderr
    assert typing.stdout == "opts.host, opts.port, timeout=opts.timeout)\n"
