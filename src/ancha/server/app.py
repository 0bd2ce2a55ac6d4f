"""The Ancha server: the control API and every environment's tools, as one ASGI app.

``ancha run`` starts it in-process on a loopback port, ``ancha serve`` runs it alone;
the runner talks to both the same way, over HTTP.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from ancha.durations import parse_duration
from ancha.scene.errors import SceneInvalid
from ancha.server.branching import Branching
from ancha.server.collector import tune_collector
from ancha.server.gateway import ToolGateway
from ancha.server.interceptor import HostnameSettings, HostnameSettingsError, Interceptor
from ancha.server.minting import minter
from ancha.server.registry import Registry, SceneNotCached
from ancha.world.checkpoint import CheckpointError
from ancha.world.environment import Environment
from ancha.world.kernel import bounded_json
from ancha.world.settings import InvalidSettings, check_settings

FEED_MAX_WAIT = 60.0
ENV_ID = re.compile(r"^env_[0-9a-f]{12}$")
TRACE_PAGE_MAX = 10_000
"""The most entries one ``GET /trace?limit=N`` page holds."""
TRACE_PAGING_HINT = f"page with ?after=SEQ&limit=N (SEQ >= 0, 1 <= N <= {TRACE_PAGE_MAX})"


def _error(status: int, message: str, hint: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if hint:
        body["hint"] = hint
    return JSONResponse(body, status_code=status)


SCENE_HINT = ('send {"scene": "<the text of a scene file>"} (YAML, as in scene.yaml), or the file parsed into a '
              'JSON object as written ({"name": ..., "clock": {"limit": "2h"}, "world": ..., "checks": ...}), '
              'and optionally "trial" and "agent"')


def _scene_invalid(exc: SceneInvalid) -> JSONResponse:
    """400 with every problem of an inline scene, in the scene file's terms."""
    problems = [{"where": f"{p.file or 'scene.yaml'}{f':{p.line}' if p.line else ''}: {p.path}".rstrip(": "),
                 "message": p.message, **({"hint": p.hint} if p.hint else {})} for p in exc.problems]
    text = "; ".join(f"{item['where']}: {item['message']}" for item in problems)
    return JSONResponse({"error": f"invalid scene: {text}", "problems": problems, "hint": SCENE_HINT},
                        status_code=400)


def _same_secret(supplied: str, secret: str) -> bool:
    """Constant-time comparison of a header's token with a secret. Compared as UTF-8 bytes:
    ``hmac.compare_digest`` raises on non-ASCII text, and a header may hold any byte."""
    return hmac.compare_digest(supplied.encode("utf-8"), secret.encode("utf-8"))


def _status_or_error(env: Environment) -> dict[str, Any]:
    """One environment's line in ``GET /envs``: a broken one is listed with its error, so
    that it never takes the list down for everyone."""
    try:
        return env.status_dict()
    except Exception as exc:
        return {"env_id": env.id, "error": f"status unavailable: {exc}"}


@dataclass(frozen=True, slots=True)
class SecureListener:
    """The server's TLS listener: tools whose SDK only talks https are handed out there."""

    origin: str
    """``https://HOST:PORT``."""
    ca_pem: str
    """The certificate authority agents must trust for it."""


