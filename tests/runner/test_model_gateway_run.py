"""``ancha run`` with ``agent.execution.modelHosts``: the agent's model calls go through the
run's gateway (to local stand-ins here), their cost lands in ``checks.json``, ``summary.json``
and the summary table, and ``agent.budget_usd`` stops a trial that spends past it."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import textwrap
from pathlib import Path

import pytest
from model_standins import INPUT_TOKENS, OUTPUT_TOKENS, ModelStandIn
from rich.console import Console
from test_run_cli import SCENE

from ancha.config.loading import load_config
from ancha.results.step_summary import markdown_summary
from ancha.runner.gateway.prices import cost_usd
from ancha.runner.run import RunResult, run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog

HOSTS = ["api.openai.com", "api.anthropic.com"]

AGENT = textwrap.dedent("""
    import json, os, sys, time, urllib.error, urllib.request

    def call(url, body, headers):
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
            "content-type": "application/json", **headers})
        return json.load(urllib.request.urlopen(req))

    def post_hello():
        slack, token = os.environ["ANCHA_SLACK_URL"], os.environ["ANCHA_SLACK_TOKEN"]
        req = urllib.request.Request(slack + "/api/conversations.list", headers={"Authorization": "Bearer " + token})
        channel = json.load(urllib.request.urlopen(req))["channels"][0]["id"]
        call(slack + "/api/chat.postMessage", {"channel": channel, "text": "hello"},
             {"Authorization": "Bearer " + token})

    print(sorted(json.loads(os.environ["ANCHA_MODEL_URLS"])))
    messages = [{"role": "user", "content": "hi"}]
    if sys.argv[1] == "twice":  # spends past the budget, then exits before anyone stops it
        for _ in range(2):
            call(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-4o", "messages": messages},
                 {"authorization": "Bearer sk-test"})
        post_hello()
        sys.exit(0)
    if sys.argv[1] == "fixed":  # agent.hostnames: real: a provider's own URL, no base URL
        call("https://api.openai.com/v1/chat/completions", {"model": "gpt-4o-mini", "messages": messages},
             {"authorization": "Bearer sk-test"})
        post_hello()
        sys.exit(0)
    if sys.argv[1] == "spend":
        while True:
            try:
                call(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-4o", "messages": messages},
                     {"authorization": "Bearer sk-test"})
            except urllib.error.HTTPError as exc:
                print(exc.code, exc.read().decode(), flush=True)
                time.sleep(300)  # the runner stops it
    call(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-4o-mini", "messages": messages},
         {"authorization": "Bearer sk-test"})
    call(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
         {"model": "claude-haiku-4-5", "max_tokens": 50, "messages": messages},
         {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"})
    post_hello()
""")


def run(tmp_path: Path, standin: ModelStandIn, mode: str, extra: str = "", trials: int = 1) -> tuple[RunResult, str]:
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE.format(name="hello", limit="10m", speed=1))
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py {mode}\n{extra}"
        f"  execution:\n    modelHosts: [{', '.join(HOSTS)}]\ntrials: {trials}\nparallel: 2\n")
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    out = io.StringIO()
    result = asyncio.run(run_scenes(config, scenes, console=Console(file=out, width=200), progress=False,
                                    model_upstreams={host: standin.url for host in HOSTS}))
    return result, out.getvalue()


def test_ancha_run__model_calls_and_cost_in_checks_summary_and_table(tmp_path: Path, standin: ModelStandIn) -> None:
    result, printed = run(tmp_path, standin, "work", trials=2)
    assert result.exit_code == 0, printed
    per_trial = cost_usd("gpt-4o-mini", INPUT_TOKENS, OUTPUT_TOKENS) + cost_usd("claude-haiku-4-5", INPUT_TOKENS,
                                                                                 OUTPUT_TOKENS)
    for trial in ("1", "2"):
        folder = result.run_dir / "hello" / trial
        checks = json.loads((folder / "checks.json").read_text())
        assert checks["verdict"] == "passed"
        assert checks["cost"] == {"usd": pytest.approx(per_trial), "calls": 2, "input_tokens": 2 * INPUT_TOKENS,
                                  "output_tokens": 2 * OUTPUT_TOKENS}
        calls = [json.loads(line) for line in (folder / "models.jsonl").read_text().splitlines()]
        assert [(c["provider"], c["model"]) for c in calls] == [("openai", "gpt-4o-mini"),
                                                               ("anthropic", "claude-haiku-4-5")]
        assert "['api.anthropic.com', 'api.openai.com']" in (folder / "agent.log").read_text()
    summary = json.loads((result.run_dir / "summary.json").read_text())
    cost = summary["scenes"][0]["cost"]
    assert cost["usd"] == pytest.approx(2 * per_trial) and cost["calls"] == 4 and cost["over_budget"] == 0
    header = next(line for line in printed.splitlines() if "pass rate" in line)
    assert header.rstrip(" ┃|").endswith("cost")
    assert f"${2 * per_trial:.4f}" in printed
    job_summary = markdown_summary(summary, result.run_dir).splitlines()
    assert job_summary[2].endswith("| gate | cost |") and job_summary[4].endswith(f"| ${2 * per_trial:.4f} |")


def test_budget__a_trial_that_spends_past_it_is_stopped_over_budget_and_fails(tmp_path: Path,
                                                                               standin: ModelStandIn) -> None:
    result, printed = run(tmp_path, standin, "spend", extra="  budget_usd: 0.01\n")
    assert result.exit_code == 1, printed
    folder = result.run_dir / "hello" / "1"
    checks = json.loads((folder / "checks.json").read_text())
    per_call = cost_usd("gpt-4o", INPUT_TOKENS, OUTPUT_TOKENS)
    assert checks["status"] == "over_budget" and checks["verdict"] == "failed"
    assert checks["cost"]["usd"] == pytest.approx(2 * per_call) and checks["cost"]["budget_usd"] == 0.01
    assert "over agent.budget_usd $0.01; the agent was stopped" in checks["reason"]
    assert len((folder / "models.jsonl").read_text().splitlines()) == 2
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["scenes"][0]["trial_results"][0]["status"] == "over_budget"
    assert summary["scenes"][0]["cost"]["over_budget"] == 1


def test_budget__an_agent_that_exits_right_after_spending_past_it_is_over_budget_too(
        tmp_path: Path, standin: ModelStandIn) -> None:
    result, printed = run(tmp_path, standin, "twice", extra="  budget_usd: 0.01\n  input: per_event\n")
    checks = json.loads((result.run_dir / "hello" / "1" / "checks.json").read_text())
    assert checks["status"] == "over_budget" and checks["verdict"] == "failed", printed
    assert all(r["passed"] for r in checks["results"])  # its checks held: the budget fails it anyway


def test_real_hostnames__a_call_to_a_providers_own_url_goes_through_the_gateway(
        tmp_path: Path, standin: ModelStandIn) -> None:
    """agent.hostnames: real: api.openai.com is intercepted and counted by the gateway, never sent out."""
    result, printed = run(tmp_path, standin, "fixed", extra="  hostnames: real\n")
    assert result.exit_code == 0, printed
    folder = result.run_dir / "hello" / "1"
    calls = [json.loads(line) for line in (folder / "models.jsonl").read_text().splitlines()]
    assert [(c["provider"], c["model"]) for c in calls] == [("openai", "gpt-4o-mini")], (folder / "agent.log").read_text()
    checks = json.loads((folder / "checks.json").read_text())
    assert checks["cost"]["calls"] == 1
