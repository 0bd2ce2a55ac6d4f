"""Console tasks for scripts: the hosted console's tasks page as JSON.

    GET  /api/console-tasks                   the workspace's tasks, newest first
    POST /api/console-tasks                   {name, scene, task, checks} -> 201 the task (422 naming
                                              every problem, in the words of Ancha's task rules)
    GET  /api/console-tasks/{id}              one task, with its openings and their grades
    POST /api/console-tasks/{id}/open         a fresh live world on the workspace's Ancha server ->
                                              201 {opening, context}: the context's URLs and tokens
    POST /api/console-tasks/{id}/grade        {env_id?} grade the task's checks on that world (the
                                              newest without one) -> the opening with its grade

Any key of the workspace reads; writing, opening and grading need a `ci` or `admin` key. No
Ancha server configured is a 409 saying how to set one; an unreachable server a 502.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import Response

from agentos.api.bodies import ConsoleTaskCreate, ConsoleTaskGrade
from agentos.api.console.task_store import ConsoleTasks, TaskDraft
from agentos.api.services import Services, caller, respond, services
from agentos.keys import Caller

router = APIRouter()


def _tasks(svc: Services) -> ConsoleTasks:
    return ConsoleTasks(svc.db, svc.blobs)


@router.get("/api/console-tasks")
def list_tasks(who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    return respond({"tasks": [t.to_dict() for t in _tasks(svc).listed(who.workspace_id)]})


@router.post("/api/console-tasks", status_code=201)
def create_task(body: ConsoleTaskCreate, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    task = _tasks(svc).create(who, TaskDraft(body.name, body.scene, body.task, checks=body.checks))
    return respond(task.to_dict(), 201)


@router.get("/api/console-tasks/{task_id}")
def get_task(task_id: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    return respond(_tasks(svc).get(who.workspace_id, task_id).to_dict())


@router.post("/api/console-tasks/{task_id}/open", status_code=201)
def open_task(task_id: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    opening, context = _tasks(svc).open(who, task_id)
    return respond({"opening": opening, "context": context}, 201)


@router.post("/api/console-tasks/{task_id}/grade")
def grade_task(task_id: str, body: ConsoleTaskGrade | None = None, who: Caller = Depends(caller),
               svc: Services = Depends(services)) -> Response:
    graded = _tasks(svc).grade(who, task_id, body.env_id if body else None)
    return respond(graded)
