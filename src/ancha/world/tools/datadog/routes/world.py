"""The world's own calls (world rules and faults, never the agent): force or release a
monitor's state, hold or release a metric's value, start or stop a log stream.

They live under ``/ancha/`` (no Datadog API does these things) so they are traced like
every other call; anyone but the world gets Datadog's 404.
"""

from __future__ import annotations

from ancha.durations import parse_duration
from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import bad_request, not_found
from ancha.world.tools.datadog.logs import LogStream
from ancha.world.tools.datadog.monitors import STATES, Monitor
from ancha.world.tools.datadog.router import route


def _monitor(call: Call) -> Monitor:
    text = call.params["monitor_id"]
    monitor = call.state.monitor(int(text)) if is_plain_int(text) else None
    if monitor is None:
        raise not_found("Monitor not found")
    return monitor


@route("PUT", "/ancha/monitor/{monitor_id}/state")
def force_monitor_state(call: Call) -> Reply:
    """``{"state": "Alert", "key": "fault:orders_latency"}``: the monitor holds that state."""
    data = call.object()
    if data.get("state") not in STATES:
        raise bad_request(f"state must be one of {', '.join(STATES)}")
    monitor = _monitor(call)
    call.state.force(monitor, str(data.get("key") or "action"), data["state"], call.actor)
    return Reply(200, monitor.to_dict())


@route("DELETE", "/ancha/monitor/{monitor_id}/state/{key}")
def release_monitor_state(call: Call) -> Reply:
    monitor = _monitor(call)
    call.state.unforce(monitor, call.params["key"], call.actor)
    return Reply(200, monitor.to_dict())


@route("PUT", "/ancha/metric/{name}/hold/{key}")
def hold_metric(call: Call) -> Reply:
    """``{"value": 2300, "tags": [...]}``: the metric reads that value until released."""
    data = call.object()
    value = data.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_request("value must be a number")
    call.state.hold_metric(call.params["name"], call.params["key"], float(value), tuple(data.get("tags") or ()))
    return Reply(200, {"metric": call.params["name"], "value": value})


@route("DELETE", "/ancha/metric/{name}/hold/{key}")
def release_metric(call: Call) -> Reply:
    call.state.release_metric(call.params["name"], call.params["key"])
    return Reply(200, {"metric": call.params["name"]})


@route("PUT", "/ancha/logs/stream/{key}")
def start_log_stream(call: Call) -> Reply:
    """``{"service", "status", "message", "every": "1m", "host", "attributes"}``."""
    data = call.object()
    try:
        every = parse_duration(str(data.get("every") or "1m"))
    except ValueError:
        raise bad_request("every must be a duration such as 30s") from None
    if every < 1 or not isinstance(data.get("message"), str) or not isinstance(data.get("service"), str):
        raise bad_request("a stream needs service, message and every of at least 1s")
    state = call.state
    state.logs.start_stream(LogStream(key=call.params["key"], service=data["service"],
                                      status=str(data.get("status") or "error"), message=data["message"],
                                      every=every, start=state.stamp(), host=data.get("host"),
                                      attributes=data.get("attributes") or {}))
    return Reply(200, {"stream": call.params["key"]})


@route("DELETE", "/ancha/logs/stream/{key}")
def stop_log_stream(call: Call) -> Reply:
    state = call.state
    state.logs.stop_stream(call.params["key"], state.stamp())
    return Reply(200, {"stream": call.params["key"]})
