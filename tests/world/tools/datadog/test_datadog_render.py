"""Datadog in the console's world diff: a downtime with its scope, flagged when it mutes every
monitor; a monitor's transitions as dates; log counters as bookkeeping."""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.rendered import FieldChange, ObjectChange
from ancha.world.tools.datadog.render import ALL_MONITORS, render

SNAPSHOT = {"monitors": [{"id": 19033074, "name": "orders p99 latency"}]}


def _downtime(identifier: dict[str, Any], end: str | None = "2026-03-02T14:18:00+00:00") -> ObjectChange:
    downtime = {"id": "95d1498e-855a", "actor": "agent", "attributes": {
        "monitor_identifier": identifier, "scope": "*", "status": "active", "message": "rolling back",
        "schedule": {"start": "2026-03-02T14:03:11.703752+00:00", "end": end}}}
    return ObjectChange("downtimes", "id=95d1498e-855a", "added", None, downtime, (), snapshot=SNAPSHOT)


def test_datadog_render__a_downtime_on_every_monitor_is_flagged() -> None:
    shown = render(_downtime({"monitor_tags": ["*"]}))
    assert shown is not None and shown.kind == "downtime"
    assert ALL_MONITORS in shown.flags
    assert {f.label: f.value for f in shown.fields}["mutes"] == "all monitors"


def test_datadog_render__a_downtime_on_one_monitor_names_it_and_is_not_flagged() -> None:
    shown = render(_downtime({"monitor_id": 19033074}))
    assert shown is not None and shown.flags == ()
    values = {f.label: f.value for f in shown.fields}
    assert values["mutes"] == "monitor 'orders p99 latency' (19033074)"
    assert values["from"] == "2026-03-02 14:03:11 UTC" and values["until"] == "2026-03-02 14:18:00 UTC"
    assert shown.body == "rolling back"


def test_datadog_render__a_downtime_with_no_end_is_flagged() -> None:
    shown = render(_downtime({"monitor_id": 19033074}, end=None))
    assert shown is not None and "never ends" in shown.flags


def test_datadog_render__a_monitor_shows_its_state_and_new_transitions_as_dates() -> None:
    before = {"id": 19033074, "name": "orders p99 latency", "overall_state": "OK", "transitions": []}
    after = {**before, "overall_state": "Alert",
             "transitions": [{"at": 1772460180.000003, "from": "OK", "to": "Alert", "cause": "fault:orders_latency"}]}
    fields = (FieldChange("overall_state", "changed", "OK", "Alert"), FieldChange("transitions", "changed", [], []))
    shown = render(ObjectChange("monitors", "id=19033074", "changed", before, after, fields))
    assert shown is not None and shown.kind == "monitor"
    state = next(f for f in shown.fields if f.label == "state")
    assert (state.before, state.value) == ("OK", "Alert")
    assert any(f.label == "at 2026-03-02 14:03:00 UTC" and f.value == "OK → Alert (fault:orders_latency)"
               for f in shown.fields)
    assert not any("1772460180" in f.label + f.value for f in shown.fields)


def test_datadog_render__the_log_counter_is_bookkeeping() -> None:
    shown = render(ObjectChange("logs", "", "changed", {"added": 0}, {"added": 4},
                                (FieldChange("added", "changed", 0, 4),)))
    assert shown is not None and shown.bookkeeping
