"""The CLI's commands in process, each through its own ``add_arguments`` and ``run``: what
they print, what they return, and the errors of bad arguments (``test_cli_*.py`` drive the
installed ``repomem`` as a subprocess)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import ModuleType

import pytest
from repos import make_repo

from repomem.commands import ask, complete, index, open_index, retrieve, trust
from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.repo import RepoIndex

CONFIG_PY = """\
from pkg.util import helper


def connect(opts):
    client = make_client(opts.host, opts.port, timeout=opts.timeout)
    return helper(client)
"""
APP_PY = "def run(opts):\n    client = make_client(\n"
README = """\
# Widgets

## Retries

The client retries a failed request three times, waiting `backoff_seconds` between tries.
"""


def _run(module: ModuleType, *argv: str | Path) -> int:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return module.run(parser.parse_args([str(a) for a in argv]))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {
        "pkg/config.py": CONFIG_PY,
        "pkg/app.py": APP_PY,
        "README.md": README,
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    return make_repo(tmp_path / "repo", files)


def test_index_builds_and_says_what_it_read(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(index, repo, "--no-progress") == 0
    out = capsys.readouterr().out
    assert "python" in out and "fragments" in out
    opened = open_index(repo, IndexConfig(), build=False)
    assert isinstance(opened, RepoIndex)
    assert opened.file_text("pkg/config.py") == CONFIG_PY


def test_a_read_only_open_of_an_unindexed_repository_fails(repo: Path) -> None:
    with pytest.raises(RepomemError, match="repomem index"):
        open_index(repo, IndexConfig(), build=False)


def test_complete_continues_the_line_from_the_repository(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(complete, f"{repo / 'pkg' / 'app.py'}:2:26", "--json") == 0
    account = json.loads(capsys.readouterr().out)
    assert account["answered"] and account["backend"] == "builtin"
    assert account["text"] == "opts.host, opts.port, timeout=opts.timeout)"
    assert (account["file"], account["line"], account["column"]) == ("pkg/app.py", 2, 26)


def test_complete_rejects_a_column_past_the_line(repo: Path) -> None:
    with pytest.raises(RepomemError, match="column 40 is out of range"):
        _run(complete, f"{repo / 'pkg' / 'app.py'}:2:40")
    assert complete.split_at("ab\ncd", 2, 2, "f") == ("ab\nc", "d")


EXTRA_PY = """\
from pkg.util import helper


def go(opts):
    made = helper(1)
    c = make_client(opts.host, opts.port
"""


def test_retrieve_lists_fragments_and_the_definitions_used(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = repo / "pkg" / "extra.py"
    target.write_text(EXTRA_PY)
    _run(index, repo, "--no-progress")
    capsys.readouterr()
    assert _run(retrieve, f"{target}:7", "--json") == 0
    found = json.loads(capsys.readouterr().out)
    paths = [f["locations"][0]["path"] for f in found["fragments"]]
    assert "pkg/config.py" in paths
    assert [d["named_as"] for d in found["definitions"]][:1] == ["helper"]
    assert found["definitions"][0]["path"] == "pkg/util.py"


def test_ask_answers_from_the_docs_without_a_model(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(ask, "How many times are requests retried?", "--root", repo, "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert Path(result["root"]) == repo
    assert any("README.md" in json.dumps(s) for s in result["sources"])
    with pytest.raises(RepomemError, match="the question is empty"):
        _run(ask, " ", "--root", repo)


def test_trust_lists_and_revokes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(trust, repo) == 0
    assert f"trusted {repo.resolve() / '.repomem.toml'}" in capsys.readouterr().out
    _run(trust, "--list")
    assert f"{repo.resolve()}: .repomem.toml (trusted)" in capsys.readouterr().out
    _run(trust, repo, "--revoke")
    assert "no longer trusted" in capsys.readouterr().out
    with pytest.raises(RepomemError, match="no settings to trust"):
        _run(trust, repo / "pkg")
