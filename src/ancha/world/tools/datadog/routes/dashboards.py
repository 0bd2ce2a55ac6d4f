"""Dashboards (v1): create, get, list, update, delete (one or many) and restore.

A deleted dashboard leaves lists and answers 404 to get, update and delete; ``filter[deleted]``
lists the deleted ones, and a bulk restore brings them back.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import ApiError, bad_request, not_found
from ancha.world.tools.datadog.records import Dashboard
from ancha.world.tools.datadog.router import route

_COMPUTED = {
    "title",
    "description",
    "layout_type",
    "widgets",
    "is_read_only",
    "id",
    "author_handle",
    "author_name",
    "url",
    "created_at",
    "modified_at",
    "deleted_at",
}


def _missing(dashboard_id: str) -> ApiError:
    return not_found(f"Dashboard with ID {dashboard_id} not found")


def _live(call: Call, dashboard_id: str) -> Dashboard:
    dashboard = call.state.dashboards.get(dashboard_id)
    if dashboard is None or dashboard.deleted is not None:
        raise _missing(dashboard_id)
    return dashboard


def _template_variables(body: dict[str, Any]) -> None:
    variables = body.get("template_variables")
    if variables is not None:
        if not isinstance(variables, list) or not all(isinstance(v, dict) for v in variables):
            raise bad_request("'template_variables' is invalid")
        for variable in variables:
            if not isinstance(variable.get("name"), str) or (
                "default" in variable and "defaults" in variable
            ):
                raise bad_request("'template_variables' is invalid")
            defaults = variable.get("defaults")
            if defaults is not None:
                if not isinstance(defaults, list) or not all(isinstance(d, str) for d in defaults):
                    raise bad_request("'template_variables' is invalid")
                if any(d == "" for d in defaults):
                    raise bad_request("Minimum length of parameter 'defaults' should be 1")
    presets = body.get("template_variable_presets")
    if presets is not None:
        if not isinstance(presets, list) or not all(isinstance(p, dict) for p in presets):
            raise bad_request("'template_variable_presets' is invalid")
        for preset in presets:
            for value in preset.get("template_variables") or []:
                if not isinstance(value, dict) or ("value" in value and "values" in value):
                    raise bad_request(f"'template_variables' value '{value!r}' is invalid")


def _validated(call: Call) -> dict[str, Any]:
    body = call.object()
    _template_variables(body)
    tags = body.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise bad_request("'tags' is invalid")
        if any(not t.startswith("team:") for t in tags):
            raise bad_request("Invalid tag format. Valid tag keys are: team.")
    title = body.get("title")
    if not isinstance(title, str):
        raise bad_request("'title' is required")
    if body.get("layout_type") not in ("ordered", "free"):
        raise bad_request("'layout_type' is invalid: expected ordered or free")
    widgets = body.get("widgets")
    if not isinstance(widgets, list) or not all(
        isinstance(w, dict) and isinstance(w.get("definition"), dict) for w in widgets
    ):
        raise bad_request("'widgets' is invalid: expected a list of widgets, each with a definition")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_request("'description' is invalid")
    return body


def _widgets(call: Call, widgets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each widget (and each widget of a group) with an id, as Datadog assigns them."""
    rng = call.state.world.rng
    out = []
    for widget in widgets:
        item = dict(widget)
        definition = item["definition"]
        if isinstance(definition.get("widgets"), list):
            inner = [
                w
                for w in definition["widgets"]
                if isinstance(w, dict) and isinstance(w.get("definition"), dict)
            ]
            item["definition"] = {**definition, "widgets": _widgets(call, inner)}
        if not isinstance(item.get("id"), int):
            item["id"] = rng.randrange(10**14, 10**16)
        out.append(item)
    return out


def _apply(call: Call, dashboard: Dashboard, body: dict[str, Any]) -> None:
    dashboard.title = body["title"]
    dashboard.description = body.get("description")
    dashboard.layout_type = body["layout_type"]
    dashboard.widgets = _widgets(call, body["widgets"])
    # Fields the replica does not model (default_timeframe, tabs, ...) are kept and answered as sent.
    dashboard.extra = {k: v for k, v in body.items() if k not in _COMPUTED}


@route("POST", "/api/v1/dashboard", partial="widget definitions are stored as sent, not validated")
def create_dashboard(call: Call) -> Reply:
    body = _validated(call)
    state = call.state
    at = state.stamp()
    dashboard = Dashboard(id=state.new_dashboard_id(), title="", created=at, modified=at)
    _apply(call, dashboard, body)
    state.dashboards[dashboard.id] = dashboard
    return Reply(200, dashboard.to_dict())


@route(
    "PUT", "/api/v1/dashboard/{dashboard_id}", partial="widget definitions are stored as sent, not validated"
)
def update_dashboard(call: Call) -> Reply:
    dashboard = _live(call, call.params["dashboard_id"])
    body = _validated(call)
    _apply(call, dashboard, body)
    dashboard.modified = call.state.stamp()
    return Reply(200, dashboard.to_dict())


@route(
    "GET",
    "/api/v1/dashboard",
    partial="filter[shared] matches nothing (the replica has no shared dashboards)",
)
def list_dashboards(call: Call) -> Reply:
    start = call.q_int("start", 0, low=0) or 0
    count = call.q_int("count", 100, low=1, high=1000) or 100
    deleted = call.q_bool("filter[deleted]")
    if call.q_bool("filter[shared]"):
        dashboards: list[Dashboard] = []
    else:
        dashboards = [d for d in call.state.dashboards.values() if (d.deleted is not None) == deleted]
    return Reply(200, {"dashboards": [d.summary() for d in dashboards[start : start + count]]})


@route("GET", "/api/v1/dashboard/{dashboard_id}")
def get_dashboard(call: Call) -> Reply:
    return Reply(200, _live(call, call.params["dashboard_id"]).to_dict())


@route("DELETE", "/api/v1/dashboard/{dashboard_id}")
def delete_dashboard(call: Call) -> Reply:
    dashboard = _live(call, call.params["dashboard_id"])
    dashboard.deleted = call.state.stamp()
    return Reply(200, {"deleted_dashboard_id": dashboard.id})


def _bulk(call: Call) -> list[str]:
    data = call.object().get("data")
    if not isinstance(data, list) or not data:
        raise bad_request('\'data\' is required: a list of {"id": ..., "type": "dashboard"}')
    ids = []
    for item in data:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("id"), str)
            or item.get("type") != "dashboard"
        ):
            raise bad_request('\'data\' is invalid: each item is {"id": <dashboard id>, "type": "dashboard"}')
        ids.append(item["id"])
    return ids


@route("DELETE", "/api/v1/dashboard")
def delete_dashboards(call: Call) -> Reply:
    ids = _bulk(call)
    found = [_live(call, i) for i in ids]
    at = call.state.stamp()
    for dashboard in found:
        dashboard.deleted = at
    return Reply(204, None)


@route("PATCH", "/api/v1/dashboard")
def restore_dashboards(call: Call) -> Reply:
    ids = _bulk(call)
    found = []
    for dashboard_id in ids:
        dashboard = call.state.dashboards.get(dashboard_id)
        if dashboard is None:
            raise _missing(dashboard_id)
        found.append(dashboard)
    for dashboard in found:
        dashboard.deleted = None
    return Reply(204, None)
