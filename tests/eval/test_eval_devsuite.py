"""The development suite's unpacking and task generation, fed archives built here (a source
distribution, an npm package, a Debian package; no network), and its optional
precision/coverage plot."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from repomem_eval.compare import Run, curve_plot
from repomem_eval.devsuite import (
    DEFAULT_TASKS,
    HELDOUT,
    PROBE,
    PROBE2,
    PROBE2_TASKS,
    PROBE3,
    PROBE3_TASKS,
    PROBE_TASKS,
    PROJECTS,
    SETS,
    UNSEEN,
    DevSuiteError,
    Project,
    default_cache,
    download,
    extract_archive,
    fetch,
    select_projects,
    task_counts,
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
    extract_archive(archive, dest)
    assert (dest / "demo" / "core.py").read_text() == CORE
    assert (dest / "PKG-INFO").is_file()
    assert not (dest / "demo" / "link.py").exists()
    assert not dest.with_name("demo.partial").exists()


def test_extract_refuses_paths_outside_the_target(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "evil-1.0.tar.gz", extra={"demo-1.0/../../escape.py": b"x"})
    dest = tmp_path / "repos" / "demo"
    with pytest.raises(DevSuiteError, match="unsafe member path"):
        extract_archive(archive, dest)
    assert not dest.exists()
    assert not (tmp_path / "escape.py").exists()


def test_extract_reports_a_broken_archive(tmp_path: Path) -> None:
    archive = tmp_path / "broken-1.0.tar.gz"
    archive.write_bytes(b"not a tarball")
    with pytest.raises(DevSuiteError, match="cannot unpack .*broken-1.0.tar.gz"):
        extract_archive(archive, tmp_path / "repos" / "broken")


def test_fetch_builds_tasks_and_skips_what_is_done(tmp_path: Path) -> None:
    pypi = FakePyPI(_sdist(tmp_path / "demo-1.0.tar.gz"))
    cache = tmp_path / "cache"
    projects = (Project("demo", "1.0"),)
    logs: list[str] = []
    outputs = fetch(
        cache, projects=projects, tasks_per_repo={"python": {"line": 5, "api": 3}},
        downloader=pypi, log=logs.append,
    )["python"]  # fmt: skip
    assert pypi.calls == ["demo==1.0"]
    assert outputs == {
        "line": cache / "tasks" / "python" / "line.jsonl",
        "api": cache / "tasks" / "python" / "api.jsonl",
    }
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
        tasks_per_repo={"python": {"line": 5, "api": 3}},
        downloader=pypi,
        log=logs.append,
    )
    assert pypi.calls == ["demo==1.0"], "a second fetch downloads nothing"
    assert {p: p.stat().st_mtime_ns for p in outputs.values()} == before
    assert "demo==1.0: already prepared" in logs

    fetch(
        cache,
        projects=projects,
        tasks_per_repo={"python": {"line": 2, "api": 3}},
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
    counts = {"python": {"line": 1, "api": 1}}
    fetch(cache, projects=projects, tasks_per_repo=counts, downloader=pypi, log=print)
    shutil.rmtree(cache / "repos" / "demo")
    counts = {"python": {"line": 1, "api": 1}}
    fetch(cache, projects=projects, tasks_per_repo=counts, downloader=pypi, log=print)
    assert pypi.calls == ["demo==1.0"]
    assert (cache / "repos" / "demo" / "demo" / "app.py").is_file()


def test_download_failure_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip fails at once, as without a network
    with pytest.raises(DevSuiteError, match=r"could not download demo-pkg==9\.9 from PyPI"):
        download(Project("demo-pkg", "9.9"), tmp_path / "archives")
    assert list((tmp_path / "archives").iterdir()) == []


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


GO_LIB = """\
package lib

// Scale multiplies: Scale(v, f) in a comment is no call.
func Scale(v int, f int) int {
	return v * f
}
"""

GO_MAIN = """\
package main

