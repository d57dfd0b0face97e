"""Spliced parses against full parses, over random edits of real Python, C or C++ files.

Each file gets a chain of edits (statements and comments typed at a row's own indentation,
snippets that break the syntax, open a comment, an ``#if`` group, a namespace or a raw string,
or join lines, deleted blocks, swapped lines, a changed character); after each one the parse
that reuses the previous one must equal a parse of the whole new text. The files are only
read. Usage:

    python eval/check_splice.py [--root DIR] [--files 300] [--seed 0]
    python eval/check_splice.py --language c --root KERNEL [--min-lines 3000]
    python eval/check_splice.py --language cpp --root LLAMA_CPP
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

from repomem.index import splice
from repomem.index.parsing import ParsedFile, parse_source

VALID = {
    "python": [
        "def added(x):\n    return helper(x)",
        "v = call(a, b)",
        "# c",
        "import json",
        "class Q:\n    def m(self):\n        return self.z()",
        "",
        "pass",
        "@d\ndef h():\n    pass",
    ],
    "c": [
        "static int added(int x)\n{\n\treturn helper(x);\n}",
        "v = call(a, b);",
        "/* c */",
        "// c",
        "#include <linux/added.h>",
        "#define ADDED(x) ((x) + 1)",
        "",
        "struct q {\n\tint z;\n};",
        "#ifdef CONFIG_ADDED\nstatic int y;\n#endif",
        "if (a)\n\tb();",
    ],
}
ANY = {
    "python": [
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
    ],
    "c": [
        "static void added(void)\n{\n\tcall();\n}\n",
        "{",
        "}",
        "};",
        ";",
        "/*",
        "*/",
        "int a; /* open",
        "// a comment \\",
        "#if X",
        "#ifdef CONFIG_Y",
        "#else",
        "#elif Z",
        "#endif",
        "#define M(x) \\",
        "#if 0\nbroken (( code\n#endif",
        "else",
        "else\n\tx();",
        "if (a) b();",
        "struct s { int a; }",
        "x;",
        "int f(a)\nint a;\n{\n}",
        "LIST_HEAD(foo)",
        "EXPORT_SYMBOL(added);",
        "static DEFINE_MUTEX(m);",
        "\\",
        '"str',
        "'c",
        "int x",
        "enum e { A, B };",
        "typedef int t;",
        "do {",
        "} while (0);",
        'extern "C" {',
        "a: b();",
        "x = 1; y = 2;",
    ],
}
VALID["cpp"] = [
    *VALID["c"],
    "namespace added {\nint z = 1;\n}",
    "template <typename T>\nT added(T x) { return helper<T>(x); }",
    'extern "C" {\nvoid added_c(void);\n}',
    'static const char * raw = R"(a\n/* ) " \\\n)";',
    "[[nodiscard]] int added() { return [&](int v) { return v + 1; }(2); }",
    "class K : public Base {\npublic:\n    int m() const override { return n(); }\n};",
    "using T = std::vector<int>;",
]
ANY["cpp"] = [
    *ANY["c"],
    "namespace x {",
    "namespace {",
    "} // namespace",
    "template <typename T>",
    "template <>",
    "[[maybe_unused]]",
    'R"(',
    ')"',
    'auto s = R"x(',
    ')x";',
    "public:",
    "private:",
    "auto f = [](int a) {",
    "});",
    "try {",
    "} catch (...) {",
    "catch (int) {}",
    "try { f(); } catch (int) {}",
    "class C {",
    "struct D : B<int> { using B::B; };",
    "#pragma once",
    "std::string operator()(int) const;",
]
TYPED = {
    "python": ["(", ")", "x", " ", ":", "'", ""],
    "c": ["(", ")", "{", "}", ";", "x", " ", "/", "*", "#", '"', "\\", ""],
}
TYPED["cpp"] = [*TYPED["c"], "<", ">", "[[", "]]", ":", 'R"(', ')"']
SUFFIXES = {
    "python": (".py",),
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"),
}


def errors(pf: ParsedFile) -> list[list[int]]:
    rows = splice.error_rows(pf)
    assert rows is not None  # a parse made here says where its errors lie
    return rows.tolist()


def fields(pf: ParsedFile) -> tuple:
    arrays = (pf.line_len, pf.node_start, pf.node_end, pf.node_parent, pf.line_owner, pf.node_head)
    lists = (pf.definitions, pf.calls, pf.imports, pf.import_nodes, pf.bases)
    return (*(a.tolist() for a in arrays), pf.has_error, *lists, errors(pf))


def edit(lines: list[str], rng: random.Random, language: str) -> list[str]:
    lines = list(lines)
    row = rng.randrange(len(lines) + 1)
    here = lines[row] if row < len(lines) else ""
    indent = here[: len(here) - len(here.lstrip())]
    kind = rng.randrange(7)
    if kind >= 5:
        lines[row:row] = [indent + x for x in rng.choice(VALID[language]).split("\n")]
    elif kind == 0:
        lines[row:row] = rng.choice(ANY[language]).split("\n")
    elif kind == 1:
        del lines[row : row + rng.randrange(1, 30)]
    elif kind == 2 and row < len(lines):
        cut = rng.randrange(len(here) + 1)
        typed = rng.choice(TYPED[language])
        lines[row] = here[:cut] + typed + here[cut + rng.randrange(2) :]
    elif kind == 3:
        lines += rng.choice(ANY[language]).split("\n")
    elif row < len(lines):
        other = rng.randrange(len(lines))
        lines[row], lines[other] = lines[other], lines[row]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--language", choices=sorted(SUFFIXES), default="python")
    ap.add_argument("--root", type=Path, help="default: the standard library (Python)")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--edits", type=int, default=6, help="edits per file")
    ap.add_argument("--min-lines", type=int, default=0, help="only files this long or longer")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    language = args.language
    root = args.root
    if root is None:
        if language != "python":
            ap.error(f"--root is needed for --language {language}")
        root = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(args.seed)
    paths = sorted(
        p
        for p in root.rglob("*")
        if p.suffix in SUFFIXES[language] and "site-packages" not in p.parts and p.is_file()
    )
    if args.min_lines:
        paths = [p for p in paths if p.read_bytes().count(b"\n") >= args.min_lines]
    if not paths:
        ap.error(f"no {language} files under {root}")
    joined = [0]
    join = splice.join

    def counting(*a: object) -> ParsedFile | None:
        out = join(*a)  # type: ignore[arg-type]
        joined[0] += out is not None
        return out

    splice.join = counting  # type: ignore[assignment]
    n = differ = 0
    t_splice: list[float] = []
    t_full: list[float] = []
    spliced: list[bool] = []
    for _ in range(args.files):
        path = rng.choice(paths)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = str(path.relative_to(root))
        parsed = parse_source(rel, language, text, "d")
        for _ in range(args.edits):
            new = "\n".join(edit(text.split("\n"), rng, language))
            before = joined[0]
            t = time.perf_counter()
            got = parse_source(rel, language, new, "d", previous=(text, parsed))
            t_splice.append(time.perf_counter() - t)
            spliced.append(joined[0] > before)
            t = time.perf_counter()
            want = parse_source(rel, language, new, "d")
            t_full.append(time.perf_counter() - t)
            n += 1
            if fields(got) != fields(want):
                differ += 1
                print(f"differs: {rel} after {n} edits", file=sys.stderr)
            if len(errors(got)) > len(errors(parsed)) and rng.random() < 0.7:
                continue  # mostly go on from a text without the edit's errors
            text, parsed = new, got
    print(
        f"{n} edits, {joined[0]} spliced, {n - joined[0]} parsed whole, {differ} differ from a "
        f"full parse; {sum(t_splice):.1f} s with splicing, {sum(t_full):.1f} s parsing whole files"
    )
    ms = np.array([t_splice, t_full]) * 1000
    for what, which in (("all edits", np.ones(n, bool)), ("spliced edits", np.array(spliced))):
        if not which.any():
            continue
        (a50, a95), (b50, b95) = np.percentile(ms[:, which], [50, 95], axis=1).T
        print(
            f"  {what}: p50 {a50:.1f} ms, p95 {a95:.1f} ms reusing the previous parse; "
            f"p50 {b50:.1f} ms, p95 {b95:.1f} ms parsing the whole file"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
