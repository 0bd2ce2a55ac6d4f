"""The run queue (AGENTOS_QUEUE_URL): real `agentos serve` and `agentos worker` processes on
PostgreSQL, with arq on a real Redis and the PostgreSQL broker; and a worker's runner,
claiming and finishing runs in batches, against a real database.

A worker claims the runs of the jobs arq hands it together, and stores the ends of the
instant ones together; the API answers a waited run with the run its final announcement
carries, or reads it when the announcement could not carry it.
"""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import select, update
from tests.agentos.service.test_service_processes import _redis_url, _wait_for, agentos

from agentos.broker import LocalBroker
from agentos.crud import create_workflow, snapshot
from agentos.db import Database
from agentos.engine.providers import Providers
from agentos.engine.queue import RunQueue, queue_name
from agentos.engine.runner import Runner
from agentos.engine.streams import RunStreams
from agentos.ids import new_id
from agentos.instances import DIED
from agentos.keys import create_key, issue_key
from agentos.models import Run, RunEvent, Workspace

INSTANT = {
    "name": "Instant",
    "nodes": [
        {"id": "classify", "type": "llm", "provider": "mock", "model": "gpt-4o-mini",
         "prompt": "Classify: {{input.ticket}}", "output": "category", "responses": [{"text": "refund"}]},
        {"id": "reply", "type": "set", "values": {"draft_reply": "'Refund for ' + input['ticket']"}},
    ],
    "checks": [{"name": "mentions the ticket", "type": "expression", "value": "input['ticket'] in draft_reply"}],
}
EVERY_EVENT = ["run_started", "node_started", "node_finished", "node_started", "node_finished",
               "run_finished", "run_evaluated"]


def _queue_env(database_url: str) -> dict[str, str]:
    return {"AGENTOS_DATABASE_URL": database_url,
            "AGENTOS_BROKER_URL": database_url.replace("postgresql+psycopg://", "postgresql://"),
            "AGENTOS_QUEUE_URL": _redis_url(),
            "AGENTOS_QUEUE_NAME": f"agentos-test:{secrets.token_hex(4)}"}


def _events(database_url: str, run_id: str) -> list[dict[str, Any]]:
    db = Database(database_url, run_migrations=False)
    try:
        with db.read() as session:
            return list(session.scalars(select(RunEvent.data).where(RunEvent.run_id == run_id).order_by(RunEvent.seq)))
    finally:
        db.dispose()


def test_queue__concurrent_waited_runs_each_execute_once_and_answer_as_stored(pg_database):
    database_url = pg_database()
    key = create_key(database_url, "queue")
    env = _queue_env(database_url)
    with (
        agentos(["serve"], env) as api,
        agentos(["worker", "--concurrency", "8"], env, serves=False),
        httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client,
    ):
        assert client.post("/api/workflows", json=INSTANT).status_code == 201

        def run(ticket: str) -> dict[str, Any]:
            response = client.post("/api/workflows/Instant/runs", json={"input": {"ticket": ticket}})
            assert response.status_code == 201, response.text
            return dict(response.json())

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(run, [f"T-{i}" for i in range(48)]))
        for i, answer in enumerate(answers):
            assert (answer["status"], answer["state"]["draft_reply"]) == ("success", f"Refund for T-{i}")
            assert (answer["evals"]["passed"], answer["evals"]["total"]) == (1, 1)
            assert answer == client.get(f"/api/runs/{answer['id']}").json()
            events = _events(database_url, answer["id"])
            assert [e["type"] for e in events] == EVERY_EVENT
            assert [e["seq"] for e in events] == list(range(1, len(EVERY_EVENT) + 1))
        metrics = client.get("/api/dashboard/metrics").json()
        assert (metrics["total_runs"], metrics["success_rate"], metrics["evaluated_runs"]) == (48, 100.0, 48)


