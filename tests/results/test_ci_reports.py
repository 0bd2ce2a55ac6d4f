"""CI reports of real runs: ``ancha run --junit/--json``, the GitHub job summary and ``ancha diff``.

The agent decides by trial: trial 1 greets (passes), trial 2 says something else (its
``greeted`` check fails) and trial 3 exits 127, so its trial is invalid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml
from lxml import etree

ANCHA = [sys.executable, "-m", "ancha.cli"]
SCHEMA = Path(__file__).with_name("junit.xsd")

SCENE = """
name: hello
task: Say hello in #general.
clock: { limit: 10m }
world:
  slack:
    bot: { ref: slack_bot, name: helper }
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: greeted
    state:
      slack.message: { channel: $slack_general, from: $slack_bot, text_contains: hello }
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

AGENT = textwrap.dedent("""
    import json, os, sys, urllib.request
    trial = int(os.environ["ANCHA_TRIAL"])
    if trial in {invalid}:
        sys.exit(127)
    text = "hello team" if trial in {greets} else "good morning"
    auth = {{"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"]}}
    url = os.environ["ANCHA_SLACK_URL"]
    req = urllib.request.Request(url + "/api/conversations.list", headers=auth)
    channel = json.load(urllib.request.urlopen(req))["channels"][0]["id"]
    body = json.dumps({{"channel": channel, "text": text}}).encode()
    req = urllib.request.Request(url + "/api/chat.postMessage", data=body,
                                 headers={{**auth, "Content-Type": "application/json"}})
    urllib.request.urlopen(req).read()
""")


def ancha(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})})


