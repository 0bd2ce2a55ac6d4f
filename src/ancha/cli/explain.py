"""``ancha explain [RUN]``: the failed checks of a run, with the trace entries behind them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ancha.checks.calls import dict_line
from ancha.console.links import trial_url
from ancha.results import coverage_gaps
from ancha.results.run_folder import RunFolder, TrialFolder, failed_checks
from ancha.results.runs_folder import LATEST, RUNS_DIR, RunsFolder

SNIPPET = 70
_REQUEST_FIELDS = ("channel", "thread_ts", "ts", "name", "users", "text", "title")


class NoRun(click.ClickException):
    exit_code = 2


@dataclass(slots=True)
class TrialReport:
    scene: str
    trial: str
    folder: Path
    data: dict[str, Any]

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Failed checks, and required ones that were skipped (they fail the trial too)."""
        return failed_checks(self.data)


@click.command()
@click.argument("run", default=LATEST, required=False)
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where runs are kept (default: .ancha/runs in this folder or the nearest parent).")
def explain(run: str, runs_dir: Path | None) -> None:
    """Print the failed checks of RUN (a run id, default: latest) with their evidence."""
    run_dir = find_run(run, runs_dir)
    click.echo(explain_run(run_dir))


def find_run(run: str, runs_dir: Path | None = None) -> Path:
    """The folder of ``run``: a run id under the runs folder, ``latest`` (the run ``ancha run``
    started last) or a path to a run folder."""
    direct = Path(run)
    if run != LATEST and direct.is_dir() and RunFolder(direct).is_run():
        return direct
    runs = RunsFolder(runs_dir) if runs_dir is not None else RunsFolder.nearest()
    if runs is None or not runs.path.is_dir():
        raise NoRun(f"no runs here: {runs.path if runs else RUNS_DIR} does not exist (run `ancha run` first, "
                    "or pass --runs-dir)")
    folder = runs.run(run)
    if folder is None:
        known = sorted(runs.run_ids())
        hint = f"; runs: {', '.join(known[-5:])}" if known else "; there are no runs yet"
        raise NoRun(f"no run {run!r} in {runs.path}{hint}")
    return folder.path


def explain_run(run_dir: Path) -> str:
    """The text ``ancha explain`` prints for the run in ``run_dir``."""
    run_id = run_dir.resolve().name
    trials = load_trials(run_dir)
    shown = [t for t in trials if t.failed or t.data.get("verdict") not in ("passed", None)]
    if not trials:
        return f"run {run_id} has no graded trials yet (no */*/checks.json in {run_dir})"
    failed_checks = sum(len(t.failed) for t in shown)
    shown_ids = {id(t) for t in shown}
    cut_notes = [f"{t.scene} / trial {t.trial}: {note}" for t in trials if id(t) not in shown_ids
                 for note in (log_cut(t.data), state_cut(t.data), coverage_note(t.data), also_changed_note(t.data))
                 if note]
    if not shown:
        return "\n".join([f"no failed checks in run {run_id} ({_count(len(trials), 'trial')} passed)",
                          *cut_notes])
    lines = [f"run {run_id}: {_count(failed_checks, 'failed check')} in "
             f"{len(shown)} of {_count(len(trials), 'trial')}"]
    for trial in shown:
        lines.append("")
        lines.extend(explain_trial(trial))
    if cut_notes:
        lines.extend(["", *cut_notes])
    return "\n".join(lines)


def load_trials(run_dir: Path) -> list[TrialReport]:
    trials: list[TrialReport] = []
    for folder in RunFolder(run_dir).graded_trials():
        data = folder.read_checks()
        trials.append(TrialReport(str(data.get("scene") or folder.scene), str(data.get("trial") or folder.trial),
                                  folder.path, data))
    return sorted(trials, key=lambda t: (t.scene, _number(t.trial)))


def explain_trial(trial: TrialReport) -> list[str]:
    data = trial.data
    status = data.get("status")
    head = f"{trial.scene} / trial {trial.trial}: {data.get('verdict', '?')}"
    lines = [head + (f" (world {status})" if status else "")]
    reasons = _agent_reasons(trial)
    for reason in reasons:
        lines.append(f"  agent: {reason}")
    if _exited_badly(reasons):  # what it said last, as the console shows it
        tail = _log_tail(TrialFolder(trial.folder), LOG_TAIL_LINES)
        if tail:
            lines.append(f"  agent.log, its last {len(tail)} line{'s' if len(tail) != 1 else ''}:")
            lines.extend(f"    | {line}" for line in tail)
    gaps = coverage_note(data)
    if gaps and not any(gaps.removeprefix("coverage: ") in reason for reason in reasons):  # --strict-coverage's
        lines.append(f"  {gaps}")
    trace: dict[int, dict[str, Any]] | None = None
    for result in trial.failed:
        required = "required" if result.get("required") else "not required"
        mark = "SKIPPED" if result.get("status") == "skipped" else "FAILED"
        lines.append(f"  {mark} {result.get('id')} ({required})")
        lines.append(f"    expected: {result.get('expected', '')}")
        lines.append(f"    actual:   {result.get('actual', '')}")
        explanation = result.get("explanation") or ""
        if explanation and str(result.get("actual", "")) not in explanation:  # only when it says more
            lines.append(f"    why:      {explanation}")
        evidence = result.get("evidence") or []
        if evidence:
            if trace is None:
                trace = TrialFolder(trial.folder).read_trace()
            lines.append("    evidence:")
            for seq in evidence:
                entry = trace.get(int(seq))
                lines.append(f"      {evidence_line(entry) if entry else f'#{seq} (not in trace.jsonl)'}")
    lines.extend(also_changed_lines(data))
    run_id = TrialFolder(trial.folder).run_id
    lines.append(f"  console: {trial_url(run_id, trial.scene, trial.trial)}  (`ancha ui` serves it)")
    return lines


