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
