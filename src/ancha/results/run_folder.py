"""The run folder: the one place that writes and reads a run's files.

``.ancha/runs/RUN_ID/`` holds ``summary.json`` and, per trial, ``SCENE/TRIAL/`` with
``checks.json`` (the verdict and every check result), ``trace.jsonl`` (every API call),
``records.jsonl`` (the people/process records), ``world.json`` (the final state of every
tool), ``agent.log`` (capped: ``agent_log.py``), ``models.jsonl`` (every model call through the
model gateway, with its tokens and cost), the agent's ``state/`` folder, ``calls.jsonl`` (the
agent's calls as a replay makes them again: instant, headers, body) and ``replay.json`` (what
rebuilds the trial's world: its id, seed and trial, and where and how it ended); a forked trial
also keeps the ``checkpoint`` it started from. ``ancha run`` writes them;
``explain``, ``report``, ``diff``, the console and the CI reports read them through here, so
the format lives in one module (the runs folder around them, ``latest`` included, is
``runs_folder.py``'s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from ancha.results.agent_log import DEFAULT_LIMIT, AgentLog

SUMMARY = "summary.json"
CHECKS = "checks.json"
TRACE = "trace.jsonl"
RECORDS = "records.jsonl"
WORLD = "world.json"
AGENT_LOG = "agent.log"
MODELS = "models.jsonl"
LIVE = "live.json"
STATE_DIR = "state"
CALLS = "calls.jsonl"
WORLD_LINE = "replay.json"
CHECKPOINT = "checkpoint"
STATE_JOURNAL = "state-journal"
"""The agent's state folder over the trial, version by version (``ancha fork`` restores it)."""


