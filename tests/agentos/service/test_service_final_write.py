"""A run is never left `running` while the server lives: when its final write fails, the
run is marked failed with the reason, and its stream sends the end and closes.

The database itself refuses the write here: a trigger aborts any write that would store
one workflow's runs as `success` (as a full disk or a refused value would).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agentos.db import Database

REFUSAL = "the disk is full"
SLOW_NODES = [
    {"id": "wait", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "{{input.ticket}}",
     "output": "reply", "responses": [{"text": "done", "delay_ms": 300}]},
]


def ws_url(api: Any, run_id: str) -> str:
    return str(api.base_url).replace("http://", "ws://").rstrip("/") + f"/api/runs/{run_id}/stream"


def read_all(socket: Any) -> list[dict[str, Any]]:
    """Every event until the server closes the socket (a recv timeout fails the test)."""
    events = []
    try:
        while True:
            events.append(json.loads(socket.recv(timeout=10)))
    except ConnectionClosed:
        return events


@pytest.fixture
def refuse_success(key_database: Database) -> Iterator[Any]:
    """Call with a workflow id: from then on the database refuses to store its runs as successful."""
    names: list[str] = []

    def refuse(workflow_id: str) -> None:
        name = f"refuse_{workflow_id}"
        names.append(name)
        with key_database.engine.begin() as connection:
            if key_database.is_sqlite:
                for when in ("INSERT", "UPDATE"):
                    connection.execute(text(
                        f"CREATE TRIGGER {name}_{when.lower()} BEFORE {when} ON runs "
                        f"WHEN NEW.workflow_id = '{workflow_id}' AND NEW.status = 'success' "
                        f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
                    ))
            else:
                connection.execute(text(
                    f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    f"IF NEW.workflow_id = '{workflow_id}' AND NEW.status = 'success' THEN "
                    f"RAISE EXCEPTION '{REFUSAL}'; END IF; RETURN NEW; END $$"
                ))
                connection.execute(text(
                    f"CREATE TRIGGER {name} BEFORE INSERT OR UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION {name}()"
                ))

    yield refuse
    with key_database.engine.begin() as connection:
        for name in names:
            if key_database.is_sqlite:
                connection.execute(text(f"DROP TRIGGER IF EXISTS {name}_insert"))
                connection.execute(text(f"DROP TRIGGER IF EXISTS {name}_update"))
            else:
                connection.execute(text(f"DROP TRIGGER IF EXISTS {name} ON runs"))
                connection.execute(text(f"DROP FUNCTION IF EXISTS {name}()"))


def test_final_write__failing_marks_a_waited_run_failed_with_the_reason(api, refuse_success):
    wf = api.post("/api/workflows", json={"name": "Instant", "nodes": [
        {"id": "a", "type": "set", "values": {"x": "1"}}]}).json()
    refuse_success(wf["id"])
    response = api.post(f"/api/workflows/{wf['id']}/runs", json={"input": {}})
    assert response.status_code == 201, response.text
    run = response.json()
    assert run["status"] == "failed"
    assert run["error"].startswith("the run finished but its result could not be stored:")
    assert REFUSAL in run["error"]
    stored = api.get(f"/api/runs/{run['id']}").json()
    assert (stored["status"], stored["error"]) == ("failed", run["error"])
    assert stored["finished_at"] is not None
    assert api.get("/api/runs", params={"status": "running"}).json() == []


def test_final_write__failing_ends_the_stream_with_a_failed_run_finished(api, refuse_success):
    wf = api.post("/api/workflows", json={"name": "Slow", "nodes": SLOW_NODES}).json()
    refuse_success(wf["id"])
    run = api.post(f"/api/workflows/{wf['id']}/runs", json={"input": {"ticket": "x"}, "wait": False}).json()
    with connect(ws_url(api, run["id"]), additional_headers={"Authorization": f"Bearer {api.key}"}) as socket:
        events = read_all(socket)  # returns only once the server closes the socket
    finished = [e for e in events if e["type"] == "run_finished"]
    assert len(finished) == 1, json.dumps(events)
    assert finished[0]["status"] == "failed" and REFUSAL in finished[0]["error"]
    assert events[-1] is finished[0]
    stored = api.get(f"/api/runs/{run['id']}").json()
    assert stored["status"] == "failed" and REFUSAL in stored["error"]
    replayed_socket = connect(ws_url(api, run["id"]), additional_headers={"Authorization": f"Bearer {api.key}"})
    with replayed_socket as socket:
        replayed = read_all(socket)
    assert [e["type"] for e in replayed][-1] == "run_finished" and replayed[-1]["status"] == "failed"
