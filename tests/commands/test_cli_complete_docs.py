"""``repomem complete``: a name documented only in the README completes a line (docs are on by
default, ``--no-docs`` completes from code only)."""

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


def test_doc_segments_enter_the_prompt_unless_no_docs(tmp_path: Path) -> None:
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
    for flags in ((), ("--docs",)):
        with_docs = run(root, "complete", "app/conf.py:5:20", *flags, "--explain")
        assert with_docs.returncode == 0, with_docs.stderr
        assert with_docs.stdout.strip() == "flush_interval_seconds = 30"
        assert "README.md" in with_docs.stderr
    code_only = run(root, "complete", "app/conf.py:5:20", "--no-docs", "--explain")
    assert code_only.returncode == 0, code_only.stderr
    assert "flush_interval_seconds" not in code_only.stdout
    assert "README.md" not in code_only.stderr


def test_a_repository_without_docs_completes_from_code(tmp_path: Path) -> None:
    files = {f"app/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(3)}
    files["app/use.py"] = "from app.m1 import f1\n\nf1(\n"
    files[".repomem.toml"] = "[completion]\nmin_confidence = 0\n"  # the weak copy is shown
    root = write_files(tmp_path / "repo", files)
    (root / ".git").mkdir()
    assert run(root, "index", ".", "--no-progress").returncode == 0
    default = run(root, "complete", "app/use.py:3:4")
    assert (default.returncode, default.stderr) == (0, "")  # docs by default: no note
    asked = run(root, "complete", "app/use.py:3:4", "--docs")
    assert asked.returncode == 0 and asked.stdout == default.stdout
    assert asked.stderr.startswith("repomem: no documentation found in")
    assert asked.stderr.strip().endswith("completing from code only")
