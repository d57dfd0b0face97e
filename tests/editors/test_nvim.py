"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real ``repomem serve``.

``editors/nvim/tests/complete.lua`` does the editor's part (setup, open a file, wait for the
index, complete, switch completions off) and writes what it saw as JSON; the assertions are
here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from repos import make_repo, write_files

from repomem.errors import RepomemError
from repomem.workspace import find_root

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed")

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "nvim"
DRIVER = PLUGIN / "tests" / "complete.lua"

CONFIG_PY = """\
from pkg.util import helper


def connect(settings):
    client = make_client(settings.host, settings.port, timeout=settings.timeout)
    return client
"""
# the same parameter name as connect(): the call is copied as it is (a copy that renames its
# names is less sure, and this repository's other files and docs leave it under the default
# completion.min_confidence)
APP_PY = "def run(settings):\n    pass\n"
README = """\
# pkg

## Connections

To open a connection, call `connect(settings)`: it makes a client from the settings' host,
port and timeout and returns it.
"""
TYPED = "    client = make_client("
EXPECTED = "settings.host, settings.port, timeout=settings.timeout)"


# mid-line cursors: (the line, the cursor's byte column, the line once the suggestion is taken)
MIDLINE = [
    ("    client = make_client()", 25, f"    client = make_client({EXPECTED}"),
    ("    client = make_client", 20, f"    client = make_client({EXPECTED}"),
    ("    client = make_client(opts)", 25, "    client = make_client(opts)"),
]


def drive(
    script: Path, args: Sequence[object], out: Path, cwd: Path, timeout: int
) -> dict[str, Any]:
    """What the driver ``script`` (run with ``args`` in ``cwd``) wrote to ``out``, after
    checking that Neovim exited cleanly and the script raised nothing; the plugin's default
    command, `repomem serve`, is the one installed beside this Python."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [NVIM, "--clean", "--headless", "-l", str(script), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.is_file(), f"the driver wrote no result; stderr:\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert "error" not in result, result["error"]
    return result


def run_nvim(
    repo: Path,
    rel: str,
    line: int,
    text: str,
    setup: dict[str, Any],
    midline: Sequence[tuple[str, int, str]] = (),
) -> dict[str, Any]:
    """What the driver saw, after running it in ``repo`` with ``setup`` for ``setup()``."""
    out = repo.parent / "nvim-result.json"
    cases = json.dumps([{"text": t, "col": col} for t, col, _ in midline])
    args = [PLUGIN, repo / rel, line, text, out, json.dumps(setup), cases]
    return drive(DRIVER, args, out, repo, 150)


def nvim_session(
    tmp_path_factory: pytest.TempPathFactory,
    setup: dict[str, Any],
    midline: Sequence[tuple[str, int, str]] = (),
) -> tuple[Path, dict[str, Any]]:
    """A fresh fixture repository, and what Neovim saw completing ``pkg/app.py`` in it (its
    one place to copy from is a weak match, shown at any confidence)."""
    files = {
        "pkg/config.py": CONFIG_PY,
        "pkg/app.py": APP_PY,
        "README.md": README,
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    repo = make_repo(tmp_path_factory.mktemp("nvim") / "repo", files)
    return repo, run_nvim(repo, "pkg/app.py", 1, TYPED, setup, midline)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One Neovim session with settings (starting a server takes seconds)."""
    settings = {"completion": {"iterations": 1, "alpha": 0.25}, "debounceMs": 0, "index": {}}
    return nvim_session(tmp_path_factory, {"settings": settings}, MIDLINE)


