"""Definition lookup (``repomem.context.definitions``) on files as an editor holds them while
the user types: the buffer often ends inside an unfinished statement."""

from __future__ import annotations

from pathlib import Path

from repos import write_files

from repomem.config import IndexConfig
from repomem.context.definitions import find_definitions
from repomem.index.repo import RepoIndex

# Cut inside the open tuple: tree-sitter's error recovery leaves no statement node at all, so
# the imports have none either.
UNFINISHED = (
    "import os\n\nfrom pkg.util import helper\n\n\n"
    '@helper.fixture(scope="session")\ndef environ():\n    """Doc."""\n    out = (\n'
    '        (os.environ, "A"),\n'
)


def test_imports_without_a_statement_node_still_give_cards(tmp_path: Path) -> None:
    root = write_files(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/util.py": "def helper(x):\n    return x\n",
            "pkg/broken.py": UNFINISHED,
        },
    )
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    pf = index.tables.parsed["pkg/broken.py"]
    assert pf.n_nodes == 0 and pf.import_nodes and set(pf.import_nodes) == {-1}
    hits = find_definitions(index, "pkg/broken.py", UNFINISHED)
    assert [(h.card.path, h.card.name) for h in hits] == [("pkg/util.py", "helper")]


def test_a_loaded_files_cards_read_its_call_heads_not_its_call_sites(tmp_path: Path) -> None:
    """After a load, the cards of a cursor in a file decode none of its call sites: which
    names the file calls (an import none of its calls uses yet ranks higher) is saved apart,
    and gives the cards a fresh build gives, a pending import included."""
    text = "import os\nimport json\n\nfrom pkg.util import helper\n\n\ndef f(x):\n"
    text += "    return helper(os.path.join(x))\n\n\ndef g(y):\n    "
    root = write_files(
        tmp_path / "proj",
        {"pkg/__init__.py": "", "pkg/util.py": "def helper(x):\n    return x\n", "pkg/a.py": text},
    )
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    built, _ = RepoIndex.build(root, config)
    loaded = RepoIndex.load(root, config)

    def cards(index: RepoIndex) -> list[tuple[str, str, str]]:
        return [
            (h.card.path, h.card.name, h.how) for h in find_definitions(index, "pkg/a.py", text)
        ]

    assert cards(loaded) == cards(built)
    assert ("pkg/util.py", "helper") in {c[:2] for c in cards(built)}
    pf = loaded.parse("pkg/a.py")
    assert pf is not None and pf._callsites is not None, "the cards decoded its call sites"
    assert pf.call_heads() == built.parse("pkg/a.py").call_heads() == {"helper", "os"}
    assert [c.parts for c in pf.calls] == [c.parts for c in built.parse("pkg/a.py").calls]
    assert pf.call_heads() == {"helper", "os"}  # from the call sites, once decoded
