"""Doc segmentation with the real tree-sitter grammars, and ReadAgent pagination."""

from __future__ import annotations

from repomem.docmem.pagination import naturalness, next_choice, paginate
from repomem.docmem.segments import (
    Segment,
    module_docstring_lines,
    segment_doc_comments,
    segment_docstring,
    segment_document,
)

MARKDOWN = """\
# Widget

Widget turns configuration files into running services. It is small and it is fast, and
it reads TOML, YAML and JSON files alike.

## Configuration

Set `WIDGET_TIMEOUT` to the number of seconds a request may take.

- `RETRY_LIMIT` caps the retries of a failed request
- `--reload` restarts the server when files change

```python
from widget.server import serve
serve(port=8080)
```

### Advanced

Nothing here yet.
"""

RST = """\
Guide
=====

The :class:`widget.server.Server` class accepts connections. Build one with
:func:`widget.server.serve` and give it the configuration that the loader read.

Options
-------

.. py:data:: WIDGET_TIMEOUT

    Seconds a request may take before it is cancelled.

.. py:data:: RETRY_LIMIT

    How many times a failed request is retried.

Example::

    serve(port=8080)
"""


def lines_of(text: str, seg: Segment) -> str:
    return "\n".join(text.split("\n")[seg.start : seg.end])


def test_markdown_follows_headings_and_blocks() -> None:
    segs = segment_document("README.md", "markdown", MARKDOWN, min_words=10, max_words=200)
    headings = [s.headings for s in segs]
    assert headings[0] == ("Widget",)
    assert ("Widget", "Configuration") in headings
    assert headings[-1] == ("Widget", "Configuration", "Advanced")
    for seg in segs:
        assert seg.text == lines_of(MARKDOWN, seg)  # line numbers point at the source
        assert seg.text.strip() and not seg.text.startswith("#")  # headings are not text
    config = [s for s in segs if s.headings == ("Widget", "Configuration")]
    joined = "\n".join(s.text for s in config)
    assert "WIDGET_TIMEOUT" in joined and "```python" in joined and "--reload" in joined
    assert segs[-1].label == f"README.md:{MARKDOWN.split(chr(10)).index('Nothing here yet.') + 1}"


def test_small_blocks_join_and_large_blocks_split() -> None:
    joined = segment_document("README.md", "markdown", MARKDOWN, min_words=10, max_words=200)
    apart = segment_document("README.md", "markdown", MARKDOWN, min_words=0, max_words=200)
    assert len(apart) > len(joined)
    assert {s.kind for s in apart} >= {"paragraph", "list", "code"}
    long_list = "# L\n\n" + "".join(f"- item number {i} says a few words\n" for i in range(60))
    pieces = segment_document("L.md", "markdown", long_list, min_words=0, max_words=50)
    assert len(pieces) > 1
    assert all(p.words <= 50 for p in pieces)
    assert all(p.text.startswith("- item") for p in pieces)  # cut between list items
    assert sum(p.end - p.start for p in pieces) == 60


def test_rst_sections_directives_and_literal_blocks() -> None:
    segs = segment_document("docs/guide.rst", "rst", RST, min_words=40, max_words=200)
    assert segs[0].headings == ("Guide",)
    options = [s for s in segs if s.headings == ("Guide", "Options")]
    # two directives never join, however short: each documents its own key
    timeout = [s for s in options if "WIDGET_TIMEOUT" in s.text]
    retry = [s for s in options if "RETRY_LIMIT" in s.text]
    assert len(timeout) == 1 and len(retry) == 1 and timeout[0] is not retry[0]
    assert all(s.text == lines_of(RST, s) for s in segs)
    assert any("serve(port=8080)" in s.text for s in options)


def test_rst_heading_levels_follow_adornment_order() -> None:
    text = "Top\n===\n\nintro words\n\nSub\n---\n\nsub words\n\nOther\n=====\n\nother words\n"
    segs = segment_document("x.rst", "rst", text, min_words=0)
    assert [s.headings for s in segs] == [("Top",), ("Top", "Sub"), ("Other",)]


def test_plain_text_and_module_docstrings() -> None:
    text = "first paragraph\nstill first\n\n\nsecond paragraph\n"
    segs = segment_document("NOTES.txt", "text", text, min_words=0)
    assert [(s.start, s.end) for s in segs] == [(0, 2), (4, 5)]
    source = (
        '#!/usr/bin/env python\n"""Loads the configuration.\n\nIt reads TOML files.\n"""\n\nx = 1\n'
    )
    assert module_docstring_lines(source) == (1, 5)
    doc = segment_docstring("widget/config.py", "widget.config", source, min_words=0)
    assert [s.headings for s in doc] == [("widget.config",)] * 2
    assert doc[0].text == "Loads the configuration." and doc[0].start == 1
    assert doc[1].text == "It reads TOML files." and doc[1].start == 3
    assert segment_docstring("a.py", "a", "x = 1\n'not a docstring'\n") == []
    assert module_docstring_lines("def f():\n    '''inner'''\n") is None


