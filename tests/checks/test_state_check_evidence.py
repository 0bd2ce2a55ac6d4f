"""Evidence is the trace entries behind a result, for every state check: the calls that made
the state (the merge, the commit, the deployment status, the downtime's create call, the
incident's resolve, the deactivate), whoever the check is graded for. Each tool is driven
through its official SDK; the results are read the way ``ancha check`` reads them
(``POST /envs/{id}/checks`` and the CLI) and the way ``ancha run`` does (``/grade``), and
must agree."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pdpyras
import pytest
from click.testing import CliRunner
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes
from datadog_api_client.v2.model.downtime_create_request_data import DowntimeCreateRequestData
from datadog_api_client.v2.model.downtime_monitor_identifier_id import DowntimeMonitorIdentifierId
from datadog_api_client.v2.model.downtime_resource_type import DowntimeResourceType
from datadog_api_client.v2.model.downtime_schedule_one_time_create_update_request import (
    DowntimeScheduleOneTimeCreateUpdateRequest,
)
from github import Auth, Github
from okta.client import Client as OktaClient
from slack_sdk import WebClient
from tests.pygithub_client import UNTHROTTLED

from ancha.scene import load_scene
from ancha.world.registry import catalog, registry

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SCENE = """\
name: evidence
clock: { start: 2026-03-02T09:00:00Z, speed: 1 }
world:
  slack:
    channels: [{ ref: slack_support, name: support, members: [$slack_bot] }]
  github:
    users: [{ ref: github_ben, login: ben }]
    repos:
      - ref: github_orders
        name: acme/orders
        private: true
        files: { docs/runbook.md: "Restart the pods.\\n" }
        permissions: { $github_ben: write, ancha-agent: admin }
        commits:
          - { ref: github_good, message: "Known good", files: { app.py: "print('ok')\\n" } }
        branches: { runbook: { from: main } }
        pulls:
          - { ref: github_runbook_pr, title: "Runbook", head: runbook, author: $github_ben }
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders p99, query: "avg(last_5m):avg:orders.latency.p99{*} > 2000" }
  pagerduty:
    users: [{ ref: pd_ana, name: Ana, email: ana@acme.test }]
    escalation_policies: [{ ref: pd_policy, name: orders, rules: [{ delay: 30m, targets: [$pd_ana] }] }]
    services: [{ ref: pd_orders, name: orders, escalation_policy: $pd_policy }]
    incidents: [{ ref: pd_page, service: $pd_orders, title: orders down }]
  okta:
    users: [{ ref: okta_dana, login: dana@acme.com, first_name: Dana, last_name: Scully }]
checks:
  - { id: merged, state: { github.pull: { pull: $github_runbook_pr, merged: true } } }
  - { id: runbook, state: { github.file_at: [$github_orders, main, docs/runbook.md], contains: "health check" } }
  - { id: deployed, state: { github.production: { repo: $github_orders, commit: $github_good } } }
  - { id: filed, state: { github.issue: { repo: $github_orders, title_contains: CSV } } }
  - { id: ben_gone, state: { github.permission: { repo: $github_orders, user: $github_ben }, is: none } }
  - { id: muted, state: { datadog.downtime: { monitor: $datadog_orders, remaining_gte: 1m, duration_lte: 1h } } }
  - { id: resolved, state: { pagerduty.incident: { ref: $pd_page }, status: resolved } }
  - { id: deactivated, state: { okta.user: $okta_dana, status: DEPROVISIONED } }
  - { id: answered, state: { slack.message: { channel: $slack_support, from: $slack_bot } } }
