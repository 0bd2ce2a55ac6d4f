"""Text an agent writes (lone surrogates, NUL, very long, right-to-left, combining marks, emoji)
never poisons a replica: a write either is refused in the vendor's own shape or is stored as
text that every later read of the world, the trace and ``/state`` can still answer with.

JSON that holds a lone surrogate (``"\\ud800"``, or its UTF-8 bytes) is refused by every
replica with its "invalid JSON" error; form values and query strings whose percent-escapes
are not UTF-8 are read with U+FFFD in their place."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_calls import EVERY_TOOL_SCENE, auth_headers, vendor_shaped

SCENE: dict[str, Any] = {
    "name": "hostile-text",
    "world": {
        "slack": EVERY_TOOL_SCENE["world"]["slack"],
        "github": {"repos": [{"ref": "app", "name": "ancha-agent/app", "issues": [{"title": "Seeded issue"}]}]},
        "datadog": {},
        "pagerduty": {
            "escalation_policies": [{"ref": "pd_policy", "name": "Default",
                                     "rules": [{"delay": 900.0, "targets": ["pagerduty_agent"]}]}],
            "services": [{"ref": "pd_orders", "name": "orders", "escalation_policy": "pd_policy"}],
        },
        "okta": {},
    },
}

HOSTILE = ["\ud800", "\udfff", "a\ud83d", "\ude00b", "\ud83d\ude00", "\x00", "a\x00b", "x" * 100_000,
           "\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd", "e" + "\u0301" * 200, "\U0001f469\u200d\U0001f469\u200d\U0001f467",
           "\ufeff", "\uffff", "\U0010ffff", " ", "\u1100\u1161\u11a8", "\x01\x1f\x7f", "%ED%A0%80", "\\ud800"]
"""Strings that broke, or could break, a replica or whatever reads the world afterwards."""

texts = st.lists(st.sampled_from(HOSTILE) | st.text(alphabet=st.characters(codec=None), max_size=8),
                 min_size=1, max_size=3).map("".join)
"""Hostile strings, and text from every code point (lone surrogates included)."""


def _as_json(body: Any, raw_utf8: bool) -> bytes:
    """A JSON body: surrogates as ``\\ud800`` escapes (what ``json.dumps`` and JavaScript write),
    or with ``raw_utf8`` as their UTF-8 bytes (what a careless encoder writes)."""
    if raw_utf8:
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(body).encode()


def _form(pairs: dict[str, str]) -> bytes:
    """A form body whose values keep their surrogates as percent-escaped UTF-8 bytes (``%ED%A0%80``)."""
    return "&".join(f"{k}={urllib.parse.quote_from_bytes(v.encode('utf-8', 'surrogatepass'))}"
                    for k, v in pairs.items()).encode()


def _world(ancha_server: str) -> dict[str, Any]:
    """An environment of SCENE, with the ids the writes need."""
    answer = httpx.post(ancha_server + "/envs", json={"scene": SCENE}, timeout=30)
    assert answer.status_code == 201, answer.text
    context: dict[str, Any] = answer.json()
    tools = context["tools"]
    with httpx.Client(timeout=30, verify=False) as client:
        slack = tools["slack"]
        channels = client.get(slack["url"] + "/api/conversations.list", headers=auth_headers("slack", slack)).json()
        context["channel"] = next(c["id"] for c in channels["channels"] if c["name"] == "general")
        pagerduty = tools["pagerduty"]
        services = client.get(pagerduty["url"] + "/services", headers=auth_headers("pagerduty", pagerduty)).json()
        context["service"] = services["services"][0]["id"]
        incident = client.post(pagerduty["url"] + "/incidents", headers=auth_headers("pagerduty", pagerduty), json={
            "incident": {"type": "incident", "title": "Seed for notes",
                         "service": {"id": context["service"], "type": "service_reference"}}})
        assert incident.status_code == 201, incident.text
        context["incident"] = incident.json()["incident"]["id"]
    return context


@pytest.fixture(scope="module")
def world(ancha_server: str) -> Any:
    """One environment for the module's single calls."""
    context = _world(ancha_server)
    yield context
    httpx.delete(f"{ancha_server}/envs/{context['env_id']}", timeout=30)


@pytest.fixture
def own_world(ancha_server: str) -> Any:
    """An environment of its own (a property's many reads stay within GitHub's search rate limit)."""
    context = _world(ancha_server)
    yield context
    httpx.delete(f"{ancha_server}/envs/{context['env_id']}", timeout=30)


@pytest.fixture(scope="module")
def client() -> Any:
    with httpx.Client(timeout=60, verify=False) as shared:
        yield shared


Write = tuple[str, str, Callable[[dict[str, Any], str, bool], tuple[bytes, str]]]
"""A write: method, path (``{channel}``-style names filled from the world) and its body from a text."""


