"""The RepoCoder prompt: exact layout (golden files), order, budgets and FIM templates.

Regenerate the golden files after an intended format change with
``REPOMEM_UPDATE_GOLDEN=1 pytest tests/completion/test_prompt.py`` and review the diff: the
committed files are the reference.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest
from fakemodel import FakeModel

from repomem.completion.prompt import build_prompt, format_block
from repomem.core import Location, RetrievedFragment
from repomem.fim import FIM_SENTINELS, FIM_TEMPLATES

GOLDEN = Path(__file__).parent / "golden"


class MergingModel(FakeModel):
    """A tokenizer whose counts are not additive: a line break merges with what follows it,
    and each line break costs an extra token when counted alone (as BPE merges do)."""

    def count_tokens(self, text: str) -> int:
        return len(re.findall(r"\n[ \t]*\w*|\w+|[^\w\s]|[ \t]+", text)) + text.count("\n")


def fragment(fid: int, path: str, start: int, shown: str, *more_paths: str) -> RetrievedFragment:
    lines = shown.count("\n") + 1
    locations = (Location(path, start, start + lines),) + tuple(
        Location(p, start, start + lines) for p in more_paths
    )
    score = 10.0 - fid
    return RetrievedFragment(fid, locations, f"window {fid}", shown, score, 1.0, score + 0.5)


FRAGMENTS = [
    fragment(
        1,
        "pkg/loader.py",
        10,
        "def load(path):\n    with open(path) as fh:\n\n        return parse(fh.read())",
    ),
    fragment(2, "pkg/util.py", 0, "def parse(text):\n    return text.split()", "pkg/util_copy.py"),
    fragment(3, "tests/test_loader.py", 4, "def test_load():\n    assert load('x') == []"),
]
LEFT = "import os\n\nfrom pkg.loader import load\n\n\ndef main(argv):\n    data = "
RIGHT = "\n    return data\n"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("REPOMEM_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    assert path.read_text(encoding="utf-8") == text, f"{name} differs from the golden file"


def test_golden_python_prompt() -> None:
    prompt = build_prompt(LEFT, FRAGMENTS, FakeModel(), language="python")
    check_golden("prompt_python.txt", prompt.text)
    assert prompt.fragments == tuple(FRAGMENTS)
    assert prompt.fim is None


def test_golden_javascript_uses_its_comment_marker() -> None:
    left = "const { load } = require('./loader');\n\nfunction main() {\n  const data = "
    prompt = build_prompt(left, FRAGMENTS[:2], FakeModel(), language="javascript")
    check_golden("prompt_javascript.txt", prompt.text)
    assert "\n# " not in prompt.text


@pytest.mark.parametrize("style", sorted(FIM_TEMPLATES))
def test_golden_fill_in_the_middle(style: str) -> None:
    prompt = build_prompt(
        LEFT, FRAGMENTS[:1], FakeModel(fim_style=style), language="python", right_context=RIGHT
    )
    check_golden(f"prompt_fim_{style}.txt", prompt.text)
    assert prompt.fim == style
    assert prompt.right_tokens > 0


def test_fim_templates_are_the_models_formats() -> None:
    def fill(style: str) -> str:
        before, middle, after = FIM_TEMPLATES[style]
        return f"{before}PRE{middle}SUF{after}"

    assert fill("codellama") == "<PRE> PRE <SUF>SUF <MID>"
    assert fill("starcoder") == "<fim_prefix>PRE<fim_suffix>SUF<fim_middle>"
    assert fill("deepseek") == "<｜fim▁begin｜>PRE<｜fim▁hole｜>SUF<｜fim▁end｜>"
    assert fill("qwen") == "<|fim_prefix|>PRE<|fim_suffix|>SUF<|fim_middle|>"
    # every style a backend can detect has a template here
    assert set(FIM_TEMPLATES) == set(FIM_SENTINELS)


def test_fim_needs_a_right_context() -> None:
    plain = build_prompt(LEFT, FRAGMENTS, FakeModel(), language="python", right_context=RIGHT)
    assert plain.fim is None and plain.right_tokens == 0 and "return data" not in plain.text
    no_right = build_prompt(
        LEFT, FRAGMENTS, FakeModel(fim_style="starcoder"), language="python", right_context="\n"
    )
    assert no_right.fim is None and not no_right.text.startswith("<fim_prefix>")


def test_block_layout_is_repocoders() -> None:
    block = format_block(FRAGMENTS[1], "#")
    assert block.splitlines() == [
        "# the below code fragment can be found in:",
        "# pkg/util.py",
        "# pkg/util_copy.py",
        "# " + "-" * 50,
        "# def parse(text):",
        "#     return text.split()",
        "# " + "-" * 50,
    ]
    assert block.endswith("\n")


def test_most_relevant_fragment_is_nearest_the_cursor() -> None:
    prompt = build_prompt(LEFT, FRAGMENTS, FakeModel(), language="python")
    positions = [prompt.text.index(f"# {f.path}\n") for f in FRAGMENTS]
    assert positions == sorted(positions, reverse=True)
    assert prompt.text.endswith("\n\n" + LEFT)


def test_without_fragments_the_prompt_is_the_left_context() -> None:
    prompt = build_prompt(LEFT, [], FakeModel(), language="python")
    assert prompt.text == LEFT
    assert prompt.retrieved_tokens == 0 and prompt.fragments == ()


def test_at_most_max_fragments_are_shown() -> None:
    many = [fragment(i, f"m{i}.py", 0, f"x{i} = {i}") for i in range(15)]
    prompt = build_prompt(LEFT, many, FakeModel(), language="python", max_fragments=10)
    assert prompt.fragments == tuple(many[:10])
    assert prompt.text.count("the below code fragment can be found in:") == 10


def test_a_fragment_too_large_is_skipped_not_the_rest() -> None:
    huge = fragment(0, "big.py", 0, "\n".join(f"value_{i} = {i}" for i in range(400)))
    model = FakeModel(context_window=2048)
    assert model.count_tokens(format_block(huge, "#")) > 1024
    prompt = build_prompt(LEFT, [huge, *FRAGMENTS], model, language="python")
    assert prompt.fragments == tuple(FRAGMENTS)
    assert prompt.retrieved_tokens <= 1024


def test_retrieved_code_stays_within_its_share() -> None:
    many = [fragment(i, f"m{i}.py", 0, "\n".join(["y = f(x)"] * 12)) for i in range(10)]
    model = FakeModel(context_window=4000)
    shown = []
    for fraction in (0.2, 0.5):
        prompt = build_prompt(
            LEFT, many, model, language="python", retrieved_budget_fraction=fraction
        )
        assert 0 < prompt.retrieved_tokens <= fraction * 4000
        shown.append(len(prompt.fragments))
    assert 0 < shown[0] < shown[1] < 10


def test_left_context_is_trimmed_from_the_top_in_whole_lines() -> None:
    left = "".join(f"line_{i} = compute({i})\n" for i in range(5000)) + "    result = "
    model = FakeModel(context_window=2048)
    prompt = build_prompt(left, FRAGMENTS, model, language="python", max_tokens=64)
    assert left.endswith(prompt.left_context)
    assert left[len(left) - len(prompt.left_context) - 1] == "\n"  # starts at a line start
    assert prompt.total_tokens <= 2048 - 64
    # the budget is used: another line would not have fitted
    assert prompt.total_tokens + model.count_tokens("line_0 = compute(0)\n") > 2048 - 64


def test_prompt_never_exceeds_the_window_even_with_huge_contexts() -> None:
    rng = random.Random(7)
    words = ["alpha", "(", ")", "beta_gamma", ":", "    ", "\n", "\n\n", "x", "=", "'s'", "\t"]
    for trial in range(40):
        window = rng.choice([64, 300, 1024, 4096])
        model_cls = MergingModel if trial % 2 else FakeModel
        model = model_cls(context_window=window, fim_style=rng.choice([None, *FIM_TEMPLATES]))
        left = "".join(rng.choice(words) for _ in range(rng.randint(0, 30_000)))
        right = "".join(rng.choice(words) for _ in range(rng.randint(0, 20_000)))
        frags = [
            fragment(
                i, f"f{i}.py", 0, "".join(rng.choice(words) for _ in range(rng.randint(1, 900)))
            )
            for i in range(rng.randint(0, 14))
        ]
        max_tokens = rng.choice([1, 64, 256, 10_000])
        prompt = build_prompt(
            left, frags, model, language="python", right_context=right, max_tokens=max_tokens
        )
        limit = window - min(max_tokens, window // 2)
        assert prompt.total_tokens == model.count_tokens(prompt.text)
        assert prompt.total_tokens <= limit, (trial, prompt.total_tokens, limit)
        assert left.endswith(prompt.left_context)
        assert right.startswith(prompt.right_context)


def test_a_single_enormous_line_is_cut_to_fit() -> None:
    left = "x = [" + ", ".join(str(i) for i in range(20_000))
    model = FakeModel(context_window=512)
    prompt = build_prompt(left, [], model, language="python", max_tokens=64)
    assert left.endswith(prompt.left_context) and prompt.left_context
    assert prompt.total_tokens <= 512 - 64


def window_at(fid: int, path: str, first: int, count: int = 20) -> RetrievedFragment:
    """A retrieved fragment of ``path`` showing lines ``first`` .. ``first + count``."""
    shown = "\n".join(f"line_{i} = {i}" for i in range(first, first + count))
    return replace(fragment(fid, path, first - 10, shown), shown_start=first)


def test_overlapping_windows_of_a_file_share_one_block_when_merging() -> None:
    a, b = window_at(1, "pkg/a.py", 20), window_at(2, "pkg/a.py", 30)  # 10 lines shared
    other, c = window_at(3, "pkg/b.py", 100), window_at(4, "pkg/a.py", 50)  # c touches b
    far = window_at(5, "pkg/a.py", 200)
    merged = build_prompt(
        "x = 1\n", [a, other, b, c, far], FakeModel(), language="python", merge_overlaps=True
    )
    assert merged.fragments == (a, other, b, c, far)
    # one block for lines 20..69 of a.py (each line once, in order), where a's block stood
    assert merged.text.count("# pkg/a.py\n") == 2
    shown = [int(m) for m in re.findall(r"# line_(\d+) =", merged.text)]
    assert shown == [*range(200, 220), *range(100, 120), *range(20, 70)]  # best block last
    plain = build_prompt("x = 1\n", [a, other, b, c, far], FakeModel(), language="python")
    assert plain.text.count("# line_35 = 35") == 2  # RepoCoder's layout repeats them
    assert merged.retrieved_tokens < plain.retrieved_tokens
    # the shared lines are not paid twice: a budget that fits a and b's new lines fits both
    both = build_prompt("x = 1\n", [a, b], FakeModel(), language="python", merge_overlaps=True)
    tight = FakeModel(context_window=2 * both.retrieved_tokens)
    fits = build_prompt("x = 1\n", [a, b], tight, language="python", merge_overlaps=True)
    assert fits.fragments == (a, b)
    assert build_prompt("x = 1\n", [a, b], tight, language="python").fragments == (a,)


def test_fragments_without_a_known_span_are_never_merged() -> None:
    a = window_at(1, "pkg/a.py", 20)
    unknown = replace(window_at(2, "pkg/a.py", 30), shown_start=None)
    two_places = replace(
        window_at(3, "pkg/a.py", 25),
        locations=(Location("pkg/a.py", 15, 35), Location("pkg/c.py", 15, 35)),
    )
    prompt = build_prompt(
        "x = 1\n", [a, unknown, two_places], FakeModel(), language="python", merge_overlaps=True
    )
    assert prompt.text.count("-" * 50) == 1 + 2 * 3  # the intro, three blocks of their own