@pytest.fixture(scope="module")
def default_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One Neovim session with ``setup()`` given nothing."""
    return nvim_session(tmp_path_factory, {})


def test_attaches_at_the_repository_root(session: tuple[Path, dict[str, Any]]) -> None:
    repo, result = session
    assert result["attached"] is True
    assert Path(result["root_dir"]).resolve() == repo.resolve()
    assert result["omnifunc"] == "v:lua.vim.lsp.omnifunc"


def test_settings_reach_the_server(session: tuple[Path, dict[str, Any]]) -> None:
    _, result = session
    assert result["messages"] == [], "the server rejected a setting"
    sent = {"completion": {"iterations": 1, "alpha": 0.25}, "debounceMs": 0, "index": {}}
    assert result["init_options"] == {"repomem": sent}
    effective = result["server_settings"]
    assert effective["completion"]["iterations"] == 1
    assert effective["completion"]["alpha"] == 0.25
    assert effective["debounceMs"] == 0
    assert effective["completion"]["k"] == 10, "unset keys keep the server's defaults"


def test_progress_then_index_ready(session: tuple[Path, dict[str, Any]]) -> None:
    _, result = session
    assert result["ready"] is True
    kinds = [event["kind"] for event in result["progress"]]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    statuses = [event["status"] for event in result["progress"]]
    # the bar stays up while the docs are read, after the index is ready
    assert all(s.startswith("repomem: indexing") or s == "repomem: ready" for s in statuses)
    assert statuses[0].startswith("repomem: indexing"), statuses
    assert any(s.endswith("%") for s in statuses), statuses
    [ready] = result["ready_events"]
    assert ready["files"] >= 7 and ready["fragments"] > 0
    # the index is ready; the progress may still be up while the docs are read
    assert result["status"] in ("repomem: ready", "repomem: indexing 100%")


def test_completion_comes_from_another_file(session: tuple[Path, dict[str, Any]]) -> None:
    _, result = session
    assert result["items"], "no completion item"
    item = result["items"][0]
    assert item["newText"].endswith(EXPECTED)
    assert "pkg/config.py" in item["detail"]


def test_taking_a_suggestion_mid_line_leaves_the_line_whole(
    session: tuple[Path, dict[str, Any]],
) -> None:
    _, result = session
    if result.get("midline") is None:
        pytest.skip("this Neovim has no inline completion (0.12 and later have)")
    lines = [case["line"] for case in result["midline"]]
    assert lines == [want for _, _, want in MIDLINE]
    assert [case["accepted"] for case in result["midline"]] == [True, True, False]


def test_repomem_ask_puts_the_cited_sources_in_the_quickfix_list(
    session: tuple[Path, dict[str, Any]],
) -> None:
    repo, result = session
    assert result["asked"] is True, "no sources came back"
    assert result["ask_title"] == "repomem ask: How do I open a connection?"
    lines = README.split("\n")
    line = next(i for i, text in enumerate(lines) if text.startswith("To open a connection")) + 1
    top = result["ask_sources"][0]
    assert (Path(top["path"]).resolve(), top["lnum"]) == ((repo / "README.md").resolve(), line)


def test_repomem_disable_turns_completions_off(session: tuple[Path, dict[str, Any]]) -> None:
    _, result = session
    assert result["disabled"] is True, "the server never saw enable = false"
    assert result["items_disabled"] == []
    assert result["status_disabled"] == "repomem: ready (off)"


def test_default_setup_completes_without_complaint(
    default_session: tuple[Path, dict[str, Any]],
) -> None:
    _, result = default_session
    assert result["messages"] == [], "the server rejected the settings"
    assert result["server_settings"]["completion"]["iterations"] == 2
    assert result["items"] and result["items"][0]["newText"].endswith(EXPECTED)


ROOTS = PLUGIN / "tests" / "roots.lua"
LSP_README = PLUGIN.parents[1] / "lsp_server" / "README.md"


def cli_root(path: Path) -> str | None:
    try:
        return str(find_root(path))
    except RepomemError:
        return None


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Folders rooted every way the command line accepts, one rooted by none, and what the
    plugin and lsp_server/README.md's snippet made of them in one Neovim session."""
    top = tmp_path_factory.mktemp("roots").resolve()
    files = {
        "git/pkg/a.py": "a = 1\n",  # root: git (a .git directory)
        "git/deeper/sub/b.py": "b = 1\n",  # root: git/deeper (its .repomem.toml)
        "git/lib/c.py": "c = 1\n",  # root: git (lib's pyproject.toml has no [tool.repomem])
        "indexed/src/d.py": "d = 1\n",  # root: indexed (.repomem/, as `repomem index` leaves)
        "sdist/src/e.py": "def e():\n    return 1\n",  # root: sdist ([tool.repomem.*] table)
        "nothing/f.py": "f = 1\n",  # no root
        "nothing/g.py": "g = 1\n",
    }
    write_files(top, files)
    (top / "git/.git").mkdir()
    (top / "git/deeper/.repomem.toml").write_text("[completion]\nk = 5\n")
    (top / "git/lib/pyproject.toml").write_text('[project]\nname = "lib"\n')
    (top / "indexed/.repomem").mkdir()
    (top / "sdist/pyproject.toml").write_text('[project]\nname = "e"\n\n[tool.repomem.index]\n')
    assert cli_root(top) is None, "the temporary folder is inside a repository"
    out = top / "roots.json"
    checked = [str(top / rel) for rel in files]
    outside = [str(top / "nothing/f.py"), str(top / "nothing/g.py")]
    args = [PLUGIN, LSP_README, json.dumps(checked), json.dumps(outside), top / "sdist/src/e.py"]
    return top, drive(ROOTS, [*args, out], out, top / "nothing", 150)


