"""API keys: `aos_live_` plus 32 random characters; only a SHA-256 hash is stored.

Keys are long random strings, so an unsalted hash is enough: nothing to brute-force.
Each key carries a role (``ROLES``): ``viewer`` reads, ``ci`` also writes (uploads runs,
reports evaluations, releases), ``admin`` also manages keys and deletes uploaded runs.

Programmatic use (tests, SDK tests, scripts)::

    from agentos.keys import create_key
    key = create_key("sqlite:///./agentos.db", "acme")   # creates the workspace if new
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy import select

from agentos.db import Database, describe
from agentos.ids import new_id
from agentos.models import ApiKey, Workspace
from agentos.timestamps import utcnow

KEY_PREFIX = "aos_live_"
ROLES = ("viewer", "ci", "admin")
"""From least to most: each role may do what the ones before it may."""
CACHE_S = 5.0
"""How long a resolved key is trusted without the database: a key revoked on another
server process stops working within this many seconds (on this one, at once)."""


@dataclass(frozen=True)
class Caller:
    """Who presented a key: its workspace, the key's id and its role."""

    workspace_id: str
    key_id: str
    role: str

    def may(self, role: str) -> bool:
        """Whether this caller's role includes ``role``'s rights."""
        return ROLES.index(self.role) >= ROLES.index(role)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: a key's role is one of {', '.join(ROLES)}")
    return role


def issue_key(db: Database, workspace: str, role: str = "admin", name: str | None = None) -> str:
    """A new key for the named workspace (created if it does not exist yet)."""
    return issue_key_record(db, workspace, role, name)[0]


def issue_key_record(db: Database, workspace: str, role: str = "admin", name: str | None = None) -> tuple[str, ApiKey]:
    """A new key for the named workspace and its stored record (the key itself is not kept)."""
    check_role(role)
    key = KEY_PREFIX + secrets.token_urlsafe(24)
    now = utcnow()
    with db.write() as session:
        ws = session.scalar(select(Workspace).where(Workspace.name == workspace))
        if ws is None:
            ws = Workspace(id=new_id(), name=workspace, created_at=now)
            session.add(ws)
            session.flush()
        record = ApiKey(id=new_id(), workspace_id=ws.id, key_hash=hash_key(key), prefix=key[:13], created_at=now,
                        role=role, name=name)
        session.add(record)
    return key, record


def create_key(database_url: str | None, workspace: str, role: str = "admin", name: str | None = None) -> str:
    """Migrate the database if needed, then issue a key for `workspace`; returns the key."""
    db = Database(database_url)
    try:
        return issue_key(db, workspace, role, name)
    finally:
        db.dispose()


class KeyRing:
    """Resolves a presented key to its caller, remembering hits for ``CACHE_S`` seconds."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.database = describe(db.url)
        """Which database the keys come from, for the 401's hint."""
        self._known: dict[str, tuple[Caller, float]] = {}
        self._lock = threading.Lock()

    def cached(self, key: str) -> Caller | None:
        """The caller of a key resolved in the last ``CACHE_S`` seconds, without the database."""
        found = self._known.get(hash_key(key))
        if found is None or found[1] < time.monotonic():
            return None
        return found[0]

    def caller_of(self, key: str) -> Caller | None:
        digest = hash_key(key)
        found = self.cached(key)
        if found is not None:
            return found
        with self._db.read() as session:
            record = session.scalar(select(ApiKey).where(ApiKey.key_hash == digest, ApiKey.revoked_at.is_(None)))
            caller = Caller(record.workspace_id, record.id, record.role) if record is not None else None
        if caller is not None:
            with self._lock:
                self._known[digest] = (caller, time.monotonic() + CACHE_S)
        return caller

    def workspace_of(self, key: str) -> str | None:
        caller = self.caller_of(key)
        return caller.workspace_id if caller is not None else None

    def forget(self, key_id: str) -> None:
        """Drop a revoked key from the cache at once."""
        with self._lock:
            for digest, (caller, _) in list(self._known.items()):
                if caller.key_id == key_id:
                    del self._known[digest]
