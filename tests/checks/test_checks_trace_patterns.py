"""Trace pattern rules and trace checks, graded on trace entries built directly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ancha.checks.trace import evaluate_trace
from ancha.scene.model import TraceCheck
from ancha.world.call_patterns import compile_pattern
from ancha.world.kernel.trace import Trace, TraceEntry


def _trace(*calls: dict[str, Any]) -> Trace:
    trace = Trace()
    for i, call in enumerate(calls):
        status = call.get("status", 200)
        response = call.get("response", {"ok": True})
        trace.append(
            at=1767600000.0 + i,
            actor=call.get("actor", "agent"),
            tool=call.get("tool", "slack"),
            method=call.get("method", "POST"),
            path=call["path"],
            query=call.get("query", ""),
            status=status,
            request=b"",
            response=json.dumps(response).encode(),
            worked=call.get("worked", status < 400),
            coverage_gap=call.get("coverage_gap", False),
        )
    return trace


def _entry(method: str, path: str, actor: str = "agent") -> TraceEntry:
    return _trace({"method": method, "path": path, "actor": actor}).entries[0]


def test_pattern__method_ignores_case() -> None:
    pattern = compile_pattern("post /api/chat.postMessage")
    assert pattern.matches_call(_entry("POST", "/api/chat.postMessage"))
    assert compile_pattern("POST /api/chat.postMessage").matches("post", "/api/chat.postMessage")


def test_pattern__star_method_accepts_any_method() -> None:
    pattern = compile_pattern("* /api/chat.postMessage")
    assert pattern.matches("GET", "/api/chat.postMessage")
    assert pattern.matches("DELETE", "/api/chat.postMessage")
    assert not pattern.matches("GET", "/api/chat.update")


def test_pattern__bare_star_matches_every_call() -> None:
    pattern = compile_pattern("*")
    assert pattern.matches("PATCH", "/repos/acme/orders/issues/13")
    assert pattern.matches("GET", "/")


def test_pattern__star_in_path_spans_slashes() -> None:
    pattern = compile_pattern("POST /repos/*/comments")
    assert pattern.matches("POST", "/repos/acme/orders/issues/13/comments")
    assert not pattern.matches("POST", "/repos/acme/orders/issues/13/labels")
    assert compile_pattern("DELETE /crm/*").matches("DELETE", "/crm/contacts/7/notes/2")


def test_pattern__path_is_exact() -> None:
    pattern = compile_pattern("GET /repos/acme/orders/issues/13")
    assert not pattern.matches("GET", "/repos/acme/orders/issues/130")
    assert not pattern.matches("GET", "/v3/repos/acme/orders/issues/13")
    assert not pattern.matches("GET", "/repos/acme/orders/issues/13/")
    # Regex metacharacters in a path are literal.
    assert not compile_pattern("POST /api/chat.postMessage").matches("POST", "/api/chatXpostMessage")


def test_pattern__query_string_is_not_part_of_the_path() -> None:
    trace = _trace({"method": "GET", "path": "/api/conversations.history", "query": "channel=C1&limit=5"})
    result = evaluate_trace(TraceCheck(called=["GET /api/conversations.history"]), trace)
    assert result.passed
    with pytest.raises(ValueError, match="query string"):
        compile_pattern("GET /api/conversations.history?channel=C1")


def test_pattern__rejects_what_is_not_a_pattern() -> None:
    for text in ["/api/chat.postMessage", "POST", "PO-ST /x", "POST api/chat.postMessage"]:
        with pytest.raises(ValueError):
            compile_pattern(text)


def test_pattern__only_the_agents_calls_count() -> None:
    pattern = compile_pattern("POST /api/chat.postMessage")
    assert not pattern.matches_call(_entry("POST", "/api/chat.postMessage", actor="person:laura"))
    assert not pattern.matches_call(_entry("POST", "/api/chat.postMessage", actor="world"))
    trace = _trace({"path": "/api/chat.postMessage", "actor": "person:laura"},
                   {"path": "/api/chat.postMessage", "actor": "world"})
    result = evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"]), trace)
    assert not result.passed
    assert result.actual == "no agent call matched; the agent made no calls"


def test_pattern__compiled_once() -> None:
    assert compile_pattern("GET /a/*") is compile_pattern("GET /a/*")


@pytest.mark.parametrize(
    ("call", "outcome"),
    [
        ({"status": 404, "response": {"message": "Not Found"}}, "404 Not Found"),
        ({"status": 501, "coverage_gap": True, "response": {"ok": False, "error": "not_implemented"}},
         "501 not implemented (coverage gap)"),
        ({"status": 200, "worked": False, "response": {"ok": False, "error": "channel_not_found"}},
         "200 ok:false channel_not_found"),
        ({"status": 200, "worked": False, "response": {"data": None, "errors": [{"message": "boom"}]}},
         "200 GraphQL errors: boom"),
    ],
)
def test_called__calls_that_did_not_work_do_not_count(call: dict[str, Any], outcome: str) -> None:
    trace = _trace({"path": "/api/chat.postMessage", **call})
    result = evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"]), trace)
    assert not result.passed
    assert result.actual == f"1 matching call, none worked (last: {outcome})"
    assert result.evidence == [1]


def test_called__list_passes_in_any_order() -> None:
    trace = _trace({"method": "POST", "path": "/repos/acme/orders/issues/13/comments", "status": 201},
                   {"method": "GET", "path": "/repos/acme/orders/issues/13"})
    check = TraceCheck(called=["GET /repos/acme/orders/issues/13", "POST /repos/acme/orders/issues/13/comments"])
    result = evaluate_trace(check, trace)
    assert result.passed
    assert result.evidence == [1, 2]


def test_called__list_fails_when_one_pattern_is_missing() -> None:
    trace = _trace({"method": "GET", "path": "/repos/acme/orders/issues/13"})
    check = TraceCheck(called=["GET /repos/acme/orders/issues/13", "POST /repos/acme/orders/issues/13/comments"])
    result = evaluate_trace(check, trace)
    assert not result.passed
    assert result.actual == (
        "called GET /repos/acme/orders/issues/13: 1 matching call, 1 worked (#1) | "
        "called POST /repos/acme/orders/issues/13/comments: no agent call matched; "
        "the agent called: GET /repos/acme/orders/issues/13")
    assert result.explanation == (
        "Failed: expected a call matching POST /repos/acme/orders/issues/13/comments that worked, but found "
        "no agent call matched; the agent called: GET /repos/acme/orders/issues/13.")


def test_called__status_any_counts_failed_attempts() -> None:
    trace = _trace({"path": "/api/chat.postMessage", "worked": False,
                    "response": {"ok": False, "error": "not_in_channel"}})
    assert not evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"]), trace).passed
    result = evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"], status="any"), trace)
    assert result.passed
    assert result.evidence == [1]
    assert result.expected == "a call matching POST /api/chat.postMessage (any outcome counts)"


def test_not_called__failed_attempts_count_too() -> None:
    trace = _trace({"method": "GET", "path": "/crm/contacts"},
                   {"method": "DELETE", "path": "/crm/contacts/7", "status": 403, "response": {"error": "forbidden"}})
    check = TraceCheck(not_called=["POST /crm/*", "PATCH /crm/*", "DELETE /crm/*"])
    result = evaluate_trace(check, trace)
    assert not result.passed
    assert result.evidence == [2]
    assert result.expected == "no call matching POST /crm/* or PATCH /crm/* or DELETE /crm/*"
    assert result.actual == "1 matching call: #2 DELETE /crm/contacts/7 -> 403 forbidden"


def test_not_called__passes_when_nothing_matches_and_ignores_other_actors() -> None:
    trace = _trace({"method": "GET", "path": "/crm/contacts"},
                   {"method": "DELETE", "path": "/crm/contacts/7", "actor": "person:ben"})
    result = evaluate_trace(TraceCheck(not_called=["DELETE /crm/*"]), trace)
    assert result.passed
    assert result.evidence == []


def test_called_and_not_called__both_must_hold() -> None:
    trace = _trace({"path": "/api/chat.postMessage"}, {"path": "/api/chat.delete"})
    check = TraceCheck(called=["POST /api/chat.postMessage"], not_called=["POST /api/chat.delete"])
    result = evaluate_trace(check, trace)
    assert not result.passed
    assert result.evidence == [2]
    assert result.explanation == (
        "Failed: expected no call matching POST /api/chat.delete, "
        "but found 1 matching call: #2 POST /api/chat.delete -> 200 ok.")
    ok = evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"], not_called=["POST /api/chat.update"]),
                        trace)
    assert ok.passed


def test_called__failure_names_the_closest_misses() -> None:
    trace = _trace({"method": "GET", "path": "/api/conversations.history"},
                   {"method": "GET", "path": "/api/users.info"},
                   {"method": "POST", "path": "/api/chat.postEphemeral"},
                   {"method": "POST", "path": "/api/chat.postEphemeral"})
    result = evaluate_trace(TraceCheck(called=["POST /api/chat.postMessage"]), trace)
    assert not result.passed
    assert result.expected == "a call matching POST /api/chat.postMessage that worked"
    assert result.actual.startswith(
        "no agent call matched; the agent called: POST /api/chat.postEphemeral (x2), ")
    assert "GET /api/conversations.history" in result.actual
    assert result.explanation == f"Failed: expected {result.expected}, but found {result.actual}."
    assert result.evidence == []


def test_called__passing_result_cites_the_calls_that_worked() -> None:
    trace = _trace({"path": "/api/chat.postMessage", "worked": False, "response": {"ok": False, "error": "x"}},
                   {"path": "/api/chat.postMessage"})
    result = evaluate_trace(TraceCheck(called=["* /api/chat.postMessage"]), trace)
    assert result.passed
    assert result.evidence == [2]
    assert result.actual == "2 matching calls, 1 worked (#2)"


def test_called__failure_points_out_a_method_mismatch() -> None:
    trace = _trace({"method": "POST", "path": "/api/conversations.history"})
    result = evaluate_trace(TraceCheck(called=["GET /api/conversations.history"]), trace)
    assert not result.passed
    assert result.actual == ("no agent call matched; the agent called: POST /api/conversations.history "
                             "(the path matched calls made with POST; * as the method accepts any)")