class TrialFolder:
    """``SCENE/TRIAL/`` of a run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def scene(self) -> str:
        return self.path.parent.name

    @property
    def trial(self) -> str:
        return self.path.name

    @property
    def run_id(self) -> str:
        return self.path.resolve().parent.parent.name

    @property
    def log_path(self) -> Path:
        return self.path / AGENT_LOG

    @property
    def checks_path(self) -> Path:
        return self.path / CHECKS

    @property
    def trace_path(self) -> Path:
        """``trace.jsonl``, which the runner streams in from the server (and readers page through)."""
        return self.path / TRACE

    @property
    def records_path(self) -> Path:
        return self.path / RECORDS

    @property
    def world_path(self) -> Path:
        """``world.json``, which the runner streams in from the server."""
        return self.path / WORLD

    @property
    def calls_path(self) -> Path:
        """``calls.jsonl``: the agent's calls, as ``ancha replay --calls`` and ``ancha fork`` make them again."""
        return self.path / CALLS

    @property
    def state_journal_path(self) -> Path:
        """Where the runner journals the agent's state folder as the trial goes."""
        return self.path / STATE_JOURNAL

    @property
    def checkpoint_path(self) -> Path:
        """``checkpoint``: the world a forked trial started from (``ancha fork``)."""
        return self.path / CHECKPOINT

    def write_world_line(self, line: dict[str, Any]) -> None:
        """``replay.json``: what rebuilds the trial's world (``env_id``, ``seed``, ``trial``,
        ``source_hash``, ``ended``: ``{at, status, reason}``; a replay's or fork's ``origin``)."""
        (self.path / WORLD_LINE).write_text(json.dumps(line, indent=2) + "\n")

    def read_world_line(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.path / WORLD_LINE).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def read_calls(self) -> list[dict[str, Any]]:
        """``calls.jsonl``'s lines ([] when the trial has none); ``ValueError`` on a broken line."""
        try:
            text = self.calls_path.read_text(encoding="utf-8")
        except OSError:
            return []
        calls = []
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise ValueError(f"{self.calls_path}:{number}: not JSON: {exc}") from exc
            calls.append(line)
        return calls

    def is_graded(self) -> bool:
        """Whether the trial has its ``checks.json``."""
        return self.checks_path.exists()

    def is_running(self) -> bool:
        """Whether the trial is under way (its ``live.json`` is there)."""
        return (self.path / LIVE).exists()

    @property
    def state_dir(self) -> Path:
        return self.path / STATE_DIR

    def create(self) -> TrialFolder:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return self

    # --- writing ---------------------------------------------------------------------

    def log(self, text: str, *, append: bool = True) -> None:
        """A line of Ancha's own in ``agent.log`` (why the agent could not start or was stopped)."""
        with self.log_path.open("a" if append else "w") as log:
            log.write(text if text.endswith("\n") else text + "\n")

    def write_live(self, server_url: str, env_id: str) -> None:
        """``live.json`` while the trial runs: where its world is, so the console can follow it
        (``GET /envs/ENV/live``). No key is written: the console takes ANCHA_SERVER_KEY."""
        (self.path / LIVE).write_text(json.dumps({"server_url": server_url, "env_id": env_id}) + "\n")

    def clear_live(self) -> None:
        (self.path / LIVE).unlink(missing_ok=True)

    def write_records(self, records: str) -> None:
        """``records.jsonl``; ``world.json`` and ``trace.jsonl`` are streamed in by the runner."""
        (self.path / RECORDS).write_text(records)

    def append_model_call(self, call: dict[str, Any], out: TextIO | None = None) -> None:
        """One line of ``models.jsonl``, as the model gateway finishes the call; ``out``: the file
        kept open for the trial's calls (``open_model_calls``)."""
        line = json.dumps(call, separators=(",", ":")) + "\n"
        if out is not None:
            out.write(line)
            return
        with (self.path / MODELS).open("a", encoding="utf-8") as once:
            once.write(line)

    def open_model_calls(self) -> TextIO:
        """``models.jsonl``, open to append a line per call; buffered (a write per call costs the
        gateway more than the rest of its work on a call): flush or close it to have it whole."""
        return (self.path / MODELS).open("a", encoding="utf-8")

    def open_log(self, limit: int = DEFAULT_LIMIT) -> AgentLog:
        """``agent.log`` for the agent's output, capped at ``limit`` bytes (head and tail kept)."""
        return AgentLog(self.log_path, limit)

    def write_checks(self, scene: str, trial: int, verdict: str | None, status: str | None, reason: str | None,
                     results: list[dict[str, Any]], agent_log: dict[str, Any] | None = None,
                     cost: dict[str, Any] | None = None, state: dict[str, Any] | None = None,
                     ended: str | None = None, coverage_gaps: dict[str, Any] | None = None,
                     also_changed: dict[str, list[str]] | None = None) -> None:
        """``agent_log``: what was dropped of agent.log (``AgentLog.cut``), when it was cut;
        ``cost``: the trial's model calls through the gateway (usd, calls, tokens), when it had one;
        ``state``: what of a container agent's ``/state`` did not fit its cap, when it was cut;
        ``coverage_gaps``: the calls to operations the replica does not implement, when there
        were any (``coverage_gaps.checks_field``); ``also_changed``: tool -> what the agent changed
        there that no check mentions (``checks.collateral``), when it changed any such thing."""
        body = {"scene": scene, "trial": trial, "verdict": verdict, "status": status, "reason": reason,
                "results": results}
        if agent_log:
            body["agent_log"] = agent_log
        if cost is not None:
            body["cost"] = cost
        if state:
            body["state"] = state
        if ended:  # how the trial ended, in words (the agent exited, the clock limit, ...)
            body["ended"] = ended
        if coverage_gaps:
            body["coverage_gaps"] = coverage_gaps
        if also_changed:
            body["also_changed"] = also_changed
        (self.path / CHECKS).write_text(json.dumps(body, indent=2) + "\n")

    # --- reading ---------------------------------------------------------------------

    def read_checks(self) -> dict[str, Any]:
        """``checks.json``; an unreadable one reads as an ``unreadable`` verdict with the reason."""
        try:
            data = json.loads((self.path / CHECKS).read_text())
        except (OSError, ValueError) as exc:
            return {"verdict": "unreadable", "reason": f"checks.json could not be read: {exc}", "results": []}
        return data if isinstance(data, dict) else {"verdict": "unreadable", "reason": "checks.json is not an "
                                                    "object", "results": []}

    def read_trace(self) -> dict[int, dict[str, Any]]:
        """``trace.jsonl`` entries by seq (lines that cannot be read are left out)."""
        entries: dict[int, dict[str, Any]] = {}
        try:
            text = (self.path / TRACE).read_text()
        except OSError:
            return entries
        for raw in text.splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("seq"), int):
                entries[entry["seq"]] = entry
        return entries

    def read_live(self) -> dict[str, str] | None:
        """Where the running trial's world is (``write_live``); None once it has finished."""
        try:
            data = json.loads((self.path / LIVE).read_text())
        except (OSError, ValueError):
            return None
        if isinstance(data, dict) and isinstance(data.get("server_url"), str) and isinstance(data.get("env_id"), str):
            return {"server_url": data["server_url"], "env_id": data["env_id"]}
        return None

    def read_model_calls(self) -> list[dict[str, Any]]:
        """``models.jsonl``: the trial's model calls (lines that cannot be read are left out)."""
        try:
            text = (self.path / MODELS).read_text(encoding="utf-8")
        except OSError:
            return []
        calls = []
        for raw in text.splitlines():
            try:
                call = json.loads(raw)
            except ValueError:
                continue
            if isinstance(call, dict):
                calls.append(call)
        return calls

    def read_log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def read_log_tail(self, limit: int) -> tuple[str, bool]:
        """The last ``limit`` bytes of ``agent.log`` as text, and whether the log is longer
        (an empty tail when there is no log)."""
        try:
            with self.log_path.open("rb") as log:
                size = log.seek(0, 2)
                log.seek(max(0, size - limit))
                return log.read().decode(errors="replace"), size > limit
        except OSError:
            return "", False

    def read_world(self) -> bytes:
        """``world.json``'s bytes; ``OSError`` when the trial has none (never started, not graded yet)."""
        return self.world_path.read_bytes()


