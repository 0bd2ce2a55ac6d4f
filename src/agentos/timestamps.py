"""UTC timestamps as the service stores and prints them."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, in UTC, without tzinfo: both SQLite and PostgreSQL store it as written."""
    return datetime.now(UTC).replace(tzinfo=None)


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 with millisecond precision and a Z, or None."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="milliseconds") + "Z"
