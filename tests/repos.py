"""Small fixture repositories written into a temporary directory by the tests."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import git

from repomem.index.parsing import ParsedFile, parse_source
from repomem.index.repo import RepoIndex

PY_FILES: dict[str, str] = {
    "pkg/__init__.py": "from .util import helper\n",
    "pkg/util.py": """\
import os


def helper(x):
    total = x + 1
    return total * 2


class Base:
    def run(self):
        return helper(3)

    def name(self):
        return os.path.basename(__file__)
""",
    "pkg/core.py": """\
import pkg.util as u
from pkg.util import Base, helper


class Core(Base):
    def go(self):
        self.run()
        value = helper(1)
        other = u.helper(2)
        made = Base()
        print(value, other, made)
        return value


def build():
    return Core()
""",
    "pkg/sub/__init__.py": "",
    "pkg/sub/mod.py": """\
from ..util import helper


def compute(items):
    out = []
    for item in items:
        if item:
            out.append(helper(item))
        else:
            out.append(None)
    return out
""",
}

OTHER_LANG_FILES: dict[str, str] = {
    "web/app.js": ("function callee() { return 1; }\nfunction caller() {\n  return callee();\n}\n"),
    "web/types.ts": (
        "function tsCallee(): number { return 2; }\n"
        "export function tsCaller() {\n  return tsCallee();\n}\n"
    ),
    "go/main.go": (
        "package main\n\nfunc goCallee() int { return 1 }\n\nfunc main() {\n\tgoCallee()\n}\n"
    ),
    "rs/lib.rs": "fn rs_callee() -> i32 { 1 }\n\nfn rs_caller() -> i32 {\n    rs_callee()\n}\n",
    "java/App.java": (
        "class App {\n  int javaCallee() { return 1; }\n"
        "  int javaCaller() {\n    return javaCallee();\n  }\n}\n"
    ),
    "c/lib.c": "\n".join(
        [
            "int c_callee(void) { return 1; }",
            "",
            "int c_caller(void) {",
            "    return c_callee();",
            "}",
            "",
        ]
    ),
    "cpp/lib.cpp": "\n".join(
        [
            "int cpp_callee() { return 1; }",
            "",
            "int cpp_caller() {",
            "    return cpp_callee();",
            "}",
            "",
        ]
    ),
}


def long_module(n_funcs: int = 12) -> str:
    """A module long enough for many windows, with calls between its functions."""
    parts = []
    for i in range(n_funcs):
        callee = f"func_{i - 1}(value)" if i else "value"
        parts.append(
            f"def func_{i}(value):\n"
            f"    result = {callee}\n"
            f"    if result > {i}:\n"
            f"        result -= {i}\n"
            f"    return result\n"
        )
    return "\n\n".join(parts)


def parsed_fields(pf: ParsedFile) -> tuple:
    """Everything a parse holds, comparable with ``==``."""
    arrays = (
        pf.line_len,
        pf.node_start,
        pf.node_end,
        pf.node_parent,
        pf.line_owner,
        pf.node_head,
        pf.class_methods,
    )
    lists = (pf.definitions, pf.calls, pf.imports, pf.import_nodes, pf.bases)
    return (*(a.tolist() for a in arrays), pf.has_error, *lists)


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def make_repo(root: Path, files: dict[str, str] | None = None, *, use_git: bool = True) -> Path:
    """A repository with the Python fixture package (and ``files`` on top)."""
    root.mkdir(parents=True, exist_ok=True)
    write_files(root, {**PY_FILES, "pkg/long.py": long_module(), **(files or {})})
    if use_git:
        repo = git.Repo.init(root)
        with repo.config_writer() as cw:
            cw.set_value("user", "name", "Fixture")
            cw.set_value("user", "email", "fixture@example.com")
        (root / ".gitignore").write_text(".repomem/\n")
        repo.git.add(all=True)
        repo.index.commit("fixture")
    return root


def saved_and_fresh_parses(
    root: Path, source: str, edits: list[str]
) -> Iterator[tuple[ParsedFile, ParsedFile, bool]]:
    """A Python module ``m.py`` of ``source`` (beside the fixture package) indexed and loaded:
    the saved parse of ``m.py`` and of ``pkg/core.py`` with a fresh parse of its text, then,
    ``m.py`` updated to each of ``edits`` in turn (spliced or parsed whole), the index's parse
    with a fresh parse of the edit; the third value says whether it is an edit's."""
    make_repo(root, {"m.py": source}, use_git=False)
    RepoIndex.build(root)
    index = RepoIndex.load(root)

    def fresh(path: str, text: str) -> ParsedFile:
        return parse_source(path, "python", text, "d")

    for path in ("m.py", "pkg/core.py"):
        text = index.file_text(path)
        saved = index.parse(path)
        assert text is not None and saved is not None
        yield saved, fresh(path, text), False
    for text in edits:
        index.update_file("m.py", text)
        saved = index.parse("m.py")
        assert saved is not None
        yield saved, fresh("m.py", text), True