def test_queue__a_run_too_large_to_announce_is_answered_as_stored(pg_database):
    database_url = pg_database()
    key = create_key(database_url, "queue")
    env = _queue_env(database_url)
    large = {"name": "Large", "nodes": [{"id": "pad", "type": "set", "values": {"text": "'x' * 20000"}}],
             "checks": [{"name": "long", "type": "expression", "value": "len(text) == 20000"}]}
    with (
        agentos(["serve"], env) as api,
        agentos(["worker"], env, serves=False),
        httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client,
    ):
        assert client.post("/api/workflows", json=large).status_code == 201
        answer = client.post("/api/workflows/Large/runs", json={"input": {}}).json()
        assert (answer["status"], len(answer["state"]["text"]), answer["evals"]["passed"]) == ("success", 20000, 1)
        assert answer == client.get(f"/api/runs/{answer['id']}").json()


def test_queue__a_run_whose_workflow_was_deleted_while_it_was_queued_fails_saying_so(pg_database):
    database_url = pg_database()
    key = create_key(database_url, "queue")
    env = _queue_env(database_url)
    with (
        agentos(["serve"], env) as api,
        httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client,
    ):
        assert client.post("/api/workflows", json=INSTANT).status_code == 201
        queued = [client.post("/api/workflows/Instant/runs", json={"input": {"ticket": "t"}, "wait": False}).json()
                  for _ in range(3)]
        assert {r["status"] for r in queued} == {"queued"}
        assert client.delete("/api/workflows/Instant").status_code in (200, 204)
        with agentos(["worker"], env, serves=False):
            for run in queued:
                failed = _wait_for(lambda run=run: (r := client.get(f"/api/runs/{run['id']}").json())["status"]
                                   == "failed" and r, 30, "the worker to fail the run")
                assert failed["error"] == "the workflow was deleted before the run started"
                assert [e["type"] for e in _events(database_url, run["id"])] == ["run_finished"]


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_worker_runner__a_batch_stores_every_run_but_one_a_peer_failed_meanwhile(fresh_database_url, monkeypatch):
    """A peer that took the worker for gone fails its runs; the others of the batch still end."""
    database_url = fresh_database_url
    db = Database(database_url)
    monkeypatch.setenv("AGENTOS_QUEUE_NAME", f"agentos-test:{secrets.token_hex(4)}")
    queue = RunQueue(_redis_url())  # no worker works this queue: the runs stay queued
    api = Runner(db, RunStreams(), Providers(), new_id(), queue=queue)
    worker = Runner(db, RunStreams(), Providers(), new_id(), broker=LocalBroker())
    run_ids: list[str] = []
    try:
        issue_key(db, "batches")
        with db.write() as session:
            workspace_id = session.scalar(select(Workspace.id).where(Workspace.name == "batches"))
            workflow = snapshot(create_workflow(session, workspace_id, "Instant", INSTANT["nodes"], INSTANT["checks"]))
        run_ids += [api.start(workflow, {"ticket": f"T-{i}"}, wait=False)["id"] for i in range(4)]

        claimed = worker.claim_stored(run_ids)
        assert sorted(c.run.id for c in claimed) == sorted(run_ids)
        assert worker.claim_stored(run_ids) == []  # claimed once
        with db.write() as session:
            session.execute(update(Run).where(Run.id == run_ids[1]).values(status="failed", error=DIED))
        worker.execute_claimed(claimed)

        with db.read() as session:
            stored = {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(run_ids)))}
        assert [(stored[i].status, stored[i].error) for i in run_ids] == [
            ("success", None), ("failed", DIED), ("success", None), ("success", None)]
        assert [stored[i].state["draft_reply"] for i in (run_ids[0], run_ids[2], run_ids[3])] == [
            "Refund for T-0", "Refund for T-2", "Refund for T-3"]
        for run_id in (run_ids[0], run_ids[2], run_ids[3]):
            assert [e["type"] for e in _events(database_url, run_id)] == EVERY_EVENT
    finally:
        for runner in (api, worker):
            runner.shutdown()
        queue.close()
        db.dispose()
        redis.Redis.from_url(_redis_url()).delete(queue_name(), *(f"arq:job:{run_id}" for run_id in run_ids))