def test_the_plugin_and_the_readme_find_the_roots_the_cli_finds(
    roots: tuple[Path, dict[str, Any]],
) -> None:
    top, result = roots
    want = {
        "git/pkg/a.py": "git",
        "git/deeper/sub/b.py": "git/deeper",
        "git/lib/c.py": "git",
        "indexed/src/d.py": "indexed",
        "sdist/src/e.py": "sdist",
        "nothing/f.py": None,
        "nothing/g.py": None,
    }
    for seen in result["roots"]:
        rel = Path(seen["file"]).relative_to(top).as_posix()
        expected = None if want[rel] is None else str(top / want[rel])
        assert cli_root(Path(seen["file"])) == expected, rel
        assert (seen["plugin"], seen["readme"]) == (expected, expected), rel
    assert len(result["roots"]) == len(want)
    assert result["snippet_notifications"] == 2  # the README's snippet says why, too


def test_a_file_outside_every_repository_gets_no_server_and_one_word_why(
    roots: tuple[Path, dict[str, Any]],
) -> None:
    _, result = roots
    assert result["outside_clients"] == 0
    (said,) = [n["message"] for n in result["notifications"]]  # two files, said once
    assert "f.py is not inside a repository" in said and "repomem index" in said
    assert "g.py is not inside a repository" in result["health"]  # the last one
    assert "the current directory is not inside a repository" in result["health"]


def test_attaches_in_a_folder_without_git(roots: tuple[Path, dict[str, Any]]) -> None:
    top, result = roots
    assert result["attached"] is True
    assert Path(result["attached_root"]).resolve() == top / "sdist"