class ControlAPI:
    def __init__(self, registry: Registry, key: str | None, tls: SecureListener | None = None,
                 tunnel_addresses: Mapping[str, tuple[str, int]] | None = None) -> None:
        self.registry = registry
        self.tunnel_addresses = dict(tunnel_addresses or {})
        """``Interceptor.addresses`` of every environment (a test's made-up hostnames)."""
        self.key = key
        self.tls = tls
        self.gateway: ToolGateway | None = None
        """The app that answers tool calls (set by ``create_app``): intercepted calls go to it too."""
        self.interceptors: dict[str, Interceptor] = {}
        self.branching = Branching(self)
        """Replayed calls and checkpoints (``branching.py``)."""
        """Each environment's vendor hostnames (``agent.hostnames: real``), by env id."""

    # --- helpers ----------------------------------------------------------------------

    def _authorized(self, request: Request) -> bool:
        if not self.key:
            return True
        supplied = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return _same_secret(supplied, self.key)

    def _env(self, request: Request, control: bool = False) -> Environment | JSONResponse:
        """The environment the path names. ``control``: a control endpoint (trace, state,
        records, checks), which needs the server key when the server has one; the
        agent-facing ones check their own tokens."""
        if control and not self._authorized(request):
            return _error(401, "this server needs a key", "send Authorization: Bearer <server key>")
        env = self.registry.get(request.path_params["env_id"])
        if env is None:
            return _error(404, f"no environment {request.path_params['env_id']!r} on this server",
                          "it may have been torn down; list live ones with GET /envs")
        return env

    async def _forget(self, env_id: str) -> None:
        """Tear an environment down, with its vendor hostnames' ports."""
        self.registry.delete(env_id)
        interceptor = self.interceptors.pop(env_id, None)
        if interceptor is not None:
            await interceptor.close()

    @staticmethod
    def _bearer(request: Request) -> str:
        return request.headers.get("authorization", "").removeprefix("Bearer ").strip()

    def context(self, request: Request, env: Environment) -> dict[str, Any]:
        base = str(request.base_url).rstrip("/") + f"/envs/{env.id}"
        tools: dict[str, Any] = {}
        specs = env.registry.tools
        for name, tool in env.tools.items():
            url = f"{base}/{name}"
            if self.tls is not None and specs[name].secure:
                url = f"{self.tls.origin}/envs/{env.id}/{name}"
            tools[name] = {"url": url, **tool.credentials()}
        extra: dict[str, Any] = {} if self.tls is None else {"tls": {"ca_pem": self.tls.ca_pem}}
        return {
            "env_id": env.id,
            "scene": env.scene.name,
            "task": env.scene.task,
            "trial": env.trial,
            "clock": env.status_dict()["clock"],
            "tools": tools,
            "events": {"url": f"{base}/events", "token": env.events_token},
            "done_url": f"{base}/done",
            "context_url": f"{base}/context",
            "server_url": str(request.base_url).rstrip("/"),
            "trial_token": env.trial_token,
            **extra,
        }

    # --- control endpoints ------------------------------------------------------------

    async def create_env(self, request: Request) -> Response:
        if not self._authorized(request):
            return _error(401, "this server needs a key", "send Authorization: Bearer <server key>")
        kept = None
        try:
            body = bounded_json.loads(await request.body() or b"{}")
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
            if "from_checkpoint" in body:
                kept = self.branching.checkpoints.get(str(body["from_checkpoint"]))
                if kept is None:
                    return _error(404, f"no checkpoint {body['from_checkpoint']!r} on this server",
                                  "make one with POST /envs/{id}/checkpoint, or bring one with POST /checkpoints")
                if "scene" not in body and "scene_hash" not in body:
                    body["scene_hash"] = kept.header.source_hash
            scene = self.registry.scene(body)
            patched = None  # a fork's scene from here on (ancha fork --set), read as the scene is
            if kept is not None and body.get("patched_scene") is not None:
                patched = self.registry.read_scene(body["patched_scene"])
            trial = body.get("trial", 1) if kept is None else kept.header.trial
            if not isinstance(trial, int) or isinstance(trial, bool) or trial < 1:
                raise ValueError(f"'trial' must be a positive integer, got {trial!r}")
            seed = body.get("seed")
            if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
                raise ValueError(f"'seed' must be a whole number from 0 to 2**63-1, got {seed!r}")
            env_id = body.get("env_id")
            if env_id is not None and (not isinstance(env_id, str) or not ENV_ID.fullmatch(env_id)):
                raise ValueError(f"'env_id' must be env_ and 12 hex digits, got {env_id!r}")
            if env_id is not None and self.registry.get(env_id) is not None:
                return _error(409, f"the environment {env_id} exists on this server", "leave env_id out for a new one")
            replaying = body.get("replay", False)
            if not isinstance(replaying, bool):
                raise ValueError("'replay' must be true or false")
        except SceneNotCached:
            return _error(404, "scene not cached", "send the scene itself in 'scene'")
        except SceneInvalid as exc:  # an inline scene, told as its file would be
            return _scene_invalid(exc)
        except ValueError as exc:
            return _error(400, f"invalid environment request: {exc}", SCENE_HINT)
        agent = body.get("agent")
        if agent is not None and not isinstance(agent, dict):
            return _error(400, "invalid environment request: 'agent' must be an object",
                          'e.g. {"idle": 10.0, "input": "command"}')
        try:
            check_settings(scene, agent)
            hostnames = HostnameSettings.of(agent)
        except (InvalidSettings, HostnameSettingsError) as exc:
            return _error(400, f"invalid environment request: {exc}")
        try:
            if kept is not None:
                env = self.registry.restore(kept.data, scene, agent, env_id, patched=patched)
            else:
                env = self.registry.create(scene, trial, agent, seed=seed, env_id=env_id, replay=replaying)
        except CheckpointError as exc:
            return _error(422, f"the world could not be restored: {exc}")
        except Exception as exc:  # the world could not be built: the trial is invalid
            return _error(422, f"the world could not be built: {exc}")
        try:
            context = self.context(request, env)
            if env.agent_clock is not None:  # for the runner only: where its agent's libfaketime reads the time
                context["agent_clock"] = {"file": str(env.agent_clock.path)}
            if hostnames is not None:  # the vendors' hostnames: a proxy and a TLS port for this environment
                assert self.gateway is not None
                interceptor = Interceptor(env, self.gateway, minter(), hostnames, addresses=self.tunnel_addresses)
                self.interceptors[env.id] = interceptor
                context["hostnames"] = (await interceptor.open(request.url.hostname or "127.0.0.1")).context()
            if not replaying:  # a replay's clock moves only to each recorded call (POST /envs/{id}/calls)
                env.start_ticker()
            context["seed"] = env.seed
            if kept is not None:
                context["forked_at"] = env.clock.isoformat(kept.header.at)
                context["forked_seq"] = kept.header.seq
        except Exception as exc:  # never leave a half-made environment registered
            await self._forget(env.id)
            return _error(422, f"the world could not be started: {exc}")
        return JSONResponse(context, status_code=201)

    async def list_envs(self, request: Request) -> Response:
        if not self._authorized(request):
            return _error(401, "this server needs a key")
        return JSONResponse({"envs": [_status_or_error(e) for e in list(self.registry.envs.values())]})

    async def env_status(self, request: Request) -> Response:
        if not self._authorized(request):
            return _error(401, "this server needs a key")
        env = self._env(request)
        if isinstance(env, JSONResponse):
            return env
        if request.method == "DELETE":
            await self._forget(env.id)
            return Response(status_code=204)
        return JSONResponse(env.status_dict())

    async def trace(self, request: Request) -> Response:
        """The trace as JSONL, read back from its spool as it is sent. ``?after=SEQ&limit=N``
        gives one page (``Ancha-Trace-Next: SEQ`` says where the next starts, when one
        does); without them, every entry."""
        env = self._env(request, control=True)
        if isinstance(env, JSONResponse):
            return env
        try:
            after = _bounded_int(request.query_params.get("after"), "after", 0, 0, None) or 0
            limit = _bounded_int(request.query_params.get("limit"), "limit", None, 1, TRACE_PAGE_MAX)
        except ValueError as exc:
            return _error(400, f"invalid trace query: {exc}", TRACE_PAGING_HINT)
        entries = env.trace.page(after, limit)
        headers = {"ancha-trace-entries": str(len(env.trace))}
        if limit is not None and entries and entries[-1].seq < len(env.trace):
            headers["ancha-trace-next"] = str(entries[-1].seq)
        # Read back a megabyte at a time on this loop (a spool is a local file), not a line per worker-thread hop.
        lines = _in_pieces(entry.to_line().encode() for entry in entries)
        return StreamingResponse(lines, media_type="application/x-ndjson", headers=headers)

    async def state(self, request: Request) -> Response:
        """The final state (``world.json``), streamed: built whole here, between two steps of
        the world, so that it is one consistent moment."""
        env = self._env(request, control=True)
        if isinstance(env, JSONResponse):
            return env
        return StreamingResponse(_in_pieces(env.snapshot_json()), media_type="application/json")

    async def live(self, request: Request) -> Response:
        """The trial as it happens, as Server-Sent Events (``live.py``); ``?calls=N&records=M``:
        what the subscriber already has."""
        from ancha.server.live import live_events, parse_cursor

        env = self._env(request, control=True)
        if isinstance(env, JSONResponse):
            return env
        try:
            calls = _bounded_int(request.query_params.get("calls"), "calls", 0, 0, None) or 0
            records = _bounded_int(request.query_params.get("records"), "records", 0, 0, None) or 0
        except ValueError as exc:
            return _error(400, f"invalid live query: {exc}", "use ?calls=N&records=M (what you already have)")
        calls, records = parse_cursor(request.headers.get("last-event-id")) or (calls, records)
        return StreamingResponse(live_events(env, calls, records), media_type="text/event-stream",
                                 headers={"cache-control": "no-store"})

    async def records(self, request: Request) -> Response:
        env = self._env(request, control=True)
        if isinstance(env, JSONResponse):
            return env
        return PlainTextResponse(env.records_jsonl(), media_type="application/x-ndjson")

    async def checks(self, request: Request) -> Response:
        """Grade the scene's checks, or the ones in the body: ``{"checks": [...]}`` (any kind,
        as in a scene file) or a bare ``[...]``, a task's list (state and trace checks only,
        at most 20, as in a playground task file). Judge checks come back skipped, with their
        rubrics under ``judge`` (id -> rubric): the caller grades them with its own key."""
        from ancha.checks.evaluate import evaluate_checks, parse_check_specs
        from ancha.checks.task import parse_task

        env = self._env(request, control=True)
        if isinstance(env, JSONResponse):
            return env
        raw = await request.body()
        specs = env.scene.checks
        required: set[str] | None = None  # the scene's pass
        if raw.strip():
            try:
                body = bounded_json.loads(raw)
                if isinstance(body, list):
                    specs = parse_task(body, env)
                    required = {spec.id for spec in specs}
                elif not isinstance(body, dict):
                    raise ValueError("send a JSON list of check objects, or an object with 'checks'")
                elif "checks" in body:
                    specs = parse_check_specs(body["checks"], env)
            except (ValueError, TypeError) as exc:
                return _error(400, f"invalid checks: {exc}")
        results = evaluate_checks(env, specs, required)
        rubrics = {spec.id: spec.judge for spec in specs if spec.judge is not None}
        return JSONResponse({"env_id": env.id, "results": [r.to_dict() for r in results],
                             **({"judge": rubrics} if rubrics else {})})

    async def grade(self, request: Request) -> Response:
        """Everything the runner keeps of a finished trial, in one round trip: the status,
        every check result, the trace, the records and the final state. ``?teardown=1``
        then deletes the environment; ``?trace=0`` leaves the trace out (page it with
        ``GET /trace`` instead: a long trace is then never held whole in memory), and
        ``?state=0`` the state (stream it with ``GET /state``)."""
        from ancha.checks.evaluate import evaluate_checks

        if not self._authorized(request):
            return _error(401, "this server needs a key")
        env = self._env(request)
        if isinstance(env, JSONResponse):
            return env
        env.end("done", "the agent finished")
        results = evaluate_checks(env, env.scene.checks)
        body: dict[str, Any] = {
            "status": env.status_dict(),
            "results": [r.to_dict() for r in results],
            "records": env.records_jsonl(),
        }
        if request.query_params.get("state") != "0":
            body["state"] = env.snapshot()
        if request.query_params.get("trace") != "0":
            body["trace"] = env.trace.to_jsonl()
        if request.query_params.get("teardown") == "1":
            await self._forget(env.id)
        return JSONResponse(body)

    async def events(self, request: Request) -> Response:
        env = self._env(request)
        if isinstance(env, JSONResponse):
            return env
        if not _same_secret(self._bearer(request), env.events_token):
            return _error(401, "invalid events token", "send Authorization: Bearer $ANCHA_EVENTS_TOKEN")
        try:
            cursor = int(request.query_params.get("after") or 0)
            wait = parse_duration(request.query_params.get("wait") or "0s")
        except ValueError as exc:
            return _error(400, f"invalid feed query: {exc}", "use ?after=CURSOR&wait=30s")
        events = await env.wait_feed(cursor, wait, FEED_MAX_WAIT)
        return JSONResponse({"events": events, "cursor": str(cursor + len(events))})

    async def done(self, request: Request) -> Response:
        env = self._env(request)
        if isinstance(env, JSONResponse):
            return env
        if not _same_secret(self._bearer(request), env.trial_token):
            return _error(401, "invalid trial token", "send Authorization: Bearer $ANCHA_TRIAL_TOKEN")
        env.end("done", "the done URL was called")
        return JSONResponse({"ok": True, "status": env.status})

    def _runner_env(self, request: Request) -> Environment | JSONResponse:
        """The environment of a route only the runner calls for its trial: with the server's
        key alone. The trial's token opens none of them: it is the agent's, and what the
        agent says about its own waiting or its endpoint would steer its own grading."""
        return self._env(request, control=True)

    async def waiting(self, request: Request) -> Response:
        """The runner says whether the agent waits (``{"waiting": true}`` between two
        ``per_event`` invocations): while it does, the clock jumps to what is due next."""
        env = self._runner_env(request)
        if isinstance(env, JSONResponse):
            return env
        try:
            body = bounded_json.loads(await request.body() or b"{}")
            value = body["waiting"]
            if not isinstance(value, bool):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _error(400, 'expected {"waiting": true} or {"waiting": false}')
        env.waiting_external = value
        return JSONResponse(env.status_dict())

    async def endpoint(self, request: Request) -> Response:
        """The runner says where the trial's endpoint agent listens, once it is ready
        (``{"url": "...{{service}}...", "startup_timeout": 30}``): the world makes each tool's
        handshake (such as a URL verification) within ``startup_timeout`` seconds, then POSTs
        every event to the agent (``world/endpoint.py``). 422 when a handshake fails."""
        from ancha.world.endpoint import EndpointDelivery, EndpointRefused

        env = self._runner_env(request)
        if isinstance(env, JSONResponse):
            return env
        try:
            body = bounded_json.loads(await request.body() or b"{}")
            url = body["url"]
            timeout = float(body.get("startup_timeout", 30))
            if not isinstance(url, str) or not url.startswith(("http://", "https://")) or not 0 < timeout <= 3600:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _error(400, 'expected {"url": "http://...", "startup_timeout": 30}')
        if env.endpoint is not None:
            return _error(409, "this environment already delivers to an endpoint agent")
        delivery = EndpointDelivery(env, url)
        try:
            await delivery.start(timeout)
        except EndpointRefused as exc:
            delivery.stop()
            return _error(422, str(exc), "answer 2xx with the challenge, within agent.startup_timeout")
        env.endpoint = delivery
        env.endpoint_changed()
        return JSONResponse(env.status_dict())

    async def env_context(self, request: Request) -> Response:
        env = self._env(request)
        if isinstance(env, JSONResponse):
            return env
        token = self._bearer(request)
        if not (_same_secret(token, env.trial_token) or self._authorized(request)):
            return _error(401, "invalid trial token", "send Authorization: Bearer $ANCHA_TRIAL_TOKEN")
        return JSONResponse(self.context(request, env))

    # --- tools ------------------------------------------------------------------------

    async def tool(self, request: Request) -> Response:
        """Only reached when no such environment or tool exists: live tools are served by the gateway."""
        return _error(404, f"no tool {request.path_params['tool']!r} in environment {request.path_params['env_id']!r}",
                      "the environment may have been torn down; tool URLs come from POST /envs")


