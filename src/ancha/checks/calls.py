"""One-line descriptions of the agent's calls, for results, ``ancha explain`` and the judge.

They work on decoded bodies, so a live ``TraceEntry`` and a ``trace.jsonl`` line read
back from disk are described the same way.
"""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.trace import TraceEntry


def outcome(status: int, response: Any, coverage_gap: bool = False) -> str:
    """How a call came out: ``200 ok``, ``200 ok:false channel_not_found``, ``404 Not Found``,
    ``501 not implemented (coverage gap)``, ``200 GraphQL errors: ...``."""
    if coverage_gap:
        return f"{status} not implemented (coverage gap)"
    if isinstance(response, dict):
        if response.get("ok") is False:
            error = response.get("error")
            return f"{status} ok:false {error}" if error else f"{status} ok:false"
        errors = response.get("errors")
        if errors and response.get("data") is None and isinstance(errors, list):
            first = errors[0]
            message = first.get("message") if isinstance(first, dict) else first
            return f"{status} GraphQL errors: {message}"
        if status >= 400 and isinstance(response.get("message"), str):
            return f"{status} {response['message']}"
        if status >= 400 and isinstance(response.get("error"), str):
            return f"{status} {response['error']}"
    if status >= 400:
        return str(status)
    return f"{status} ok"


def entry_outcome(entry: TraceEntry) -> str:
    return outcome(entry.status, _safe_response(entry), entry.coverage_gap)


def entry_line(entry: TraceEntry) -> str:
    """``#4 POST /api/chat.postMessage -> 200 ok:false channel_not_found``."""
    return f"#{entry.seq} {entry.method} {entry.path} -> {entry_outcome(entry)}"


def dict_line(entry: dict[str, Any]) -> str:
    """The same line for a ``trace.jsonl`` record (``TraceEntry.to_dict()``)."""
    status = int(entry.get("status") or 0)
    who = "" if entry.get("actor", "agent") == "agent" else f" [{entry['actor']}]"
    result = outcome(status, entry.get("response"), bool(entry.get("coverage_gap")))
    return f"#{entry.get('seq')}{who} {entry.get('method')} {entry.get('path')} -> {result}"


def _safe_response(entry: TraceEntry) -> Any:
    # Only small bodies need parsing to find a vendor error; big ones are successful reads.
    if not entry.response or (entry.worked and entry.status < 400):
        return None
    return entry.response_json()