def _json_write(make: Callable[[dict[str, Any], str], Any]) -> Callable[[dict[str, Any], str, bool], tuple[bytes, str]]:
    return lambda world, text, raw: (_as_json(make(world, text), raw), "application/json; charset=utf-8")


WRITES: dict[str, list[Write]] = {
    "slack": [
        ("POST", "/api/chat.postMessage", _json_write(lambda w, s: {"channel": w["channel"], "text": s})),
        ("POST", "/api/chat.postMessage", lambda w, s, raw: (_form({"channel": w["channel"], "text": s}),
                                                             "application/x-www-form-urlencoded")),
        ("POST", "/api/chat.postMessage", lambda w, s, raw: (_form({
            "channel": w["channel"], "text": "blocks",
            "blocks": json.dumps([{"type": "section", "text": {"type": "mrkdwn", "text": s or "-"}}])}),
            "application/x-www-form-urlencoded")),
        ("POST", "/api/conversations.setTopic", _json_write(lambda w, s: {"channel": w["channel"], "topic": s})),
    ],
    "github": [
        ("POST", "/repos/ancha-agent/app/issues", _json_write(lambda w, s: {"title": s, "body": s})),
        ("POST", "/repos/ancha-agent/app/issues/1/comments", _json_write(lambda w, s: {"body": s})),
        ("POST", "/repos/ancha-agent/app/labels", _json_write(lambda w, s: {"name": s, "description": s})),
        ("PATCH", "/repos/ancha-agent/app", _json_write(lambda w, s: {"description": s})),
    ],
    "datadog": [
        ("POST", "/api/v1/monitor", _json_write(lambda w, s: {
            "type": "metric alert", "query": "avg(last_5m):avg:system.cpu.user{*} > 90", "name": s or "-",
            "message": s, "tags": [f"team:{s}"]})),
        ("POST", "/api/v1/events", _json_write(lambda w, s: {"title": s or "-", "text": s, "tags": [s]})),
        ("POST", "/api/v2/logs", _json_write(lambda w, s: [{"message": s, "service": s, "ddtags": s}])),
    ],
    "pagerduty": [
        ("POST", "/incidents", _json_write(lambda w, s: {"incident": {
            "type": "incident", "title": s, "service": {"id": w["service"], "type": "service_reference"}}})),
        ("POST", "/incidents/{incident}/notes", _json_write(lambda w, s: {"note": {"content": s}})),
        ("POST", "/v2/enqueue", _json_write(lambda w, s: {
            "routing_key": w["tools"]["pagerduty"]["routing_key"], "event_action": "trigger",
            "payload": {"summary": s, "source": s, "severity": "info"}})),
    ],
    "okta": [
        ("POST", "/api/v1/users?activate=false", _json_write(lambda w, s: {"profile": {
            "firstName": s, "lastName": s, "email": f"{len(s)}-{hash(s) & 0xffff}@acme.test",
            "login": f"{len(s)}-{hash(s) & 0xffff}@acme.test"}})),
        ("POST", "/api/v1/groups", _json_write(lambda w, s: {"profile": {"name": s, "description": s}})),
    ],
}
"""Per tool, writes that store an agent's text."""

READS: dict[str, list[str]] = {
    "slack": ["/api/conversations.history?channel={channel}", "/api/conversations.list",
              "/api/conversations.info?channel={channel}"],
    "github": ["/repos/ancha-agent/app/issues?state=all&per_page=100", "/search/issues?q=repo:ancha-agent/app",
               "/repos/ancha-agent/app/issues/1/comments", "/repos/ancha-agent/app/labels", "/repos/ancha-agent/app"],
    "datadog": ["/api/v1/monitor", "/api/v1/events?start=0&end=4102444800", "/api/v2/logs/events",
                "/api/v1/monitor/search"],
    "pagerduty": ["/incidents?limit=100", "/incidents/{incident}/notes", "/log_entries"],
    "okta": ["/api/v1/users?limit=200", "/api/v1/groups?limit=200"],
}
"""Per tool, the lists the writes show up in."""


def _fill(path: str, world: dict[str, Any]) -> str:
    return path.replace("{channel}", world["channel"]).replace("{incident}", world["incident"])


def _traced(client: httpx.Client, base: str, world: dict[str, Any]) -> int:
    """How many calls the environment's trace holds."""
    answer = client.get(f"{base}/envs/{world['env_id']}/trace", params={"limit": 1})
    assert answer.status_code == 200, answer.text[:300]
    return int(answer.headers["ancha-trace-entries"])


