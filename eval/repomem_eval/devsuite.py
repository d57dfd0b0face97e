"""``repomem eval devsuite fetch|run``: a development benchmark from pinned, real projects in
several languages.

RepoEval's own repositories are large and fixed; this suite is small enough to run often and
still real. Exact releases make it reproducible: the same pins, seeds and task counts always
give the same repositories and tasks. Python projects are PyPI source distributions;
TypeScript comes from npm packages that ship their ``src/``; Go and Rust from Debian's
source-holding library packages (``golang-*-dev`` keep a module under
``/usr/share/gocode/src``, ``librust-*-dev`` a crate under ``/usr/share/cargo/registry``),
fetched with ``apt-get download`` and unpacked with ``dpkg-deb`` into the cache (nothing is
installed); Java, C and C++ from the sources that PyPI source distributions carry, and Java
also from an npm package that ships its Android sources (react-native-svg). Only each
project's ``root`` folder is kept, so compiled copies (``dist/``) never compete with the
sources.

A second set, ``--set heldout`` (``HELDOUT``), holds projects (one or two per language) that
no resolver was developed on: the same task builder and measures, so its figures say how the
context engine does on code nobody here tuned it for. Its Java project is a public
repository's tagged release (``git`` source): ``git archive`` cuts it from a local clone named
with ``--git OWNER/NAME=GIT_DIR`` (bare or not; nothing is fetched over the network), and once
the archive is in the cache no clone is needed again.

A third set, ``--set unseen`` (``UNSEEN``), is a second check of the same kind: two more
TypeScript packages nobody tuned on (@tiptap/core, @trpc/server), since TypeScript's held-out
figure has the least room, and one more project for each other language (tomlkit, goldmark,
nom, Capacitor's Android core, libyara, the nlohmann JSON library), so that no language's
figure rests on one project; a hundred tasks of each kind per project, and a cache of its own
(``devsuite-unseen``).

A fourth set, ``--set probe`` (``PROBE``), holds the projects resolvers were later tuned on:
TypeScript's (@tanstack/table-core, prosemirror-model, prosemirror-transform, immer), C's
(c-ares, libsodium) and Rust's (bytes, petgraph): a development set like the first, kept apart
so that no project of it is picked as unseen again.

A fifth set, ``--set probe2`` (``PROBE2``), widens TypeScript's tuning data in the styles of
the held-out project that the other sets lack: reselect (a state-management library of
functional modules behind one barrel, ``createX`` factories), @tanstack/router-core (barrels,
``createX`` factories returning object literals, a server folder) and zod (object-literal
APIs built on deep ``export *`` chains, tests calling ``z.string()``); tuned on like
``probe``, in a cache of its own (``devsuite-probe2``) so that ``probe``'s tasks stay as they
were.

A sixth set, ``--set probe3`` (``PROBE3``), holds code of styles no set above has, to keep the
resolvers general, in a cache of its own (``devsuite-probe3``): TypeScript's
@tanstack/query-core (classes that extend a shared base, caches of observers) and chevrotain (a
parser toolkit of classes and mixins); Rust's chrono (dates and times through traits, Datelike
and TimeZone, that generic types implement) and indexmap (a hash map and set generic over keys,
values and hasher, with entry APIs, a core behind them and iterator types); Java's jsoup (an
HTML parser over a DOM of node classes, with its tests) and javapoet (builders).

The cache (default ``$XDG_CACHE_HOME/repomem/devsuite``, else ``~/.cache/repomem/devsuite``;
the held-out sets' ``devsuite-heldout`` and ``devsuite-unseen`` beside it) holds::

    archives/<file>           the downloaded archives (.tar.gz, .tgz, .deb)
    repos/<name>/             each project's sources (the directory to evaluate against)
    tasks/<language>/line.jsonl, api.jsonl   the tasks of each language's projects
    tools/typescript/         the TypeScript compiler (npm), the TypeScript card oracle
    manifest.json             what is done, so a second fetch skips it

``devsuite run --out OUT_DIR`` evaluates methods (default: ``vanilla`` and ``graph``) on it
with ``repomem eval repoeval``'s runner: one run per language and kind in
``OUT_DIR/<language>/<kind>``, the indexes shared in ``OUT_DIR/index``, and every language
side by side in ``OUT_DIR/results.md``; with matplotlib (the ``plot`` extra) the
precision/coverage curves are also drawn in ``OUT_DIR/precision_coverage.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from repomem.errors import RepomemError
from repomem.index.jit import cache_home
from repomem_eval.code_langs import FAMILIES
from repomem_eval.make_benchmark import (
    BUILDER_VERSION,
    DEFAULT_CONTEXT_TOKENS,
    KINDS,
    Kind,
    make_benchmark,
)
from repomem_eval.repoeval import add_run_arguments, run_options
from repomem_eval.tasks import Task, write_tasks

NAME = "devsuite"
HELP = "Download and prepare the development benchmark (pinned releases, several languages)."

SOURCES = ("pypi", "npm", "deb", "git")


@dataclass(frozen=True)
class Project:
    """A pinned release: ``package`` is its name in the ``source`` registry (default
    ``name``; for ``git``, the repository's ``owner/name`` and ``version`` its tag),
    ``root`` the folder of the archive that becomes the repository (default all of it),
    ``language`` the language its tasks are made in."""

    name: str
    version: str
    language: str = "python"
    source: str = "pypi"
    package: str = ""
    root: str = ""

    @property
    def requirement(self) -> str:
        """The pin as the registry's own client spells it."""
        package = self.package or self.name
        separator = {"pypi": "==", "npm": "@", "deb": "=", "git": "@"}[self.source]
        return f"{package}{separator}{self.version}"


_GOCODE = "usr/share/gocode/src/"
_CARGO = "usr/share/cargo/registry/"
PROJECTS: tuple[Project, ...] = (
    Project("requests", "2.32.3"),
    Project("flask", "3.1.0"),
    Project("click", "8.1.8"),
    Project("rich", "13.9.4"),
    Project("httpx", "0.28.1"),
    Project("attrs", "24.3.0"),
    Project("networkx", "3.4.2"),
    Project("rxjs", "7.8.1", "typescript", "npm", root="src"),
    Project("mobx", "6.13.5", "typescript", "npm", root="src"),
    Project(
        "gin", "1.8.1-1", "go", "deb", "golang-github-gin-gonic-gin-dev",
        _GOCODE + "github.com/gin-gonic/gin",
    ),
    Project(
        "go-toml", "2.0.6-1", "go", "deb", "golang-github-pelletier-go-toml.v2-dev",
        _GOCODE + "github.com/pelletier/go-toml/v2",
    ),
    Project(
        "serde_json", "1.0.87-1", "rust", "deb", "librust-serde-json-dev",
        _CARGO + "serde_json-1.0.87",
    ),
    Project(
        "toml_edit", "0.14.4-2", "rust", "deb", "librust-toml-edit-dev",
        _CARGO + "toml_edit-0.14.4",
    ),
    Project("jpype", "1.5.0", "java", "pypi", "JPype1", "native/java"),
    Project("react-native-svg", "15.8.0", "java", "npm", root="android/src/main/java"),
    Project("brotli", "1.1.0", "c", "pypi", "Brotli", "c"),
    Project("psutil", "6.1.0", "c", "pypi", root="psutil"),
    Project("jsonnet", "0.20.0", "cpp", "pypi", root="core"),
)  # fmt: skip
LANGUAGES: tuple[str, ...] = tuple(dict.fromkeys(p.language for p in PROJECTS))
# the TypeScript compiler, whose language service checks the TypeScript cards (card_check)
TYPESCRIPT = Project("typescript", "5.4.5", "typescript", "npm")
SEED = 20240601
# tasks per repository and kind, by language: about a hundred of each kind per language
# (Python's seven projects: 350; Java's second project doubles its count rather than change
# the first one's tasks), so that the whole suite runs in about 20 minutes on 2 cores
DEFAULT_TASKS: dict[str, dict[Kind, int]] = {
    language: {"line": 100, "api": 100}
    if language in ("java", "c", "cpp")
    else {"line": 50, "api": 50}
    for language in LANGUAGES
}
# The held-out set: one project per language (Python two), none of them used while the
# resolvers were written (nor the earlier starlette, petgraph and regex_syntax), so that their
# figures do not flatter the engine. A hundred tasks of each kind per project; Python has two,
# as a source distribution (tests included, as the dev suite's) gives fewer API tasks that
# call another file.
HELDOUT: tuple[Project, ...] = (
    Project("marshmallow", "3.23.1"),
    Project("jinja2", "3.1.4"),
    Project("redux-toolkit", "2.3.0", "typescript", "npm", "@reduxjs/toolkit", "src"),
    Project(
        "cobra", "1.6.1-1", "go", "deb", "golang-github-spf13-cobra-dev",
        _GOCODE + "github.com/spf13/cobra",
    ),
    Project(
        "itertools", "0.10.3-1", "rust", "deb", "librust-itertools-dev",
        _CARGO + "itertools-0.10.3",
    ),
    Project("gson", "gson-parent-2.13.2", "java", "git", "google/gson", "gson/src/main/java"),
    Project("cmark-gfm", "2024.11.20", "c", "pypi", "cmarkgfm", "third_party/cmark"),
)  # fmt: skip
HELDOUT_TASKS: dict[str, dict[Kind, int]] = {p.language: {"line": 100, "api": 100} for p in HELDOUT}
# A second held-out set, so that no language's figure rests on one project: for TypeScript,
# whose held-out margin is the thinnest, two more npm packages that ship their ``src/``, in
# other styles than redux-toolkit's (tiptap's core: classes and interfaces, extensions as
# objects of methods; trpc's server: functional modules behind barrels; @tanstack/query-core
# is not here: it was measured while the resolver was written); for every other language one
# more project, in a style unlike its dev and held-out ones: tomlkit (a document model of
# item classes), goldmark (a Markdown parser split into packages behind interfaces), nom
# (parser combinators: generic functions), Capacitor's Android core (a bridge between a web
# view and its plugins), libyara from yara-python's source distribution (a C engine and its
# modules) and the nlohmann JSON library (header-only C++ templates). Task files are made per
# language, so TypeScript's tasks are the same as before the other languages joined (its
# figures are compared across rounds).
UNSEEN: tuple[Project, ...] = (
    Project("tiptap-core", "2.9.1", "typescript", "npm", "@tiptap/core", "src"),
    Project("trpc-server", "10.45.2", "typescript", "npm", "@trpc/server", "src"),
    Project("tomlkit", "0.13.2"),
    Project(
        "goldmark", "1.5.4-1", "go", "deb", "golang-github-yuin-goldmark-dev",
        _GOCODE + "github.com/yuin/goldmark",
    ),
    Project("nom", "7.1.1-1", "rust", "deb", "librust-nom-dev", _CARGO + "nom-7.1.1"),
    Project(
        "capacitor-android", "5.7.0", "java", "npm", "@capacitor/android",
        "capacitor/src/main/java",
    ),
    Project("libyara", "4.5.1", "c", "pypi", "yara-python", "yara/libyara"),
    Project(
        "nlohmann-json", "3.11.2-2", "cpp", "deb", "nlohmann-json3-dev", "usr/include/nlohmann"
    ),
)  # fmt: skip
UNSEEN_TASKS: dict[str, dict[Kind, int]] = {p.language: {"line": 100, "api": 100} for p in UNSEEN}
# TypeScript projects the TypeScript resolver was tuned on after the sets above, in styles they
# lack: @tanstack/table-core (features merged into one interface, heavy generics),
# prosemirror-model and prosemirror-transform (classes whose methods and getters declare no
# return type), immer (a small functional core); and the C projects the C resolver was tuned
# on, in styles brotli and psutil lack: c-ares from pycares' source distribution (a resolver
# library of many small files, a public header and private ones, ``ares_``/``ares__`` names)
# and libsodium from PyNaCl's (primitives behind implementation structs of function pointers,
# deep include folders); and the Rust projects the Rust resolver was tuned on, in styles
# serde_json and toml_edit lack: bytes (a trait pair, Buf and BufMut, implemented for many
# types; benches and tests beside the library) and petgraph (graph types behind generic trait
# bounds, type aliases, long test files calling one receiver's methods line after line); in no
# other set, so that a project picked as unseen later is not one of these. Task files are per
# language: TypeScript's tasks are the same as before C joined.
PROBE: tuple[Project, ...] = (
    Project("table-core", "8.21.3", "typescript", "npm", "@tanstack/table-core", "src"),
    Project("prosemirror-model", "1.25.1", "typescript", "npm", root="src"),
    Project("immer", "10.1.1", "typescript", "npm", root="src"),
    Project("prosemirror-transform", "1.10.2", "typescript", "npm", root="src"),
    Project("c-ares", "4.5.0", "c", "pypi", "pycares", "deps/c-ares"),
    Project("libsodium", "1.5.0", "c", "pypi", "PyNaCl", "src/libsodium/src/libsodium"),
    Project("bytes", "1.2.1-1", "rust", "deb", "librust-bytes-dev", _CARGO + "bytes-1.2.1"),
    Project(
        "petgraph", "0.6.2-1", "rust", "deb", "librust-petgraph-dev", _CARGO + "petgraph-0.6.2"
    ),
)
PROBE_TASKS: dict[str, dict[Kind, int]] = {p.language: {"line": 100, "api": 100} for p in PROBE}
# More TypeScript to tune on, in the held-out project's styles that no set above has: reselect
# (functional modules behind a barrel, ``createX`` factories, as in a redux toolkit), the
# TanStack router's core (barrels, factories returning object literals) and zod (object-literal
# APIs and deep ``export *`` chains); a set of its own, so that ``probe``'s tasks do not move.
PROBE2: tuple[Project, ...] = (
    Project("reselect", "5.1.1", "typescript", "npm", root="src"),
    Project("router-core", "1.130.0", "typescript", "npm", "@tanstack/router-core", "src"),
    Project("zod", "3.25.76", "typescript", "npm", root="src"),
)
PROBE2_TASKS: dict[str, dict[Kind, int]] = {p.language: {"line": 100, "api": 100} for p in PROBE2}
# Styles no set above has, to keep the resolvers general (TypeScript: class hierarchies with
# shared bases, a parser toolkit built of mixins; Rust: traits that generic types implement, a
# generic map over a core; Java: a DOM of node classes, builders).
PROBE3: tuple[Project, ...] = (
    Project("query-core", "5.62.0", "typescript", "npm", "@tanstack/query-core", "src"),
    Project("chevrotain", "11.2.0", "typescript", "npm", root="src"),
    Project("chrono", "0.4.23-2", "rust", "deb", "librust-chrono-dev", _CARGO + "chrono-0.4.23"),
    Project(
        "indexmap", "1.9.2-1", "rust", "deb", "librust-indexmap-dev", _CARGO + "indexmap-1.9.2"
    ),
    Project("jsoup", "jsoup-1.22.2", "java", "git", "jhy/jsoup", "src"),
    Project("javapoet", "javapoet-1.13.0", "java", "git", "square/javapoet", "src"),
)
PROBE3_TASKS: dict[str, dict[Kind, int]] = {p.language: {"line": 100, "api": 100} for p in PROBE3}


@dataclass(frozen=True)
class ProjectSet:
    """A set of projects ``devsuite`` fetches and runs, with its task counts per language and
    the name of its default cache folder (each set has its own: their task files share
    names)."""

    projects: tuple[Project, ...]
    tasks: Mapping[str, Mapping[Kind, int]]
    cache_name: str


SETS: dict[str, ProjectSet] = {
    "dev": ProjectSet(PROJECTS, DEFAULT_TASKS, "devsuite"),
    "heldout": ProjectSet(HELDOUT, HELDOUT_TASKS, "devsuite-heldout"),
    "unseen": ProjectSet(UNSEEN, UNSEEN_TASKS, "devsuite-unseen"),
    "probe": ProjectSet(PROBE, PROBE_TASKS, "devsuite-probe"),
    "probe2": ProjectSet(PROBE2, PROBE2_TASKS, "devsuite-probe2"),
    "probe3": ProjectSet(PROBE3, PROBE3_TASKS, "devsuite-probe3"),
}
# the methods `devsuite run` compares unless told otherwise: plain BM25 and the context engine
DEFAULT_METHODS = ("vanilla", "graph")
_MANIFEST = "manifest.json"
PLOT_FILE = "precision_coverage.png"

Downloader = Callable[[Project, Path], Path]
Log = Callable[[str], None]


class DevSuiteError(RepomemError):
    """The development suite cannot be downloaded or unpacked."""


def default_cache(project_set: str = "dev") -> Path:
    return cache_home() / SETS[project_set].cache_name


def _run_client(cmd: list[str], project: Project, registry: str, cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd)
    except FileNotFoundError as exc:
        raise DevSuiteError(
            f"cannot download {project.requirement}: {cmd[0]} is not installed"
        ) from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise DevSuiteError(
            f"could not download {project.requirement} from {registry} ({cmd[0]} exited with "
            f"{proc.returncode}); check the network connection or proxy settings.\n{tail}"
        )


def download(project: Project, dest: Path, git_dirs: Mapping[str, Path] | None = None) -> Path:
    """Download the project's archive with its registry's own client into ``dest``: ``pip
    download`` (a source distribution), ``npm pack`` or ``apt-get download``; or, for a
    ``git`` project, ``git archive`` of its tag from the local clone ``git_dirs`` names for
    it. Returns the archive's path."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".download-") as tmp:
        if project.source == "git":
            clone = (git_dirs or {}).get(project.package)
            if clone is None:
                raise DevSuiteError(
                    f"{project.name} is cut from a clone of {project.package}: pass"
                    f" --git {project.package}=GIT_DIR (a local clone holding tag"
                    f" {project.version})"
                )
            top = f"{project.name}-{project.version}"
            cmd = [
                "git", "-C", str(clone), "archive", "--format=tar.gz", f"--prefix={top}/",
                "-o", str(Path(tmp) / f"{top}.tar.gz"), f"refs/tags/{project.version}",
            ]  # fmt: skip
            suffix, registry = ".tar.gz", str(clone)
        elif project.source == "pypi":
            # -P: the interpreter's pip, never a folder named pip in the working directory
            cmd = [
                sys.executable, "-P", "-m", "pip", "download", "--no-deps", "--no-binary",
                ":all:", "--disable-pip-version-check", "--dest", tmp, project.requirement,
            ]  # fmt: skip
            suffix, registry = ".tar.gz", "PyPI"
        elif project.source == "npm":
            cmd = ["npm", "pack", "--silent", "--pack-destination", tmp, project.requirement]
            suffix, registry = ".tgz", "npm"
        elif project.source == "deb":
            cmd = ["apt-get", "download", project.requirement]
            suffix, registry = ".deb", "the Debian archive"
        else:
            raise DevSuiteError(f"{project.name}: unknown source {project.source!r}")
        _run_client(cmd, project, registry, Path(tmp))
        archives = [p for p in Path(tmp).iterdir() if p.name.endswith(suffix)]
        if len(archives) != 1:
            raise DevSuiteError(f"no single {suffix} archive of {project.requirement} in {tmp}")
        target = dest / archives[0].name
        os.replace(archives[0], target)
    return target


def _member_path(name: str, *, strip_top: bool) -> PurePosixPath | None:
    """The member's path below the archive's top directory (``strip_top``, as in source
    archives) or below its root (Debian packages' ``./``); None for the top itself.

    Raises for absolute paths and ``..``: a crafted archive must not write outside its target.
    """
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts:
        raise ValueError(f"unsafe member path {name!r}")
    kept = parts[1:] if strip_top else parts
    return PurePosixPath(*kept) if kept else None


@contextlib.contextmanager
def _open_tar(archive: Path) -> Iterator[tarfile.TarFile]:
    """A ``.tar.gz``/``.tgz`` archive, or the file tree of a ``.deb`` read through
    ``dpkg-deb --fsys-tarfile`` (streamed: the package is never installed)."""
    if archive.suffix != ".deb":
        with tarfile.open(archive, "r:gz") as tar:
            yield tar
        return
    try:
        proc = subprocess.Popen(
            ["dpkg-deb", "--fsys-tarfile", str(archive)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except FileNotFoundError as exc:
        raise OSError("dpkg-deb is not installed") from exc
    stdout: IO[bytes] = proc.stdout  # type: ignore[assignment]
    try:
        with tarfile.open(fileobj=stdout, mode="r|") as tar:
            yield tar
    finally:
        stdout.close()
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.wait() != 0:
            raise OSError(f"dpkg-deb failed: {err.strip()}")


def extract_archive(archive: Path, dest: Path, root: str = "") -> None:
    """Unpack the folder ``root`` of ``archive`` (a source ``.tar.gz``/``.tgz`` below its top
    directory, or a ``.deb``'s file tree) into ``dest``, replacing it.

    Only regular files and directories are written; links and devices are skipped. ``dest``
    appears only once complete, so an interrupted fetch never leaves half a repository.
    """
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    prefix = PurePosixPath(root) if root else None
    written = 0
    try:
        with _open_tar(archive) as tar:
            for member in tar:
                rel = _member_path(member.name, strip_top=archive.suffix != ".deb")
                if rel is None or not (member.isfile() or member.isdir()):
                    continue
                if prefix is not None:
                    if not rel.is_relative_to(prefix) or rel == prefix:
                        continue
                    rel = rel.relative_to(prefix)
                target = partial / rel
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                if source is None:
                    continue
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                written += 1
    except (OSError, tarfile.TarError, ValueError, EOFError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise DevSuiteError(f"cannot unpack {archive}: {exc}") from exc
    if not written:
        shutil.rmtree(partial, ignore_errors=True)
        raise DevSuiteError(f"{archive} holds no files under {root or 'its top directory'}")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(partial, dest)


def _load_manifest(cache: Path) -> dict[str, Any]:
    path = cache / _MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_manifest(cache: Path, manifest: dict[str, Any]) -> None:
    path = cache / _MANIFEST
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _fetch_into(
    project: Project,
    dest: Path,
    cache: Path,
    manifest: dict[str, Any],
    downloader: Downloader,
    log: Log,
) -> None:
    """Download (unless the archive is cached) and unpack ``project`` into ``dest``, unless
    the manifest says ``dest`` already holds this pin and root."""
    done = manifest.setdefault("unpacked", {})
    key = str(dest.relative_to(cache))
    wanted = {"pin": project.requirement, "root": project.root}
    if done.get(key) == wanted and dest.is_dir():
        log(f"{project.requirement}: already prepared")
        return
    archives = manifest.setdefault("archives", {})
    known = archives.get(project.name, {})
    archive = cache / "archives" / str(known.get("file", ""))
    if known.get("pin") != project.requirement or not archive.is_file():
        log(f"{project.requirement}: downloading")
        archive = downloader(project, cache / "archives")
        archives[project.name] = {"pin": project.requirement, "file": archive.name}
        _save_manifest(cache, manifest)
    log(f"{project.requirement}: unpacking {project.root or 'all'} into {dest}")
    extract_archive(archive, dest, project.root)
    done[key] = wanted
    _save_manifest(cache, manifest)


def select_projects(
    languages: Sequence[str] | None, projects: Sequence[Project] = PROJECTS
) -> list[Project]:
    """The projects of ``languages`` (all when None); an unknown language is an error."""
    if languages is None:
        return list(projects)
    known = dict.fromkeys(p.language for p in projects)
    unknown = [lang for lang in languages if lang not in known]
    if unknown:
        raise DevSuiteError(f"unknown language {unknown[0]!r}: the suite has {', '.join(known)}")
    return [p for p in projects if p.language in languages]


def task_counts(
    languages: Sequence[str],
    overrides: Mapping[str, Mapping[Kind, int]] | None = None,
    defaults: Mapping[str, Mapping[Kind, int]] = DEFAULT_TASKS,
) -> dict[str, dict[Kind, int]]:
    """Tasks per repository and kind for each language: ``defaults`` with ``overrides``."""
    counts: dict[str, dict[Kind, int]] = {}
    for language in languages:
        counts[language] = {
            **defaults.get(language, {"line": 100, "api": 100}),
            **(overrides or {}).get(language, {}),
        }
        for kind, n in counts[language].items():
            if n < 1:
                raise DevSuiteError(
                    f"tasks per repository for {language} {kind} must be at least 1, got {n}"
                )
    return counts


def task_file(cache: Path, language: str, kind: Kind) -> Path:
    return cache / "tasks" / language / f"{kind}.jsonl"


def fetch(
    cache: Path,
    *,
    projects: Sequence[Project] = PROJECTS,
    tasks_per_repo: Mapping[str, Mapping[Kind, int]] | None = None,
    downloader: Downloader = download,
    oracle: bool = True,
    log: Log = print,
    default_tasks: Mapping[str, Mapping[Kind, int]] = DEFAULT_TASKS,
) -> dict[str, dict[Kind, Path]]:
    """Make sure every project is unpacked and every task file is current; returns the task
    files by language and kind. ``tasks_per_repo`` overrides ``default_tasks`` per language;
    ``oracle`` also fetches the TypeScript compiler when a TypeScript project is selected.
    Steps already done with the same pins and settings are skipped."""
    languages = list(dict.fromkeys(p.language for p in projects))
    unknown = [lang for lang in languages if lang not in FAMILIES]
    if unknown:
        raise DevSuiteError(f"unknown language {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    for project in projects:
        if project.source not in SOURCES:
            raise DevSuiteError(
                f"{project.name}: unknown source {project.source!r}; choose from"
                f" {', '.join(SOURCES)}"
            )
    counts = task_counts(languages, tasks_per_repo, default_tasks)
    cache = Path(cache).expanduser()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DevSuiteError(f"cannot create cache directory {cache}: {exc}") from exc
    manifest = _load_manifest(cache)
    for project in projects:
        _fetch_into(project, cache / "repos" / project.name, cache, manifest, downloader, log)
    if oracle and "typescript" in languages:
        _fetch_into(TYPESCRIPT, typescript_dir(cache), cache, manifest, downloader, log)
    outputs: dict[str, dict[Kind, Path]] = {}
    for language in languages:
        chosen = [p for p in projects if p.language == language]
        for kind in KINDS:
            out = task_file(cache, language, kind)
            outputs.setdefault(language, {})[kind] = out
            spec = {
                "n": counts[language][kind],
                "seed": SEED,
                "context_tokens": DEFAULT_CONTEXT_TOKENS,
                "builder": BUILDER_VERSION,
                "repos": {p.name: p.requirement for p in chosen},
            }
            key = f"{language}/{kind}"
            if manifest.get("tasks", {}).get(key) == spec and out.is_file():
                log(f"{out}: up to date")
                continue
            tasks: list[Task] = []
            for project in chosen:
                made = make_benchmark(
                    cache / "repos" / project.name,
                    kind,
                    counts[language][kind],
                    SEED,
                    repo_name=project.name,
                    language=language,
                )
                log(f"{project.name}: {len(made)} {kind} tasks")
                tasks.extend(made)
            write_tasks(out, tasks)
            manifest.setdefault("tasks", {})[key] = spec
            _save_manifest(cache, manifest)
            log(f"{out}: {len(tasks)} tasks")
    return outputs


def typescript_dir(cache: Path) -> Path:
    """Where ``fetch`` unpacks the TypeScript compiler (``lib/typescript.js``)."""
    return Path(cache).expanduser() / "tools" / "typescript"


def _languages(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def _git_dir(text: str) -> tuple[str, Path]:
    """``OWNER/NAME=GIT_DIR`` (a local clone of a ``git`` project) from the command line."""
    repo, sep, path = text.partition("=")
    if not sep or not repo.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected OWNER/NAME=GIT_DIR, got {text!r}")
    return repo.strip(), Path(path.strip()).expanduser()


def _task_override(text: str) -> tuple[str, dict[Kind, int]]:
    """``LANG=LINE,API`` (tasks per repository) from the command line."""
    try:
        language, counts = text.split("=", 1)
        line, api = (int(n) for n in counts.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LANGUAGE=LINE,API, got {text!r}") from None
    return language.strip(), {"line": line, "api": api}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="devsuite_command", required=True, metavar="ACTION")
    languages = f"comma-separated languages to prepare or run (default all: {', '.join(LANGUAGES)})"
    project_set = (
        "which projects: dev (the suite the engine was developed on, default), heldout"
        " (projects of each language that nobody tuned on), unseen (more projects nobody"
        " tuned on: TypeScript two, the other languages one each), probe (TypeScript"
        " and C projects the resolvers were tuned on later), probe2 (more TypeScript"
        " projects to tune on) or probe3 (projects of styles no other set has)"
    )
    cache = (
        f"cache directory ({default_cache()}; heldout: {default_cache('heldout')};"
        f" unseen: {default_cache('unseen')}; probe: {default_cache('probe')};"
        f" probe2: {default_cache('probe2')}; probe3: {default_cache('probe3')})"
    )
    summary = "Download, unpack and build the task files; steps already done are skipped."
    p = sub.add_parser("fetch", help=summary, description=summary)
    p.add_argument("--set", choices=tuple(SETS), default="dev", help=project_set)
    p.add_argument("--cache", type=Path, default=None, help=cache)
    p.add_argument("--languages", help=languages)
    p.add_argument(
        "--git",
        type=_git_dir,
        action="append",
        default=[],
        metavar="OWNER/NAME=GIT_DIR",
        help="a local clone of a project the set takes from a public repository, repeatable",
    )
    p.add_argument(
        "--tasks",
        type=_task_override,
        action="append",
        default=[],
        metavar="LANG=LINE,API",
        help="line and API tasks per repository for one language, repeatable (default: "
        + "; ".join(f"{lang} {c['line']},{c['api']}" for lang, c in DEFAULT_TASKS.items())
        + ")",
    )
    p.add_argument(
        "--no-oracle",
        action="store_true",
        help="do not fetch the TypeScript compiler that checks TypeScript cards",
    )
    p.set_defaults(_devsuite_run=_run_fetch)

    summary = "Evaluate methods on the fetched suite and write the comparison table."
    r = sub.add_parser("run", help=summary, description=summary)
    r.add_argument("--set", choices=tuple(SETS), default="dev", help=project_set)
    r.add_argument("--cache", type=Path, default=None, help=cache)
    r.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
    r.add_argument("--languages", help=languages)
    r.add_argument(
        "--kind", choices=(*KINDS, "both"), default="both", help="task kind (default both)"
    )
    r.add_argument("--limit-per-repo", type=int, help="only the first N tasks per repository")
    add_run_arguments(r, " and ".join(DEFAULT_METHODS))
    r.set_defaults(_devsuite_run=_run_suite)


def run(args: argparse.Namespace) -> int:
    return int(args._devsuite_run(args))


def _run_fetch(args: argparse.Namespace) -> int:
    chosen = SETS[args.set]
    cache = args.cache or default_cache(args.set)
    projects = select_projects(_languages(args.languages), chosen.projects)
    git_dirs = dict(args.git)
    outputs = fetch(
        cache,
        projects=projects,
        tasks_per_repo=dict(args.tasks),
        downloader=lambda project, dest: download(project, dest, git_dirs),
        oracle=not args.no_oracle,
        default_tasks=chosen.tasks,
    )
    print(f"repositories: {Path(cache).expanduser() / 'repos'}")
    for language, files in outputs.items():
        for kind, path in files.items():
            print(f"{language} {kind} tasks: {path}")
    return 0


def prepared_suite(
    cache: Path, languages: Sequence[str], kinds: Sequence[Kind]
) -> tuple[Path, dict[str, dict[Kind, Path]]]:
    """The fetched repositories and task files; an error says to fetch when any is missing."""
    cache = Path(cache).expanduser()
    repos = cache / "repos"
    tasks = {lang: {kind: task_file(cache, lang, kind) for kind in kinds} for lang in languages}
    paths = [p for files in tasks.values() for p in files.values()]
    missing = [p for p in (repos, *paths) if not p.exists()]
    if missing:
        raise DevSuiteError(
            f"the development suite is not prepared in {cache} ({missing[0]} is missing):"
            " run `repomem eval devsuite fetch` (with the same --set and --cache) first"
        )
    return repos, tasks


def _run_suite(args: argparse.Namespace) -> int:
    import dataclasses

    from repomem_eval.compare import Run, curve_plot, curve_table
    from repomem_eval.runner import run_repoeval

    kinds: tuple[Kind, ...] = KINDS if args.kind == "both" else (args.kind,)
    cache = Path(args.cache or default_cache(args.set)).expanduser()
    chosen = select_projects(_languages(args.languages), SETS[args.set].projects)
    languages = list(dict.fromkeys(p.language for p in chosen))
    repos, task_files = prepared_suite(cache, languages, kinds)
    if args.index_cache is None:
        args.index_cache = args.out / "index"
    if not args.method:
        args.method = list(DEFAULT_METHODS)
    typescript = typescript_dir(cache)
    runs: list[tuple[str, Run]] = []
    for language in languages:
        for kind in kinds:
            options = run_options(
                args,
                tasks=task_files[language][kind],
                repos=repos,
                out=args.out / language / kind,
                mode=kind,
                limit_per_repo=args.limit_per_repo,
            )
            options = dataclasses.replace(
                options, typescript=typescript if typescript.is_dir() else None
            )
            data = run_repoeval(options)
            runs.append((language, Run(f"{language} {kind}", data["methods"], data["config"])))
    table = "\n".join(["# Development suite", "", language_table(runs), "", CARD_NOTE, ""])
    curve = curve_table([run for _, run in runs])
    if curve:
        table += f"\n## Precision and coverage by confidence threshold\n\n{curve}\n"
    (args.out / "results.md").write_text(table, encoding="utf-8")
    print(table)
    plotted = curve_plot([run for _, run in runs], args.out / PLOT_FILE)
    if plotted:
        print(plotted, file=sys.stderr)
    return 0


CARD_NOTE = (
    "def@prompt, use@prompt and def@10 count the tasks whose answer calls a definition in"
    " another file (ctx n); wrong cards: % of the cards whose verdict could be decided"
    " (`card_check`: decided of shown in brackets); answered / EM answered: tasks whose"
    " confidence reaches completion.min_confidence, and EM among them."
)


def language_table(runs: Sequence[tuple[str, Any]]) -> str:
    """One row per language, kind and method: the measures of ``results.json`` that compare
    the methods and languages."""

    def fmt(value: float | None, digits: int = 1) -> str:
        return "–" if value is None else f"{value:.{digits}f}"

    header = [
        "language", "kind", "method", "n", "ctx n", "def@prompt", "use@prompt", "def@10",
        "hit@k", "EM", "ES", "wrong cards", "answered", "EM answered",
    ]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * 11) + "|"]
    for language, run in runs:
        kind = run.label.split()[-1]
        for method, result in run.methods.items():
            s = result["overall"]
            wrong = (
                "–"
                if s.get("wrong_cards") is None
                else f"{s['wrong_cards']:.1f} ({s['cards_decided']}/{s['cards_shown']})"
            )
            cells = [
                language, kind, method, str(s["n"]), str(s.get("context_n", "–")),
                fmt(s.get("def_prompt")), fmt(s.get("use_prompt")), fmt(s.get("def_at_10")),
                fmt(s.get("hit_at_k")), fmt(s.get("em"), 2), fmt(s.get("es"), 2), wrong,
                fmt(s.get("coverage")), fmt(s.get("precision")),
            ]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
