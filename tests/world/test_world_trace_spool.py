"""The trace keeps an index in memory and the bodies on disk; no body can break reading it."""

from __future__ import annotations

import gc
import json
import tracemalloc
from typing import Any

from ancha.world.kernel.trace import Trace

CALL = {"at": 1.0e9, "actor": "agent", "tool": "slack", "method": "POST", "path": "/api/conversations.history",
        "query": "", "status": 200, "worked": True, "coverage_gap": False}


def _append(trace: Trace, request: bytes, response: bytes, **extra: Any) -> None:
    trace.append(**{**CALL, **extra}, request=request, response=response, request_type="application/json")


def test_bodies_of_a_long_trial_do_not_stay_in_memory() -> None:
    page = json.dumps({"ok": True, "messages": [{"text": "x" * 400, "ts": str(i)} for i in range(100)]}).encode()
    trace = Trace()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(500):  # 500 pages of ~45 KB: about 22 MB of bodies
        _append(trace, b'{"channel": "C1", "limit": 100}', page)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert trace.spooled_bytes > 500 * len(page)
    assert grown < 2_000_000, f"the trace grew memory by {grown} bytes for 500 calls"
    assert trace.entries[499].response == page and trace.entries[0].request_json() == {"channel": "C1", "limit": 100}
    trace.close()


def test_a_body_nested_too_deep_to_decode_is_given_as_text() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    trace = Trace()
    _append(trace, deep, b'{"ok": false, "error": "invalid_json"}')
    line = json.loads(next(trace.lines()))
    assert line["request"] == deep.decode() and line["response"] == {"ok": False, "error": "invalid_json"}
    trace.close()


def test_lines_page_after_a_seq() -> None:
    trace = Trace()
    for i in range(7):
        _append(trace, b"", json.dumps({"ok": True, "i": i}).encode())
    pages = [[json.loads(line)["seq"] for line in trace.lines(after, 3)] for after in (0, 3, 6, 7)]
    assert pages == [[1, 2, 3], [4, 5, 6], [7], []]
    assert trace.to_jsonl() == "".join(trace.lines(0, 3)) + "".join(trace.lines(3))
    trace.close()


def test_a_call_after_teardown_is_indexed_without_its_bodies() -> None:
    trace = Trace()
    _append(trace, b"{}", b'{"ok": true}')
    trace.close()
    _append(trace, b"{}", b'{"ok": true}')  # a request still in flight when the environment went
    assert [e.seq for e in trace] == [1, 2] and trace.entries[1].response == b""


def test_bodies_waiting_to_be_written_are_read_back_at_once() -> None:
    # Bodies are gathered and written in batches: a read never misses one appended before it.
    trace = Trace()
    for i in range(300):
        _append(trace, json.dumps({"i": i}).encode(), json.dumps({"ok": True, "i": i}).encode())
        assert trace.entries[i].response_json() == {"ok": True, "i": i}
        assert trace.entries[i // 2].request_json() == {"i": i // 2}
    big = b'{"x": "' + b"y" * 200_000 + b'"}'
    _append(trace, b"{}", big)
    assert trace.entries[-1].response == big and trace.entries[0].request_json() == {"i": 0}
    assert trace.spooled_bytes == sum(len(e.request) + len(e.response) for e in trace)
    trace.close()
