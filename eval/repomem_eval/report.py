"""A run's outputs: ``results.json`` (the format ``compare`` reads) and ``results.md``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from repomem_eval.compare import RESULTS_FILE, Run, comparison_rows, curve_table, markdown_table

MARKDOWN_FILE = "results.md"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _cards(method: dict[str, Any]) -> str:
    share = method.get("definitions_share") or 0
    return f" + definition cards (up to {share:.0%} of its budget)" if share else ""


def results_markdown(label: str, methods: dict[str, Any], config: dict[str, Any]) -> str:
    """The overall and per-repository tables, headed by the configuration that matters most."""
    run = Run(label, methods, config)
    completion = config.get("completion", {})
    backend = config.get("backend", {})
    query_lines = completion.get("query_lines", completion.get("window"))  # "window": older runs
    lines = [
        f"# RepoEval: {label}",
        "",
        f"- tasks: {config.get('tasks')} ({config.get('tasks_selected')} of"
        f" {config.get('tasks_available')})",
        f"- repositories: {config.get('repos')}",
        f"- backend: {backend.get('name')} (model: {backend.get('model')})",
        f"- k = {completion.get('k')}, query window = {query_lines} lines,"
        f" mode = {config.get('mode')}, right context: {config.get('right_context')}",
        "- methods: "
        + "; ".join(
            f"{name} ({m['retrieval']}{_cards(m)}, {m['iterations']} iteration(s),"
            f" alpha {m['alpha']})"
            for name, m in config.get("methods", {}).items()
        ),
        "- EM, ES and hit@k in %; s/task: retrieval, prompt and the task's share of batched"
        " generation (updates showing the user's buffer are the benchmark's cost, not counted;"
        f" the run took {config.get('wall_seconds', 0):.0f} s in all)",
        f"- answered: % of tasks whose confidence reaches {completion.get('min_confidence')}"
        ' (`completion.min_confidence`; a backend without confidences answers all, "–"),'
        " EM answered: EM among them",
        "- context, in % of the ctx n tasks whose ground truth calls a repository function,"
        " class or constant defined outside the task's file: def@prompt, the final prompt shows"
        " one's definition (card or fragment); use@prompt, a fragment it shows calls one;"
        " def@10/use@10, the same in the last iteration's 10 best fragments (and cards) before"
        " the prompt's budget cuts them",
        "",
        "## Overall",
        "",
        markdown_table(comparison_rows([run])),
        "",
        "## Per repository",
        "",
        markdown_table(comparison_rows([run], per_repo=True), per_repo=True),
        "",
    ]
    curve = curve_table([run])
    if curve:
        lines += ["## Precision and coverage by confidence threshold", "", curve, ""]
    return "\n".join(lines)


def write_results(out_dir: Path, methods: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Write both files (each replaced whole) and return the JSON data."""
    data = {"methods": methods, "config": config}
    _write(out_dir / RESULTS_FILE, json.dumps(data, indent=2) + "\n")
    _write(out_dir / MARKDOWN_FILE, results_markdown(out_dir.name, methods, config))
    return data
