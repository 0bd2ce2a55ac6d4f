"""The hosted console's routes, mounted at ``/ui`` by the AgentOS app.

Every page but sign-in needs a session (``sessions.py``), and every page reads only the
session's workspace: runs come from the database scoped to it, and a trial's files from
that workspace's copies (``materialize.py``). A run id of another workspace is simply not
found. The history pages (runs, a scene's chart, flaky scenes, regressions) are the hosted
console's own; a run, a trial and a comparison are Ancha's console pages, unchanged.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import ChoiceLoader, Environment, PackageLoader, select_autoescape
from sqlalchemy import Select, select
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentos.api.console import charts
from agentos.api.console.materialize import RunCopies
from agentos.api.console.sessions import COOKIE, SESSION_HOURS, session_caller, sign_in, sign_out
from agentos.api.console.tasks import task_routes
from agentos.db import Database
from agentos.errors import ApiError
from agentos.history import analysis, queries
from agentos.keys import Caller, KeyRing
from agentos.models import AnchaRun, Workspace
from ancha.console import links
from ancha.console.app import console_app
from ancha.console.headers import SecurityHeaders
from ancha.console.timeline import format_offset

PUBLIC = ("/sign-in", "/static/")
_TRIAL_PATH = re.compile(r"^/runs/([^/]+)(?:/([^/]+)/([^/]+))?")
FLAKY_RUNS = 20


class HostedConsole:
    def __init__(self, db: Database, keys: KeyRing, copies: RunCopies) -> None:
        self.db = db
        self.keys = keys
        self.copies = copies
        self.templates = Environment(
            loader=ChoiceLoader([PackageLoader("agentos.api.console", "templates"),
                                 PackageLoader("ancha.console", "templates")]),
            autoescape=select_autoescape(["html"]))
        self.templates.globals.update(links=links, offset=format_offset, quote=quote, urlencode=urlencode)
        self._consoles: dict[str, ASGIApp] = {}

    # --- sessions -------------------------------------------------------------------------

    def page(self, request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        caller: Caller | None = request.scope.get("state", {}).get("caller")
        workspace = request.scope.get("state", {}).get("workspace_name", "")
        html = self.templates.get_template(name).render(runs_dir=workspace, caller=caller, **values)
        return HTMLResponse(html, status_code=status)

    def sign_in_page(self, request: Request) -> Response:
        return self.page(request, "sign_in.html", next=_safe_next(request.query_params.get("next")))

    async def sign_in(self, request: Request) -> Response:
        form = await request.form()
        key = str(form.get("key") or "")
        found = await run_in_threadpool(sign_in, self.db, self.keys, key)
        if found is None:
            return self.page(request, "sign_in.html", 401, next=_safe_next(str(form.get("next") or "")),
                             error="That key is not a key of this server (or it was revoked).")
        token, _ = found
        answer = RedirectResponse(_safe_next(str(form.get("next") or "")), 303)
        answer.set_cookie(COOKIE, token, max_age=SESSION_HOURS * 3600, path=links.PREFIX, httponly=True,
                          samesite="strict", secure=request.url.scheme == "https")
        return answer

    async def sign_out(self, request: Request) -> Response:
        await run_in_threadpool(sign_out, self.db, request.cookies.get(COOKIE))
        answer = RedirectResponse(links.PREFIX + "/sign-in", 303)
        answer.delete_cookie(COOKIE, path=links.PREFIX)
        return answer

    async def problem(self, request: Request, exc: Exception) -> Response:
        """A request the pages refuse (a bad page cursor): a page that says why, with its status."""
        assert isinstance(exc, ApiError)
        return self.page(request, "hosted_problem.html", exc.status_code, title=HTTPStatus(exc.status_code).phrase,
                         message=exc.detail)

    # --- the history pages ----------------------------------------------------------------

    def runs_page(self, request: Request) -> Response:
        who = _caller(request)
        params = request.query_params
        branch, commit, scene = (params.get(k) or None for k in ("branch", "commit", "scene"))
        with self.db.read() as session:
            page = queries.runs_page(session, who.workspace_id, branch=branch, commit=commit, scene=scene,
                                     limit=50, before=params.get("before"), with_scenes=True)
            branches = queries.branches(session, who.workspace_id)
            scenes = queries.scenes(session, who.workspace_id)
        rows = [{"run": run, "scenes": page.scenes[run.id]} for run in page.runs]
        filters = {"branch": branch or "", "commit": commit or "", "scene": scene or ""}
        more = f"{links.PREFIX}/?" + urlencode({k: v for k, v in filters.items() if v} | {"before": page.next}) \
            if page.next else None
        return self.page(request, "hosted_runs.html", rows=rows, filters=filters, more=more, branches=branches,
                         scenes=scenes)

    def scene_page(self, request: Request) -> Response:
        who = _caller(request)
        scene = request.path_params["scene"]
        branch = request.query_params.get("branch") or None
        with self.db.read() as session:
            rows = queries.scene_results(session, who.workspace_id, scene, branch=branch)
        if not rows:
            return self.page(request, "missing.html", 404, what=f"scene {scene} in any uploaded run")
        series = analysis.pass_rate_series([queries.as_outcome(r) for r in rows], scene)
        return self.page(request, "hosted_scene.html", scene=scene, branch=branch or "", rows=list(reversed(rows)),
                         chart=charts.pass_rate_chart(series), series=series)

    def flaky_page(self, request: Request) -> Response:
        who = _caller(request)
        branch, commit = (request.query_params.get(k) or None for k in ("branch", "commit"))
        last = _int(request.query_params.get("last"), FLAKY_RUNS, 1, 500)
        with self.db.read() as session:
            rows = queries.outcomes(session, who.workspace_id, branch=branch, commit=commit, last_runs=last)
            branches = queries.branches(session, who.workspace_id)
        flaky = analysis.flaky_scenes(rows, last=last, commit=commit, branch=None if commit else branch)
        return self.page(request, "hosted_flaky.html", flaky=flaky, branch=branch or "", commit=commit or "",
                         last=last, branches=branches)

    def regressions_page(self, request: Request) -> Response:
        who = _caller(request)
        branch = request.query_params.get("branch") or None
        with self.db.read() as session:
            rows = queries.outcomes(session, who.workspace_id, branch=branch, last_runs=queries.REGRESSION_RUNS)
            branches = queries.branches(session, who.workspace_id)
        found = analysis.regressions(rows, branch=branch)
        return self.page(request, "hosted_regressions.html", regressions=list(reversed(found)),
                         branch=branch or "", branches=branches)

    def compare_runs(self, request: Request) -> Response:
        """Two runs of a scene (a regression's last good and first bad): a passed trial of the
        first beside a failed trial of the second, on Ancha's compare page."""
        who = _caller(request)
        params = request.query_params
        scene = params.get("scene") or ""
        refs = []
        with self.db.read() as session:
            for run_id, wanted in ((params.get("a") or "", "passed"), (params.get("b") or "", "failed")):
                run = session.scalar(uploads_query(who.workspace_id, run_id))
                if run is None:
                    return self.page(request, "missing.html", 404, what=f"run {run_id}")
                refs.append(links.trial_ref(run.run_id, scene, _trial_with(run, scene, wanted)))
        return RedirectResponse(links.compare_path(refs[0], refs[1]), 303)

    # --- Ancha's pages over the workspace's copies ----------------------------------------

    def console_of(self, workspace_id: str, label: str) -> ASGIApp:
        app = self._consoles.get(workspace_id)
        if app is None:
            folder = self.copies.workspace_dir(workspace_id)
            folder.mkdir(parents=True, exist_ok=True)
            app = self._consoles[workspace_id] = console_app(folder, label=label)
        return app

    def prepare(self, who: Caller, path: str, query: dict[str, str]) -> bool:
        """Copy what an Ancha page will read; False when the run is not the workspace's."""
        wanted: list[tuple[str, str | None, str | None]] = []
        match = _TRIAL_PATH.match(path)
        if match:
            wanted.append((match.group(1), match.group(2), match.group(3)))
        elif path == "/compare":
            for ref in (query.get("a"), query.get("b")):
                if ref and ref.count("/") == 2:
                    ref_run, ref_scene, ref_trial = ref.split("/")
                    wanted.append((ref_run, ref_scene, ref_trial))
            if query.get("scene"):
                with self.db.read() as session:
                    page = queries.runs_page(session, who.workspace_id, scene=query["scene"], limit=20)
                for listed in page.runs:
                    wanted.append((listed.run_id, None, None))
        with self.db.read() as session:
            for run_id, scene, trial in wanted:
                run = session.scalar(uploads_query(who.workspace_id, run_id))
                if run is None:
                    if match:
                        return False
                    continue
                self.copies.ensure_run(run)
                if scene and trial:
                    self.copies.ensure_trial(run, scene, trial)
                    if path == "/compare" and query.get("scene"):
                        continue
                elif path == "/compare" and query.get("scene"):
                    for item in run.manifest:
                        parts = item["path"].split("/")
                        if len(parts) == 3 and parts[0] == query["scene"]:
                            self.copies.ensure_trial(run, parts[0], parts[1])
        return True

    async def ancha_page(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        who = _caller(request)
        path = scope["path"].removeprefix(scope.get("root_path", ""))
        known = await run_in_threadpool(self.prepare, who, path, dict(request.query_params))
        if not known:
            answer = self.page(request, "missing.html", 404, what="run " + path.split("/")[2])
            await answer(scope, receive, send)
            return
        label = scope["state"].get("workspace_name", "").partition(" · ")[0]
        await self.console_of(who.workspace_id, label)(scope, receive, send)


class AnchaPages:
    """Ancha's console pages as one ASGI endpoint (a class, so Starlette hands it the raw scope)."""

    def __init__(self, console: HostedConsole) -> None:
        self.console = console

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.console.ancha_page(scope, receive, send)


def uploads_query(workspace_id: str, run_id: str) -> Select[AnchaRun]:
    return select(AnchaRun).where(AnchaRun.workspace_id == workspace_id, AnchaRun.run_id == run_id,
                                  AnchaRun.status == "complete")


def _trial_with(run: AnchaRun, scene: str, verdict: str) -> str:
    """The first trial of ``scene`` with ``verdict`` in the run (else its first trial)."""
    for entry in run.summary.get("scenes") or []:
        if isinstance(entry, dict) and entry.get("scene") == scene:
            trials = [t for t in entry.get("trial_results") or [] if isinstance(t, dict)]
            chosen = next((t for t in trials if t.get("verdict") == verdict), trials[0] if trials else None)
            if chosen is not None:
                return str(chosen.get("trial"))
    return "1"


def _caller(request: Request) -> Caller:
    caller: Caller = request.scope["state"]["caller"]
    return caller


def _int(text: str | None, default: int, low: int, high: int) -> int:
    return max(low, min(high, int(text))) if text and text.isdigit() and len(text) < 6 else default


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: a console page only (never another site)."""
    if target and target.startswith(links.PREFIX + "/") and not target.startswith("//") and "\\" not in target \
            and not target.startswith(links.PREFIX + "//"):
        return target
    return links.PREFIX + "/"


class SignedIn:
    """Lets a request through with its session's caller in ``scope["state"]``; otherwise a
    browser is sent to sign in, and anything else gets a 401."""

    def __init__(self, app: ASGIApp, db: Database) -> None:
        self.app = app
        self.db = db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"].removeprefix(scope.get("root_path", ""))
        if path.startswith(PUBLIC):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        caller = await run_in_threadpool(session_caller, self.db, request.cookies.get(COOKIE))
        if caller is None:
            answer: Response
            if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
                target = links.PREFIX + path + (f"?{request.url.query}" if request.url.query else "")
                answer = RedirectResponse(f"{links.PREFIX}/sign-in?" + urlencode({"next": target}), 303)
            else:
                answer = PlainTextResponse("Sign in to the console first: open /ui/sign-in with a workspace key", 401)
            await answer(scope, receive, send)
            return
        name = await run_in_threadpool(_workspace_name, self.db, caller.workspace_id)
        scope.setdefault("state", {})
        scope["state"]["caller"] = caller
        scope["state"]["workspace_name"] = f"workspace {name} · {caller.role}"

        # A signed-in page is the workspace's data: never stored, so after signing out the
        # browser's back button asks the server again (and is sent to sign in).
        async def send_unstored(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).setdefault("cache-control", "no-store")
            await send(message)

        await self.app(scope, receive, send_unstored)


def _workspace_name(db: Database, workspace_id: str) -> str:
    with db.read() as session:
        workspace = session.get(Workspace, workspace_id)
        return workspace.name if workspace is not None else workspace_id


def hosted_console(db: Database, keys: KeyRing, copies_dir: Path, blobs: Any,
                   extra_routes: list[Any] | None = None) -> ASGIApp:
    """The hosted console as an ASGI app, to mount at ``/ui``."""
    console = HostedConsole(db, keys, RunCopies(copies_dir, blobs))
    ancha = AnchaPages(console)
    app = Starlette(routes=[
        Route("/sign-in", console.sign_in_page, methods=["GET"]),
        Route("/sign-in", console.sign_in, methods=["POST"]),
        Route("/sign-out", console.sign_out, methods=["POST"]),
        Route("/", console.runs_page),
        Route("/scenes/{scene}", console.scene_page),
        Route("/flaky", console.flaky_page),
        Route("/regressions", console.regressions_page),
        Route("/compare-runs", console.compare_runs),
        *task_routes(console),
        *(extra_routes or []),
        Route("/runs/{rest:path}", ancha),
        Route("/compare", ancha),
        Mount("/static", StaticFiles(packages=[("ancha.console", "static"), ("agentos.api.console", "static")]),
              name="static"),
    ])
    app.add_exception_handler(ApiError, console.problem)
    return SecurityHeaders(SignedIn(app, db))
