"""The Redis broker: PUBLISH on one channel after the events are stored, one SUBSCRIBE per
process. Redis pub/sub delivers at most once; what a process misses while it reconnects
its followers read from the database (`resync_seconds`)."""

from __future__ import annotations

import asyncio
import logging

from agentos.broker.base import Broker, BrokerError, Message

log = logging.getLogger("agentos.broker")

CHANNEL = "agentos:runs"
RECONNECT_SECONDS = 1.0


def _redis_module():  # type: ignore[no-untyped-def]
    try:
        import redis
    except ImportError:
        raise BrokerError(
            "AGENTOS_BROKER_URL is a Redis URL but the redis package is not installed: "
            "pip install 'ancha[agentos-redis]'"
        ) from None
    return redis


class RedisBroker(Broker):
    crosses_processes = True

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._client = _redis_module().Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)

    def publish_after(self, message: Message) -> None:
        try:
            self._client.publish(CHANNEL, message.encode())
        except Exception as exc:  # subscribers fall back to the database within resync_seconds
            log.warning("could not publish run %s to Redis (%s)", message.run_id, type(exc).__name__)

    def publish_all_after(self, messages: list[Message]) -> None:
        """One round trip for the messages of several runs."""
        try:
            with self._client.pipeline(transaction=False) as pipeline:
                for message in messages:
                    pipeline.publish(CHANNEL, message.encode())
                pipeline.execute()
        except Exception as exc:
            log.warning("could not publish %d runs to Redis (%s)", len(messages), type(exc).__name__)

    async def listen(self) -> None:
        from redis import asyncio as aioredis

        while True:
            client = aioredis.Redis.from_url(self.url)
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    async for item in pubsub.listen():
                        if item.get("type") == "message":
                            message = Message.decode(item["data"])
                            if message is not None:
                                self.dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("broker connection lost (%s); reconnecting", type(exc).__name__)
                await asyncio.sleep(RECONNECT_SECONDS)
            finally:
                await client.aclose()

    def close(self) -> None:
        self._client.close()
