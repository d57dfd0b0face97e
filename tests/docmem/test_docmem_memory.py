"""Opening the doc memory of a real fixture repository: documents, entity links to code,
extractive memory forms, and the store next to the code index."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest
from repos import make_repo

from repomem.docmem import store as doc_store
from repomem.docmem.entities import CodeSymbols, Mention, mentions
from repomem.docmem.forms import extractive_facts, extractive_triples, svo
from repomem.docmem.memory import DOCSTRING, DocMemory, NoDocs
from repomem.docmem.model import EXTRACTIVE, TextModel
from repomem.docmem.segments import Segment
from repomem.index.repo import RepoIndex

README = """\
# Widget

Widget turns configuration files into running services.

## Configuration

Set `WIDGET_TIMEOUT` to the number of seconds a request may take. It defaults to 30.
The `RETRY_LIMIT` key caps how many times a failed request is retried.

## Command line

Run `widget serve --port 8080` to start the server. The `--reload` flag restarts it
when files change.

```python
from widget.server import serve
serve(port=8080, reload=True)
```
"""

GUIDE = """\
Guide
=====

The :class:`widget.server.Server` class accepts connections. Build one with
:func:`widget.server.serve`.

Logging
-------

Call :func:`widget.logs.setup_logging` before serving. It writes to ``widget.log``.
"""

WIDGET_FILES = {
    "README.md": README,
    "docs/guide.rst": GUIDE,
    "LICENSE": "MIT License\n\nPermission is hereby granted, free of charge.\n",
    "widget/__init__.py": '"""Widget: services from configuration files."""\n',
    "widget/config.py": (
        '"""Configuration defaults."""\n\n'
        'DEFAULTS = {\n    "WIDGET_TIMEOUT": 30,\n    "RETRY_LIMIT": 3,\n}\n'
    ),
    "widget/server.py": (
        "import argparse\n\n\n"
        "class Server:\n    def __init__(self, port):\n        self.port = port\n\n\n"
        "def serve(port=8080, reload=False):\n    return Server(port)\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n"
        '    parser.add_argument("--port", type=int)\n'
        '    parser.add_argument("--reload", action="store_true")\n'
        "    return parser\n"
    ),
    "widget/logs.py": (
        "import logging\n\n\ndef setup_logging(path='widget.log'):\n"
        "    logging.basicConfig(filename=path)\n"
    ),
}


def widget_repo(root: Path) -> tuple[RepoIndex, DocMemory]:
    make_repo(root, WIDGET_FILES)
    index, _ = RepoIndex.build(root)
    return index, DocMemory.open(index)


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoIndex, DocMemory]:
    return widget_repo(tmp_path_factory.mktemp("docmem") / "repo")


def test_documents_are_docs_and_module_docstrings(widget: tuple[RepoIndex, DocMemory]) -> None:
    _, memory = widget
    assert "README.md" in memory.paths and "docs/guide.rst" in memory.paths
    assert "LICENSE" not in memory.paths  # legal text is left out
    assert "widget/config.py" in memory.paths  # through its module docstring
    assert memory.docs["widget/config.py"].language == DOCSTRING
    assert "widget/server.py" not in memory.paths  # no docstring, no segments
    # segments are stored in document order, document by document
    assert [memory.paths[d] for d in memory.doc_of] == [s.path for s in memory.segments]


def test_mdx_pages_and_text_readmes_are_docs_but_data_files_are_not(tmp_path: Path) -> None:
    files = {
        **WIDGET_FILES,
        "docs/tutorial.mdx": (
            "import Tabs from '@theme/Tabs';\n\n# Tutorial\n\n<Tabs>\n"
            "Pass `--reload` to restart the server when files change.\n</Tabs>\n"
        ),
        "docs/notes.markdown": "# Notes\n\nThe server logs to `widget.log`.\n",
        "examples/README.txt": "Examples\n\nEach example starts one service.\n",
        "requirements/dev.txt": "pytest>=8\nruff\n",
        "tests/data/sample.txt": "not documentation\n",
    }
    make_repo(tmp_path, files)
    index, _ = RepoIndex.build(tmp_path)
    memory = DocMemory.open(index)
    assert {"docs/tutorial.mdx", "docs/notes.markdown", "examples/README.txt"} <= set(memory.paths)
    assert "requirements/dev.txt" not in memory.paths
    assert "tests/data/sample.txt" not in memory.paths
    (tutorial,) = memory.docs["docs/tutorial.mdx"].segments
    assert tutorial.text == "Pass `--reload` to restart the server when files change."
    assert tutorial.label == "docs/tutorial.mdx:6"


def test_mentions_cover_symbols_paths_keys_and_flags() -> None:
    found = {(m.name, m.kind) for m in mentions(README + GUIDE)}
    assert ("WIDGET_TIMEOUT", "config") in found
    assert ("--port", "flag") in found and ("--reload", "flag") in found
    assert ("widget.server.Server", "symbol") in found
    assert ("widget.logs.setup_logging", "symbol") in found
    assert ("serve", "symbol") in found
    assert not any(name == "e.g" for name, _ in found)


def test_entities_link_to_their_definitions(widget: tuple[RepoIndex, DocMemory]) -> None:
    index, memory = widget
    defs = memory.graph.definitions
    lines = index.file_text("widget/server.py").split("\n")
    server_line = lines.index("class Server:")
    serve_line = lines.index("def serve(port=8080, reload=False):")
    assert defs["widget.server.Server"] == [("widget/server.py", server_line)]
    assert defs["--reload"][0][0] == "widget/server.py"  # a quoted flag in code
    assert defs["RETRY_LIMIT"][0][0] == "widget/config.py"  # a quoted key in code
    assert defs["serve"] == [("widget/server.py", serve_line)]  # unique bare name
    # every link is a segment that mentions the entity -> a window holding the definition
    links = memory.links.tocoo()
    assert links.nnz > 0
    for seg, fid in zip(links.row, links.col, strict=True):
        loc = index.tables.frag_locs[fid][0]
        named = memory.graph.segment_entities[seg]
        assert any(
            p == loc.path and loc.start <= line < loc.end
            for e in named
            for p, line in defs.get(e, [])
        )


def test_ambiguous_names_are_dropped_not_guessed(tmp_path: Path) -> None:
    files = {
        "a/one.py": "def run():\n    pass\n",
        "b/two.py": "def run():\n    pass\n",
        "c/three.py": "def run():\n    pass\n",
        "d/four.py": "def run():\n    pass\n",
        "README.md": "Call `run` or `one.run`.\n",
    }
    index, _ = RepoIndex.build(make_repo(tmp_path / "r", files), save=False)
    code = CodeSymbols()
    code.update(index)
    assert code.lookup(Mention("run", "symbol")) == []  # four definitions: ambiguous
    assert code.lookup(Mention("one.run", "symbol")) == [("a/one.py", 0)]
    assert code.lookup(Mention("a.one.run", "symbol")) == [("a/one.py", 0)]
    assert code.lookup(Mention("one.py", "path")) == [("a/one.py", 0)]


def test_extractive_forms_replace_pronouns_and_split_around_verbs() -> None:
    seg = Segment(
        "README.md",
        "paragraph",
        4,
        6,
        ("Widget", "Configuration"),
        "Set `WIDGET_TIMEOUT` to the number of seconds a request may take. It defaults to 30.\n"
        "The `RETRY_LIMIT` key caps how many times a failed request is retried.",
    )
    facts = extractive_facts(seg)
    assert [line for line, _ in facts] == [4, 4, 5]
    assert facts[1][1] == "Configuration defaults to 30."
    triples = [text for _, text in extractive_triples(seg)]
    assert triples[1] == "<Configuration; defaults to; 30>"
    assert triples[2] == "<RETRY_LIMIT key; caps; how many times a failed request is retried>"
    assert svo("The server can be restarted with the flag.", "S") == (
        "server",
        "can be",
        "restarted with the flag",
    )
    assert svo("Nothing verbal here", "T") == ("T", "is described as", "Nothing verbal here")


def test_prepared_forms_are_stored_and_reused(tmp_path: Path) -> None:
    index, memory = widget_repo(tmp_path / "repo")
    asyncio.run(memory.prepare(["mixed"], TextModel(None), pages=True))
    stored = tmp_path / "repo" / ".repomem" / doc_store.FILE_NAME
    payload = json.loads(gzip.decompress(stored.read_bytes()))
    readme = payload["docs"]["README.md"]
    assert set(readme["builders"][EXTRACTIVE]["forms"]) == {"gist", "summary", "triple", "fact"}
    assert readme["builders"][EXTRACTIVE]["pages"]
    for form in ("chunk", "gist", "summary", "triple", "fact"):
        entries = memory.entries(form, EXTRACTIVE)
        assert entries and all(e.form == form and e.origin == EXTRACTIVE for e in entries)
        for e in entries:
            assert all(0 <= s < len(memory.segments) for s in e.segments)
    assert len(memory.entries("mixed", EXTRACTIVE)) == sum(
        len(memory.entries(f, EXTRACTIVE)) for f in ("chunk", "gist", "summary", "triple", "fact")
    )
    # change one document: it is re-segmented, the other keeps what was built for it
    (tmp_path / "repo" / "README.md").write_text(README + "\n## More\n\nA new section here.\n")
    index2, _ = RepoIndex.build(tmp_path / "repo")
    reopened = DocMemory.open(index2)
    assert reopened.docs["docs/guide.rst"].builders[EXTRACTIVE].forms["fact"]
    assert EXTRACTIVE not in reopened.docs["README.md"].builders
    assert any("A new section" in s.text for s in reopened.segments)


def test_unreadable_store_is_rebuilt_and_no_docs_is_an_error(tmp_path: Path) -> None:
    index, memory = widget_repo(tmp_path / "repo")
    (tmp_path / "repo" / ".repomem" / doc_store.FILE_NAME).write_bytes(b"not gzip")
    again = DocMemory.open(index)
    assert [s.text for s in again.segments] == [s.text for s in memory.segments]
    bare = make_repo(tmp_path / "bare", {})
    for path in list(bare.rglob("*.py")):
        path.write_text("x = 1\n")
    bare_index, _ = RepoIndex.build(bare, save=False)
    with pytest.raises(NoDocs, match="no documentation found in"):
        DocMemory.open(bare_index, save=False)


def test_a_store_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    _, memory = widget_repo(tmp_path / "repo")
    target = tmp_path / "repo" / ".repomem" / doc_store.FILE_NAME
    target.unlink()
    target.mkdir()  # a directory where the file should go
    with pytest.raises(doc_store.DocStoreError, match="cannot write the doc memory to"):
        memory.save()
    assert not [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")]


def test_a_loaded_index_keeps_no_parse_and_the_memory_only_names_the_docs_mention(
    tmp_path: Path,
) -> None:
    """Opening the doc memory reads every code file's definitions once; neither the index
    (its parses) nor the memory (its code names) keeps what the docs do not mention."""
    body = "def helper_{i}(x):\n    return x\n"
    files = {**WIDGET_FILES, **{f"widget/gen/m{i}.py": body.format(i=i) for i in range(5)}}
    root = make_repo(tmp_path / "repo", files)
    RepoIndex.build(root)
    index = RepoIndex.load(root)
    memory = DocMemory.open(index)
    assert index.parse("widget/gen/m0.py", keep=False) is not None
    parsed = index.tables.parsed
    assert not [p for p in parsed if parsed._values[p] is not None]  # none made and kept
    names = {name for f in memory.code.files.values() for _, name, _ in f.names}
    assert "widget.logs.setup_logging" in names
    assert not [n for n in names if "helper_" in n or "gen.m" in n]
    assert memory.graph.definitions["widget.logs.setup_logging"] == [("widget/logs.py", 3)]
