"""A workspace's console tasks: a scene's world, a task and its checks, written in the hosted
console (or through ``/api/console-tasks``), opened and graded on the workspace's Ancha server.

A task's scene is one of the workspace's uploaded runs' scenes, its newest source kept with
the task as written then. Its checks are a JSON list validated by Ancha's own task rules
(``ancha.checks.task``, as for a playground task file): state and trace checks only, at most
20, every ref known to the scene's world. Every problem is told at once, in Ancha's words.

Each opening (a live world: its server and env id, when, by which key) is kept on the task,
with the grade it got last. Everything here reads and writes one workspace's rows only: a
task id of another workspace is not found.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from agentos import storable
from agentos.api.console.task_worlds import AnchaServer
from agentos.blobs import BlobStore
from agentos.db import Database
from agentos.errors import NotFound, Unprocessable
from agentos.history import queries
from agentos.history.uploads import SCENE_SOURCES, read_file
from agentos.ids import new_id
from agentos.keys import Caller
from agentos.models import AnchaRun, AnchaSceneResult, ConsoleTask, Workspace
from agentos.timestamps import iso, utcnow
from ancha.checks.task import parse_task_text, scene_task_checks
from ancha.errors import Problem
from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import parse_scene_text
from ancha.world.registry import catalog

MAX_NAME = 200
MAX_TASK_TEXT = 20_000
MAX_CHECKS_TEXT = 200_000
MAX_OPENINGS = 50
"""Openings kept per task, the newest; older ones are forgotten."""
LISTED = 500
SOURCE_RUNS = 20
"""A scene's newest runs searched for its source."""


@dataclass
class TaskDraft:
    """A task as written: ``checks`` parsed (the API's JSON), or ``checks_text`` as typed (a form)."""

    name: str
    scene: str
    task: str
    checks: Any = None
    checks_text: str | None = None


