"""Property tests: whatever a caller sends to any served route (and the Events API), the
replica answers PagerDuty-shaped JSON, never a 5xx but the documented 501 coverage gap."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pagerduty_support import build_env

from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.pagerduty.routes import load_all

ROUTES = sorted({(r.method, r.template) for r in load_all()})
ENV = build_env()
REPLICA: Any = ENV.tools["pagerduty"]
IDS = [*REPLICA.state.incidents, *REPLICA.state.users, *REPLICA.state.services, *REPLICA.state.schedules,
       *REPLICA.state.policies, *REPLICA.state.log_entries]

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                     st.sampled_from(["triggered", "acknowledged", "resolved", "high", "low", "incident",
                                      "incident_reference", "2026-03-02T09:00:00Z", *IDS]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=10), inner, max_size=3), max_leaves=8)
_REF = st.fixed_dictionaries({"id": st.one_of(st.sampled_from(IDS), st.text(max_size=8)),
                              "type": st.sampled_from(["service_reference", "user_reference", "incident_reference"])})
_INCIDENT = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["incident", "incident_reference", "x"]), "title": _SCALARS, "status": _SCALARS,
    "urgency": _SCALARS, "service": st.one_of(_REF, _JSON), "escalation_level": _SCALARS,
    "assignments": st.one_of(st.lists(st.fixed_dictionaries({"assignee": _REF}), max_size=2), _JSON),
    "escalation_policy": st.one_of(_REF, _JSON), "priority": st.one_of(_REF, _JSON), "incident_key": _SCALARS,
    "id": st.one_of(st.sampled_from(IDS), _SCALARS)})
_BODY = st.one_of(_JSON, st.fixed_dictionaries({"incident": _INCIDENT}),
                  st.fixed_dictionaries({"incidents": st.lists(_INCIDENT, max_size=2)}),
                  st.fixed_dictionaries({"note": st.fixed_dictionaries({"content": _SCALARS})}),
                  st.fixed_dictionaries({"duration": _SCALARS}),
                  st.fixed_dictionaries({"source_incidents": st.lists(_REF, max_size=2)}))
_QUERY = st.dictionaries(st.sampled_from(["statuses[]", "service_ids[]", "user_ids[]", "urgencies[]", "since",
                                          "until", "date_range", "sort_by", "limit", "offset", "total", "query",
                                          "incident_key", "earliest", "schedule_ids[]", "escalation_policy_ids[]"]),
                         st.one_of(st.text(max_size=12), st.sampled_from(["all", "true", "100", "-1", "9999",
                                                                          "2026-03-01", "created_at:desc",
                                                                          "urgency", *IDS])), max_size=4)
_SEGMENT = st.one_of(st.sampled_from(IDS), st.text(min_size=1, max_size=10).filter(lambda s: s.strip(".") != ""))
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(status: int, body: bytes, gap: bool) -> None:
    assert status < 500 or (status == 501 and gap), body
    if status >= 400:
        decoded = json.loads(body)
        assert isinstance(decoded.get("error"), dict) or decoded.get("status") == "invalid event", body


@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENT, min_size=3, max_size=3), query=_QUERY,
       body=_BODY, sender=st.sampled_from(["ancha-agent@acme.test", "laura@acme.test", "", "nobody@x"]))
def test_served_routes__never_answer_5xx(route: tuple[str, str], segments: list[str], query: dict[str, str],
                                         body: Any, sender: str) -> None:
    method, template = route
    values = iter(segments)
    path = re.sub(r"\{[^}]+\}", lambda _: quote(next(values), safe=""), template)
    headers = {"authorization": f"Token token={REPLICA.token}", "content-type": "application/json"}
    if sender:
        headers["from"] = sender
    answer = ENV.dispatch("pagerduty", ToolRequest(method, path, urlencode(query), headers,
                                                   json.dumps(body).encode()))
    _check(answer.status, answer.body, answer.coverage_gap)


@_SETTINGS
@given(event=st.one_of(_JSON, st.fixed_dictionaries({}, optional={
    "routing_key": st.one_of(st.sampled_from([s.integration_key for s in REPLICA.state.services.values()]),
                             _SCALARS),
    "event_action": st.one_of(st.sampled_from(["trigger", "acknowledge", "resolve"]), _SCALARS),
    "dedup_key": _SCALARS,
    "payload": st.one_of(_JSON, st.fixed_dictionaries({}, optional={
        "summary": _SCALARS, "source": _SCALARS, "severity": st.one_of(st.sampled_from(["critical", "info"]),
                                                                        _SCALARS),
        "custom_details": _JSON}))})),
       path=st.sampled_from(["/v2/enqueue", "/v2/change/enqueue"]))
def test_events_api__never_answers_5xx(event: Any, path: str) -> None:
    answer = ENV.dispatch("pagerduty", ToolRequest("POST", path, body=json.dumps(event).encode()))
    _check(answer.status, answer.body, False)
    assert answer.status in (202, 400)


@_SETTINGS
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]),
       path=st.lists(_SEGMENT, min_size=1, max_size=4).map(lambda s: "/" + "/".join(quote(p, safe="") for p in s)))
def test_any_path__is_served_a_gap_or_pagerduty_404(method: str, path: str) -> None:
    answer = ENV.dispatch("pagerduty", ToolRequest(method, path, "", {"authorization":
                                                                     f"Token token={REPLICA.token}"}))
    _check(answer.status, answer.body, answer.coverage_gap)
