"""The workspace's model price table: built-in prices plus its own overrides."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import delete, select
from starlette.responses import Response

from agentos.api.bodies import PricePut
from agentos.api.services import Services, respond, services, workspace
from agentos.engine.pricing import BUILT_IN
from agentos.errors import NotFound, Unprocessable
from agentos.models import ModelPrice

router = APIRouter()


@router.get("/api/prices")
def list_prices(ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    """USD per million tokens; `source` is "workspace" for an override, else "built-in"."""
    table = {
        model: {"model": model, "input_per_mtok": p.input_per_mtok, "output_per_mtok": p.output_per_mtok,
                "source": "built-in"}
        for model, p in BUILT_IN.items()
    }
    with svc.db.read() as session:
        for row in session.scalars(select(ModelPrice).where(ModelPrice.workspace_id == ws)):
            table[row.model] = {**row.to_dict(), "source": "workspace"}
    return respond(sorted(table.values(), key=lambda p: str(p["model"])))


@router.put("/api/prices/{model:path}")
def put_price(
    model: str, body: PricePut, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    if body.input_per_mtok < 0 or body.output_per_mtok < 0:
        raise Unprocessable("Prices must not be negative")
    with svc.db.write() as session:
        row = session.get(ModelPrice, (ws, model))
        if row is None:
            row = ModelPrice(workspace_id=ws, model=model)
            session.add(row)
        row.input_per_mtok, row.output_per_mtok = body.input_per_mtok, body.output_per_mtok
    svc.runner.forget_prices(ws)
    with svc.db.read() as session:
        saved = session.get(ModelPrice, (ws, model))
        assert saved is not None
        return respond({**saved.to_dict(), "source": "workspace"})


@router.delete("/api/prices/{model:path}", status_code=204)
def delete_price(model: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.write() as session:
        gone = session.execute(  # type: ignore[attr-defined]
            delete(ModelPrice).where(ModelPrice.workspace_id == ws, ModelPrice.model == model)
        ).rowcount
    svc.runner.forget_prices(ws)
    if not gone:
        raise NotFound(f"No price override for model '{model}'")
    return Response(status_code=204)
