"""Dashboards (v1): list and get."""

from __future__ import annotations

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import not_found
from ancha.world.tools.datadog.router import route


@route("GET", "/api/v1/dashboard", partial="filter[shared] and filter[deleted] match nothing extra")
def list_dashboards(call: Call) -> Reply:
    start = call.q_int("start", 0, low=0) or 0
    count = call.q_int("count", 100, low=1, high=1000) or 100
    shared = call.q_bool("filter[shared]")
    dashboards = [] if shared or call.q_bool("filter[deleted]") else list(call.state.dashboards.values())
    return Reply(200, {"dashboards": [d.summary() for d in dashboards[start:start + count]]})


@route("GET", "/api/v1/dashboard/{dashboard_id}")
def get_dashboard(call: Call) -> Reply:
    dashboard = call.state.dashboards.get(call.params["dashboard_id"])
    if dashboard is None:
        raise not_found(f"Dashboard with ID {call.params['dashboard_id']} not found")
    return Reply(200, dashboard.to_dict())