def project(root: Path, *, trials: int, greets: set[int], invalid: frozenset[int] = frozenset()) -> Path:
    (root / "scenes" / "hello").mkdir(parents=True)
    (root / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
    (root / "agent.py").write_text(AGENT.format(greets=sorted(greets) or "()", invalid=sorted(invalid) or "()"))
    (root / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\ntrials: {trials}\nparallel: 2\n")
    return root


def latest(root: Path) -> Path:
    return (root / ".ancha" / "runs" / "latest").resolve()


@dataclass
class MixedRun:
    root: Path
    ran: subprocess.CompletedProcess[str]
    junit: Path
    json: Path
    step_summary: Path


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> MixedRun:
    """One run of three trials: passed, failed, invalid; every CI report asked for."""
    root = project(tmp_path_factory.mktemp("mixed"), trials=3, greets={1}, invalid={3})
    reports = root / "reports"
    step_summary = root / "step_summary.md"
    step_summary.write_text("## earlier step\n")
    ran = ancha("run", "--no-progress", "--junit", str(reports / "junit.xml"), "--json", str(reports / "ancha.json"),
                cwd=root, env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    return MixedRun(root, ran, reports / "junit.xml", reports / "ancha.json", step_summary)


def test_run_junit__validates_against_the_junit_schema(mixed_run: MixedRun) -> None:
    assert mixed_run.ran.returncode == 1, mixed_run.ran.stdout + mixed_run.ran.stderr
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    document = etree.parse(str(mixed_run.junit))
    assert schema.validate(document), schema.error_log


def test_run_junit__a_gitlab_style_parser_reads_one_testcase_per_trial(mixed_run: MixedRun) -> None:
    xml = JUnitXml.fromfile(str(mixed_run.junit))
    suites = list(xml)
    assert [s.name for s in suites] == ["hello"]
    suite = suites[0]
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    cases = {c.name: c for c in suite}
    assert set(cases) == {"trial 1", "trial 2", "trial 3"}
    assert all(c.classname == "hello" for c in cases.values())
    assert cases["trial 1"].is_passed
    [failure] = cases["trial 2"].result
    assert isinstance(failure, Failure)
    assert failure.message.startswith("greeted: ") and "posted" not in failure.message
    [error] = cases["trial 3"].result
    assert isinstance(error, Error) and "not found" in error.message
    run_dir = latest(mixed_run.root)
    for number, case in cases.items():
        assert case.system_out == str(run_dir / "hello" / number.removeprefix("trial "))


def test_run_json__is_the_summary_with_pass_k_beside_the_pass_rate(mixed_run: MixedRun) -> None:
    written = json.loads(mixed_run.json.read_text())
    assert written == json.loads((latest(mixed_run.root) / "summary.json").read_text())
    [scene] = written["scenes"]
    # trial 3 is invalid: it is left out of k, as of the pass rate, and counted apart
    assert (scene["passed"], scene["failed"], scene["invalid"]) == (1, 1, 1)
    assert (scene["pass_rate"], scene["k"], scene["pass_hat_k"], scene["pass_at_k"]) == (0.5, 2, False, True)


def test_run__prints_pass_k_columns_and_appends_a_github_step_summary(mixed_run: MixedRun) -> None:
    assert "pass^k" in mixed_run.ran.stdout and "no (k=2)" in mixed_run.ran.stdout
    summary = mixed_run.step_summary.read_text()
    assert summary.startswith("## earlier step\n")  # appended, never overwritten
    assert "| hello | 3 | 1 | 1 | 1 | 50% | no (k=2) | yes (k=2) | ❌ not met (≥ 100%) |" in summary


def test_diff__finds_the_check_the_second_runs_agent_broke(tmp_path: Path) -> None:
    root = project(tmp_path / "project", trials=2, greets={1, 2})
    first = ancha("run", "--no-progress", cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    run_a = latest(root).name
    (root / "agent.py").write_text(AGENT.format(greets="()", invalid="()"))  # the regression: no hello
    second = ancha("run", "--no-progress", cwd=root)
    assert second.returncode == 1, second.stdout + second.stderr

    diffed = ancha("diff", run_a, "latest", cwd=root)
    assert diffed.returncode == 1, diffed.stdout + diffed.stderr
    lines = diffed.stdout.splitlines()
    assert "  regressed  greeted  2/2 → 0/2" in lines
    assert not any("posted" in line for line in lines)  # unchanged checks are not listed
    assert lines[-1] == "1 regressed, 0 improved, 0 flaky"

    back = ancha("diff", "latest", run_a, cwd=root)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "  improved   greeted  0/2 → 2/2" in back.stdout.splitlines()


def test_diff__mixed_results_within_a_run_are_flaky(tmp_path: Path, mixed_run: MixedRun) -> None:
    root = project(tmp_path / "project", trials=2, greets={1, 2})
    assert ancha("run", "--no-progress", cwd=root).returncode == 0
    # by paths, as ancha explain takes them; the mixed run's invalid trial is left out
    diffed = ancha("diff", str(latest(root)), str(latest(mixed_run.root)), cwd=tmp_path)
    lines = diffed.stdout.splitlines()
    assert diffed.returncode == 1, diffed.stdout + diffed.stderr
    assert "  regressed  greeted  2/2 → 1/2" in lines
    assert lines[-1] == "1 regressed, 0 improved, 1 flaky"


def test_diff__a_run_against_itself_regresses_nothing_and_still_lists_its_flaky_checks(mixed_run: MixedRun) -> None:
    diffed = ancha("diff", "latest", "latest", cwd=mixed_run.root)
    assert diffed.returncode == 0, diffed.stdout + diffed.stderr
    lines = diffed.stdout.splitlines()
    assert "  flaky      greeted  1/2 → 1/2" in lines
    assert lines[-1] == "0 regressed, 0 improved, 1 flaky"


def test_diff__an_unknown_run_says_which_runs_there_are(mixed_run: MixedRun) -> None:
    diffed = ancha("diff", "nope", "latest", cwd=mixed_run.root)
    assert diffed.returncode == 2
    assert "no run 'nope'" in diffed.stderr and latest(mixed_run.root).name in diffed.stderr
