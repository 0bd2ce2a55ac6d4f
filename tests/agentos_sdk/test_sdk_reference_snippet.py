"""The Python snippet from reference/workflow-evaluations.txt ("Setting checks from the
SDK"), executed verbatim against a real server: only the base URL and key differ."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

from agentos_sdk import AgentOS

REFERENCE_SNIPPET = '''\
from agentos_sdk import AgentOS

client = AgentOS("http://localhost:8000", api_key="aos_live_…")

client.set_checks("Support Triage Crew", [
    {"name": "mentions refund", "type": "contains",
     "target": "draft_reply", "value": "refund"},
    {"name": "under budget", "type": "max_cost_usd", "value": 0.05},
    {"name": "no error leaked", "type": "expression",
     "value": "'error' not in draft_reply.lower()"},
])

run = client.run("Support Triage Crew", input={"ticket": "double charged"})
print(run["evals"]["passed"], "of", run["evals"]["total"], "checks passed")
'''


def test_reference_snippet__sets_checks_by_name_and_prints_the_run_evals(
    agentos_server: Any, triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    # Its own workspace, so the snippet's fixed name clashes with no other test.
    key = agentos_server.new_key("reference-snippet")
    with AgentOS(agentos_server.url, api_key=key) as setup:
        created = setup.create_workflow("Support Triage Crew", triage_nodes())

    source = REFERENCE_SNIPPET.replace("http://localhost:8000", agentos_server.url).replace("aos_live_…", key)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "workflow-evaluations.txt", "exec"), {"__name__": "__snippet__"})

    assert printed.getvalue() == "3 of 3 checks passed\n"
    with AgentOS(agentos_server.url, api_key=key) as check:
        workflow = check.get_workflow(created["id"])
        runs = check.list_runs(workflow=created["id"])
    assert [c["name"] for c in workflow["checks"]] == ["mentions refund", "under budget", "no error leaked"]
    assert all(c["id"].startswith("chk_") for c in workflow["checks"])
    assert workflow["version"] == created["version"] + 1
    assert len(runs) == 1 and runs[0]["status"] == "success"
