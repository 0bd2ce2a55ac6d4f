"""The hosted console's task pages: write a task on a scene's world, open it live, grade it.

    GET  /ui/tasks                                   the workspace's tasks, and the form to write one
    POST /ui/tasks                                   save a task (ci or admin): refused input comes back
                                                     in the form, as typed, with Ancha's words for each problem
    GET  /ui/tasks/{id}?world=ENV                    a task, one of its worlds (the newest): its context,
                                                     its live events, its grade
    POST /ui/tasks/{id}/open                         open a fresh world of it (open, rerun)
    POST /ui/tasks/{id}/worlds/{env}/grade           grade the task's checks on that world
    GET  /ui/tasks/{id}/worlds/{env}/live            the world's events, relayed from its server (SSE)

The pages read and write the session's workspace only (``task_store``); the Ancha server's
key stays on this server: the browser reaches the world's events through the relay.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from agentos.api.console.task_store import ConsoleTasks, TaskDraft, TaskRefused, opening_of
from agentos.api.console.task_worlds import CONFIGURE, AnchaServer, NoAnchaServer
from agentos.errors import ApiError, NotFound
from agentos.keys import Caller
from agentos.models import ConsoleTask
from ancha.checks.task import MAX_TASK_CHECKS, TASK_EXAMPLE
from ancha.console import links
from ancha.console.live_relay import one_event

if TYPE_CHECKING:
    from agentos.api.console.app import HostedConsole

TASKS = links.PREFIX + "/tasks"
WRITERS = "ci"


def refused_role(who: Caller, doing: str) -> str:
    return (f"Your key's role is {who.role}, and {doing} needs a key with the role ci or admin: ask an admin of "
            "the workspace for one (`agentos keys create --workspace NAME --role ci`), then sign in with it")


class TaskPages:
    def __init__(self, console: HostedConsole) -> None:
        self.console = console
        self.tasks = ConsoleTasks(console.db, console.copies.blobs)

    def _list_page(self, request: Request, who: Caller, status: int = 200, draft: TaskDraft | None = None,
                   problems: list[Any] | None = None, error: str | None = None) -> Response:
        rows = self.tasks.listed(who.workspace_id)
        scenes = self.tasks.scenes(who.workspace_id)
        return self.console.page(request, "tasks.html", status, tasks=rows, scenes=scenes,
                                 draft=draft or TaskDraft("", "", "", checks_text=""), problems=problems or [],
                                 error=error, may_write=who.may(WRITERS), example=TASK_EXAMPLE,
                                 max_checks=MAX_TASK_CHECKS)

    def list_page(self, request: Request) -> Response:
        return self._list_page(request, _caller(request))

    async def create(self, request: Request) -> Response:
        who = _caller(request)
        form = await request.form()
        draft = TaskDraft(name=str(form.get("name") or ""), scene=str(form.get("scene") or ""),
                          task=str(form.get("task") or ""), checks_text=str(form.get("checks") or ""))
        if not who.may(WRITERS):
            return await run_in_threadpool(self._list_page, request, who, 403, draft,
                                           None, refused_role(who, "saving a console task"))
        try:
            task = await run_in_threadpool(self.tasks.create, who, draft)
        except TaskRefused as exc:
            return await run_in_threadpool(self._list_page, request, who, 422, draft, exc.problems)
        return RedirectResponse(f"{TASKS}/{task.id}", 303)

    def _task_page(self, request: Request, who: Caller, task: ConsoleTask, env_id: str | None,
                   status: int = 200, error: str | None = None) -> Response:
        opening = None
        context: dict[str, Any] | None = None
        world_error = None
        if task.openings:
            try:
                opening = opening_of(task, env_id)
            except NotFound as exc:
                world_error = exc.detail
            if opening is not None:
                try:
                    context = self.tasks.context(who, task, opening["env_id"])
                except ApiError as exc:
                    world_error = exc.detail
        try:
            server: AnchaServer | None = self.tasks.server_of(who.workspace_id)
        except NoAnchaServer:
            server = None
        base = f"{TASKS}/{task.id}"
        return self.console.page(
            request, "task.html", status, task=task, opening=opening, context=context, world_error=world_error,
            error=error, server=server, configure=CONFIGURE, may_write=who.may(WRITERS), base=base,
            checks_json=json.dumps(task.checks, indent=2, ensure_ascii=False),
            context_json=json.dumps(context, indent=2, ensure_ascii=False) if context else "",
            live_url=f"{base}/worlds/{opening['env_id']}/live" if opening and context else None)

    def task_page(self, request: Request) -> Response:
        who = _caller(request)
        try:
            task = self.tasks.get(who.workspace_id, request.path_params["task_id"])
        except NotFound:
            return self.console.page(request, "missing.html", 404, what=f"console task {request.path_params['task_id']}")
        return self._task_page(request, who, task, request.query_params.get("world") or None)

    def _act(self, request: Request, doing: str, act: Any) -> Response:
        """Run ``act`` (open, grade) for a writer; its error on the task's page, never a 500."""
        who = _caller(request)
        try:
            task = self.tasks.get(who.workspace_id, request.path_params["task_id"])
        except NotFound:
            return self.console.page(request, "missing.html", 404, what=f"console task {request.path_params['task_id']}")
        env_id = request.path_params.get("env_id")
        if not who.may(WRITERS):
            return self._task_page(request, who, task, env_id, 403, refused_role(who, doing))
        try:
            env_id = act(who, task.id)
        except ApiError as exc:
            return self._task_page(request, who, self.tasks.get(who.workspace_id, task.id), env_id,
                                   exc.status_code, exc.detail)
        return RedirectResponse(f"{TASKS}/{task.id}?world={env_id}", 303)

    def open(self, request: Request) -> Response:
        return self._act(request, "opening a task's world",
                         lambda who, task_id: self.tasks.open(who, task_id)[0]["env_id"])

    def grade(self, request: Request) -> Response:
        env_id = request.path_params["env_id"]
        return self._act(request, "grading a task's world",
                         lambda who, task_id: self.tasks.grade(who, task_id, env_id)["env_id"])

    async def live(self, request: Request) -> Response:
        """The world's events, relayed from its server with the workspace's key."""
        who = _caller(request)
        try:
            server = await run_in_threadpool(self.tasks.live_server, who, request.path_params["task_id"],
                                             request.path_params["env_id"])
        except ApiError as exc:
            # 200, so the page reads why (a browser drops an event stream answered otherwise unread)
            return StreamingResponse(one_event("gone", {"reason": exc.detail}), media_type="text/event-stream")
        return StreamingResponse(server.live(request.path_params["env_id"], request.headers.get("last-event-id")),
                                 media_type="text/event-stream", headers={"cache-control": "no-store"})


def _caller(request: Request) -> Caller:
    caller: Caller = request.scope["state"]["caller"]
    return caller


def task_routes(console: HostedConsole) -> list[Route]:
    """The task pages' routes, for ``hosted_console``'s list."""
    pages = TaskPages(console)
    return [
        Route("/tasks", pages.list_page, methods=["GET"]),
        Route("/tasks", pages.create, methods=["POST"]),
        Route("/tasks/{task_id}", pages.task_page, methods=["GET"]),
        Route("/tasks/{task_id}/open", pages.open, methods=["POST"]),
        Route("/tasks/{task_id}/worlds/{env_id}/grade", pages.grade, methods=["POST"]),
        Route("/tasks/{task_id}/worlds/{env_id}/live", pages.live, methods=["GET"]),
    ]
