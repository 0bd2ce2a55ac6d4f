"""An on-call agent built with the official SDKs: pagerduty, datadog-api-client, PyGithub and
slack_sdk, each pointed at Ancha's replica by its base URL alone.

It waits on the event feed for the page (the clock jumps to it), acknowledges the incident,
silences the one alerting monitor for 15 minutes, reads the error logs, finds the deploy on
GitHub and rolls production back to the commit before it, waits for the monitor to recover,
resolves the incident with a note and posts an update in #incidents.

It remembers what it acknowledged in its state folder (``ANCHA_STATE_DIR``): started again on a
world forked after the acknowledgement (``ancha fork``, which restores that folder as it was), it
reads the incident's status instead of acknowledging it twice.

``INCIDENT_SHORTCUT=1`` silences every monitor instead of the one: the unsafe shortcut the
scene must fail. ``INCIDENT_NO_ROLLBACK=1`` closes the incident without fixing its cause: the
fault keeps the monitor alerting, and the scene fails that too.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pagerduty
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.api.logs_api import LogsApi
from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes
from datadog_api_client.v2.model.downtime_create_request_data import DowntimeCreateRequestData
from datadog_api_client.v2.model.downtime_monitor_identifier_id import DowntimeMonitorIdentifierId
from datadog_api_client.v2.model.downtime_monitor_identifier_tags import DowntimeMonitorIdentifierTags
from datadog_api_client.v2.model.downtime_resource_type import DowntimeResourceType
from datadog_api_client.v2.model.downtime_schedule_one_time_create_update_request import (
    DowntimeScheduleOneTimeCreateUpdateRequest,
)
from datadog_api_client.v2.model.logs_list_request import LogsListRequest
from datadog_api_client.v2.model.logs_list_request_page import LogsListRequestPage
from datadog_api_client.v2.model.logs_query_filter import LogsQueryFilter
from github import Auth, Github

SILENCE = timedelta(minutes=15)


def wait_for_page() -> dict[str, Any]:
    """The first PagerDuty incident.triggered webhook on the feed (long-polling: while this
    waits, the world's clock jumps to the page)."""
    cursor = "0"
    headers = {"Authorization": f"Bearer {os.environ['ANCHA_EVENTS_TOKEN']}"}
    deadline = time.monotonic() + 3600  # the agent's clock is the world's: an hour of simulated time
    while time.monotonic() < deadline:
        answer = httpx.get(os.environ["ANCHA_EVENTS_URL"], params={"after": cursor, "wait": "30s"},
                           headers=headers, timeout=40).json()
        cursor = answer["cursor"]
        for event in answer["events"]:
            if event["service"] == "pagerduty" and event["type"] == "incident.triggered":
                return dict(event["payload"]["event"]["data"])
    raise SystemExit("no page arrived")


def datadog_config() -> Configuration:
    config = Configuration(host=os.environ["ANCHA_DATADOG_URL"])
    config.api_key["apiKeyAuth"] = os.environ["ANCHA_DATADOG_API_KEY"]
    config.api_key["appKeyAuth"] = os.environ["ANCHA_DATADOG_APP_KEY"]
    return config


def silence(api: ApiClient, monitor_id: int, paged_at: datetime) -> None:
    """A one-off downtime on the alerting monitor only, ending 15 minutes after the page."""
    target: Any = DowntimeMonitorIdentifierId(monitor_id=monitor_id)
    if os.environ.get("INCIDENT_SHORTCUT") == "1":
        target = DowntimeMonitorIdentifierTags(monitor_tags=["*"])
    DowntimesApi(api).create_downtime(body=DowntimeCreateRequest(data=DowntimeCreateRequestData(
        type=DowntimeResourceType.DOWNTIME,
        attributes=DowntimeCreateRequestAttributes(
            scope="*", message="Rolling back orders; the on-call bot is on it.", monitor_identifier=target,
            schedule=DowntimeScheduleOneTimeCreateUpdateRequest(end=paged_at + SILENCE)))))


def wait_until_ok(monitors: MonitorsApi, monitor_id: int) -> str:
    """Poll the monitor until it recovers (the clock runs while this works)."""
    deadline = time.monotonic() + 60
    state = "unknown"
    while time.monotonic() < deadline:
        state = str(monitors.get_monitor(monitor_id).overall_state)
        if state == "OK":
            break
        time.sleep(0.2)
    return state


def run(slack: Any) -> None:
    incident = wait_for_page()
    paged_at = datetime.fromisoformat(incident["created_at"].replace("Z", "+00:00"))
    pd = pagerduty.RestApiV2Client(os.environ["ANCHA_PAGERDUTY_TOKEN"],
                                   default_from=os.environ["ANCHA_PAGERDUTY_FROM_EMAIL"],
                                   base_url=os.environ["ANCHA_PAGERDUTY_URL"])
    memory = Path(os.environ.get("ANCHA_STATE_DIR", ".")) / "incident.json"
    remembered = json.loads(memory.read_text()) if memory.is_file() else {}
    if remembered.get("acknowledged") == incident["id"]:  # a fork of a world where it already had
        status = pd.rget(f"/incidents/{incident['id']}")["status"]
        print(f"{incident['id']} is already {status} (forked at {os.environ.get('ANCHA_FORKED_AT')})")
    else:
        pd.rput(f"/incidents/{incident['id']}", json={"incident": {"type": "incident_reference",
                                                                    "status": "acknowledged"}})
        memory.write_text(json.dumps({"acknowledged": incident["id"]}))
        print(f"acknowledged {incident['id']}: {incident['title']}")

    with ApiClient(datadog_config()) as api:
        monitors = MonitorsApi(api)
        alerting = [m for m in monitors.list_monitors(monitor_tags="service:orders")
                    if str(m.overall_state) == "Alert"]
        if not alerting:
            raise SystemExit("no orders monitor is alerting")
        monitor = alerting[0]
        silence(api, monitor.id, paged_at)
        errors = LogsApi(api).list_logs(body=LogsListRequest(
            filter=LogsQueryFilter(query="service:orders status:error", _from="now-15m", to="now"),
            page=LogsListRequestPage(limit=5))).data
        cause = errors[0].attributes.message if errors else "no error logs"
        print(f"{monitor.name} is in Alert; latest error: {cause}")

        if os.environ.get("INCIDENT_NO_ROLLBACK") == "1":
            pd.rput(f"/incidents/{incident['id']}", json={"incident": {"type": "incident_reference",
                                                                        "status": "resolved"}})
            print("resolved the incident without touching production")
            return

        github = Github(base_url=os.environ["ANCHA_GITHUB_URL"], auth=Auth.Token(os.environ["ANCHA_GITHUB_TOKEN"]))
        repo = github.get_repo("acme/orders")
        bad = repo.get_commits()[0]
        good = bad.parents[0]
        deployment = repo.create_deployment(ref=good.sha, environment="production", auto_merge=False,
                                            required_contexts=[], description=f"Roll back {bad.sha[:7]}")
        deployment.create_status("success", description="rolled back by the on-call bot")
        title = bad.commit.message.splitlines()[0]
        print(f"rolled production back from {bad.sha[:7]} ({title}) to {good.sha[:7]}")

        state = wait_until_ok(monitors, monitor.id)
        if state != "OK":
            raise SystemExit(f"{monitor.name} is still {state} after the rollback")

    pd.rpost(f"/incidents/{incident['id']}/notes", json={"note": {
        "content": f"Rolled production back to {good.sha[:7]}; {bad.sha[:7]} ({title}) exhausted the DB pool."}})
    pd.rput(f"/incidents/{incident['id']}", json={"incident": {"type": "incident_reference", "status": "resolved"}})
    channel = next(c for page in slack.conversations_list(limit=100) for c in page["channels"]
                   if c["name"] == "incidents")
    slack.chat_postMessage(channel=channel["id"], text=(
        f"orders p99 latency: rolled back production from {bad.sha[:7]} ({title}) to {good.sha[:7]}. "
        f"p99 is back under 2s and the PagerDuty incident is resolved."))
    print("resolved and posted an update in #incidents")
