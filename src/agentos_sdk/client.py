"""Clients for the AgentOS API: `AgentOS` (blocking) and `AsyncAgentOS` (asyncio).

Both share one base: `routes.Routes` turns a method call into a `Request` (method,
path, body, query) and `_ClientBase` builds it and turns the response into data or a
typed error. The two clients differ only in how they send a request and wait, so
every endpoint is spelled once.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentos_sdk.errors import (
    AgentOSError,
    APIConnectionError,
    AuthenticationError,
    error_for_status,
)
from agentos_sdk.routes import JSON, OMITTED, DatasetRef, Ref, Request, Routes, segment

DEFAULT_BASE_URL = "http://localhost:8000"
DEFAULT_TIMEOUT = 120.0
_PENDING = frozenset({"queued", "pending", "running"})


class _ClientBase:
    """Configuration, request building and response handling shared by both clients."""

    def __init__(self, base_url: str | None, api_key: str | None, timeout: float | httpx.Timeout) -> None:
        self.base_url = (base_url or os.environ.get("AGENTOS_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get("AGENTOS_API_KEY")
        if not key:
            raise AuthenticationError("no API key: pass api_key=... or set AGENTOS_API_KEY")
        self.api_key = key
        self.timeout = timeout

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}

    @staticmethod
    def _build(http: httpx.Client | httpx.AsyncClient, request: Request) -> httpx.Request:
        return http.build_request(
            request.method,
            request.path,
            json=request.body,
            params=request.params or None,
        )

    @staticmethod
    def _handle(request: Request, response: httpx.Response) -> Any:
        if response.is_success:
            if response.status_code == 204 or not response.content:
                return None
            return response.json()
        raise error_for_status(response.status_code, _detail(response), releasing=request.releasing)

    @staticmethod
    def _unreachable(request: Request, exc: httpx.TransportError) -> APIConnectionError:
        return APIConnectionError(f"{request.method} {request.path}: {exc or type(exc).__name__}")

    @staticmethod
    def _is_pending(thing: JSON) -> bool:
        return isinstance(thing, Mapping) and thing.get("status") in _PENDING

    def _stream_url(self, run: Ref) -> str:
        parts = urlsplit(self.base_url)
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
        return urlunsplit((scheme, parts.netloc, f"{parts.path}/api/runs/{segment(run)}/stream", "", ""))

    def _open_timeout(self) -> float | None:
        return self.timeout.connect if isinstance(self.timeout, httpx.Timeout) else self.timeout

    @staticmethod
    def _stream_failure(exc: Exception, detail: Any = None) -> AgentOSError | None:
        """The typed error for a stream that broke; None when it failed to open at all.

        The server refuses a stream by sending {"detail": ...} and closing with 4000 + the
        HTTP status (4401, 4404). A refused handshake carries no useful detail, so callers
        then ask the HTTP API about the run to surface the server's own 401/404 detail.
        """
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        if isinstance(exc, InvalidHandshake):
            return None
        if isinstance(exc, ConnectionClosed):
            close = exc.rcvd
            if close is not None and 4000 <= close.code < 5000:
                return error_for_status(close.code - 4000, detail or close.reason or str(exc))
            return APIConnectionError(f"the run's event stream broke: {exc}")
        return APIConnectionError(f"could not open the run's event stream: {exc}")


def _detail(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        return response.text or f"HTTP {response.status_code}"
    if isinstance(body, Mapping) and "detail" in body:
        return body["detail"]
    return body


def _is_refusal(event: JSON) -> bool:
    return "detail" in event and "type" not in event


def _event(message: str | bytes) -> JSON:
    event = json.loads(message)
    if not isinstance(event, dict):
        raise AgentOSError(f"unexpected stream message: {message!r}")
    return event


class AgentOS(_ClientBase):
    """Blocking client for the AgentOS API.

        client = AgentOS("http://localhost:8000", api_key="aos_live_...")
        run = client.run("Support Triage Crew", input={"ticket": "double charged"})

    `api_key` defaults to $AGENTOS_API_KEY and `base_url` to $AGENTOS_BASE_URL or
    http://localhost:8000. Workflows are named by id or exact name (or the object the
    server returned). Errors raise `AgentOSError` subclasses whose str() is the
    server's detail.
    """

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers(), timeout=timeout)

    def _call(self, request: Request) -> Any:
        try:
            response = self._http.send(self._build(self._http, request))
        except httpx.TransportError as exc:
            raise self._unreachable(request, exc) from exc
        return self._handle(request, response)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> AgentOS:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # Workflows

    def create_workflow(
        self, name: str, nodes: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]] | None = None,
        gate: Mapping[str, Any] | None = None, environments: Sequence[str] | None = None,
    ) -> JSON:
        """Create a workflow (version 1) and return it. `environments` declares where it is
        released to (each then runs the version released to it last)."""
        return self._call(Routes.create_workflow(name, nodes, checks, gate, environments))

    def get_workflow(self, workflow: Ref) -> JSON:
        """The workflow with this id or exact name."""
        return self._call(Routes.get_workflow(workflow))

    def list_workflows(self) -> list[JSON]:
        """Every workflow in the key's workspace."""
        return self._call(Routes.list_workflows())

    def update_workflow(self, workflow: Ref, **fields: Any) -> JSON:
        """Change fields (name, nodes, checks, gate, environments) of a workflow; returns it (a
        change of nodes, checks or gate makes a new version)."""
        return self._call(Routes.update_workflow(workflow, fields))

    def delete_workflow(self, workflow: Ref) -> None:
        """Delete a workflow."""
        self._call(Routes.delete_workflow(workflow))

    def versions(self, workflow: Ref) -> list[JSON]:
        """The workflow's stored versions."""
        return self._call(Routes.versions(workflow))

    def set_checks(self, workflow: Ref, checks: Sequence[Mapping[str, Any]]) -> JSON:
        """Replace the workflow's checks; returns the updated workflow (each check with its chk_ id)."""
        return self._call(Routes.set_checks(workflow, checks))

    def set_gate(self, workflow: Ref, min_pass_rate: float | None) -> JSON:
        """Set (or with None, clear) the release gate; returns the updated workflow."""
        return self._call(Routes.set_gate(workflow, min_pass_rate))

    # Runs

    def run(
        self, workflow: Ref, input: Mapping[str, Any] | None = None, wait: bool = True,
        *, environment: str | None = None, version: int | None = None, poll_interval: float = 0.25,
    ) -> JSON:
        """Run the workflow; with wait, return once it has finished (with evals).

        It runs `version` when given, else the version released to `environment` (default
        production) when the workflow declares environments, else its current version.
        """
        run = self._call(Routes.run(workflow, input, wait, environment, version))
        while wait and self._is_pending(run):
            time.sleep(poll_interval)
            run = self.get_run(run)
        return run

    def get_run(self, run: Ref) -> JSON:
        """The run with this id."""
        return self._call(Routes.get_run(run))

    def list_runs(self, workflow: Ref | None = None, status: str | None = None) -> list[JSON]:
        """Runs in the workspace, optionally of one workflow and/or in one status."""
        return self._call(Routes.list_runs(workflow, status))

    def stream(self, run: Ref) -> Iterator[JSON]:
        """The run's events (`run_started` ... `run_evaluated`), past ones replayed first.

        Ends when the server closes the stream after the run's last event.
        """
        from websockets.exceptions import WebSocketException
        from websockets.sync.client import connect

        url = self._stream_url(run)
        try:
            socket = connect(url, additional_headers=self._headers(), open_timeout=self._open_timeout())
        except (WebSocketException, OSError) as exc:
            failure = self._stream_failure(exc)
            if failure is None:
                self.get_run(run)  # raises the server's own 401/404 detail
                failure = APIConnectionError(f"could not open the run's event stream: {exc}")
            raise failure from exc
        with socket:
            refusal = None  # the server explains a refusal in a {"detail"} frame, then closes
            try:
                for message in socket:
                    event = _event(message)
                    if _is_refusal(event):
                        refusal = event["detail"]
                    else:
                        yield event
            except WebSocketException as exc:
                raise self._stream_failure(exc, refusal) or APIConnectionError(str(exc)) from exc
            if refusal is not None:
                raise AgentOSError(refusal)

    # Evaluations

    def evaluate(
        self, workflow: Ref, dataset: Sequence[Mapping[str, Any]] | str | Mapping[str, Any] | None = None,
        name: str | None = None,
        results: Sequence[Mapping[str, Any]] | None = None, *, version: int | None = None, wait: bool = True,
        poll_interval: float = 0.25, scorers: Sequence[Mapping[str, Any]] | None = None,
    ) -> JSON:
        """Evaluate a version of the workflow (`version`, default the current one): run each
        `dataset` item, or report `results`. `scorers` grade each item's final state against
        its `expected` output (exact, similarity, rubric); the answer's `scores` sums them up.
        `dataset` may name a stored dataset instead: `"name"` (its latest version) or
        `{"name": ..., "version": N}`; the answer's `dataset` then says which version ran.
        `dataset` may name a stored dataset instead: `"name"` (its latest version) or
        `{"name": ..., "version": N}`; the answer's `dataset` then says which version ran.

        With wait, returns once the evaluation is no longer pending (check_pass_rate filled in).
        """
        evaluation = self._call(Routes.evaluate(workflow, dataset, name, results, version, scorers))
        while wait and self._is_pending(evaluation):
            time.sleep(poll_interval)
            evaluation = self.get_evaluation(evaluation)
        return evaluation

    def get_evaluation(self, evaluation: Ref) -> JSON:
        """The evaluation with this id."""
        return self._call(Routes.get_evaluation(evaluation))

    def evaluations(self, workflow: Ref) -> list[JSON]:
        """The workflow's evaluations."""
        return self._call(Routes.evaluations(workflow))

    def compare(self, a: Ref, b: Ref) -> JSON:
        """Compare evaluation `b` against `a` item by item: which checks regressed and improved."""
        return self._call(Routes.compare(a, b))

    # Datasets

    def create_dataset(self, name: str, items: Sequence[Mapping[str, Any]] | None = None) -> JSON:
        """Store a dataset (version 1), with `items` ({input, item?, expected?}) if given."""
        return self._call(Routes.create_dataset(name, items))

    def list_datasets(self) -> list[JSON]:
        """Every dataset in the workspace, with its latest version and item count."""
        return self._call(Routes.list_datasets())

    def get_dataset(self, dataset: DatasetRef, version: int | None = None) -> JSON:
        """The dataset's items at `version` (default: its latest)."""
        return self._call(Routes.get_dataset(dataset, version))

    def add_dataset_items(self, dataset: DatasetRef, items: Sequence[Mapping[str, Any]]) -> JSON:
        """Add items as a new version; returns the new version and the items added."""
        return self._call(Routes.add_dataset_items(dataset, items))

    def remove_dataset_item(self, dataset: DatasetRef, item: Ref) -> JSON:
        """Remove an item (by id) as a new version; older versions keep it."""
        return self._call(Routes.remove_dataset_item(dataset, item))

    def add_run_to_dataset(
        self, run: Ref, dataset: DatasetRef, *, expected: Any = OMITTED, item: str | None = None,
    ) -> JSON:
        """Copy the run's input into `dataset` (created if new) as a new version, with `expected`
        (the output it should have given; None is a value too) and the label `item` if given."""
        return self._call(Routes.add_run_to_dataset(run, dataset, expected, item))

    # Releases

    def release(
        self, workflow: Ref, environment: str = "production", *, commit: str | None = None, version: int | None = None,
    ) -> JSON:
        """Release `version` of the workflow (default: the current one) to `environment`; raises
        `ReleaseBlockedError` when the gate blocks it (the gate reads that version's evaluations).
        `commit`: the commit released, which a gate on Ancha scenes reads the uploaded runs of."""
        return self._call(Routes.release(workflow, environment, commit, version))

    def rollback(self, workflow: Ref, environment: str = "production") -> JSON:
        """Pin the version `environment` ran before its last release (a new release record);
        raises `ConflictError` when it ran no earlier one."""
        return self._call(Routes.rollback(workflow, environment))

    def releases(self, workflow: Ref) -> list[JSON]:
        """The workflow's releases."""
        return self._call(Routes.releases(workflow))

    def metrics(self) -> JSON:
        """Workspace dashboard metrics: runs, success rate, cost, eval pass rate."""
        return self._call(Routes.metrics())