def test_pagination_respects_word_limits_and_prefers_section_breaks() -> None:
    body = " ".join(["word"] * 30)
    segs = [Segment("d.md", "paragraph", i, i + 1, ("A", f"S{i // 3}"), body) for i in range(12)]
    pages = paginate(segs, min_words=50, max_words=150)
    assert pages[0][0] == 0 and pages[-1][1] == 12
    assert all(a[1] == b[0] for a, b in zip(pages, pages[1:], strict=False))
    for start, end in pages[:-1]:
        words = sum(s.words for s in segs[start:end])
        assert 50 <= words <= 150
        assert end % 3 == 0  # every page ends where a sub-section does
    choice = next_choice(segs, 0, 50, 150)
    assert choice is not None and choice.candidates == (2, 3, 4, 5)
    assert naturalness(segs, 3) > naturalness(segs, 2) == 0
    assert next_choice(segs, 9, 50, 150) is None  # the rest fits one page


MDX = """\
---
title: Serving
---
import Tabs from '@theme/Tabs';
import {
  TabItem,
} from '@theme/TabItem';

export const meta = {author: 'widget'};

# Serving

{/* written for the 2.0 release */}

<Tabs
  groupId="os"
>
  <TabItem value="linux" label="Linux">

Set `WIDGET_TIMEOUT` to the seconds a request may take before it is cancelled.

```jsx
<Tabs>
import x from 'y';
```

  </TabItem>
</Tabs>

<Note>Retries are capped by `RETRY_LIMIT`.</Note>

See <https://example.com/widget> for more.
"""


def test_mdx_reads_the_markdown_and_drops_esm_and_jsx_lines() -> None:
    segs = segment_document("docs/serving.mdx", "mdx", MDX, min_words=1, max_words=200)
    lines = MDX.split("\n")
    texts = [s.text for s in segs]
    assert all(s.headings == ("Serving",) for s in segs)
    # the paragraph inside the JSX tabs is Markdown, at its own line
    timeout = next(s for s in segs if "WIDGET_TIMEOUT" in s.text)
    assert timeout.kind == "paragraph" and lines[timeout.start].startswith("Set `WIDGET_TIMEOUT`")
    # fenced code keeps its JSX and import lines
    code = next(s for s in segs if s.kind == "code")
    assert code.text == "\n".join(lines[code.start : code.end]) and "import x" in code.text
    # text between tags stays, the tags go; no ESM, tag or expression line is text
    note = next(s for s in segs if "RETRY_LIMIT" in s.text)
    assert note.text == "Retries are capped by `RETRY_LIMIT`." and note.label.endswith(
        f":{lines.index('<Note>Retries are capped by `RETRY_LIMIT`.</Note>') + 1}"
    )
    assert any("<https://example.com/widget>" in t for t in texts)  # an autolink is text
    joined = "\n".join(t for s, t in zip(segs, texts, strict=True) if s.kind != "code")
    for gone in ("import", "export", "TabItem", "groupId", "{/*", "<Note>"):
        assert gone not in joined


SWITCH_MAP_TS = """\
/**
 * @license Apache-2.0: a licence header documents nothing and is left out of the docs.
 */
import { Observable } from './Observable';

/**
 * Projects each source value to an Observable which is merged in the output
 * Observable, emitting values only from the most recently projected Observable.
 *
 * @param project A function that returns an Observable.
 */
export function switchMap<T, R>(project: (value: T) => Observable<R>) {
  /** too short to say anything */
  return project;
}
"""


def test_doc_comments_of_declarations_are_docs_under_their_names() -> None:
    (seg,) = segment_doc_comments("src/switchMap.ts", "typescript", SWITCH_MAP_TS)
    assert seg.headings == ("switchMap",) and seg.kind == "doc-comment"
    assert seg.text.splitlines()[0] == (
        "Projects each source value to an Observable which is merged in the output"
    )
    assert "/**" not in seg.text and "*/" not in seg.text and not seg.text.startswith("*")
    assert "@param project A function" in seg.text
    assert SWITCH_MAP_TS.splitlines()[seg.start].strip().startswith("* Projects")

    java = (
        "/**\n * Starts the Java virtual machine with the given class path and options,\n"
        " * once per process.\n */\n@Deprecated\npublic static void startJVM(String... a) {}\n"
    )
    (seg,) = segment_doc_comments("J.java", "java", java)
    assert seg.headings == ("startJVM",)
    rust = (
        "/// Parses a TOML document into a tree that keeps its comments and its\n"
        "/// formatting for round trips.\n#[derive(Debug)]\npub struct Document {}\n"
    )
    (seg,) = segment_doc_comments("d.rs", "rust", rust)
    assert seg.headings == ("Document",) and seg.text.startswith("Parses a TOML")
    go = (
        "// NewClient returns a client that talks to the server at addr, retrying\n"
        "// transient errors.\nfunc NewClient(addr string) *Client {}\n\n"
        "    // an indented comment inside a function body is not godoc at all, say\n"
        "    // the tools, and neither is this one here\n    x := 1\n"
        "// Do sends the request and returns the response, retrying as configured.\n"
        "func (c *Client) Do(r *Request) error {}\n"
    )
    assert [s.headings for s in segment_doc_comments("c.go", "go", go)] == [
        ("NewClient",),
        ("Do",),
    ]