"""


class Trial:
    def __init__(self, server: str, context: dict[str, Any]) -> None:
        self.server = server
        self.context = context
        self.env_id = context["env_id"]
        self.tools = context["tools"]

    def seq(self, method: str, path_end: str, tool: str) -> int:
        """The seq of the one agent call to ``tool`` with this method whose path ends so."""
        answer = httpx.get(f"{self.server}/envs/{self.env_id}/trace", timeout=30)
        entries = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
        found = [
            e["seq"]
            for e in entries
            if e["tool"] == tool
            and e["method"] == method
            and e["path"].endswith(path_end)
            and e["actor"] == "agent"
        ]
        assert len(found) == 1, (method, path_end, [(e["method"], e["path"]) for e in entries])
        return int(found[0])

    def checks(self) -> dict[str, dict[str, Any]]:
        """As ``ancha check`` asks for them."""
        answer = httpx.post(f"{self.server}/envs/{self.env_id}/checks", timeout=30)
        assert answer.status_code == 200, answer.text
        return {r["id"]: r for r in answer.json()["results"]}

    def check_cli(self) -> dict[str, dict[str, Any]]:
        from ancha.cli.check import check

        answer = CliRunner().invoke(
            check,
            ["--env", self.env_id, "--server", self.server, "--json"],
            env={"ANCHA_SERVER_KEY": None, "OPENROUTER_API_KEY": None},
        )
        assert answer.exit_code == 0, answer.output
        return {r["id"]: r for r in json.loads(answer.output)}

    def graded(self) -> dict[str, dict[str, Any]]:
        """As ``ancha run`` grades a finished trial."""
        answer = httpx.post(f"{self.server}/envs/{self.env_id}/grade?trace=0&state=0", timeout=30)
        assert answer.status_code == 200, answer.text
        return {r["id"]: r for r in answer.json()["results"]}


@pytest.fixture
def trial(
    tmp_path: Path,
    make_env: Callable[..., dict[str, Any]],
    ancha_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Trial:
    for name, value in registry().tool("okta").agent_env.items():  # as the agent's environment has them
        monkeypatch.setenv(name, value)
    (tmp_path / "scene.yaml").write_text(SCENE)
    scene = load_scene(tmp_path / "scene.yaml", catalog())
    return Trial(ancha_server, make_env(scene.model_dump(mode="json", by_alias=True)))


def _github(trial: Trial) -> dict[str, int]:
    tool = trial.tools["github"]
    repo = Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], **UNTHROTTLED).get_repo("acme/orders")
    readme = repo.get_contents("docs/runbook.md", ref="runbook")
    assert not isinstance(readme, list)
    repo.update_file(
        "docs/runbook.md",
        "Add the check",
        "Restart the pods.\nRun the health check.\n",
        readme.sha,
        branch="runbook",
    )
    repo.get_pull(1).merge()
    good = [c.sha for c in repo.get_commits() if c.commit.message == "Known good"][0]
    deployment = repo.create_deployment(
        ref=good, environment="production", required_contexts=[], auto_merge=False
    )
    deployment.create_status("success")
    repo.create_issue(title="CSV export is empty")
    repo.remove_from_collaborators("ben")
    return {
        "commit": trial.seq("PUT", "/repos/acme/orders/contents/docs/runbook.md", "github"),
        "merge": trial.seq("PUT", "/repos/acme/orders/pulls/1/merge", "github"),
        "deployment": trial.seq("POST", "/repos/acme/orders/deployments", "github"),
        "status": trial.seq("POST", f"/repos/acme/orders/deployments/{deployment.id}/statuses", "github"),
        "issue": trial.seq("POST", "/repos/acme/orders/issues", "github"),
        "removed": trial.seq("DELETE", "/repos/acme/orders/collaborators/ben", "github"),
    }


def _datadog(trial: Trial) -> int:
    tool = trial.tools["datadog"]
    config = Configuration(host=tool["url"])
    config.api_key["apiKeyAuth"] = tool["api_key"]
    config.api_key["appKeyAuth"] = tool["app_key"]
    monitor_id = int(trial.context["refs"]["datadog_orders"]) if "refs" in trial.context else None
    with ApiClient(config) as client:
        if monitor_id is None:
            from datadog_api_client.v1.api.monitors_api import MonitorsApi

            monitor_id = MonitorsApi(client).list_monitors()[0].id
        DowntimesApi(client).create_downtime(
            DowntimeCreateRequest(
                data=DowntimeCreateRequestData(
                    type=DowntimeResourceType.DOWNTIME,
                    attributes=DowntimeCreateRequestAttributes(
                        scope="env:prod",
                        monitor_identifier=DowntimeMonitorIdentifierId(monitor_id=monitor_id),
                        schedule=DowntimeScheduleOneTimeCreateUpdateRequest(
                            end=START + timedelta(minutes=30)
                        ),
                    ),
                )
            )
        )
    return trial.seq("POST", "/api/v2/downtime", "datadog")


def _pagerduty(trial: Trial) -> int:
    tool = trial.tools["pagerduty"]
    session = pdpyras.APISession(tool["token"], default_from=tool["from_email"])
    session.url = tool["url"]
    (incident,) = session.list_all("incidents")
    session.rput(
        f"/incidents/{incident['id']}",
        json={"incident": {"type": "incident_reference", "status": "resolved"}},
    )
    return trial.seq("PUT", f"/incidents/{incident['id']}", "pagerduty")


def _okta(trial: Trial) -> int:
    tool = trial.tools["okta"]

    async def deactivate() -> None:
        client = OktaClient({"orgUrl": tool["url"], "token": tool["token"]})
        # Okta takes "an ID, login, or login shortname" in the path: the check must still find the call.
        _, _, error = await client.deactivate_user("dana@acme.com")
        assert error is None, error

    asyncio.run(deactivate())
    return trial.seq("POST", "/lifecycle/deactivate", "okta")


def _slack(trial: Trial) -> int:
    tool = trial.tools["slack"]
    agent = WebClient(token=tool["token"], base_url=tool["url"] + "/api/")
    channel = agent.conversations_list()["channels"][0]["id"]
    agent.chat_postMessage(channel=channel, text="Exports are under Reports.")
    return trial.seq("POST", "/api/chat.postMessage", "slack")


def test_state_checks__cite_the_calls_that_made_the_state_alike_under_check_and_run(trial: Trial) -> None:
    github = _github(trial)
    downtime = _datadog(trial)
    resolve = _pagerduty(trial)
    deactivate = _okta(trial)
    post = _slack(trial)

    checked = trial.checks()
    assert all(r["passed"] for r in checked.values()), [
        (k, r["actual"]) for k, r in checked.items() if not r["passed"]
    ]
    evidence = {check_id: r["evidence"] for check_id, r in checked.items()}
    assert evidence == {
        "merged": [github["merge"]],
        # The commit that wrote the text, on the branch, and the merge that brought it to main.
        "runbook": [github["commit"], github["merge"]],
        "deployed": [github["deployment"], github["status"]],
        "filed": [github["issue"]],
        "ben_gone": [github["removed"]],
        "muted": [downtime],
        "resolved": [resolve],
        "deactivated": [deactivate],
        "answered": [post],
    }
    assert {k: r["evidence"] for k, r in trial.check_cli().items()} == evidence
    assert {k: r["evidence"] for k, r in trial.graded().items()} == evidence
