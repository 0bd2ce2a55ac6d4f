"""Service level objectives (v1): list, search, get, create, update, delete, and history
(computed in ``slo_history`` from the trial's metric points and monitor transitions)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import ApiError, bad_request, not_found, not_implemented
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.slo_history import (
    current_sli,
    metric_history,
    monitors_history,
    slo_state,
    time_slice_history,
)
from ancha.world.tools.datadog.slos import (
    COMPARATORS,
    SLO_CREATOR,
    TIMEFRAMES,
    TYPE_IDS,
    Slo,
    derived_query,
    display,
)

_WRITABLE = {
    "name",
    "description",
    "tags",
    "thresholds",
    "type",
    "query",
    "monitor_ids",
    "groups",
    "timeframe",
    "target_threshold",
    "warning_threshold",
    "sli_specification",
    "monitor_search",
}


_UNSERVED = ("can_delete", "bulk_delete")


def slos(call: Call) -> dict[str, Slo]:
    """The trial's SLOs (kept on its Datadog state beside monitors and downtimes)."""
    return call.state.slos


def _missing(slo_id: str) -> ApiError:
    return not_found(f"SLO not found: {slo_id} not found")


def _slo(call: Call) -> Slo:
    slo_id = call.params["slo_id"]
    if slo_id in _UNSERVED:  # Datadog's own paths beside /slo/{slo_id} that the replica lacks
        raise not_implemented(call.request.method, f"/api/v1/slo/{slo_id}")
    found = slos(call).get(slo_id)
    if found is None or found.deleted is not None:
        raise _missing(slo_id)
    return found


def _invalid(text: str) -> ApiError:
    return bad_request(f"Invalid payload: {text}")