class RunFolder:
    """``.ancha/runs/RUN_ID/``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def run_id(self) -> str:
        return self.path.resolve().name

    def create(self) -> RunFolder:
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def trial(self, scene: str, trial: int | str) -> TrialFolder:
        """The trial's folder, ``<run>/<scene>/<trial>``; both names must be single path parts
        (the scene loader refuses path-like scene names; this keeps any other caller inside)."""
        for part in (scene, str(trial)):
            if part in ("", ".", "..") or "/" in part or "\\" in part or "\0" in part:
                raise ValueError(f"not a name for a folder in the run folder: {part!r}")
        return TrialFolder(self.path / scene / str(trial))

    def trials(self) -> list[TrialFolder]:
        """Every trial folder, graded or not, by scene then trial number."""
        folders = [TrialFolder(p) for p in self.path.glob("*/*") if p.is_dir()]
        return sorted(folders, key=lambda t: (t.scene, int(t.trial) if t.trial.isdigit() else 0, t.trial))

    def has_running_trials(self) -> bool:
        """Whether a trial of the run is under way (a run without its summary yet)."""
        return any(self.path.glob(f"*/*/{LIVE}"))

    def graded_trials(self) -> list[TrialFolder]:
        """Every trial with a ``checks.json``, by scene then trial number."""
        folders = [TrialFolder(p.parent) for p in self.path.glob(f"*/*/{CHECKS}")]
        return sorted(folders, key=lambda t: (t.scene, int(t.trial) if t.trial.isdigit() else 0, t.trial))

    def is_run(self) -> bool:
        return (self.path / SUMMARY).is_file() or any(self.path.glob(f"*/*/{CHECKS}"))

    def write_summary(self, summary: dict[str, Any]) -> None:
        (self.path / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")

    def read_summary(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.path / SUMMARY).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def failed_checks(checks: dict[str, Any]) -> list[dict[str, Any]]:
    """The check results of a ``checks.json`` that fail its trial: failed ones, and required
    ones that were skipped."""
    return [r for r in checks.get("results") or []
            if isinstance(r, dict) and (r.get("status") == "failed"
                                        or (r.get("status") == "skipped" and r.get("required")))]