def _world_still_reads(client: httpx.Client, base: str, world: dict[str, Any], tool: str, since: int = 0) -> None:
    """Every list of ``tool`` answers, and so do the trace (from call ``since`` on), ``/state`` and
    ``/records``."""
    credentials = world["tools"][tool]
    for path in READS[tool]:
        answer = client.get(credentials["url"] + _fill(path, world), headers=auth_headers(tool, credentials))
        assert answer.status_code == 200, (tool, path, answer.text[:300])
        if tool == "slack":
            assert answer.json()["ok"] is True, (path, answer.text[:300])
    trace = client.get(f"{base}/envs/{world['env_id']}/trace", params={"after": since})
    assert trace.status_code == 200, trace.text[:300]
    assert all(json.loads(line)["seq"] > since for line in trace.text.splitlines())
    for path in ("/state", "/records"):
        answer = client.get(f"{base}/envs/{world['env_id']}{path}")
        assert answer.status_code == 200, (path, answer.text[:300])


REPRODUCTIONS = [
    ("slack", "POST", "/api/chat.postMessage", {"channel": "{channel}", "text": "\ud800"}),
    ("datadog", "POST", "/api/v1/monitor", {"type": "metric alert", "name": "\ud800", "message": "m",
                                           "query": "avg(last_5m):avg:system.cpu.user{*} > 90"}),
    ("datadog", "POST", "/api/v1/events", {"title": "\ud800", "text": "t"}),
    ("pagerduty", "POST", "/incidents", {"incident": {"type": "incident", "title": "\ud800",
                                                      "service": {"id": "{service}", "type": "service_reference"}}}),
    ("okta", "POST", "/api/v1/users", {"profile": {"firstName": "\ud800", "lastName": "a", "email": "a@acme.test",
                                                   "login": "a@acme.test"}}),
    ("okta", "POST", "/api/v1/groups", {"profile": {"name": "\ud800"}}),
    ("github", "POST", "/repos/ancha-agent/app/issues", {"title": "\ud800"}),
]


@pytest.mark.parametrize("raw_utf8", [False, True], ids=["escaped", "utf8-bytes"])
@pytest.mark.parametrize(("tool", "method", "path", "body"), REPRODUCTIONS,
                         ids=[f"{r[0]}{r[2]}" for r in REPRODUCTIONS])
def test_lone_surrogate_in_json__refused_as_invalid_json_and_the_world_still_reads(
        ancha_server: str, world: dict[str, Any], client: httpx.Client, tool: str, method: str, path: str,
        body: dict[str, Any], raw_utf8: bool) -> None:
    credentials = world["tools"][tool]
    text = json.dumps(body).replace("{channel}", world["channel"]).replace("{service}", world["service"])
    answer = client.request(method, credentials["url"] + path, content=_as_json(json.loads(text), raw_utf8),
                            headers={**auth_headers(tool, credentials), "content-type": "application/json"})
    assert vendor_shaped(tool, answer.json()), answer.text[:300]
    if tool == "slack":
        assert answer.status_code == 200 and answer.json()["error"] == "invalid_json", answer.text[:300]
    else:
        assert answer.status_code == 400, (answer.status_code, answer.text[:300])
    _world_still_reads(client, ancha_server, world, tool)


def test_percent_escaped_surrogate_in_a_form__stored_as_replacement_characters(
        ancha_server: str, world: dict[str, Any], client: httpx.Client) -> None:
    slack = world["tools"]["slack"]
    answer = client.post(slack["url"] + "/api/chat.postMessage", content=b"channel=" + world["channel"].encode()
                         + b"&text=a%ED%A0%80b", headers={**auth_headers("slack", slack),
                                                          "content-type": "application/x-www-form-urlencoded"})
    assert answer.json()["ok"] is True, answer.text
    assert answer.json()["message"]["text"] == "a\ufffd\ufffd\ufffdb"
    _world_still_reads(client, ancha_server, world, "slack")


@pytest.mark.parametrize("tool", list(WRITES))
def test_hostile_text__after_any_accepted_write_every_read_trace_and_state_answer(
        ancha_server: str, own_world: dict[str, Any], client: httpx.Client, tool: str) -> None:
    world = own_world
    credentials = world["tools"][tool]

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(write=st.sampled_from(WRITES[tool]), text=texts, raw_utf8=st.booleans())
    def one(write: Write, text: str, raw_utf8: bool) -> None:
        method, path, make = write
        body, content_type = make(world, text, raw_utf8)
        since = _traced(client, ancha_server, world)
        answer = client.request(method, credentials["url"] + _fill(path, world), content=body,
                                headers={**auth_headers(tool, credentials), "content-type": content_type})
        assert answer.status_code < 500, (method, path, answer.text[:300])
        if answer.status_code >= 400 or (tool == "slack" and not answer.json()["ok"]):
            assert vendor_shaped(tool, answer.json()), answer.text[:300]
        _world_still_reads(client, ancha_server, world, tool, since)

    one()
    _world_still_reads(client, ancha_server, world, tool)  # the whole trace too


