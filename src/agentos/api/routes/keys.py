"""A workspace's keys, managed with an admin key: list, create with a role, revoke.

    GET    /api/keys            every key of the workspace (never the key itself)
    POST   /api/keys            {role, name?} -> the new key, shown once
    DELETE /api/keys/{id}       revoke: its requests and console sessions stop at once
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import delete, select
from starlette.responses import Response

from agentos.api.bodies import AnchaServerPut, KeyCreate
from agentos.api.services import Services, caller, require, respond, services
from agentos.errors import Conflict, NotFound, Unprocessable
from agentos.keys import ROLES, Caller, issue_key_record
from agentos.models import ApiKey, ConsoleSession, Workspace
from agentos.timestamps import utcnow

router = APIRouter()


@router.get("/api/keys")
def list_keys(who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    require(who, "admin", "listing keys")
    with svc.db.read() as session:
        rows = session.scalars(select(ApiKey).where(ApiKey.workspace_id == who.workspace_id)
                               .order_by(ApiKey.created_at))
        return respond([row.to_dict() for row in rows])


@router.post("/api/keys", status_code=201)
def create_key(body: KeyCreate, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    require(who, "admin", "creating keys")
    if body.role not in ROLES:
        raise Unprocessable(f"Invalid key: role {body.role[:40]!r} is not one of {', '.join(ROLES)}")
    with svc.db.read() as session:
        workspace = session.get(Workspace, who.workspace_id)
        assert workspace is not None
        name = workspace.name
    key, record = issue_key_record(svc.db, name, body.role, body.name)
    return respond(record.to_dict() | {"key": key}, 201)


@router.delete("/api/keys/{key_id}", status_code=204)
def revoke_key(key_id: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    require(who, "admin", "revoking keys")
    with svc.db.write() as session:
        record = session.scalar(select(ApiKey).where(ApiKey.id == key_id, ApiKey.workspace_id == who.workspace_id))
        if record is None:
            raise NotFound(f"Key '{key_id[:40]}' not found in this workspace")
        if record.revoked_at is not None:
            raise Conflict(f"Key '{key_id}' is already revoked")
        record.revoked_at = utcnow()
        session.execute(delete(ConsoleSession).where(ConsoleSession.key_id == key_id))
    svc.keys.forget(key_id)
    return Response(status_code=204)


@router.put("/api/workspace/ancha-server")
def set_ancha_server(body: AnchaServerPut, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    """The Ancha server the hosted console's tasks open live worlds on."""
    require(who, "admin", "configuring the workspace's Ancha server")
    if not body.url.startswith(("http://", "https://")):
        raise Unprocessable("Invalid Ancha server: url must be an http(s) URL, such as `ancha serve` prints")
    with svc.db.write() as session:
        workspace = session.get(Workspace, who.workspace_id)
        assert workspace is not None
        workspace.ancha_server_url = body.url.rstrip("/")
        workspace.ancha_server_key = body.key
    return respond({"url": body.url.rstrip("/"), "key": "set" if body.key else None})
