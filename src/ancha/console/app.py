"""The console's pages and streams, as one Starlette app mounted at ``/ui``.

Every page has a stable URL (``links.py``): runs, a run, a scene across runs, a trial (its
timeline, checks with their evidence, agent log and world diff), one call's bodies.
"""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ancha.console import links
from ancha.console.compare_page import ComparePages
from ancha.console.headers import SecurityHeaders, raw_file_headers
from ancha.console.live_relay import one_event, relay
from ancha.console.origin import RunOrigins, fork_command, fork_from, read_origin
from ancha.console.runs import ConsoleRuns, run_row
from ancha.console.timeline import build_timeline, format_offset
from ancha.console.trial_data import TrialCache, TrialData
from ancha.console.verdict import is_world_call, matching_scene, read_verdict
from ancha.console.world_view import WorldView, trial_world_view
from ancha.results.run_folder import AGENT_LOG, TrialFolder, failed_checks
from ancha.results.runs_folder import LATEST, is_dir, is_folder_name
from ancha.server.keys import server_key
from ancha.world.registry import registry

WINDOW = 200
"""Calls listed at once on a trial's page (the timeline shows them all)."""
LOG_TAIL = 64 * 1024
EVIDENCE_SHOWN = 12
"""Evidence links listed per check; a check can point at thousands of calls."""
TIMELINE_WORLD_MAX = 8 * 1024 * 1024
"""A world.json larger than this is not read for the timeline's state lanes (the diff reads it)."""