import "example.com/demo/lib"

func main() {
	x := 2
	y := lib.Scale(x, 3)
	println(y)
	z := lib.Scale(y, 2)
	println(z)
}
"""


def _tgz(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            _add(tar, name, data)
    return path


def test_extract_keeps_only_the_project_root(tmp_path: Path) -> None:
    archive = _tgz(
        tmp_path / "lib-1.0.tgz",
        {
            "package/package.json": b"{}",
            "package/src/index.ts": b"export const a = 1;\n",
            "package/src/util/x.ts": b"export function x() {}\n",
            "package/dist/index.js": b"exports.a = 1;\n",
        },
    )
    dest = tmp_path / "repos" / "lib"
    extract_archive(archive, dest, "src")
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*.*")) == [
        "index.ts",
        "util/x.ts",
    ]
    with pytest.raises(DevSuiteError, match="holds no files under lib"):
        extract_archive(archive, tmp_path / "repos" / "none", "lib")


def _deb(tmp_path: Path, files: dict[str, str]) -> Path:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    tree = tmp_path / "debtree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: golang-demo-dev\nVersion: 1.0-1\nArchitecture: all\n"
        "Maintainer: Nobody <nobody@example.com>\nDescription: demo\n"
    )
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    deb = tmp_path / "golang-demo-dev_1.0-1_all.deb"
    subprocess.run(["dpkg-deb", "--build", str(tree), str(deb)], check=True, capture_output=True)
    return deb


def test_a_debian_package_is_unpacked_into_the_cache_not_installed(tmp_path: Path) -> None:
    root = "usr/share/gocode/src/example.com/demo"
    deb = _deb(tmp_path, {f"{root}/lib/lib.go": GO_LIB, f"{root}/main.go": GO_MAIN})
    cache = tmp_path / "cache"

    def apt(project: Project, dest: Path) -> Path:
        assert project.requirement == "golang-demo-dev=1.0-1"
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(deb, dest / deb.name))

    project = Project("demo", "1.0-1", "go", "deb", "golang-demo-dev", root)
    outputs = fetch(
        cache,
        projects=(project,),
        tasks_per_repo={"go": {"line": 3, "api": 5}},
        downloader=apt,
        log=print,
    )
    assert (cache / "repos" / "demo" / "lib" / "lib.go").read_text() == GO_LIB
    assert not (cache / "repos" / "demo" / "usr").exists()
    api = read_tasks(outputs["go"]["api"])
    # the two calls of lib.Scale, defined in another file; never the comment
    assert sorted(t.ground_truth.strip() for t in api) == [
        "y := lib.Scale(x, 3)",
        "z := lib.Scale(y, 2)",
    ]
    assert all(t.fpath_tuple == ("demo", "main.go") for t in api)
    assert len(read_tasks(outputs["go"]["line"])) == 3


def test_same_pins_and_seed_give_the_same_tasks(tmp_path: Path) -> None:
    pypi = FakePyPI(_sdist(tmp_path / "demo-1.0.tar.gz"))
    made = []
    for cache in (tmp_path / "a", tmp_path / "b"):
        files = fetch(
            cache,
            projects=(Project("demo", "1.0"),),
            tasks_per_repo={"python": {"line": 4, "api": 2}},
            downloader=pypi,
            log=print,
        )["python"]
        made.append([p.read_bytes() for p in files.values()])
    assert made[0] == made[1]


def test_projects_are_pinned_per_language() -> None:
    assert len({p.name for p in PROJECTS}) == len(PROJECTS)
    assert {p.language for p in PROJECTS} == {
        "python",
        "typescript",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
    }
    assert set(DEFAULT_TASKS) == {p.language for p in PROJECTS}
    rxjs = next(p for p in PROJECTS if p.name == "rxjs")
    assert rxjs.requirement == "rxjs@7.8.1" and rxjs.root == "src"
    gin = next(p for p in PROJECTS if p.name == "gin")
    assert gin.requirement == "golang-github-gin-gonic-gin-dev=1.8.1-1"
    assert [p.name for p in select_projects(["go"])] == ["gin", "go-toml"]
    svg = next(p for p in PROJECTS if p.name == "react-native-svg")
    assert (svg.language, svg.requirement) == ("java", "react-native-svg@15.8.0")
    assert [p.name for p in select_projects(["java"])] == ["jpype", "react-native-svg"]
    with pytest.raises(DevSuiteError, match="unknown language 'cobol'"):
        select_projects(["cobol"])


def test_task_counts_are_set_per_language() -> None:
    counts = task_counts(["python", "go"], {"go": {"line": 7, "api": 9}})
    assert counts == {"python": DEFAULT_TASKS["python"], "go": {"line": 7, "api": 9}}
    with pytest.raises(DevSuiteError, match="go api must be at least 1"):
        task_counts(["go"], {"go": {"line": 1, "api": 0}})


def test_an_unknown_source_or_language_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DevSuiteError, match="demo: unknown source 'cvs'"):
        fetch(tmp_path, projects=(Project("demo", "1.0", source="cvs"),), log=print)
    with pytest.raises(DevSuiteError, match="unknown language 'pl1'"):
        fetch(tmp_path, projects=(Project("demo", "1.0", "pl1"),), log=print)


def test_the_held_out_set_shares_no_project_with_the_dev_suite() -> None:
    dev = {p.name for p in PROJECTS} | {p.package for p in PROJECTS if p.package}
    # used while the resolvers were written, before the dev suite had them
    dev |= {"starlette", "petgraph", "regex_syntax"}
    assert not dev & ({p.name for p in HELDOUT} | {p.package for p in HELDOUT if p.package})
    assert {p.language for p in HELDOUT} == {"python", "typescript", "go", "rust", "java", "c"}
    assert [p.name for p in select_projects(["java"], HELDOUT)] == ["gson"]
    assert default_cache("heldout") != default_cache("dev")
    assert SETS["heldout"].tasks == {p.language: {"line": 100, "api": 100} for p in HELDOUT}


def test_the_unseen_set_holds_one_more_project_per_language_that_no_other_set_holds() -> None:
    def names(projects: tuple[Project, ...]) -> set[str]:
        return {p.name for p in projects} | {p.package for p in projects if p.package}

    # measured while the resolvers were written, though in no set
    taken = names(PROJECTS + HELDOUT) | {"starlette", "petgraph", "regex_syntax"}
    assert not (taken | {"@tanstack/query-core"}) & names(UNSEEN)
    languages = ["typescript", "python", "go", "rust", "java", "c", "cpp"]
    assert list(dict.fromkeys(p.language for p in UNSEEN)) == languages
    # TypeScript's tasks are compared across rounds: its projects and counts stay as they were
    assert [p.requirement for p in select_projects(["typescript"], UNSEEN)] == [
        "@tiptap/core@2.9.1",
        "@trpc/server@10.45.2",
    ]
    assert [len(select_projects([lang], UNSEEN)) for lang in languages] == [2, 1, 1, 1, 1, 1, 1]
    assert default_cache("unseen") not in (default_cache("dev"), default_cache("heldout"))
    assert SETS["unseen"].tasks == {lang: {"line": 100, "api": 100} for lang in languages}


def test_the_probe_set_shares_no_project_with_the_other_sets() -> None:
    def names(projects: tuple[Project, ...]) -> set[str]:
        return {p.name for p in projects} | {p.package for p in projects if p.package}

    taken = names(PROJECTS + HELDOUT + UNSEEN) | {"@tanstack/query-core"}
    assert not taken & names(PROBE)
    assert {p.language for p in PROBE} == {"typescript", "c", "rust"}
    # task files are per language: TypeScript's probe tasks are the same as before C joined
    assert [p.requirement for p in select_projects(["typescript"], PROBE)] == [
        "@tanstack/table-core@8.21.3",
        "prosemirror-model@1.25.1",
        "immer@10.1.1",
        "prosemirror-transform@1.10.2",
    ]
    assert [p.requirement for p in select_projects(["rust"], PROBE)] == [
        "librust-bytes-dev=1.2.1-1",
        "librust-petgraph-dev=0.6.2-1",
    ]
    assert {lang: {"line": 100, "api": 100} for lang in ("typescript", "c", "rust")} == PROBE_TASKS
    assert default_cache("probe") not in (
        default_cache("dev"),
        default_cache("heldout"),
        default_cache("unseen"),
    )


def test_the_second_probe_set_is_typescript_in_no_other_set() -> None:
    def names(projects: tuple[Project, ...]) -> set[str]:
        return {p.name for p in projects} | {p.package for p in projects if p.package}

    taken = names(PROJECTS + HELDOUT + UNSEEN + PROBE) | {"@tanstack/query-core"}
    assert not taken & names(PROBE2)
    assert [p.requirement for p in select_projects(["typescript"], PROBE2)] == [
        "reselect@5.1.1",
        "@tanstack/router-core@1.130.0",
        "zod@3.25.76",
    ]
    assert PROBE2_TASKS == {"typescript": {"line": 100, "api": 100}}
    # a cache of its own: the probe set's task files keep their tasks
    assert default_cache("probe2") not in {
        default_cache(name) for name in ("dev", "heldout", "unseen", "probe")
    }


def test_the_third_probe_set_s_typescript_is_in_no_other_set() -> None:
    def names(projects: tuple[Project, ...] | list[Project]) -> set[str]:
        return {p.name for p in projects} | {p.package for p in projects if p.package}

    typescript = select_projects(["typescript"], PROBE3)
    assert not names(PROJECTS + HELDOUT + UNSEEN + PROBE + PROBE2) & names(typescript)
    assert [p.requirement for p in typescript] == [
        "@tanstack/query-core@5.62.0",
        "chevrotain@11.2.0",
    ]
    assert PROBE3_TASKS["typescript"] == {"line": 100, "api": 100}
    # a cache of its own: the other sets' task files keep their tasks
    assert default_cache("probe3") not in {
        default_cache(name) for name in ("dev", "heldout", "unseen", "probe", "probe2")
    }


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_git_project_is_cut_from_a_local_clone_at_its_tag(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    write = {"lib/src/demo/core.py": CORE, "lib/src/demo/app.py": APP, "README": "x\n"}
    for rel, text in write.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    _git("init", "-q", cwd=clone)
    _git("add", ".", cwd=clone)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v1", cwd=clone)
    _git("tag", "demo-1.0", cwd=clone)
    (clone / "lib/src/demo/later.py").write_text("LATER = 1\n")  # after the tag: not taken
    _git("add", ".", cwd=clone)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v2", cwd=clone)
    project = Project("demo", "demo-1.0", "python", "git", "example/demo", "lib/src")
    assert project.requirement == "example/demo@demo-1.0"
    with pytest.raises(DevSuiteError, match=r"pass --git example/demo=GIT_DIR"):
        download(project, tmp_path / "archives")
    cache = tmp_path / "cache"
    fetch(
        cache,
        projects=(project,),
        tasks_per_repo={"python": {"line": 2, "api": 1}},
        downloader=lambda p, dest: download(p, dest, {"example/demo": clone}),
        log=print,
    )
    repo = cache / "repos" / "demo"
    assert sorted(str(f.relative_to(repo)) for f in repo.rglob("*.py")) == [
        "demo/app.py",
        "demo/core.py",
    ]
    missing = Project("demo", "demo-9.9", "python", "git", "example/demo")
    with pytest.raises(DevSuiteError, match=r"could not download example/demo@demo-9\.9"):
        download(missing, tmp_path / "other", {"example/demo": clone})
