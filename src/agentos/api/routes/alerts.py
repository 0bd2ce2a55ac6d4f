"""POST/GET /api/workflows/{id}/alerts and DELETE /api/workflows/{id}/alerts/{alert_id}."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import Field
from sqlalchemy import select
from starlette.responses import Response

from agentos.alerts import create_rule
from agentos.api.bodies import _Body
from agentos.api.services import Services, respond, services, workspace
from agentos.crud import find_workflow
from agentos.errors import NotFound, Unprocessable
from agentos.models import AlertRule

router = APIRouter()


class WebhookTarget(_Body):
    type: Literal["webhook"]
    url: Annotated[str, Field(pattern=r"^https?://")]


class SlackTarget(_Body):
    type: Literal["slack"]
    url: Annotated[str, Field(pattern=r"^https?://")]
    """A Slack incoming-webhook URL."""


class PagerDutyTarget(_Body):
    type: Literal["pagerduty"]
    routing_key: Annotated[str, Field(min_length=1)]
    url: Annotated[str | None, Field(pattern=r"^https?://")] = None
    """The Events API v2 URL (default PagerDuty's own)."""


Target = Annotated[WebhookTarget | SlackTarget | PagerDutyTarget, Field(discriminator="type")]


class AlertCreate(_Body):
    check: Annotated[str, Field(min_length=1)]
    window: Annotated[int, Field(ge=1, le=10_000)] = 50
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.01
    notify: Annotated[list[Target], Field(min_length=1)]


@router.post("/api/workflows/{id_or_name}/alerts")
def create_alert(id_or_name: str, body: AlertCreate, ws: str = Depends(workspace),
                 svc: Services = Depends(services)) -> Response:
    with svc.db.write() as session:
        workflow = find_workflow(session, ws, id_or_name)
        names = [c.get("name") for c in workflow.checks or []]
        if body.check not in names:
            raise Unprocessable(f"check: {workflow.name!r} has no check named {body.check!r};"
                                f" its checks are {', '.join(repr(n) for n in names) or 'none'}")
        rule = create_rule(session, ws, workflow, body.check, body.window, body.alpha,
                           [t.model_dump(exclude_none=True) for t in body.notify])
        return respond(rule.to_dict(), 201)


@router.get("/api/workflows/{id_or_name}/alerts")
def list_alerts(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        workflow = find_workflow(session, ws, id_or_name)
        rules = session.scalars(select(AlertRule).where(AlertRule.workflow_id == workflow.id)
                                .order_by(AlertRule.created_at))
        return respond({"alerts": [rule.to_dict() for rule in rules]})


@router.delete("/api/workflows/{id_or_name}/alerts/{alert_id}")
def delete_alert(id_or_name: str, alert_id: str, ws: str = Depends(workspace),
                 svc: Services = Depends(services)) -> Response:
    with svc.db.write() as session:
        workflow = find_workflow(session, ws, id_or_name)
        rule = session.get(AlertRule, alert_id)
        if rule is None or rule.workflow_id != workflow.id:
            raise NotFound(f"no alert {alert_id!r} on {workflow.name!r} (GET /api/workflows/{workflow.id}/alerts lists them)")
        session.delete(rule)
        return Response(status_code=204)