def test_multipart_part_whose_charset_decodes_to_a_lone_surrogate__slack_refuses_it(
        ancha_server: str, world: dict[str, Any], client: httpx.Client) -> None:
    slack = world["tools"]["slack"]
    boundary = "hostile"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"channel\"\r\n\r\n{world['channel']}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"text\"\r\n"
            f"Content-Type: text/plain; charset=utf-7\r\n\r\n+2AA-\r\n--{boundary}--\r\n").encode()
    answer = client.post(slack["url"] + "/api/chat.postMessage", content=body, headers={
        **auth_headers("slack", slack), "content-type": f"multipart/form-data; boundary={boundary}"})
    assert answer.json() == {"ok": False, "error": "invalid_form_data"}, answer.text
    _world_still_reads(client, ancha_server, world, "slack")


SURROGATE_BYTES = "%ED%A0%80"
"""A lone surrogate's UTF-8 bytes, percent-escaped: not UTF-8, so read as three U+FFFD."""


@pytest.mark.parametrize("tool", list(READS))
def test_surrogate_bytes_in_a_path_query_or_header__no_5xx_and_the_world_still_reads(
        ancha_server: str, world: dict[str, Any], client: httpx.Client, tool: str) -> None:
    credentials = world["tools"][tool]
    for path in READS[tool]:
        base, _, query = _fill(path, world).partition("?")
        segments = base.split("/")
        hostile_path = "/".join([*segments[:-1], segments[-1] + SURROGATE_BYTES])
        hostile_query = "&".join([query, f"q={SURROGATE_BYTES}", f"cursor={SURROGATE_BYTES}"]).strip("&")
        for url in (f"{credentials['url']}{hostile_path}?{query}", f"{credentials['url']}{base}?{hostile_query}"):
            answer = client.get(url, headers=auth_headers(tool, credentials))
            assert answer.status_code < 500, (url, answer.text[:300])
        headers = {**auth_headers(tool, credentials), "user-agent": "a\xed\xa0\x80b", "x-request-id": "\xed\xa0\x80"}
        answer = client.get(credentials["url"] + _fill(path, world),
                            headers={k: v.encode("latin-1") for k, v in headers.items()})  # type: ignore[misc]
        assert answer.status_code == 200, (path, answer.text[:300])
    if tool == "slack":  # Slack takes a write's arguments from the query string too
        answer = client.post(f"{credentials['url']}/api/chat.postMessage?channel={world['channel']}"
                             f"&text=a{SURROGATE_BYTES}b", headers=auth_headers(tool, credentials))
        assert answer.json()["ok"] is True and answer.json()["message"]["text"] == "a\ufffd\ufffd\ufffdb"
    _world_still_reads(client, ancha_server, world, tool)


MULTIPART_PARTS = {
    "name-rfc2231-utf7": b"Content-Disposition: form-data; name*=utf-7''+2AA-\r\n\r\nv",
    "name-raw-bytes": b'Content-Disposition: form-data; name="te\xffxt"\r\n\r\nv',
    "value-surrogate-bytes": b'Content-Disposition: form-data; name="text"\r\n\r\n\xed\xa0\x80',
    "charset-raw-bytes": b'Content-Disposition: form-data; name="text"\r\nContent-Type: text/plain; charset="\xff"'
                         b"\r\n\r\nabc",
    "filename-raw-bytes": b'Content-Disposition: form-data; name="file"; filename="\xed\xa0\x80.txt"\r\n\r\nabc',
    "filename-rfc2231-utf7": b"Content-Disposition: form-data; name=\"file\"; filename*=utf-7''+2AA-\r\n\r\nabc",
}
"""Multipart parts whose headers or text are not Unicode once read (``email`` keeps raw header
bytes as surrogate escapes, and decodes RFC 2231 parameters in any charset)."""


@pytest.mark.parametrize("method", ["api.test", "chat.postMessage", "files.upload"])
@pytest.mark.parametrize("part", list(MULTIPART_PARTS))
def test_multipart_part_not_unicode_once_read__slack_answers_no_5xx(
        ancha_server: str, world: dict[str, Any], client: httpx.Client, part: str, method: str) -> None:
    slack = world["tools"]["slack"]
    body = (b"--b\r\nContent-Disposition: form-data; name=\"channel\"\r\n\r\n" + world["channel"].encode()
            + b"\r\n--b\r\n" + MULTIPART_PARTS[part] + b"\r\n--b--\r\n")
    answer = client.post(f"{slack['url']}/api/{method}", content=body, headers={
        **auth_headers("slack", slack), "content-type": "multipart/form-data; boundary=b"})
    assert answer.status_code == 200, answer.text[:300]
    if not answer.json()["ok"]:
        assert answer.json()["error"] in ("invalid_form_data", "no_text", "method_deprecated"), answer.text
    _world_still_reads(client, ancha_server, world, "slack")
