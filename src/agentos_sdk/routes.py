"""The AgentOS API's operations as data: one builder per operation, returning the
method, path, body and query to send. Both clients send these, so every path and body
is spelled once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

JSON = dict[str, Any]
"""A JSON object as the server sent it: a workflow, run, evaluation, release, ..."""

Ref = str | Mapping[str, Any]
"""An id or exact name, or an object the server returned (its `id` is used)."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)
    releasing: bool = False  # a 422 here means the eval gate blocked the release


class _Omitted:
    """The default of an argument whose None is a value to send (a dataset item's `expected`)."""

    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()

DatasetRef = str | Mapping[str, Any]
"""A stored dataset's name, or a dataset object the server returned (its `name` is used)."""


def dataset_segment(dataset: DatasetRef) -> str:
    """One URL path segment for a dataset's name (or a dataset object with a `name`)."""
    name = dataset["name"] if isinstance(dataset, Mapping) else dataset
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected a dataset name or an object with a 'name', got {dataset!r}")
    return quote(name, safe="")


def segment(ref: Ref) -> str:
    """One URL path segment for an id, an exact name, or a server object with an `id`."""
    if isinstance(ref, Mapping):
        ref = ref["id"]
    if not isinstance(ref, str) or not ref:
        raise TypeError(f"expected an id, a name or an object with an 'id', got {ref!r}")
    return quote(ref, safe="")