def run_repomem(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``repomem ARGS`` as a user runs it: a subprocess of this interpreter, output captured.
    ``env`` is the whole environment (default: this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "repomem.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


SUBJECT_TS = """\
import { Observer } from './types';
import { Subscription } from './Subscription';

export class Subject<T> {
  observers: Observer<T>[] = [];
  isStopped = false;
  hasError = false;
  thrownError: any = null;

  next(value: T) {
    if (!this.isStopped) {
      const copy = this.observers.slice();
      for (const observer of copy) {
        observer.next(value);
      }
    }
  }

  error(err: any) {
    if (!this.isStopped) {
      this.hasError = this.isStopped = true;
      this.thrownError = err;
      const { observers } = this;
      while (observers.length) {
        observers.shift()!.error(err);
      }
    }
  }

  complete() {
    if (!this.isStopped) {
      this.isStopped = true;
      const { observers } = this;
      while (observers.length) {
        observers.shift()!.complete();
      }
    }
  }

  subscribe(observer: Observer<T>): Subscription {
    this.observers.push(observer);
    return new Subscription(() => this.unsubscribeObserver(observer));
  }

  unsubscribeObserver(observer: Observer<T>) {
    const index = this.observers.indexOf(observer);
    if (index >= 0) {
      this.observers.splice(index, 1);
    }
  }
}
"""

SUBJECT_JS = (
    SUBJECT_TS.replace("<T>", "").replace(": any", "").replace(": Observer[]", "")
    + "//# sourceMappingURL=Subject.js.map\n"
)

REPLAY_SUBJECT_TS = """\
import { Subject } from './Subject';
import { Observer } from './types';

export class ReplaySubject<T> extends Subject<T> {
  buffer: T[] = [];

  next(value: T) {
    this.buffer.push(value);
    super.next(value);
  }

  replayTo(observer: Observer<T>) {
    for (const value of this.buffer) {
      observer.next(value);
    }
    if (this.hasError) {
      observer.error(this.thrownError);
    } else if (this.isStopped) {
      observer.complete();
    }
  }
}
"""

# A published TypeScript package (no .gitignore: it is a tarball) with its compiled copies, and
# the ways build output shows itself; the comments say what each file is.
BUILD_OUTPUT_TREE: dict[str, str] = {
    "src/internal/Subject.ts": SUBJECT_TS,  # source
    "src/internal/ReplaySubject.ts": REPLAY_SUBJECT_TS,  # source
    "dist/esm/internal/Subject.js": SUBJECT_JS,  # output: under dist/
    "dist/esm/internal/Subject.js.map": '{"version":3,"file":"Subject.js","sources":[]}\n',
    "dist/types/internal/Subject.d.ts": "export declare class Subject<T> {}\n",
    "lib/bundle.js": "var bundled = 1;\n//# sourceMappingURL=bundle.js.map\n",  # trailer
    "lib/legacy.js": "var legacy = 1;\n",  # output: its source map lies beside it
    "lib/legacy.js.map": '{"version":3,"file":"legacy.js","sources":[]}\n',
    "web/widget.ts": "export const widget = (n: number) => n + 1;\n",  # source
    "web/widget.js": "export const widget = (n) => n + 1;\n",  # output: beside its .ts
    "web/widget.d.ts": "export declare const widget: (n: number) => number;\n",  # output
    "web/plain.js": "export function plain() { return 1; }\n",  # source: no .ts of its name
    "web/plain.d.ts": "export declare function plain(): number;\n",  # source, hand-written
    "vendor/app.min.js": "var a=1;\n",  # minified, as before
    "node_modules/left-pad/index.js": "module.exports = leftPad;\n",  # installed package
    "src/build/__init__.py": "from .env import isolated\n",  # Python package named `build`
    "src/build/env.py": "def isolated():\n    return True\n",
    "build/lib/build/env.py": "def isolated():\n    return True\n",  # setuptools output
}

BUILD_OUTPUT_SKIPPED = [
    "build/lib/build/env.py",
    "dist/esm/internal/Subject.js",
    "dist/esm/internal/Subject.js.map",
    "dist/types/internal/Subject.d.ts",
    "lib/bundle.js",
    "lib/legacy.js",
    "lib/legacy.js.map",
    "node_modules/left-pad/index.js",
    "web/widget.d.ts",
    "web/widget.js",
]


def free_port() -> int:
    """A loopback port nothing listens on now: for a server to start on, or to be refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
