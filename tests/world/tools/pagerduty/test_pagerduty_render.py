"""PagerDuty in the console's world diff: an incident's status, acknowledgements and resolution."""

from __future__ import annotations

from ancha.world.kernel.rendered import FieldChange, ObjectChange
from ancha.world.tools.pagerduty.render import render

BOT = {"id": "PCJAEQ7", "summary": "Acme On-call Bot"}


def test_pagerduty_render__an_incident_shows_its_status_change_and_who_acknowledged_it() -> None:
    before = {"incident_number": 1, "title": "orders p99 latency above 2s", "status": "triggered", "urgency": "high",
              "service": {"summary": "orders"}, "created_at": "2026-03-02T14:03:00Z", "acknowledgements": []}
    after = {**before, "status": "resolved", "resolved_at": "2026-03-02T14:04:48Z", "last_status_change_by": BOT,
             "acknowledgements": [{"at": "2026-03-02T14:03:09Z", "acknowledger": BOT}]}
    fields = (FieldChange("status", "changed", "triggered", "resolved"),)
    shown = render(ObjectChange("incidents", "id=PHK7P4M", "changed", before, after, fields))
    assert shown is not None and shown.kind == "incident"
    assert shown.title == "incident #1: orders p99 latency above 2s"
    values = {f.label: (f.before, f.value) for f in shown.fields}
    assert values["status"] == ("triggered", "resolved")
    assert values["acknowledged"] == (None, "by Acme On-call Bot at 2026-03-02 14:03:09 UTC")
    assert values["resolved by"][1] == "Acme On-call Bot"


def test_pagerduty_render__a_services_last_incident_time_is_bookkeeping() -> None:
    before = {"id": "PA7DBLZ", "name": "orders", "last_incident_timestamp": None}
    after = {**before, "last_incident_timestamp": "2026-03-02T14:03:00Z"}
    shown = render(ObjectChange("services", "id=PA7DBLZ", "changed", before, after,
                                (FieldChange("last_incident_timestamp", "changed", None, "2026-03-02T14:03:00Z"),)))
    assert shown is not None and shown.bookkeeping