def _bounded_int(text: str | None, name: str, default: int | None, low: int, high: int | None) -> int | None:
    """A query parameter as an integer in [low, high]; ``default`` when absent."""
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise ValueError(f"{name} must be a whole number, got {text[:20]!r}")
    value = int(text)
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be between {low} and {high if high is not None else 'any'}, got {value}")
    return value


def create_app(key: str | None = None, registry: Registry | None = None,
               tls: SecureListener | None = None, mounts: dict[str, ASGIApp] | None = None,
               tunnel_addresses: Mapping[str, tuple[str, int]] | None = None) -> ToolGateway:
    """The server's ASGI app. ``key``: a bearer key the control API then requires; ``tls``:
    the server's TLS listener, where tools that need https are handed out; ``mounts``: other
    apps it serves, by path prefix (the console, at ``/ui``); ``tunnel_addresses``: where the
    real-hostnames proxy finds hosts it tunnels, by name, instead of DNS (tests)."""
    tune_collector()
    api = ControlAPI(registry or Registry(), key, tls, tunnel_addresses)
    routes = [
        Route("/envs", api.create_env, methods=["POST"]),
        Route("/envs", api.list_envs, methods=["GET"]),
        Route("/envs/{env_id}", api.env_status, methods=["GET", "DELETE"]),
        Route("/envs/{env_id}/trace", api.trace, methods=["GET"]),
        Route("/envs/{env_id}/state", api.state, methods=["GET"]),
        Route("/envs/{env_id}/records", api.records, methods=["GET"]),
        Route("/envs/{env_id}/live", api.live, methods=["GET"]),
        Route("/envs/{env_id}/checks", api.checks, methods=["POST"]),
        Route("/envs/{env_id}/grade", api.grade, methods=["POST"]),
        Route("/envs/{env_id}/events", api.events, methods=["GET"]),
        Route("/envs/{env_id}/done", api.done, methods=["POST"]),
        Route("/envs/{env_id}/waiting", api.waiting, methods=["POST"]),
        Route("/envs/{env_id}/context", api.env_context, methods=["GET"]),
        Route("/envs/{env_id}/endpoint", api.endpoint, methods=["POST"]),
        Route("/envs/{env_id}/calls", api.branching.calls, methods=["GET", "POST"]),
        Route("/envs/{env_id}/checkpoint", api.branching.checkpoint, methods=["POST"]),
        Route("/checkpoints", api.branching.upload, methods=["POST"]),
        Route("/checkpoints/{checkpoint}", api.branching.checkpoint_bytes, methods=["GET"]),
        Route("/envs/{env_id}/{tool}/{path:path}", api.tool,
              methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
        *(Mount(prefix, app) for prefix, app in (mounts or {}).items()),
    ]
    control = Starlette(routes=routes)
    control.state.registry = api.registry
    api.gateway = ToolGateway(api.registry, control)
    return api.gateway


async def _in_pieces(pieces: Iterable[bytes], size: int = 1 << 20) -> AsyncIterator[bytes]:
    """``pieces`` sent about ``size`` bytes at a time."""
    batch: list[bytes] = []
    held = 0
    for piece in pieces:
        batch.append(piece)
        held += len(piece)
        if held >= size:
            yield b"".join(batch)
            batch, held = [], 0
    if batch:
        yield b"".join(batch)
