"""``ancha replay --calls`` and ``ancha fork`` on the bundled examples: replaying a run's recorded
calls remakes every trial's world and grade byte for byte; a fork from the middle of
orders-latency starts each trial with the incident acknowledged and the agent's memory of it;
a fork with a person's reply delay changed retimes the reply the agent is waiting for."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BIN = Path(sys.executable).parent
GRADED = ("checks.json", "world.json", "trace.jsonl", "records.jsonl")


def project(tmp_path: Path, scenes: str = "scenes/**/scene.yaml", trials: int = 1) -> Path:
    shutil.copytree(EXAMPLES / "agents", tmp_path / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(EXAMPLES / "scenes", tmp_path / "scenes")
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: python agents/acme_bot.py\nscenes: [{scenes}]\n"
                                         f"trials: {trials}\nparallel: 2\nmin_pass_rate: 1\n")
    return tmp_path


def ancha(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "ancha"), *args, "--no-progress"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def latest(root: Path) -> Path:
    return (root / ".ancha" / "runs" / "latest").resolve()


def trace(trial: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]


def env_id(trial: Path) -> str:
    return str(json.loads((trial / "replay.json").read_text())["env_id"])


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_replay_calls__remakes_every_example_trials_world_and_grade_byte_for_byte(tmp_path: Path) -> None:
    root = project(tmp_path, trials=2)
    ancha(root, "run")
    original = latest(root)
    ancha(root, "replay", original.name, "--calls")
    replayed = latest(root)
    assert replayed != original
    trials = sorted(p.parent.relative_to(original) for p in original.glob("*/*/checks.json"))
    assert len(trials) == 12  # six scenes, two trials each
    for trial in trials:
        for name in GRADED:
            assert (replayed / trial / name).read_bytes() == (original / trial / name).read_bytes(), f"{trial}/{name}"
    summary = json.loads((replayed / "summary.json").read_text())
    assert summary["origin"] == {"kind": "replay", "run": original.name, "calls": True}
    assert summary["seed"] == json.loads((original / "summary.json").read_text())["seed"]


def test_fork__from_the_middle_of_orders_latency_each_trial_starts_with_the_incident_acknowledged(
        tmp_path: Path) -> None:
    root = project(tmp_path, "scenes/orders-latency/scene.yaml")
    ancha(root, "run")
    original = latest(root) / "orders-latency" / "1"
    entries = trace(original)
    acked = next(e["seq"] for e in entries if e["actor"] == "agent" and e["method"] == "PUT"
                 and e["path"].startswith("/incidents/"))
    middle = next(e["seq"] for e in entries if e["tool"] == "github" and e["seq"] > acked)  # looking for the deploy
    ancha(root, "fork", "latest/orders-latency/1", "--at", str(middle), "-n", "5")
    run = latest(root)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["origin"]["kind"] == "fork" and summary["origin"]["seq"] == middle
    assert [t["verdict"] for t in summary["scenes"][0]["trial_results"]] == ["passed"] * 5
    for n in range(1, 6):
        trial = run / "orders-latency" / str(n)
        forked = trace(trial)
        # The replayed prefix, then the new part; the forked world lives at its own env id (its URLs).
        moved = (trial / "trace.jsonl").read_text().replace(env_id(trial), env_id(original)).splitlines()
        assert moved[:middle] == (original / "trace.jsonl").read_text().splitlines()[:middle]
        new_calls = [e for e in forked[middle:] if e["actor"] == "agent"]
        incident = [e for e in new_calls if e["tool"] == "pagerduty" and e["path"] == entries[acked - 1]["path"]]
        assert incident[0]["method"] == "GET" and incident[0]["response"]["incident"]["status"] == "acknowledged"
        assert not any(e["method"] == "PUT" and e["request"]["incident"]["status"] == "acknowledged" for e in incident)
        log = (trial / "agent.log").read_text()
        assert "is already acknowledged (forked at " in log  # its state folder remembered the ack
        signature, header = (trial / "checkpoint").read_bytes().split(b"\n", 2)[:2]
        assert signature.startswith(b"ancha-signature ") and header.startswith(b"ancha-checkpoint ")


def test_fork__with_a_shorter_reply_delay_the_person_answers_sooner(tmp_path: Path) -> None:
    root = project(tmp_path, "scenes/beta-exports/scene.yaml")
    ancha(root, "run")
    original = latest(root) / "beta-exports" / "1"
    entries = trace(original)
    ben = next(i for i, e in enumerate(entries) if e["actor"] == "person:ben")
    asked = entries[ben - 1]  # the agent's question in #eng, which Ben answers
    assert asked["actor"] == "agent" and (instant(entries[ben]["at"]) - instant(asked["at"])).total_seconds() >= 180
    ancha(root, "fork", "latest/beta-exports/1", "--at", str(asked["seq"]), "-n", "1",
          "--set", "people.ben.replies_after=1m")
    forked = trace(latest(root) / "beta-exports" / "1")
    answer = next(e for e in forked if e["actor"] == "person:ben")
    assert round((instant(answer["at"]) - instant(asked["at"])).total_seconds(), 3) == 60
    summary = json.loads((latest(root) / "summary.json").read_text())
    assert summary["origin"]["set"] == ["people.ben.replies_after=1m"]
    assert summary["scenes"][0]["trial_results"][0]["verdict"] == "passed"
    again = subprocess.run([str(BIN / "ancha"), "fork", "latest/beta-exports/1", "--at", "3", "--no-progress"],
                           cwd=root, capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and "error[SCENE_CHANGED]" in again.stderr
    assert "changed by ancha fork --set/--patch (people.ben.replies_after=1m)" in again.stderr


def test_run_seed__the_same_seed_draws_the_same_world_and_is_kept_for_replay(tmp_path: Path) -> None:
    root = project(tmp_path, "scenes/orders-latency/scene.yaml")
    paged = []
    for seed in ("7", "7", "8"):
        ancha(root, "run", "--seed", seed)
        run = latest(root)
        assert json.loads((run / "summary.json").read_text())["seed"] == int(seed)
        assert json.loads((run / "orders-latency" / "1" / "replay.json").read_text())["seed"] == int(seed)
        page = next(e for e in trace(run / "orders-latency" / "1") if e["actor"] == "world" and e["tool"] == "pagerduty")
        paged.append((page["at"], page["response"]["incident"]["id"]))
    assert paged[0] == paged[1]  # the fault pages at the same instant, with the same incident id
    assert paged[2][1] != paged[0][1]
