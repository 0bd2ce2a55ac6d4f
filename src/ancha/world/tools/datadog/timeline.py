"""What the console's timeline shows of Datadog: each monitor's state since it last changed."""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.spec import TimelineMark

_STATES = {"Alert": "alert", "Warn": "warn", "No Data": "warn", "OK": "ok"}


def monitor_marks(snapshot: dict[str, Any]) -> list[TimelineMark]:
    marks = []
    for monitor in snapshot.get("monitors") or []:
        if not isinstance(monitor, dict) or not isinstance(monitor.get("overall_state_modified"), str):
            continue
        state = str(monitor.get("overall_state"))
        marks.append(TimelineMark(monitor["overall_state_modified"], f"monitor {monitor.get('name')}: {state}",
                                  _STATES.get(state, "info")))
    return marks