def evidence_line(entry: dict[str, Any]) -> str:
    """``#4 POST /api/chat.postMessage -> 200 ok:false channel_not_found  channel=C1 text="..."``."""
    line = dict_line(entry)
    request = entry.get("request")
    if isinstance(request, dict):
        shown = []
        for name in _REQUEST_FIELDS:
            value = request.get(name)
            if value in (None, ""):
                continue
            text = str(value)
            text = text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
            shown.append(f"{name}={json.dumps(text, ensure_ascii=False)}" if name == "text" else f"{name}={text}")
        if shown:
            line += "  " + " ".join(shown)
    return line


def load_trace(path: Path) -> dict[int, dict[str, Any]]:
    """The entries of a ``trace.jsonl`` by seq."""
    return TrialFolder(path.parent).read_trace()


def _agent_reasons(trial: TrialReport) -> list[str]:
    """Why the agent's run went wrong: the trial's reason, invalid reason and the last
    ``ancha: ...`` note in agent.log, each once."""
    data = trial.data
    reasons: list[str] = []
    for key in ("reason", "invalid_reason"):
        if isinstance(data.get(key), str) and data[key]:
            reasons.append(data[key])
    agent = data.get("agent")
    if isinstance(agent, dict):
        for key in ("reason", "error", "exit"):
            if agent.get(key):
                reasons.append(f"{key}: {agent[key]}")
    note = _last_note(TrialFolder(trial.folder))
    if note:
        reasons.append(note)
    cut = log_cut(data)
    if cut:
        reasons.append(cut)
    cut = state_cut(data)
    if cut:
        reasons.append(cut)
    return list(dict.fromkeys(reasons))


def log_cut(data: dict[str, Any]) -> str | None:
    """What agent.log lost to ``agent.log_limit`` (``agent_log`` in checks.json), as one line."""
    cut = data.get("agent_log")
    if not isinstance(cut, dict):
        return None
    try:
        dropped, written, limit = int(cut["dropped"]), int(cut["written"]), int(cut["limit"])
    except (KeyError, TypeError, ValueError):
        return None
    return (f"agent.log: {dropped:,} of {written:,} bytes dropped between its head and its tail "
            f"(agent.log_limit: {limit:,} bytes)")


def coverage_note(data: dict[str, Any]) -> str | None:
    """The calls to operations the replica does not implement (``coverage_gaps`` in checks.json)."""
    gaps = coverage_gaps.of_checks(data)
    return f"coverage: {coverage_gaps.describe(gaps)}" if gaps else None


def also_changed_lines(data: dict[str, Any]) -> list[str]:
    """What the agent changed that no check mentions (``also_changed`` in checks.json), per tool."""
    also = _also_changed(data)
    if not also:
        return []
    lines = ["  also changed (no check mentions it):"]
    for tool, changes in also.items():
        lines.extend(f"    {tool}: {change}" for change in changes)
    return lines


def also_changed_note(data: dict[str, Any]) -> str | None:
    """``also_changed`` on one line, for a trial that is not shown whole."""
    also = _also_changed(data)
    return "also changed: " + "; ".join(f"{tool}: {', '.join(changes)}" for tool, changes in also.items()) \
        if also else None


def _also_changed(data: dict[str, Any]) -> dict[str, list[str]]:
    also = data.get("also_changed")
    if not isinstance(also, dict):
        return {}
    return {str(tool): [str(c) for c in changes] for tool, changes in also.items() if isinstance(changes, list) and changes}


def state_cut(data: dict[str, Any]) -> str | None:
    """What a container agent's /state lost to its cap (``state`` in checks.json), as one line."""
    cut = data.get("state")
    if not isinstance(cut, dict):
        return None
    try:
        files, size = int(cut["kept_files"]), int(cut["kept_bytes"])
        max_files, max_bytes = int(cut["max_files"]), int(cut["max_bytes"])
    except (KeyError, TypeError, ValueError):
        return None
    return (f"/state: {cut.get('cut')}: only the first {files:,} files and folders ({size:,} bytes) were copied "
            f"to state/ (the limit is {max_files:,} files and {max_bytes // 1024 // 1024} MiB)")


LOG_TAIL_LINES = 12
_BAD_EXIT = re.compile(r"exited (?:with code |\(code )(-?\d+)")


def _exited_badly(reasons: list[str]) -> bool:
    """Whether the agent exited with a code other than 0 (its reason, or agent.log's last note, says so)."""
    return any(match.group(1) != "0" for reason in reasons for match in _BAD_EXIT.finditer(reason))


def _log_tail(folder: TrialFolder, count: int) -> list[str]:
    """agent.log's last ``count`` lines the agent wrote (Ancha's own ``ancha:`` notes left out)."""
    tail, _ = folder.read_log_tail(16384)
    lines = [line.rstrip() for line in tail.splitlines() if line.strip() and not line.startswith("ancha: ")]
    return lines[-count:]


def _last_note(folder: TrialFolder) -> str | None:
    tail, _ = folder.read_log_tail(4096)
    lines = [line for line in tail.splitlines() if line.strip()]
    if lines and lines[-1].startswith("ancha: "):
        return lines[-1].removeprefix("ancha: ").strip()
    return None


def _number(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (0, text)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