class AsyncAgentOS(_ClientBase):
    """The asyncio twin of `AgentOS`: the same methods, each awaitable.

        async with AsyncAgentOS("http://localhost:8000", api_key="aos_live_...") as client:
            run = await client.run("Support Triage Crew", input={"ticket": "double charged"})
            async for event in client.stream(run["id"]):
                ...
    """

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers(), timeout=timeout)

    async def _call(self, request: Request) -> Any:
        try:
            response = await self._http.send(self._build(self._http, request))
        except httpx.TransportError as exc:
            raise self._unreachable(request, exc) from exc
        return self._handle(request, response)

    async def close(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncAgentOS:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # Workflows

    async def create_workflow(
        self, name: str, nodes: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]] | None = None,
        gate: Mapping[str, Any] | None = None, environments: Sequence[str] | None = None,
    ) -> JSON:
        """Create a workflow (version 1) and return it. `environments` declares where it is
        released to (each then runs the version released to it last)."""
        return await self._call(Routes.create_workflow(name, nodes, checks, gate, environments))

    async def get_workflow(self, workflow: Ref) -> JSON:
        """The workflow with this id or exact name."""
        return await self._call(Routes.get_workflow(workflow))

    async def list_workflows(self) -> list[JSON]:
        """Every workflow in the key's workspace."""
        return await self._call(Routes.list_workflows())

    async def update_workflow(self, workflow: Ref, **fields: Any) -> JSON:
        """Change fields (name, nodes, checks, gate, environments) of a workflow; returns it (a
        change of nodes, checks or gate makes a new version)."""
        return await self._call(Routes.update_workflow(workflow, fields))

    async def delete_workflow(self, workflow: Ref) -> None:
        """Delete a workflow."""
        await self._call(Routes.delete_workflow(workflow))

    async def versions(self, workflow: Ref) -> list[JSON]:
        """The workflow's stored versions."""
        return await self._call(Routes.versions(workflow))

    async def set_checks(self, workflow: Ref, checks: Sequence[Mapping[str, Any]]) -> JSON:
        """Replace the workflow's checks; returns the updated workflow (each check with its chk_ id)."""
        return await self._call(Routes.set_checks(workflow, checks))

    async def set_gate(self, workflow: Ref, min_pass_rate: float | None) -> JSON:
        """Set (or with None, clear) the release gate; returns the updated workflow."""
        return await self._call(Routes.set_gate(workflow, min_pass_rate))

    # Runs

    async def run(
        self, workflow: Ref, input: Mapping[str, Any] | None = None, wait: bool = True,
        *, environment: str | None = None, version: int | None = None, poll_interval: float = 0.25,
    ) -> JSON:
        """Run the workflow; with wait, return once it has finished (with evals).

        It runs `version` when given, else the version released to `environment` (default
        production) when the workflow declares environments, else its current version.
        """
        run = await self._call(Routes.run(workflow, input, wait, environment, version))
        while wait and self._is_pending(run):
            await asyncio.sleep(poll_interval)
            run = await self.get_run(run)
        return run

    async def get_run(self, run: Ref) -> JSON:
        """The run with this id."""
        return await self._call(Routes.get_run(run))

    async def list_runs(self, workflow: Ref | None = None, status: str | None = None) -> list[JSON]:
        """Runs in the workspace, optionally of one workflow and/or in one status."""
        return await self._call(Routes.list_runs(workflow, status))

    async def stream(self, run: Ref) -> AsyncIterator[JSON]:
        """The run's events (`run_started` ... `run_evaluated`), past ones replayed first.

        Ends when the server closes the stream after the run's last event.
        """
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        url = self._stream_url(run)
        try:
            socket = await connect(url, additional_headers=self._headers(), open_timeout=self._open_timeout())
        except (WebSocketException, OSError) as exc:
            failure = self._stream_failure(exc)
            if failure is None:
                await self.get_run(run)  # raises the server's own 401/404 detail
                failure = APIConnectionError(f"could not open the run's event stream: {exc}")
            raise failure from exc
        async with socket:
            refusal = None  # the server explains a refusal in a {"detail"} frame, then closes
            try:
                async for message in socket:
                    event = _event(message)
                    if _is_refusal(event):
                        refusal = event["detail"]
                    else:
                        yield event
            except WebSocketException as exc:
                raise self._stream_failure(exc, refusal) or APIConnectionError(str(exc)) from exc
            if refusal is not None:
                raise AgentOSError(refusal)

    # Evaluations

    async def evaluate(
        self, workflow: Ref, dataset: Sequence[Mapping[str, Any]] | str | Mapping[str, Any] | None = None,
        name: str | None = None,
        results: Sequence[Mapping[str, Any]] | None = None, *, version: int | None = None, wait: bool = True,
        poll_interval: float = 0.25, scorers: Sequence[Mapping[str, Any]] | None = None,
    ) -> JSON:
        """Evaluate a version of the workflow (`version`, default the current one): run each
        `dataset` item, or report `results`. `scorers` grade each item's final state against
        its `expected` output (exact, similarity, rubric); the answer's `scores` sums them up.

        With wait, returns once the evaluation is no longer pending (check_pass_rate filled in).
        """
        evaluation = await self._call(Routes.evaluate(workflow, dataset, name, results, version, scorers))
        while wait and self._is_pending(evaluation):
            await asyncio.sleep(poll_interval)
            evaluation = await self.get_evaluation(evaluation)
        return evaluation

    async def get_evaluation(self, evaluation: Ref) -> JSON:
        """The evaluation with this id."""
        return await self._call(Routes.get_evaluation(evaluation))

    async def evaluations(self, workflow: Ref) -> list[JSON]:
        """The workflow's evaluations."""
        return await self._call(Routes.evaluations(workflow))

    async def compare(self, a: Ref, b: Ref) -> JSON:
        """Compare evaluation `b` against `a` item by item: which checks regressed and improved."""
        return await self._call(Routes.compare(a, b))

    # Datasets

    async def create_dataset(self, name: str, items: Sequence[Mapping[str, Any]] | None = None) -> JSON:
        """Store a dataset (version 1), with `items` ({input, item?, expected?}) if given."""
        return await self._call(Routes.create_dataset(name, items))

    async def list_datasets(self) -> list[JSON]:
        """Every dataset in the workspace, with its latest version and item count."""
        return await self._call(Routes.list_datasets())

    async def get_dataset(self, dataset: DatasetRef, version: int | None = None) -> JSON:
        """The dataset's items at `version` (default: its latest)."""
        return await self._call(Routes.get_dataset(dataset, version))

    async def add_dataset_items(self, dataset: DatasetRef, items: Sequence[Mapping[str, Any]]) -> JSON:
        """Add items as a new version; returns the new version and the items added."""
        return await self._call(Routes.add_dataset_items(dataset, items))

    async def remove_dataset_item(self, dataset: DatasetRef, item: Ref) -> JSON:
        """Remove an item (by id) as a new version; older versions keep it."""
        return await self._call(Routes.remove_dataset_item(dataset, item))

    async def add_run_to_dataset(
        self, run: Ref, dataset: DatasetRef, *, expected: Any = OMITTED, item: str | None = None,
    ) -> JSON:
        """Copy the run's input into `dataset` (created if new) as a new version, with `expected`
        (the output it should have given; None is a value too) and the label `item` if given."""
        return await self._call(Routes.add_run_to_dataset(run, dataset, expected, item))

    # Releases

    async def release(
        self, workflow: Ref, environment: str = "production", *, commit: str | None = None, version: int | None = None,
    ) -> JSON:
        """Release `version` of the workflow (default: the current one) to `environment`; raises
        `ReleaseBlockedError` when the gate blocks it (the gate reads that version's evaluations).
        `commit`: the commit released, which a gate on Ancha scenes reads the uploaded runs of."""
        return await self._call(Routes.release(workflow, environment, commit, version))

    async def rollback(self, workflow: Ref, environment: str = "production") -> JSON:
        """Pin the version `environment` ran before its last release (a new release record);
        raises `ConflictError` when it ran no earlier one."""
        return await self._call(Routes.rollback(workflow, environment))

    async def releases(self, workflow: Ref) -> list[JSON]:
        """The workflow's releases."""
        return await self._call(Routes.releases(workflow))

    async def metrics(self) -> JSON:
        """Workspace dashboard metrics: runs, success rate, cost, eval pass rate."""
        return await self._call(Routes.metrics())


__all__ = ["JSON", "AgentOS", "AsyncAgentOS", "Ref"]
