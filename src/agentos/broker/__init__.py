"""Run events between API processes: the broker chosen by AGENTOS_BROKER_URL.

    broker = open_broker(os.environ.get("AGENTOS_BROKER_URL"), database_url)

- unset: `LocalBroker`, nothing leaves the process (one `agentos serve` on SQLite; a
  run active in another process is followed by polling the database);
- `postgresql://...`: `PostgresBroker`, LISTEN/NOTIFY (see `broker.postgres`);
- `redis://...`: `RedisBroker`, pub/sub (see `broker.redis_pubsub`).

A message announces events that are already stored (see `broker.base`), so a subscriber
that missed one loses nothing: it reads the database again.
"""

from __future__ import annotations

from agentos.broker.base import Broker, BrokerError, LocalBroker, Message, Subscription

__all__ = ["Broker", "BrokerError", "LocalBroker", "Message", "Subscription", "open_broker"]

SCHEMES = "postgresql://... (LISTEN/NOTIFY) or redis://... (pub/sub)"


def open_broker(url: str | None, database_url: str) -> Broker:
    """The broker for `url` (None or empty: in-process only)."""
    if not url:
        return LocalBroker()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        from agentos.broker.postgres import PostgresBroker

        return PostgresBroker(url, database_url)
    if scheme in ("redis", "rediss", "unix"):
        from agentos.broker.redis_pubsub import RedisBroker

        return RedisBroker(url)
    raise BrokerError(f"AGENTOS_BROKER_URL {url.split('://', 1)[0]!r}: unsupported broker; use {SCHEMES}")
