"""GET /envs/{id}/trace pages the trace from disk; no body an agent sends can break it or grading."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from ancha.runner.control import ControlClient

SCENE = {"world": {"slack": {"channels": [{"name": "general"}]}}}
DEEP = b"[" * 20_000 + b"]" * 20_000


def _seqs(answer: httpx.Response) -> list[int]:
    assert answer.status_code == 200, answer.text
    return [json.loads(line)["seq"] for line in answer.text.splitlines()]


def _calls(context: dict[str, Any], n: int) -> None:
    slack = context["tools"]["slack"]
    for _ in range(n):
        httpx.post(slack["url"] + "/api/auth.test", headers={"authorization": f"Bearer {slack['token']}"})


def test_trace_pages_after_a_seq(ancha_server: str, make_env: Any) -> None:
    context = make_env(SCENE)
    _calls(context, 5)
    base = f"{ancha_server}/envs/{context['env_id']}/trace"
    first = httpx.get(base, params={"limit": 2})
    assert _seqs(first) == [1, 2] and first.headers["ancha-trace-next"] == "2"
    assert _seqs(httpx.get(base, params={"after": 2, "limit": 2})) == [3, 4]
    last = httpx.get(base, params={"after": 4, "limit": 2})
    assert _seqs(last) == [5] and "ancha-trace-next" not in last.headers
    assert _seqs(httpx.get(base)) == [1, 2, 3, 4, 5]  # no parameters: the whole trace, as before


@pytest.mark.parametrize("query", ["after=-1", "after=x", "limit=0", "limit=abc", "limit=99999999", "after=" + "9" * 5000])
def test_trace_refuses_bad_paging_with_a_hint(ancha_server: str, make_env: Any, query: str) -> None:
    context = make_env(SCENE)
    answer = httpx.get(f"{ancha_server}/envs/{context['env_id']}/trace?{query}")
    assert answer.status_code == 400
    assert "after=SEQ&limit=N" in answer.json()["hint"]


def test_a_body_too_deep_to_decode_leaves_trace_and_grading_working(ancha_server: str, make_env: Any) -> None:
    context = make_env(SCENE)
    slack = context["tools"]["slack"]
    httpx.post(slack["url"] + "/api/auth.test", content=DEEP,
               headers={"authorization": f"Bearer {slack['token']}", "content-type": "application/json"})
    _calls(context, 1)
    trace = httpx.get(f"{ancha_server}/envs/{context['env_id']}/trace")
    assert trace.status_code == 200
    lines = [json.loads(line) for line in trace.text.splitlines()]
    assert lines[0]["request"] == DEEP.decode() and lines[1]["response"]["ok"] is True
    graded = httpx.post(f"{ancha_server}/envs/{context['env_id']}/grade", params={"teardown": "0"})
    assert graded.status_code == 200
    assert graded.json()["status"]["trace_entries"] == 2


def test_grade_can_leave_the_trace_to_be_paged(ancha_server: str, make_env: Any) -> None:
    context = make_env(SCENE)
    _calls(context, 2)
    graded = httpx.post(f"{ancha_server}/envs/{context['env_id']}/grade", params={"teardown": "0", "trace": "0"})
    assert graded.status_code == 200 and "trace" not in graded.json()
    assert _seqs(httpx.get(f"{ancha_server}/envs/{context['env_id']}/trace")) == [1, 2]


def test_the_runner_pages_the_whole_trace_into_its_file(ancha_server: str, make_env: Any, tmp_path: Any) -> None:
    context = make_env(SCENE)
    _calls(context, 5)

    async def save() -> None:
        client = ControlClient(ancha_server)
        try:
            await client.save_trace(context["env_id"], tmp_path / "trace.jsonl", page=2)
        finally:
            await client.close()

    asyncio.run(save())
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3, 4, 5]
