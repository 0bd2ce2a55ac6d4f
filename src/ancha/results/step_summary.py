"""The run's summary as Markdown, for GitHub Actions' job summary (``GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def markdown_summary(summary: dict[str, Any], run_dir: Path) -> str:
    """A heading, one table row per scene (as ``ancha run`` prints them) and the run folder."""
    title = "ancha run — interrupted, partial results" if summary.get("interrupted") else "ancha run"
    costs = any("cost" in s for s in summary.get("scenes") or [])  # a model gateway ran
    lines = [f"### {title} `{summary.get('run_id', run_dir.name)}`", "",
             "| scene | trials | passed | failed | invalid | pass rate | pass^k | pass@k | gate |"
             + (" cost |" if costs else ""),
             "|---|--:|--:|--:|--:|--:|--:|--:|---|" + ("--:|" if costs else "")]
    for s in summary.get("scenes") or []:
        rate = "—" if s.get("pass_rate") is None else f"{s['pass_rate']:.0%}"
        ran, trials = s.get("ran", 0), s.get("trials", 0)
        gate = ("✅ met" if s.get("gate_met") else "❌ not met") + f" (≥ {s.get('min_pass_rate', 0):.0%})"
        cells = [_cell(s.get("scene")), str(trials) if ran == trials else f"{ran}/{trials}", str(s.get("passed", 0)),
                 str(s.get("failed", 0)), str(s.get("invalid", 0)), rate,
                 _yes_no(s.get("pass_hat_k"), s.get("k")), _yes_no(s.get("pass_at_k"), s.get("k")), gate]
        if costs:
            cells.append(_cost(s.get("cost")))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"results: `{run_dir}`", ""]
    return "\n".join(lines)


def append_step_summary(summary: dict[str, Any], run_dir: Path) -> Path | None:
    """Appends the Markdown summary to the file ``GITHUB_STEP_SUMMARY`` names, when it is set."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as out:
        out.write(markdown_summary(summary, run_dir))
    return path


def _yes_no(value: object, k: object) -> str:
    return "—" if value is None else f"{'yes' if value else 'no'} (k={k})"


def _cost(cost: object) -> str:
    if not isinstance(cost, dict) or not cost.get("calls"):
        return "—"
    usd = "?" if cost.get("usd") is None else f"${cost['usd']:.4f}"
    return f"{usd} (+{cost['unpriced_calls']} unpriced)" if cost.get("unpriced_calls") else usd


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|")