def test_two_repositories_open_share_one_server_each_completing_from_its_own(
    tmp_path: Path,
) -> None:
    """A file of a second repository adds its root to the running server's workspace
    folders; each file completes from its own repository."""
    other_py = CONFIG_PY.replace("make_client", "open_store").replace("host", "path")
    roots = {
        name: make_repo(
            tmp_path / name,
            {
                "pkg/config.py": config,
                "pkg/app.py": APP_PY,
                # the fixture's one copy is a weak one: shown whatever its confidence
                ".repomem.toml": "[completion]\nmin_confidence = 0\n",
            },
        )
        for name, config in (("alpha", CONFIG_PY), ("beta", other_py))
    }
    typed = {"alpha": TYPED, "beta": TYPED.replace("make_client", "open_store")}
    cases = [
        {"file": str(root / "pkg/app.py"), "line": 1, "text": typed[name]}
        for name, root in roots.items()
    ]
    out = tmp_path / "nvim-result.json"
    driver = PLUGIN / "tests" / "two_roots.lua"
    result = drive(driver, [PLUGIN, out, json.dumps(cases)], out, tmp_path, 300)
    assert result["messages"] == []
    alpha, beta = result["cases"]
    assert result["clients"] == 1 and alpha["client_id"] == beta["client_id"]
    assert [Path(f).resolve() for f in result["workspace_folders"]] == [
        roots["alpha"].resolve(),
        roots["beta"].resolve(),
    ]
    assert alpha["items"][0]["newText"].endswith(EXPECTED)
    assert beta["items"][0]["newText"].endswith(EXPECTED.replace("host", "path"))
    assert [(f["root"], f["state"], f["completions"]) for f in result["status_folders"]] == [
        (str(roots["alpha"].resolve()), "ready", 1),
        (str(roots["beta"].resolve()), "ready", 1),
    ]


VIEWED = (
    "def quantize_sample(sample, levels):\n"
    "    step = quantize_sample(sample.raw, levels=levels * 2)\n"
    "    return step"
)


def test_the_lines_on_screen_reach_the_server_and_the_prompt(tmp_path: Path) -> None:
    """The plugin sends ``repomem/visibleRanges`` on entering a buffer (throttled), and a
    completion in another file shows the draft's visible lines (the index cannot know them:
    the draft was never written)."""
    files = {
        "pkg/app.py": "def run(sample):\n    pass\n",
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    draft = repo / "pkg" / "draft.py"
    text = "\n" * 40 + VIEWED + "\n" * 40
    out = tmp_path / "nvim-result.json"
    args = [PLUGIN, draft, text, 39, repo / "pkg/app.py", 1, "    step = quantize_sample(", out]
    result = drive(PLUGIN / "tests" / "visible.lua", args, out, repo, 300)
    sent = {
        (Path(s["uri"].removeprefix("file://")).name, s["ranges"][0]["start"]["line"])
        for s in result["sent"]
    }
    assert ("draft.py", 38) in sent and any(name == "app.py" for name, _ in sent)
    assert all(r["end"]["line"] >= r["start"]["line"] for s in result["sent"] for r in s["ranges"])
    (documentation,) = result["items"]
    assert "pkg/draft.py:39-" in documentation and "(viewed)" in documentation


PARTIAL = PLUGIN / "tests" / "partial.lua"


def test_partial_accept_takes_the_next_word_then_the_line_with_no_new_completion(
    tmp_path: Path,
) -> None:
    """The insert-mode mappings for the next word and the rest of the line (set in setup(), so
    configurable) insert those parts of the suggestion shown; the server serves them from the
    suggestion it made, computing nothing new."""
    files = {
        "pkg/config.py": CONFIG_PY,
        "pkg/app.py": APP_PY,
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    out = tmp_path / "partial.json"
    setup = {
        "settings": {"debounceMs": 0, "completion": {"iterations": 1}},
        "inline": {"accept_word": "<C-l>", "accept_line": "<C-j>"},
    }
    args = [PLUGIN, repo / "pkg/app.py", 1, TYPED, out, json.dumps(setup)]
    result = drive(PARTIAL, args, out, repo, 150)
    assert result["mappings"] == {
        "word": "repomem: accept the suggestion's next word",
        "line": "repomem: accept the suggestion's line",
    }
    assert result["suggestion"] == EXPECTED
    word, word2, line = result["steps"]
    assert word["done"] and word["line"] == TYPED + "settings"
    assert word2["line"] == TYPED + "settings.host"
    assert line["line"] == TYPED + EXPECTED and line["col"] == len(TYPED + EXPECTED)
    before, after = result["before"], result["after"]
    assert after["completions"] == before["completions"]
    assert after["cacheHits"] == before["cacheHits"] + 3
