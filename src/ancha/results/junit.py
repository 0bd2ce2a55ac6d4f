"""JUnit XML of a run, for CI test reporters (GitLab, Jenkins, GitHub): one ``<testsuite>``
per scene, one ``<testcase classname=SCENE name="trial N">`` per trial.

A failed trial carries a ``<failure>`` whose message lists its failed checks' explanations;
an invalid trial carries an ``<error>`` with the reason it could not be judged, so reporters
keep the two apart as Ancha does. ``<system-out>`` holds the trial's folder, where
``checks.json``, ``trace.jsonl`` and ``agent.log`` are. A trial whose agent called operations
the replica does not implement has a line under its folder saying which (``3 calls hit
unimplemented operations: ...``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ancha.results import coverage_gaps
from ancha.results.run_folder import RunFolder, failed_checks

_INVALID = ("invalid", "unreadable")


def junit_xml(run_dir: Path) -> str:
    """The JUnit XML of the run in ``run_dir``, from its ``summary.json`` and ``checks.json`` files."""
    run = RunFolder(run_dir)
    summary = run.read_summary() or {}
    root = ET.Element("testsuites", name=f"ancha run {run.run_id}")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    time_s = 0.0
    for scene in _scenes(run, summary):
        suite = ET.SubElement(root, "testsuite", name=scene["scene"])
        counts = {"tests": 0, "failures": 0, "errors": 0}
        suite_time = 0.0
        for trial in scene["trials"]:
            case, kind, seconds = _testcase(run, scene["scene"], trial)
            suite.append(case)
            counts["tests"] += 1
            if kind:
                counts[kind] += 1
            suite_time += seconds
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{suite_time:.3f}")
        time_s += suite_time
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{time_s:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(run_dir: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(run_dir), encoding="utf-8")


def _scenes(run: RunFolder, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Scenes in the summary's order, each with the trials it ran; without a summary (an
    interrupted run), the trials that have a ``checks.json``."""
    scenes: list[dict[str, Any]] = []
    for scene in summary.get("scenes") or []:
        trials = [{"trial": t.get("trial"), "timings": t.get("timings") or {}}
                  for t in scene.get("trial_results") or []]
        scenes.append({"scene": str(scene.get("scene")), "trials": trials})
    if scenes:
        return scenes
    by_scene: dict[str, list[dict[str, Any]]] = {}
    for folder in run.graded_trials():
        by_scene.setdefault(folder.scene, []).append({"trial": folder.trial, "timings": {}})
    return [{"scene": name, "trials": trials} for name, trials in by_scene.items()]


def _testcase(run: RunFolder, scene: str, trial: dict[str, Any]) -> tuple[ET.Element, str | None, float]:
    """The trial's ``<testcase>``, what it counts as (``failures``, ``errors`` or None when it
    passed) and its seconds."""
    folder = run.trial(scene, str(trial["trial"]))
    seconds = float(trial["timings"].get("total_s") or 0.0)
    case = ET.Element("testcase", classname=scene, name=f"trial {trial['trial']}", time=f"{seconds:.3f}")
    checks = folder.read_checks()
    verdict = checks.get("verdict")
    kind: str | None = None
    if verdict in _INVALID or verdict is None:
        reason = str(checks.get("reason") or "the trial was not judged")
        ET.SubElement(case, "error", message=reason, type=str(verdict or "invalid")).text = reason
        kind = "errors"
    elif verdict != "passed":
        failed = failed_checks(checks)
        lines = [f"{r.get('id')}: {_explanation(r)}" for r in failed]
        if not lines:
            lines = [str(checks.get("reason") or f"the trial's verdict is {verdict}")]
        ET.SubElement(case, "failure", message="; ".join(lines), type="failed").text = "\n".join(lines)
        kind = "failures"
    gaps = coverage_gaps.of_checks(checks)  # a line, not <properties>: Jenkins' schema has none in testcase
    out = str(folder.path.resolve())
    ET.SubElement(case, "system-out").text = f"{out}\n{coverage_gaps.describe(gaps)}" if gaps else out
    return case, kind, seconds


def _explanation(result: dict[str, Any]) -> str:
    if result.get("status") == "skipped":
        return f"skipped, and required ({result.get('explanation') or 'not evaluated'})"
    return str(result.get("explanation") or f"expected {result.get('expected')}, got {result.get('actual')}")
