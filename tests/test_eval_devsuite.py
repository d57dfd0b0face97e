"""The development suite's unpacking and task generation, fed a source distribution built here
(no network), and its optional precision/coverage plot."""

from __future__ import annotations

import io
import shutil
import sys
import tarfile
from pathlib import Path

import pytest

from repomem_eval.compare import Run, curve_plot
from repomem_eval.devsuite import (
    DevSuiteError,
    Project,
    extract_sdist,
    fetch,
    pip_download,
)
from repomem_eval.tasks import read_tasks, resolve_file

CORE = '''\
"""Core helpers."""


def scale(value, factor):
    result = value * factor
    return result


class Meter:
    def __init__(self, start):
        self.total = start

    def add(self, amount):
        self.total = scale(self.total, 1) + amount
        return self.total
'''

APP = """\
from demo.core import Meter, scale


def main():
    meter = Meter(0)
    meter.add(2)
    doubled = scale(meter.total, 2)
    print(doubled)
    return doubled
"""


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _sdist(path: Path, *, extra: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, "demo-1.0/PKG-INFO", b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        _add(tar, "demo-1.0/demo/__init__.py", b"")
        _add(tar, "demo-1.0/demo/core.py", CORE.encode())
        _add(tar, "demo-1.0/demo/app.py", APP.encode())
        link = tarfile.TarInfo("demo-1.0/demo/link.py")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tar.addfile(link)
        for name, data in (extra or {}).items():
            _add(tar, name, data)
    return path


class FakePyPI:
    """Stands in for ``pip download``: copies a local archive and counts the calls."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.calls: list[str] = []

    def __call__(self, project: Project, dest: Path) -> Path:
        self.calls.append(project.requirement)
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(self.archive, dest / self.archive.name))


def test_extract_strips_the_top_directory_and_skips_links(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "demo-1.0.tar.gz")
    dest = tmp_path / "repos" / "demo"
    extract_sdist(archive, dest)
    assert (dest / "demo" / "core.py").read_text() == CORE
    assert (dest / "PKG-INFO").is_file()
    assert not (dest / "demo" / "link.py").exists()
    assert not dest.with_name("demo.partial").exists()


def test_extract_refuses_paths_outside_the_target(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "evil-1.0.tar.gz", extra={"demo-1.0/../../escape.py": b"x"})
    dest = tmp_path / "repos" / "demo"
    with pytest.raises(DevSuiteError, match="unsafe member path"):
        extract_sdist(archive, dest)
    assert not dest.exists()
    assert not (tmp_path / "escape.py").exists()


def test_extract_reports_a_broken_archive(tmp_path: Path) -> None:
    archive = tmp_path / "broken-1.0.tar.gz"
    archive.write_bytes(b"not a tarball")
    with pytest.raises(DevSuiteError, match="cannot unpack .*broken-1.0.tar.gz"):
        extract_sdist(archive, tmp_path / "repos" / "broken")


def test_fetch_builds_tasks_and_skips_what_is_done(tmp_path: Path) -> None:
    pypi = FakePyPI(_sdist(tmp_path / "demo-1.0.tar.gz"))
    cache = tmp_path / "cache"
    projects = (Project("demo", "1.0"),)
    logs: list[str] = []
    outputs = fetch(
        cache, projects=projects, tasks_per_repo={"line": 5, "api": 3},
        downloader=pypi, log=logs.append,
    )  # fmt: skip
    assert pypi.calls == ["demo==1.0"]
    assert outputs == {"line": cache / "tasks" / "line.jsonl", "api": cache / "tasks" / "api.jsonl"}
    line_tasks = read_tasks(outputs["line"])
    api_tasks = read_tasks(outputs["api"])
    assert len(line_tasks) == 5 and len(api_tasks) == 3
    for task in line_tasks + api_tasks:
        assert task.repo == "demo"
        lines = resolve_file(task, cache / "repos").read_text().splitlines()
        assert task.ground_truth.split("\n")[0] == lines[task.line_no]
    assert {t.ground_truth.strip().split("(")[0] for t in api_tasks} <= {
        "meter = Meter", "meter.add", "doubled = scale", "self.total = scale",
    }  # fmt: skip

    before = {p: p.stat().st_mtime_ns for p in outputs.values()}
    logs.clear()
    fetch(
        cache,
        projects=projects,
        tasks_per_repo={"line": 5, "api": 3},
        downloader=pypi,
        log=logs.append,
    )
    assert pypi.calls == ["demo==1.0"], "a second fetch downloads nothing"
    assert {p: p.stat().st_mtime_ns for p in outputs.values()} == before
    assert "demo==1.0: already prepared" in logs

    fetch(
        cache,
        projects=projects,
        tasks_per_repo={"line": 2, "api": 3},
        downloader=pypi,
        log=logs.append,
    )
    assert pypi.calls == ["demo==1.0"]
    assert len(read_tasks(outputs["line"])) == 2
    assert outputs["api"].stat().st_mtime_ns == before[outputs["api"]]


def test_fetch_reuses_a_downloaded_archive_after_a_failed_unpack(tmp_path: Path) -> None:
    pypi = FakePyPI(_sdist(tmp_path / "demo-1.0.tar.gz"))
    cache = tmp_path / "cache"
    projects = (Project("demo", "1.0"),)
    fetch(
        cache, projects=projects, tasks_per_repo={"line": 1, "api": 1}, downloader=pypi, log=print
    )
    shutil.rmtree(cache / "repos" / "demo")
    fetch(
        cache, projects=projects, tasks_per_repo={"line": 1, "api": 1}, downloader=pypi, log=print
    )
    assert pypi.calls == ["demo==1.0"]
    assert (cache / "repos" / "demo" / "demo" / "app.py").is_file()


def test_download_failure_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip fails at once, as without a network
    with pytest.raises(DevSuiteError, match=r"could not download demo-pkg==9\.9 from PyPI"):
        pip_download(Project("demo-pkg", "9.9"), tmp_path / "sdists")
    assert list((tmp_path / "sdists").iterdir()) == []


def _curve_runs() -> list[Run]:
    curve = [{"threshold": t, "coverage": 100 - 50 * t, "precision": 20 + 40 * t} for t in (0, 1)]
    return [
        Run("line", {"vanilla": {"curve": curve}}, {}),
        Run("api", {"vanilla": {"curve": []}}, {}),
    ]


def test_the_precision_coverage_plot_is_optional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    png = tmp_path / "precision_coverage.png"
    assert curve_plot([Run("line", {"vanilla": {"curve": []}}, {})], png) == ""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    said = curve_plot(_curve_runs(), png)
    assert said == (
        "no precision_coverage.png: matplotlib is not installed"
        " (in a clone of repomem: pip install '.[plot]')"
    )
    assert not png.exists()


def test_the_precision_coverage_plot_is_drawn_with_matplotlib(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "precision_coverage.png"
    assert curve_plot(_curve_runs(), png) == f"wrote {png}"
    assert png.read_bytes().startswith(b"\x89PNG")