class Routes:
    """One builder per API operation; the single place paths and bodies are spelled."""

    @staticmethod
    def create_workflow(
        name: str, nodes: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]] | None,
        gate: Mapping[str, Any] | None, environments: Sequence[str] | None = None,
    ) -> Request:
        body: JSON = {"name": name, "nodes": list(nodes)}
        if checks is not None:
            body["checks"] = list(checks)
        if gate is not None:
            body["gate"] = dict(gate)
        if environments is not None:
            body["environments"] = list(environments)
        return Request("POST", "/api/workflows", body)

    @staticmethod
    def get_workflow(workflow: Ref) -> Request:
        return Request("GET", f"/api/workflows/{segment(workflow)}")

    @staticmethod
    def list_workflows() -> Request:
        return Request("GET", "/api/workflows")

    @staticmethod
    def update_workflow(workflow: Ref, fields: Mapping[str, Any]) -> Request:
        return Request("PATCH", f"/api/workflows/{segment(workflow)}", dict(fields))

    @staticmethod
    def delete_workflow(workflow: Ref) -> Request:
        return Request("DELETE", f"/api/workflows/{segment(workflow)}")

    @staticmethod
    def versions(workflow: Ref) -> Request:
        return Request("GET", f"/api/workflows/{segment(workflow)}/versions")

    @staticmethod
    def set_checks(workflow: Ref, checks: Sequence[Mapping[str, Any]]) -> Request:
        return Request("PUT", f"/api/workflows/{segment(workflow)}/checks", {"checks": list(checks)})

    @staticmethod
    def set_gate(workflow: Ref, min_pass_rate: float | None) -> Request:
        return Request("PUT", f"/api/workflows/{segment(workflow)}/gate", {"min_pass_rate": min_pass_rate})

    @staticmethod
    def run(
        workflow: Ref, input: Mapping[str, Any] | None, wait: bool, environment: str | None = None,
        version: int | None = None,
    ) -> Request:
        body: JSON = {"input": dict(input or {}), "wait": wait}
        if environment is not None:
            body["environment"] = environment
        if version is not None:
            body["version"] = version
        return Request("POST", f"/api/workflows/{segment(workflow)}/runs", body)

    @staticmethod
    def get_run(run: Ref) -> Request:
        return Request("GET", f"/api/runs/{segment(run)}")

    @staticmethod
    def list_runs(workflow: Ref | None, status: str | None) -> Request:
        params: dict[str, str] = {}
        if workflow is not None:
            params["workflow"] = workflow["id"] if isinstance(workflow, Mapping) else workflow
        if status is not None:
            params["status"] = status
        return Request("GET", "/api/runs", params=params)

    @staticmethod
    def evaluate(
        workflow: Ref, dataset: Sequence[Mapping[str, Any]] | str | Mapping[str, Any] | None, name: str | None,
        results: Sequence[Mapping[str, Any]] | None, version: int | None = None,
        scorers: Sequence[Mapping[str, Any]] | None = None,
    ) -> Request:
        if (dataset is None) == (results is None):
            raise ValueError("evaluate() needs exactly one of dataset= (items to run) or results= (reported)")
        # The server requires a name; a timestamp keeps unnamed evaluations apart in listings.
        body: JSON = {"name": name if name is not None else f"evaluation {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"}
        if isinstance(dataset, str | Mapping):  # a stored dataset: "name" or {"name", "version"}
            body["dataset"] = dataset if isinstance(dataset, str) else dict(dataset)
        elif dataset is not None:
            body["dataset"] = list(dataset)
        if results is not None:
            body["results"] = list(results)
        if version is not None:
            body["version"] = version
        if scorers is not None:
            body["scorers"] = list(scorers)
        return Request("POST", f"/api/workflows/{segment(workflow)}/evaluations", body)

    @staticmethod
    def get_evaluation(evaluation: Ref) -> Request:
        return Request("GET", f"/api/evaluations/{segment(evaluation)}")

    @staticmethod
    def evaluations(workflow: Ref) -> Request:
        return Request("GET", f"/api/workflows/{segment(workflow)}/evaluations")

    @staticmethod
    def compare(a: Ref, b: Ref) -> Request:
        return Request("GET", f"/api/evaluations/{segment(a)}/compare/{segment(b)}")

    @staticmethod
    def create_dataset(name: str, items: Sequence[Mapping[str, Any]] | None) -> Request:
        body: JSON = {"name": name} | ({"items": list(items)} if items is not None else {})
        return Request("POST", "/api/datasets", body)

    @staticmethod
    def list_datasets() -> Request:
        return Request("GET", "/api/datasets")

    @staticmethod
    def get_dataset(dataset: DatasetRef, version: int | None) -> Request:
        params = {"version": str(version)} if version is not None else {}
        return Request("GET", f"/api/datasets/{dataset_segment(dataset)}", params=params)

    @staticmethod
    def add_dataset_items(dataset: DatasetRef, items: Sequence[Mapping[str, Any]]) -> Request:
        return Request("POST", f"/api/datasets/{dataset_segment(dataset)}/items", {"items": list(items)})

    @staticmethod
    def remove_dataset_item(dataset: DatasetRef, item: Ref) -> Request:
        return Request("DELETE", f"/api/datasets/{dataset_segment(dataset)}/items/{segment(item)}")

    @staticmethod
    def add_run_to_dataset(run: Ref, dataset: DatasetRef, expected: Any, item: str | None) -> Request:
        body: JSON = {"dataset": dataset["name"] if isinstance(dataset, Mapping) else dataset}
        if expected is not OMITTED:
            body["expected"] = expected
        if item is not None:
            body["item"] = item
        return Request("POST", f"/api/runs/{segment(run)}/dataset", body)

    @staticmethod
    def release(workflow: Ref, environment: str, commit: str | None = None, version: int | None = None) -> Request:
        path = f"/api/workflows/{segment(workflow)}/release"
        body: JSON = {"environment": environment} | ({"commit": commit} if commit else {})
        if version is not None:
            body["version"] = version
        return Request("POST", path, body, releasing=True)

    @staticmethod
    def rollback(workflow: Ref, environment: str) -> Request:
        return Request("POST", f"/api/workflows/{segment(workflow)}/rollback", {"environment": environment})

    @staticmethod
    def releases(workflow: Ref) -> Request:
        return Request("GET", f"/api/workflows/{segment(workflow)}/releases")

    @staticmethod
    def metrics() -> Request:
        return Request("GET", "/api/dashboard/metrics")
