"""``repomem complete --docs``: a name documented only in the README completes a line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from repos import run_repomem, write_files

README = """# Demo

Configure the cache with `CACHE_BACKEND_URL`; set `cache.flush_interval_seconds` to control
how often entries are written.

```python
settings.cache.flush_interval_seconds = 30
```
"""


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_repomem(*args, cwd=root)


def test_doc_segments_enter_the_prompt_only_with_docs(tmp_path: Path) -> None:
    files = {
        "README.md": README,
        "app/conf.py": "import settings\n\n\ndef configure():\n    settings.cache.\n",
        # every completion printed, however short its match: this is about what the prompt holds
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    files.update({f"app/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(3)})
    root = write_files(tmp_path / "repo", files)
    (root / ".git").mkdir()
    assert run(root, "index", ".", "--no-progress").returncode == 0
    with_docs = run(root, "complete", "app/conf.py:5:20", "--docs", "--explain")
    assert with_docs.returncode == 0, with_docs.stderr
    assert with_docs.stdout.strip() == "flush_interval_seconds = 30"
    assert "README.md" in with_docs.stderr
    code_only = run(root, "complete", "app/conf.py:5:20", "--explain")
    assert code_only.returncode == 0, code_only.stderr
    assert "flush_interval_seconds" not in code_only.stdout
    assert "README.md" not in code_only.stderr
