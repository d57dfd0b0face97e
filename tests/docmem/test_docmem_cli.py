"""``repomem ask`` driven as a subprocess on real fixture repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from repos import make_repo, run_repomem
from test_docmem_memory import README, WIDGET_FILES


def repomem(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_repomem(*args, cwd=cwd, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("ask") / "repo", WIDGET_FILES)


def test_ask_without_a_model_lists_the_best_sources(root: Path) -> None:
    out = repomem("ask", "Which flag restarts the server when files change?", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "No answer: no language model is configured" in out.stdout
    line = (
        README.split("\n").index(
            "Run `widget serve --port 8080` to start the server. The `--reload` flag restarts it"
        )
        + 1
    )
    assert f"README.md:{line}" in out.stdout
    assert "strategy: graph, mode: extractive" in out.stdout
    assert (root / ".repomem" / "docmem.json.gz").is_file()  # stored next to the code index


def test_ask_json_reports_sources_and_steps(root: Path) -> None:
    out = repomem(
        "ask",
        "What does setup_logging write?",
        "--strategy",
        "graph",
        "--json",
        "--explain",
        "--root",
        str(root),
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["strategy"] == "graph" and report["mode"] == "extractive"
    assert report["answer"] is None
    assert report["sources"] and all(s["line"] >= 1 for s in report["sources"])
    assert any(s["kind"] == "code" and s["path"] == "widget/logs.py" for s in report["sources"])
    assert [s["action"] for s in report["steps"]][0] == "seed"
    assert "seed: entities" in out.stderr  # --explain writes the steps


def test_ask_forms_and_docs_only(root: Path) -> None:
    out = repomem("ask", "retry limit", "--form", "triple", "--docs-only", "--json", cwd=root)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert all(s["kind"] == "doc" and s["form"] == "triple" for s in report["sources"])
    assert any("memory form: triple (extractive" in n for n in report["notes"])


def test_bad_input_is_one_clear_line(root: Path, tmp_path: Path) -> None:
    empty = repomem("ask", "  ", cwd=root)
    assert empty.returncode == 2 and "repomem: error: the question is empty" in empty.stderr
    missing = repomem("ask", "anything", "--root", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "is not a directory" in missing.stderr
    bare = make_repo(tmp_path / "bare", {})
    for path in bare.rglob("*.py"):
        path.write_text("x = 1\n")
    nodocs = repomem("ask", "anything", cwd=bare)
    assert nodocs.returncode == 2 and "no documentation found in" in nodocs.stderr
    assert "Traceback" not in nodocs.stderr


def test_ask_reads_the_doc_comments_of_typescript_sources(tmp_path: Path) -> None:
    from test_docmem_segments import SWITCH_MAP_TS

    files = {
        "src/switchMap.ts": SWITCH_MAP_TS,
        "src/delay.ts": (
            "/**\n * Delays the emission of items from the source Observable by a given timeout\n"
            " * or until a given Date.\n */\nexport function delay(due: number) {\n"
            "  return due;\n}\n"
        ),
        "README.md": "# rx\n\nReactive extensions for the fixture: install it with npm and"
        " import the operators you need from the package's root.\n",
    }
    root = make_repo(tmp_path / "rx", files)
    out = repomem("ask", "What does switchMap do?", "--json", cwd=root)
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout)["sources"][0]
    assert (first["path"], first["kind"]) == ("src/switchMap.ts", "doc")
    assert "most recently projected Observable" in first["text"]


def test_the_ask_command_offers_docmems_names_without_loading_the_memory() -> None:
    # `repomem --help` imports every command: the choices must not pull in numpy and the index
    code = (
        "import sys; from repomem.commands import ask;"
        " print(sorted(m for m in ('numpy', 'repomem.docmem.memory') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