def _percent(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 100:
        raise _invalid(f"{name} must be a number between 0 and 100 (exclusive)")
    return float(value)


def _thresholds(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise _invalid("must specify thresholds")
    out: list[dict[str, Any]] = []
    for item in value:
        if not isinstance(item, dict):
            raise _invalid("each threshold is an object with timeframe and target")
        timeframe = item.get("timeframe")
        if timeframe not in TIMEFRAMES:
            raise _invalid(f"threshold timeframe must be one of {', '.join(TIMEFRAMES)}, got {timeframe!r}")
        target = _percent(item.get("target"), "threshold target")
        threshold: dict[str, Any] = {
            "timeframe": timeframe,
            "target": target,
            "target_display": display(target),
        }
        if item.get("warning") is not None:
            warning = _percent(item["warning"], "threshold warning")
            if warning <= target:
                raise _invalid("threshold warning must be greater than its target")
            threshold["warning"], threshold["warning_display"] = warning, display(warning)
        out.append(threshold)
    return out


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(f"{name} must be a list of strings")
    return list(value)


def _count_spec(spec: Any) -> dict[str, str]:
    count = spec.get("count") if isinstance(spec, dict) else None
    if not isinstance(count, dict):
        raise _invalid("sli_specification needs count (metric SLOs) or time_slice (time-slice SLOs)")
    queries = count.get("queries")
    if (
        not isinstance(queries, list)
        or not queries
        or not all(
            isinstance(q, dict) and isinstance(q.get("name"), str) and isinstance(q.get("query"), str)
            for q in queries
        )
        or not isinstance(count.get("good_events_formula"), dict)
        or not (
            isinstance(count.get("total_events_formula"), dict)
            or isinstance(count.get("bad_events_formula"), dict)
        )
    ):
        raise _invalid(
            "sli_specification.count needs queries, good_events_formula and total_events_formula "
            "(or bad_events_formula)"
        )
    return derived_query(count)


def _time_slice(spec: Any) -> dict[str, Any]:
    sliced = spec.get("time_slice") if isinstance(spec, dict) else None
    if (
        not isinstance(sliced, dict)
        or sliced.get("comparator") not in COMPARATORS
        or isinstance(sliced.get("threshold"), bool)
        or not isinstance(sliced.get("threshold"), (int, float))
        or not isinstance(sliced.get("query"), dict)
    ):
        raise _invalid("sli_specification.time_slice needs comparator (>, >=, <, <=), threshold and query")
    interval = sliced.get("query_interval_seconds", 300)
    if interval not in (60, 300):
        raise _invalid("query_interval_seconds must be 60 or 300")
    return {"time_slice": {**sliced, "query_interval_seconds": interval}}


def _apply(call: Call, slo: Slo, body: dict[str, Any], kind: str) -> None:
    """Validate ``body`` for an SLO of ``kind`` and write it onto ``slo``."""
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _invalid("must specify name")
    thresholds = _thresholds(body.get("thresholds"))
    query: dict[str, str] | None = None
    spec: dict[str, Any] | None = None
    monitor_ids: list[int] = []
    if kind == "monitor":
        ids = body.get("monitor_ids")
        if not isinstance(ids, list) or not ids:
            raise _invalid("must specify monitor_ids")
        for monitor_id in ids:
            if isinstance(monitor_id, bool) or not isinstance(monitor_id, int):
                raise _invalid("monitor_ids must be a list of monitor ids")
            if call.state.monitor(monitor_id) is None:
                raise _invalid(f"monitor {monitor_id} not found")
        monitor_ids = list(ids)
    elif kind == "metric":
        if body.get("sli_specification") is not None:
            spec = body["sli_specification"]
            query = _count_spec(spec)
        else:
            given = body.get("query")
            if (
                not isinstance(given, dict)
                or not isinstance(given.get("numerator"), str)
                or not isinstance(given.get("denominator"), str)
                or not given["numerator"].strip()
                or not given["denominator"].strip()
            ):
                raise _invalid("must specify the query for count types")
            query = {"numerator": given["numerator"], "denominator": given["denominator"]}
    else:
        spec = _time_slice(body.get("sli_specification"))
    groups = _strings(body.get("groups"), "groups")
    if groups and kind == "monitor" and len(monitor_ids) != 1:
        raise _invalid("groups may only be used with a monitor SLO on one monitor")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise _invalid("description must be a string")
    first = thresholds[0]
    timeframe = body.get("timeframe", first["timeframe"])
    if timeframe not in TIMEFRAMES:
        raise _invalid(f"timeframe must be one of {', '.join(TIMEFRAMES)}")
    chosen = next((t for t in thresholds if t["timeframe"] == timeframe), first)
    target = body.get("target_threshold")
    warning = body.get("warning_threshold")
    slo.name, slo.type, slo.thresholds = name, kind, thresholds
    slo.description = description or ""
    slo.tags = _strings(body.get("tags"), "tags")
    slo.query, slo.sli_specification, slo.monitor_ids, slo.groups = query, spec, monitor_ids, groups
    slo.timeframe = timeframe
    slo.target_threshold = _percent(target, "target_threshold") if target is not None else chosen["target"]
    slo.warning_threshold = (
        _percent(warning, "warning_threshold") if warning is not None else chosen.get("warning")
    )


def _body(call: Call) -> dict[str, Any]:
    body = call.object()
    unknown = sorted(
        k
        for k in body
        if k not in _WRITABLE
        and k not in ("id", "creator", "created_at", "modified_at", "type_id", "monitor_tags")
    )
    if unknown:
        raise _invalid(f"unknown field {unknown[0]!r}")
    return body


@route("POST", "/api/v1/slo")
def create_slo(call: Call) -> Reply:
    body = _body(call)
    kind = body.get("type")
    if kind not in TYPE_IDS:
        raise _invalid("type must be one of metric, monitor, time_slice")
    state = call.state
    at = state.stamp()
    slo = Slo(id=state.world.random_hex(32), name="", type=kind, thresholds=[], created=at, modified=at)
    _apply(call, slo, body, kind)
    slos(call)[slo.id] = slo
    return Reply(200, {"data": [slo.to_dict()], "error": None})


@route("PUT", "/api/v1/slo/{slo_id}")
def update_slo(call: Call) -> Reply:
    slo = _slo(call)
    body = _body(call)
    # The kind stays what the SLO was made as (Datadog judges the body by it).
    staged = Slo(id=slo.id, name="", type=slo.type, thresholds=[], created=slo.created, modified=slo.modified)
    _apply(call, staged, body, slo.type)
    staged.modified = call.state.stamp()
    slos(call)[slo.id] = staged
    return Reply(200, {"data": [staged.to_dict()], "error": None})


@route("GET", "/api/v1/slo/{slo_id}")
def get_slo(call: Call) -> Reply:
    data = _slo(call).to_dict()
    if call.q_bool("with_configured_alert_ids"):
        data["configured_alert_ids"] = []
    return Reply(200, {"data": data, "error": None})


@route("DELETE", "/api/v1/slo/{slo_id}", partial="force is accepted (nothing references SLOs)")
def delete_slo(call: Call) -> Reply:
    slo = _slo(call)
    slo.deleted = call.state.stamp()
    return Reply(200, {"data": [slo.id], "error": None})


@route(
    "GET",
    "/api/v1/slo",
    partial="query matches the name (substring); tags_query takes tags joined with AND "
    "or commas; metrics_query matches the metric queries (substring)",
)
def list_slos(call: Call) -> Reply:
    ids = [i for i in (call.q("ids") or "").split(",") if i]
    text = (call.q("query") or "").lower()
    tags = [t.strip() for t in (call.q("tags_query") or "").replace(" AND ", ",").split(",") if t.strip()]
    metrics = (call.q("metrics_query") or "").lower()
    limit = call.q_int("limit", 1000, low=1, high=1000) or 1000
    offset = call.q_int("offset", 0, low=0) or 0
    found = [s for s in slos(call).values() if s.deleted is None]
    if ids:
        found = [s for s in found if s.id in ids]
    if text:
        found = [s for s in found if text in s.name.lower()]
    if tags:
        found = [s for s in found if all(t in s.tags for t in tags)]
    if metrics:
        found = [s for s in found if s.query and any(metrics in q.lower() for q in s.query.values())]
    body: dict[str, Any] = {"data": [s.to_dict() for s in found[offset : offset + limit]], "error": None}
    if call.q("limit") is not None or call.q("offset") is not None:
        body["metadata"] = {
            "page": {"total_count": len(found), "total_filtered_count": min(limit, len(found))}
        }
    return Reply(200, body)


def _history_window(call: Call) -> tuple[int, int]:
    start, end = call.q("from_ts"), call.q("to_ts")
    if start is None or end is None:
        raise bad_request("Both from_ts and to_ts are required")
    if not is_plain_int(start) or not is_plain_int(end):
        raise bad_request("from_ts and to_ts must be POSIX timestamps in seconds")
    t0, t1 = int(start), int(end)
    if t1 <= t0:
        raise bad_request("to_ts must be after from_ts")
    return t0, t1


def _search_item(call: Call, slo: Slo) -> dict[str, Any]:
    sli, error = current_sli(call.state, slo)
    target = slo.target_threshold or 0.0
    state = slo_state(sli, target, slo.warning_threshold)
    budget = None if sli is None else round((sli - target) / (100 - target) * 100, 4)
    indexed = int(call.state.now())
    precision = None if sli is None else 2
    status = {
        "error_budget_remaining": budget,
        "raw_error_budget_remaining": None,
        "indexed_at": indexed,
        "span_precision": precision,
        "state": state,
        "sli": sli,
        "calculation_error": error,
    }
    overall = [
        {
            "error_budget_remaining": budget,
            "raw_error_budget_remaining": None,
            "indexed_at": indexed,
            "status": sli,
            "span_precision": precision,
            "error": error,
            "target": t["target"],
            "state": state,
            "timeframe": t["timeframe"],
        }
        for t in slo.thresholds
    ]
    query = {"metrics": None, **slo.query} if slo.query else None

    def tagged(prefix: str) -> list[str]:
        return [t for t in slo.tags if t.startswith(prefix)]

    attributes = {
        "name": slo.name,
        "description": slo.description or None,
        "slo_type": slo.type,
        "all_tags": sorted(slo.tags),
        "env_tags": tagged("env:"),
        "service_tags": tagged("service:"),
        "team_tags": tagged("team:"),
        "thresholds": [dict(t) for t in slo.thresholds],
        "timeframe": slo.timeframe,
        "target_threshold": slo.target_threshold,
        "warning_threshold": slo.warning_threshold,
        "monitor_ids": list(slo.monitor_ids) or None,
        "groups": list(slo.groups) or None,
        "query": query,
        "overall_status": overall,
        "status": status,
        "creator": {"name": SLO_CREATOR["name"], "id": None, "email": SLO_CREATOR["email"]},
        "created_at": int(slo.created),
        "modified_at": int(slo.modified),
    }
    return {"data": {"type": "slo", "id": slo.id, "attributes": attributes}}


@route(
    "GET",
    "/api/v1/slo/search",
    partial="query matches names (substring) and tags (key:value terms); include_facets is ignored",
)
def search_slos(call: Call) -> Reply:
    text = (call.q("query") or "").strip()
    size = call.q_int("page[size]", 10, low=1, high=1000) or 10
    number = call.q_int("page[number]", 0, low=0) or 0
    found = [s for s in slos(call).values() if s.deleted is None]
    for term in text.split():
        if ":" in term and not term.lower().startswith("name:"):
            found = [s for s in found if term in s.tags]
        else:
            needle = term.split(":", 1)[-1].strip('"').lower()
            found = [s for s in found if needle in s.name.lower()]
    page = found[number * size : (number + 1) * size]
    last = max(0, (len(found) - 1) // size)
    base = f"{call.replica.base_url}/api/v1/slo/search?"

    def link(n: int) -> str:
        return base + urlencode({"query": text, "page[size]": size, "page[number]": n})

    return Reply(
        200,
        {
            "data": {
                "type": "service_level_objective_search_results",
                "attributes": {"slos": [_search_item(call, s) for s in page]},
            },
            "meta": {
                "pagination": {
                    "number": number,
                    "first_number": 0,
                    "prev_number": max(0, number - 1),
                    "next_number": number + 1,
                    "last_number": last,
                    "size": size,
                    "type": "number_size",
                    "total": len(found),
                }
            },
            "links": {
                "self": link(number),
                "first": link(0),
                "last": link(last),
                "next": link(number + 1) if number < last else None,
                "prev": link(number - 1) if number > 0 else None,
            },
        },
    )


@route(
    "GET",
    "/api/v1/slo/{slo_id}/history",
    partial="corrections are not modelled; the SLI comes from the "
    "trial's metric points and monitor transitions",
)
def get_slo_history(call: Call) -> Reply:
    slo = _slo(call)
    t0, t1 = _history_window(call)
    target = call.q("target")
    if target is not None:
        try:
            _percent(float(target), "target")
        except ValueError:
            raise bad_request("target must be a number between 0 and 100") from None
    data: dict[str, Any] = {
        "thresholds": {t["timeframe"]: dict(t) for t in slo.thresholds},
        "from_ts": t0,
        "to_ts": t1,
        "type": slo.type,
        "type_id": slo.type_id,
        "slo": slo.to_dict(),
        "group_by": [],
    }
    if slo.type == "metric":
        data.update(metric_history(call.state, slo, t0, t1))
    elif slo.type == "monitor":
        data.update(monitors_history(call.state, slo, t0, t1))
    else:
        data.update(time_slice_history(call.state, slo, t0, t1))
    return Reply(200, {"data": data, "errors": None})