class TaskRefused(Unprocessable):
    """The draft breaks the rules; ``problems`` holds every problem, in Ancha's words."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("Invalid console task: " + "; ".join(describe(p) for p in problems))


def describe(problem: Problem) -> str:
    where = f"{problem.path}: " if problem.path else ""
    return where + problem.message + (f" ({problem.hint})" if problem.hint else "")


@dataclass(frozen=True)
class SceneSource:
    scene: str
    run_id: str
    text: str


class ConsoleTasks:
    def __init__(self, db: Database, blobs: BlobStore) -> None:
        self.db = db
        self.blobs = blobs

    # --- the scenes a task may use ------------------------------------------------------

    def scenes(self, workspace_id: str) -> list[str]:
        with self.db.read() as session:
            return queries.scenes(session, workspace_id)

    def newest_source(self, workspace_id: str, scene: str) -> SceneSource | None:
        """The source of ``scene`` in the newest uploaded run that carries it."""
        prefix = f"{SCENE_SOURCES}/{scene}/"
        with self.db.read() as session:
            runs = list(session.scalars(
                select(AnchaRun).join(AnchaSceneResult, AnchaSceneResult.run_pk == AnchaRun.id)
                .where(AnchaSceneResult.workspace_id == workspace_id, AnchaSceneResult.scene == scene,
                       AnchaRun.status == "complete")
                .order_by(AnchaRun.started_at.desc()).limit(SOURCE_RUNS)))
        for run in runs:
            paths = [str(f["path"]) for f in run.manifest if str(f.get("path", "")).startswith(prefix)]
            if paths:
                path = prefix + "scene.yaml" if prefix + "scene.yaml" in paths else paths[0]
                text = b"".join(read_file(run, path, self.blobs)).decode("utf-8", errors="replace")
                return SceneSource(scene, run.run_id, text)
        return None

    # --- writing and reading tasks ------------------------------------------------------

    def create(self, who: Caller, draft: TaskDraft) -> ConsoleTask:
        source, checks = self.validate(who.workspace_id, draft)
        now = utcnow()
        task = ConsoleTask(id=new_id(), workspace_id=who.workspace_id, name=draft.name.strip(), scene=draft.scene,
                           scene_source=source.text, task=draft.task.strip(), checks=checks, created_at=now,
                           updated_at=now, openings=[])
        with self.db.write() as session:
            session.add(task)
        return task

    def validate(self, workspace_id: str, draft: TaskDraft) -> tuple[SceneSource, list[Any]]:
        """The scene's source and the checks; ``TaskRefused`` with every problem."""
        problems: list[Problem] = []
        name, text = draft.name.strip(), draft.task.strip()
        if not name:
            problems.append(Problem("name", "a task needs a name", "say what it tries, such as 'answer in thread'"))
        elif len(name) > MAX_NAME:
            problems.append(Problem("name", f"a name is at most {MAX_NAME} characters, this one has {len(name)}"))
        if not text:
            problems.append(Problem("task", "a task needs its text: what the agent (or person) is asked to do"))
        elif len(text) > MAX_TASK_TEXT:
            problems.append(Problem("task", f"a task's text is at most {MAX_TASK_TEXT:,} characters, "
                                            f"this one has {len(text):,}"))
        for field, value in (("name", name), ("task", text), ("scene", draft.scene)):
            reason = storable.problem(value)
            if reason:
                problems.append(Problem(field, reason))
        raw = draft.checks
        if draft.checks_text is not None:
            if len(draft.checks_text) > MAX_CHECKS_TEXT:
                problems.append(Problem("checks", f"the checks are at most {MAX_CHECKS_TEXT:,} characters"))
                raw = None
            else:
                raw, found = parse_task_text(draft.checks_text)
                problems.extend(Problem(f"checks (line {p.line})", p.message, p.hint) for p in found)
        if raw is not None:
            reason = storable.problem(raw, "checks")
            if reason:
                problems.append(Problem("checks", reason))
                raw = None
        findable = 0 < len(draft.scene) <= 100 and storable.problem(draft.scene) is None
        source = self.newest_source(workspace_id, draft.scene) if findable else None
        if source is None:
            problems.append(Problem("scene", f"no uploaded run of this workspace has a scene {draft.scene[:100]!r} "
                                             "with its source",
                                    "pick one of the scenes of the workspace's runs (`ancha push` uploads a run "
                                    "with its scenes' sources)"))
        elif raw is not None or draft.checks_text is None:
            problems.extend(self._check_problems(source, raw))
        if problems:
            raise TaskRefused(problems)
        assert source is not None and isinstance(raw, list)
        return source, raw

    @staticmethod
    def _check_problems(source: SceneSource, raw: Any) -> list[Problem]:
        try:
            scene = parse_scene_text(source.text, "scene.yaml", Path.cwd(), catalog())
        except SceneInvalid as exc:
            shown = "; ".join(describe(p) for p in exc.problems[:5])
            return [Problem("scene", f"the source of {source.scene} in run {source.run_id} (its newest upload) "
                                     f"is not a valid scene: {shown}",
                            "push a run whose scene file is valid (ancha check validates it)")]
        return scene_task_checks(raw, scene)[1]

    def listed(self, workspace_id: str) -> list[ConsoleTask]:
        with self.db.read() as session:
            return list(session.scalars(select(ConsoleTask).where(ConsoleTask.workspace_id == workspace_id)
                                        .order_by(ConsoleTask.updated_at.desc()).limit(LISTED)))

    def get(self, workspace_id: str, task_id: str) -> ConsoleTask:
        with self.db.read() as session:
            task = session.scalar(_one(workspace_id, task_id))
        if task is None:
            raise NotFound(f"Console task '{task_id[:40]}' not found in this workspace")
        return task

    def server_of(self, workspace_id: str) -> AnchaServer:
        """The workspace's Ancha server; ``NoAnchaServer`` says how to configure one."""
        with self.db.read() as session:
            workspace = session.get(Workspace, workspace_id)
            assert workspace is not None
            return AnchaServer.of(workspace)

    # --- worlds -------------------------------------------------------------------------

    def open(self, who: Caller, task_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A fresh live world of the task on the workspace's server: (the opening kept, its context)."""
        task = self.get(who.workspace_id, task_id)
        server = self.server_of(who.workspace_id)
        context = server.open_world(task)
        opening = {"env_id": str(context.get("env_id")), "server_url": server.url, "opened_at": iso(utcnow()),
                   "opened_by": who.key_id, "seed": context.get("seed"), "grade": None}
        with self.db.write() as session:
            row = session.scalar(_one(who.workspace_id, task_id).with_for_update())
            if row is None:  # deleted meanwhile
                raise NotFound(f"Console task '{task_id[:40]}' not found in this workspace")
            row.openings = [*row.openings, opening][-MAX_OPENINGS:]
            row.updated_at = utcnow()
        return opening, context

    def grade(self, who: Caller, task_id: str, env_id: str | None = None) -> dict[str, Any]:
        """Grade the task's checks on one of its worlds (the newest without ``env_id``); the
        grade is kept in that opening and returned with it."""
        task = self.get(who.workspace_id, task_id)
        opening = opening_of(task, env_id)
        results = self._server_for(who, opening).grade(opening["env_id"], task.checks)
        grade = {"graded_at": iso(utcnow()), "passed": all(r.get("passed") for r in results if r.get("required", True)),
                 "results": results}
        with self.db.write() as session:
            row = session.scalar(_one(who.workspace_id, task_id).with_for_update())
            if row is None:
                raise NotFound(f"Console task '{task_id[:40]}' not found in this workspace")
            row.openings = [o | {"grade": grade} if o.get("env_id") == opening["env_id"] else o for o in row.openings]
        return opening | {"grade": grade}

    def context(self, who: Caller, task: ConsoleTask, env_id: str) -> dict[str, Any]:
        """The context of one of the task's worlds, as its server tells it now."""
        opening = opening_of(task, env_id)
        return self._server_for(who, opening).context(opening["env_id"])

    def live_server(self, who: Caller, task_id: str, env_id: str) -> AnchaServer:
        """The server holding one of the task's worlds (``NotFound`` for a world not the task's)."""
        return self._server_for(who, opening_of(self.get(who.workspace_id, task_id), env_id))

    def _server_for(self, who: Caller, opening: dict[str, Any]) -> AnchaServer:
        """The server an opening's world is on, with the workspace's key while it is still the
        workspace's server (a key is never sent to another server)."""
        with self.db.read() as session:
            workspace = session.get(Workspace, who.workspace_id)
            assert workspace is not None
            same = (workspace.ancha_server_url or "").rstrip("/") == opening["server_url"]
            return AnchaServer(opening["server_url"], workspace.ancha_server_key if same else None)


def opening_of(task: ConsoleTask, env_id: str | None) -> dict[str, Any]:
    """One of the task's openings, by env id (the newest without one)."""
    for opening in reversed(task.openings):
        if env_id is None or opening.get("env_id") == env_id:
            return dict(opening)
    if env_id is None:
        raise NotFound(f"Console task '{task.id}' was never opened: open it first (POST /api/console-tasks/"
                       f"{task.id}/open, or open on its page)")
    raise NotFound(f"Console task '{task.id}' has no world {env_id[:40]!r}")


def _one(workspace_id: str, task_id: str) -> Any:
    return select(ConsoleTask).where(ConsoleTask.workspace_id == workspace_id, ConsoleTask.id == task_id)
