"""Signing in to the hosted console: a workspace key, once, becomes a session cookie.

The cookie holds a random token (only its SHA-256 is stored), is ``HttpOnly`` and
``SameSite=Strict`` (no other site can make the browser send it, so a form posted from
elsewhere arrives signed out), ``Secure`` over HTTPS, and lasts ``SESSION_HOURS``. Revoking
the key ends its sessions.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import select

from agentos.db import Database
from agentos.keys import Caller, KeyRing
from agentos.models import ApiKey, ConsoleSession
from agentos.timestamps import utcnow

COOKIE = "agentos_session"
SESSION_HOURS = 12


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def sign_in(db: Database, keys: KeyRing, key: str) -> tuple[str, Caller] | None:
    """A new session for a valid key: (cookie token, caller); None for a wrong key."""
    caller = keys.caller_of(key.strip()) if key.strip() else None
    if caller is None:
        return None
    token = secrets.token_urlsafe(32)
    now = utcnow()
    with db.write() as session:
        session.add(ConsoleSession(token_hash=_digest(token), key_id=caller.key_id, workspace_id=caller.workspace_id,
                                   created_at=now, expires_at=now + timedelta(hours=SESSION_HOURS)))
    return token, caller


def session_caller(db: Database, token: str | None) -> Caller | None:
    """Who a cookie's session belongs to, while it lasts and its key is not revoked."""
    if not token or len(token) > 100:
        return None
    with db.read() as session:
        row = session.execute(
            select(ConsoleSession.expires_at, ApiKey.workspace_id, ApiKey.id, ApiKey.role)
            .join(ApiKey, ApiKey.id == ConsoleSession.key_id)
            .where(ConsoleSession.token_hash == _digest(token), ApiKey.revoked_at.is_(None))).first()
    if row is None or row.expires_at < utcnow():
        return None
    return Caller(row.workspace_id, row.id, row.role)


def sign_out(db: Database, token: str | None) -> None:
    if not token:
        return
    with db.write() as session:
        found = session.get(ConsoleSession, _digest(token))
        if found is not None:
            session.delete(found)
