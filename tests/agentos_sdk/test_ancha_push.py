"""`ancha push` from a CI job: the run lands in the workspace with the job's commit, branch
and URL, and a release of that commit is gated by it (the SDK's `release(commit=...)`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUN_ID = "20261203T090000Z-cafe01"


def write_run(root: Path, outcomes: str) -> Path:
    run_dir = root / ".ancha" / "runs" / RUN_ID
    results = []
    for trial, outcome in enumerate(outcomes, start=1):
        folder = run_dir / "hello" / str(trial)
        folder.mkdir(parents=True)
        verdict = "passed" if outcome == "P" else "failed"
        (folder / "checks.json").write_text(json.dumps({"scene": "hello", "trial": trial, "verdict": verdict,
                                                        "reason": None, "results": []}))
        results.append({"trial": trial, "verdict": verdict})
    passed = outcomes.count("P")
    (run_dir / "summary.json").write_text(json.dumps({
        "run_id": RUN_ID, "started_at": "2026-12-03T09:00:00Z", "exit_code": 0,
        "config": {"agent": {"command": "python agent.py", "version": "prompt-7"}},
        "scenes": [{"scene": "hello", "trials": len(outcomes), "ran": len(outcomes), "passed": passed,
                    "failed": len(outcomes) - passed, "invalid": 0, "pass_rate": passed / len(outcomes),
                    "min_pass_rate": 0.5, "gate_met": True, "trial_results": results}]}))
    (root / ".ancha" / "runs" / "latest").symlink_to(run_dir.name)
    return run_dir


def test_push_from_github_actions_records_the_job_and_gates_the_release_of_its_commit(
        tmp_path: Path, agentos_server, api_key: str, client) -> None:  # type: ignore[no-untyped-def]
    write_run(tmp_path, "PPPF")
    sha = "9" * 40
    env = {**os.environ, "AGENTOS_API_KEY": api_key, "AGENTOS_URL": agentos_server.url, "GITHUB_ACTIONS": "true",
           "GITHUB_SHA": sha, "GITHUB_REF_NAME": "main", "GITHUB_SERVER_URL": "https://github.com",
           "GITHUB_REPOSITORY": "acme/agent", "GITHUB_RUN_ID": "77"}
    push = [sys.executable, "-m", "ancha.cli", "push"]
    done = subprocess.run(push, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"uploaded run {RUN_ID}" in done.stdout and f"/ui/runs/{RUN_ID}" in done.stdout
    again = subprocess.run(push, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert f"run {RUN_ID} was uploaded already" in again.stdout

    import httpx

    listed = httpx.get(f"{agentos_server.url}/api/ancha/runs", headers={"authorization": f"Bearer {api_key}"}).json()
    mine = next(r for r in listed["runs"] if r["id"] == RUN_ID)
    assert (mine["commit"], mine["branch"], mine["agent_version"]) == (sha, "main", "prompt-7")
    assert mine["ci"] == {"provider": "github", "url": "https://github.com/acme/agent/actions/runs/77"}

    from agentos_sdk import ReleaseBlockedError

    name = "pushed-" + os.urandom(3).hex()
    client.create_workflow(name, nodes=[{"id": "s", "type": "set", "values": {"x": "1"}}],
                           gate={"ancha": {"scenes": ["hello"], "min_pass_rate": 0.9}})
    with pytest.raises(ReleaseBlockedError) as blocked:
        client.release(name, commit=sha)
    assert str(blocked.value) == (f"ancha gate: pass rate 75.0% of hello in run {RUN_ID} is below the required"
                                  " 90.0% — deployment blocked")
    client.update_workflow(name, gate={"ancha": {"scenes": ["hello"], "min_pass_rate": 0.75}})
    released = client.release(name, commit=sha)
    assert (released["status"], released["ancha_run_id"]) == ("released", RUN_ID)


def test_push_without_a_key_says_how_to_get_one(tmp_path: Path, agentos_server) -> None:  # type: ignore[no-untyped-def]
    write_run(tmp_path, "P")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTOS_")} | {"AGENTOS_URL": agentos_server.url}
    done = subprocess.run([sys.executable, "-m", "ancha.cli", "push"], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 1
    assert "set AGENTOS_API_KEY to a `ci` key of your workspace" in done.stderr


def test_run_upload_sends_the_run_when_it_ends_and_keeps_the_runs_exit_code(
        tmp_path: Path, agentos_server, api_key: str) -> None:  # type: ignore[no-untyped-def]
    ancha = [sys.executable, "-m", "ancha.cli"]
    assert subprocess.run([*ancha, "init"], cwd=tmp_path, capture_output=True, timeout=60).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTOS_", "GITHUB_"))}
    refused = subprocess.run([*ancha, "run", "--upload"], cwd=tmp_path, capture_output=True, text=True,
                             env=env | {"AGENTOS_URL": agentos_server.url}, timeout=120)
    assert refused.returncode == 2 and "--upload: no key to upload with" in refused.stderr
    assert not (tmp_path / ".ancha" / "runs").exists(), "a missing key is found before the run starts"
    done = subprocess.run([*ancha, "run", "--upload", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          env=env | {"AGENTOS_URL": agentos_server.url, "AGENTOS_API_KEY": api_key}, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = (tmp_path / ".ancha" / "runs" / "latest").resolve().name
    assert f"uploaded run {run_id}" in done.stdout

    import httpx

    run = httpx.get(f"{agentos_server.url}/api/ancha/runs/{run_id}", headers={"authorization": f"Bearer {api_key}"})
    assert run.status_code == 200 and run.json()["status"] == "complete"
    assert any(f["path"].endswith("/trace.jsonl") for f in run.json()["files"])
    assert any(f["path"].startswith("_scenes/hello/") for f in run.json()["files"])
