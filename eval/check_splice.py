"""Spliced parses against full parses, over random edits of real Python files.

Each file gets a chain of edits (statements and comments typed at a row's own indentation,
snippets that break the syntax or join lines, deleted blocks, swapped lines, a changed
character); after each one the parse that reuses the previous one must equal a parse of the
whole new text. Usage:

    python eval/check_splice.py [--root DIR] [--files 300] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import time
from pathlib import Path

from repomem.index import splice
from repomem.index.parsing import ParsedFile, parse_source

VALID = [
    "def added(x):\n    return helper(x)",
    "v = call(a, b)",
    "# c",
    "import json",
    "class Q:\n    def m(self):\n        return self.z()",
    "",
    "pass",
    "@d\ndef h():\n    pass",
]
ANY = [
    "def added(x):\n    return helper(x)\n",
    "class K(Base):\n    def m(self):\n        return self.n()\n",
    "# a comment",
    "    # indented comment",
    "import os.path as osp",
    "from . import thing",
    "else:\n    pass",
    "@decorator",
    "x = (1,",
    "    y = 2",
    "if x:\n    f()\nelif y:\n    g()\n",
    "try:\n    a()\nexcept E:\n    b()\n",
    "'''doc",
    "\\",
    "class Dup:\n    pass",
    "def f(:",
    "\t",
    "x = 1; y = 2",
    "x = f(1) \\",
    "with a as b, \\",
    "    c()  \\",
    "    b,",
    "async def co():\n    await z()\n",
]


def fields(pf: ParsedFile) -> tuple:
    arrays = (pf.line_len, pf.node_start, pf.node_end, pf.node_parent, pf.line_owner)
    lists = (pf.definitions, pf.calls, pf.imports, pf.import_nodes, pf.bases)
    return (*(a.tolist() for a in arrays), pf.has_error, *lists)


def edit(lines: list[str], rng: random.Random) -> list[str]:
    lines = list(lines)
    row = rng.randrange(len(lines) + 1)
    here = lines[row] if row < len(lines) else ""
    indent = here[: len(here) - len(here.lstrip())]
    kind = rng.randrange(7)
    if kind >= 5:
        lines[row:row] = [indent + x for x in rng.choice(VALID).split("\n")]
    elif kind == 0:
        lines[row:row] = rng.choice(ANY).split("\n")
    elif kind == 1:
        del lines[row : row + rng.randrange(1, 30)]
    elif kind == 2 and row < len(lines):
        cut = rng.randrange(len(here) + 1)
        typed = rng.choice(["(", ")", "x", " ", ":", "'", ""])
        lines[row] = here[:cut] + typed + here[cut + rng.randrange(2) :]
    elif kind == 3:
        lines += rng.choice(ANY).split("\n")
    elif row < len(lines):
        other = rng.randrange(len(lines))
        lines[row], lines[other] = lines[other], lines[row]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--edits", type=int, default=6, help="edits per file")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    paths = sorted(p for p in args.root.rglob("*.py") if "site-packages" not in p.parts)
    joined = [0]
    join = splice.join

    def counting(*a: object) -> ParsedFile | None:
        out = join(*a)  # type: ignore[arg-type]
        joined[0] += out is not None
        return out

    splice.join = counting  # type: ignore[assignment]
    n = differ = 0
    t_splice = t_full = 0.0
    for _ in range(args.files):
        path = rng.choice(paths)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = str(path.relative_to(args.root))
        parsed = parse_source(rel, "python", text, "d")
        for _ in range(args.edits):
            new = "\n".join(edit(text.split("\n"), rng))
            t = time.perf_counter()
            got = parse_source(rel, "python", new, "d", previous=(text, parsed))
            t_splice += time.perf_counter() - t
            t = time.perf_counter()
            want = parse_source(rel, "python", new, "d")
            t_full += time.perf_counter() - t
            n += 1
            if fields(got) != fields(want):
                differ += 1
                print(f"differs: {rel} after {n} edits", file=sys.stderr)
            if got.has_error and rng.random() < 0.7:
                continue  # mostly go on from a text without errors
            text, parsed = new, got
    print(
        f"{n} edits, {joined[0]} spliced, {differ} differ from a full parse; "
        f"{t_splice:.1f} s with splicing, {t_full:.1f} s parsing whole files"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