class Console:
    """The pages are plain functions: Starlette runs them on its thread pool, so reading a
    large trial or rebuilding a seed never stalls the worlds a server (``ancha serve``)
    is running on its event loop."""

    def __init__(self, runs_dir: Path, server_key: str | None = None, label: str | None = None) -> None:
        self.runs = ConsoleRuns(runs_dir)
        self.label = label
        """What the header names instead of the runs folder (a hosted console's workspace)."""
        self.server_key = server_key
        self.cache = TrialCache()
        self.origins = RunOrigins()
        self.templates = Environment(loader=PackageLoader("ancha.console", "templates"),
                                     autoescape=select_autoescape(["html"]))
        self.templates.globals.update(links=links, offset=format_offset, fork_command=fork_command)

    def page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(self.templates.get_template(name).render(runs_dir=self.label or str(self.runs.path),
                                                                     **values),
                            status_code=status)

    def not_found(self, what: str) -> HTMLResponse:
        return self.page("missing.html", 404, what=what)

    # --- runs ---------------------------------------------------------------------------

    def runs_page(self, request: Request) -> Response:
        return self.page("runs.html", rows=self.runs.rows())

    def run_page(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if run_id == LATEST:
            latest = self.runs.run(LATEST)
            return RedirectResponse(links.run_path(latest.run_id) if latest else links.PREFIX + "/", 307)
        folder = self.runs.run(run_id)
        if folder is None:
            return self.not_found(f"run {run_id}")
        summary = folder.read_summary() or {}
        row = run_row(folder)
        origin = read_origin(summary.get("origin"), None, self.runs)
        compares = origin.compare_links(row.run_id, [(s.scene, t) for s in row.scenes for t, _ in s.trial_verdicts]) \
            if origin else []
        return self.page("run.html", row=row, summary=summary, origin=origin, compares=compares)

    def scene_page(self, request: Request) -> Response:
        scene = request.path_params["scene"]
        history = self.runs.scene_history(scene)
        if not history:
            return self.not_found(f"scene {scene} in any run")
        return self.page("scene.html", scene=scene, history=history)

    # --- a trial ------------------------------------------------------------------------

    def _trial(self, request: Request) -> TrialFolder | None:
        scene, trial = request.path_params["scene"], request.path_params["trial"]
        if not (is_folder_name(scene) and is_folder_name(trial)):
            return None
        folder = self.runs.run(request.path_params["run_id"])
        if folder is None:
            return None
        found = folder.trial(scene, trial)
        return found if is_dir(found.path) else None

    def trial_page(self, request: Request) -> Response:
        folder = self._trial(request)
        if folder is None:
            return self.not_found("trial " + "/".join(request.path_params.values()))
        data = self.cache.load(folder)
        live = folder.read_live() if not data.graded else None
        focus = _int(request.query_params.get("focus"))
        window = _window(data, focus, _int(request.query_params.get("from")))
        timeline = data.derived.get("timeline")
        if timeline is None:
            timeline = data.derived["timeline"] = build_timeline(data, _small_world(folder.world_path))
        run_id, scene, trial = folder.run_id, folder.scene, folder.trial
        results = [r for r in data.checks.get("results") or [] if isinstance(r, dict)]
        run = self.runs.run(run_id)
        verdict = data.derived.get("verdict")
        if verdict is None:
            scene_file = matching_scene(run.read_summary() if run else None, scene)
            verdict = data.derived["verdict"] = read_verdict(data, scene_file, registry().tools)
        world_line = folder.read_world_line()
        return self.page(
            "trial.html", run_id=run_id, scene=scene, trial=trial, data=data, checks=data.checks,
            results=results, failing={str(r.get("id")) for r in failed_checks(data.checks)}, timeline=timeline,
            window=window, focus=focus, focused=data.entry(focus) if focus else None, live=live,
            log=_log_tail(folder), base=links.trial_path(run_id, scene, trial), pretty=_pretty,
            evidence_shown=EVIDENCE_SHOWN, trial_verdict=verdict, world_call=is_world_call, world_line=world_line,
            fork_from=fork_from(folder, world_line),
            origin=read_origin(self.origins.of(run), world_line, self.runs, (scene, trial)))

    def call_fragment(self, request: Request) -> Response:
        folder = self._trial(request)
        seq = _int(request.path_params["seq"])
        entry = self.cache.load(folder).entry(seq) if folder is not None and seq else None
        if folder is None or entry is None:
            return HTMLResponse("<p class=muted>This call is not in trace.jsonl.</p>", 404)
        return self.page("call.html", entry=entry, pretty=_pretty, fork_from=fork_from(folder, folder.read_world_line()))

    def trial_state(self, request: Request) -> Response:
        """Whether the trial is graded yet: a live page reloads once it is."""
        folder = self._trial(request)
        if folder is None:
            return JSONResponse({"error": "no such trial"}, 404)
        return JSONResponse({"graded": folder.is_graded(), "live": folder.read_live() is not None})

    def diff_fragment(self, request: Request) -> Response:
        folder = self._trial(request)
        if folder is None:
            return self.not_found("trial")
        summary = self.runs.run(folder.run_id)
        data = self.cache.load(folder)
        view = data.derived.get("world_view")
        if not isinstance(view, WorldView):
            view = trial_world_view(folder, _scene_summary(summary.read_summary() if summary else None, folder.scene))
            if view.error is None:
                data.derived["world_view"] = view
        full = request.query_params.get("fragment") != "1"
        return self.page("diff.html", full=full, folder=folder, run_id=folder.run_id, view=view, changes=view.changes,
                         total=view.total, error=view.error)

    def agent_log(self, request: Request) -> Response:
        folder = self._trial(request)
        if folder is None:
            return PlainTextResponse("no such trial", 404)
        # Plain text, never sniffed as HTML: the agent wrote every byte of it.
        return PlainTextResponse(folder.read_log(), headers=raw_file_headers(folder.scene, folder.trial, AGENT_LOG))

    async def live(self, request: Request) -> Response:
        """The running trial's world, relayed from its server's ``/envs/ENV/live``."""
        folder = self._trial(request)
        where = folder.read_live() if folder is not None else None
        if where is None:
            return StreamingResponse(one_event("end", {"status": "finished"}), media_type="text/event-stream")
        # ANCHA_SERVER_KEY, else the key kept for that server (an `ancha run`'s own, an `ancha serve`'s).
        key = server_key(where["server_url"]) or self.server_key
        headers = {"authorization": f"Bearer {key}"} if key else {}
        if last := request.headers.get("last-event-id"):
            headers["last-event-id"] = last
        url = f"{where['server_url'].rstrip('/')}/envs/{where['env_id']}/live"
        return StreamingResponse(relay(url, headers, "the trial's server"), media_type="text/event-stream",
                                 headers={"cache-control": "no-store"})


def _int(text: Any) -> int | None:
    return int(text) if isinstance(text, str) and text.isdigit() and len(text) < 12 else None


def _window(data: TrialData, focus: int | None, start: int | None) -> dict[str, Any]:
    """Which calls the page lists: ``WINDOW`` of them, around the focused one when there is one."""
    total = len(data.calls)
    first = 0
    if focus is not None:
        index = next((i for i, c in enumerate(data.calls) if c.seq == focus), 0)
        first = max(0, index - WINDOW // 4)
    elif start is not None:
        first = next((i for i, c in enumerate(data.calls) if c.seq >= start), total)
    first = min(first, max(0, total - WINDOW))
    calls = data.calls[first:first + WINDOW]
    return {"calls": calls, "total": total,
            "earlier": data.calls[max(0, first - WINDOW)].seq if first > 0 else None,
            "later": data.calls[first + WINDOW].seq if first + WINDOW < total else None}


def _small_world(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > TIMELINE_WORLD_MAX:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _scene_summary(summary: dict[str, Any] | None, scene: str) -> dict[str, Any] | None:
    for entry in (summary or {}).get("scenes") or []:
        if isinstance(entry, dict) and entry.get("scene") == scene:
            return entry
    return None


def _log_tail(folder: TrialFolder) -> dict[str, Any]:
    text, cut = folder.read_log_tail(LOG_TAIL)
    return {"text": text, "cut": cut}


def _pretty(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def console_app(runs_dir: Path, server_key: str | None = None, page_key: str | None = None,
                label: str | None = None) -> ASGIApp:
    """The console over ``runs_dir`` (``.ancha/runs``). ``server_key``: the key of the servers
    running trials live (ANCHA_SERVER_KEY), for following them. ``page_key``: a key every
    page then needs (a server reachable from other machines): ``Authorization: Bearer``, or
    once as ``?key=`` in a browser, which keeps it in a cookie. ``label``: what the header
    names instead of the runs folder."""
    console = Console(runs_dir, server_key if server_key is not None else os.environ.get("ANCHA_SERVER_KEY"), label)
    registry()  # the tools' modules load now, not on the first trial page
    trial = "/runs/{run_id}/{scene}/{trial}"
    static = StaticFiles(packages=[("ancha.console", "static")])
    app = Starlette(routes=[
        Route("/", console.runs_page),
        Route("/runs/{run_id}", console.run_page),
        Route("/scenes/{scene}", console.scene_page),
        Route("/compare", ComparePages(console.runs, console.cache, console.page, label).compare),
        Route(trial, console.trial_page),
        Route(trial + "/calls/{seq}", console.call_fragment),
        Route(trial + "/state", console.trial_state),
        Route(trial + "/diff", console.diff_fragment),
        Route(f"{trial}/{AGENT_LOG}", console.agent_log),
        Route(trial + "/live", console.live),
        Mount("/static", static, name="static"),
    ])
    return SecurityHeaders(app if page_key is None else KeyedConsole(app, page_key))


class KeyedConsole:
    """The console behind a key (``console_app``'s ``page_key``)."""

    COOKIE = "ancha_console_key"

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        supplied = request.query_params.get("key") or request.cookies.get(self.COOKIE) or \
            request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied.encode(), self.key.encode()):
            answer: Response = PlainTextResponse(
                "this console needs the server's key: open it once as /ui/?key=KEY (ANCHA_SERVER_KEY)", 401)
            await answer(scope, receive, send)
            return
        if "key" in request.query_params:  # keep it, and take it out of the address bar
            answer = RedirectResponse(str(request.url.remove_query_params("key")), 303)
            answer.set_cookie(self.COOKIE, self.key, httponly=True, samesite="strict")
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)
