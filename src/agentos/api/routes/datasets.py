"""Datasets: stored, versioned evaluation items, written by hand or copied from runs (see
agentos.datasets); an evaluation may name one instead of an inline list.

    POST   /api/datasets                      {name, items?}  -> 201 the dataset at version 1
    GET    /api/datasets                      every dataset, with its latest item count
    GET    /api/datasets/{name}?version=N     the items at version N (default: the latest)
    POST   /api/datasets/{name}/items         {items}         -> 201 the new version and items added
    DELETE /api/datasets/{name}/items/{id}    -> the new version (older versions keep the item)
    POST   /api/runs/{id}/dataset             {dataset, expected?, item?} -> 201 the new version and item
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from agentos import datasets
from agentos.api.bodies import DatasetCreate, DatasetItemsAdd, RunToDataset
from agentos.api.services import Services, respond, services, workspace
from agentos.errors import Unprocessable

router = APIRouter()


def _changed(stored: datasets.DatasetVersion) -> dict[str, Any]:
    return {"dataset": stored.dataset.name, "version": stored.version,
            "items": [item.to_dict() for item in stored.items]}


@router.post("/api/datasets", status_code=201)
def create_dataset(body: DatasetCreate, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    return respond(datasets.create_dataset(svc.db, ws, body.name, body.items).to_dict(), 201)


@router.get("/api/datasets")
def list_datasets(ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(datasets.list_datasets(session, ws))


@router.get("/api/datasets/{name}")
def get_dataset(name: str, version: int | None = Query(None, ge=1), ws: str = Depends(workspace),
                svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(datasets.read_version(session, ws, name, version).to_dict())


@router.post("/api/datasets/{name}/items", status_code=201)
def add_items(name: str, body: DatasetItemsAdd, ws: str = Depends(workspace),
              svc: Services = Depends(services)) -> Response:
    return respond(_changed(datasets.add_items(svc.db, ws, name, body.items)), 201)


@router.delete("/api/datasets/{name}/items/{item_id}")
def remove_item(name: str, item_id: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    return respond(_changed(datasets.remove_item(svc.db, ws, name, item_id)))


@router.post("/api/runs/{run_id}/dataset", status_code=201)
def add_run(run_id: str, body: RunToDataset, ws: str = Depends(workspace),
            svc: Services = Depends(services)) -> Response:
    if body.dataset is None:
        raise Unprocessable("Invalid request: 'dataset' is required (the name of the dataset to add the run to)")
    stored = datasets.add_run(svc.db, ws, run_id, body.dataset, body.item, body.expected,
                              "expected" in body.model_fields_set)
    item = stored.items[0].to_dict()
    return respond({"dataset": stored.dataset.name, "version": stored.version, "item": item}, 201)
