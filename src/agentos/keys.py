"""API keys: `aos_live_` plus 32 random characters; only a SHA-256 hash is stored.

Keys are long random strings, so an unsalted hash is enough: nothing to brute-force.

Programmatic use (tests, SDK tests, scripts)::

    from agentos.keys import create_key
    key = create_key("sqlite:///./agentos.db", "acme")   # creates the workspace if new
"""

from __future__ import annotations

import hashlib
import secrets
import threading

from sqlalchemy import select

from agentos.db import Database, describe
from agentos.ids import new_id
from agentos.models import ApiKey, Workspace
from agentos.timestamps import utcnow

KEY_PREFIX = "aos_live_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def issue_key(db: Database, workspace: str) -> str:
    """A new key for the named workspace (created if it does not exist yet)."""
    key = KEY_PREFIX + secrets.token_urlsafe(24)
    now = utcnow()
    with db.write() as session:
        ws = session.scalar(select(Workspace).where(Workspace.name == workspace))
        if ws is None:
            ws = Workspace(id=new_id(), name=workspace, created_at=now)
            session.add(ws)
            session.flush()
        session.add(
            ApiKey(id=new_id(), workspace_id=ws.id, key_hash=hash_key(key), prefix=key[:13], created_at=now)
        )
    return key


def create_key(database_url: str | None, workspace: str) -> str:
    """Migrate the database if needed, then issue a key for `workspace`; returns the key."""
    db = Database(database_url)
    try:
        return issue_key(db, workspace)
    finally:
        db.dispose()


class KeyRing:
    """Resolves a presented key to its workspace id, remembering hits (keys are never revoked)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.database = describe(db.url)
        """Which database the keys come from, for the 401's hint."""
        self._known: dict[str, str] = {}
        self._lock = threading.Lock()

    def cached(self, key: str) -> str | None:
        """The workspace of a key seen before, without touching the database."""
        return self._known.get(hash_key(key))

    def workspace_of(self, key: str) -> str | None:
        digest = hash_key(key)
        found = self._known.get(digest)
        if found is not None:
            return found
        with self._db.read() as session:
            workspace_id = session.scalar(select(ApiKey.workspace_id).where(ApiKey.key_hash == digest))
        if workspace_id is not None:
            with self._lock:
                self._known[digest] = workspace_id
        return workspace_id
