"""Okta's event hooks: what the agent registers to be told of the org's events.

An ``EventHook`` (``/api/v1/eventHooks``) names the event types it subscribes to
(``events.items``, Okta's ``EVENT_TYPE`` subscription) and the channel Okta calls
(``channel.config``: the HTTPS ``uri``, extra ``headers`` and the ``authScheme`` header,
whose ``value`` is write-only). It is created ``ACTIVE`` and ``UNVERIFIED``; only an
``ACTIVE`` and ``VERIFIED`` hook receives events (``delivery.py``); only an ``INACTIVE``
one can be deleted; changing its channel makes it ``UNVERIFIED`` again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ancha.world.tools.okta import errors
from ancha.world.tools.okta.models import okta_time

_EVENT_TYPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
MAX_NAME = 255
MAX_EVENTS = 250


@dataclass(slots=True)
class Channel:
    uri: str
    headers: list[dict[str, str]] = field(default_factory=list)
    auth_key: str | None = None
    auth_value: str | None = None
    version: str = "1.0.0"

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "uri": self.uri,
            "headers": [dict(h) for h in self.headers],
            "method": "POST",
        }
        if self.auth_key is not None:
            config["authScheme"] = {"type": "HEADER", "key": self.auth_key}
        return {"type": "HTTP", "version": self.version, "config": config}

    def request_headers(self) -> dict[str, str]:
        """The headers Okta adds to each call: the extra ones, then the auth header."""
        out = {h["key"]: h["value"] for h in self.headers}
        if self.auth_key and self.auth_value is not None:
            out[self.auth_key] = self.auth_value
        return out


@dataclass(slots=True)
class EventHook:
    id: str
    name: str
    description: str | None
    items: list[str]
    channel: Channel
    created: float
    last_updated: float
    created_by: str
    status: str = "ACTIVE"
    verification: str = "UNVERIFIED"

    @property
    def receives(self) -> bool:
        return self.status == "ACTIVE" and self.verification == "VERIFIED"

    def to_dict(self, base_url: str) -> dict[str, Any]:
        href = f"{base_url}/api/v1/eventHooks/{self.id}"
        allow = {"hints": {"allow": ["POST"]}}
        links: dict[str, Any] = {"self": {"href": href}}
        links["verify"] = {"href": f"{href}/lifecycle/verify", **allow}
        if self.status == "ACTIVE":
            links["deactivate"] = {"href": f"{href}/lifecycle/deactivate", **allow}
        else:
            links["activate"] = {"href": f"{href}/lifecycle/activate", **allow}
        return {
            "id": self.id,
            "status": self.status,
            "verificationStatus": self.verification,
            "name": self.name,
            "description": self.description,
            "created": okta_time(self.created),
            "createdBy": self.created_by,
            "lastUpdated": okta_time(self.last_updated),
            "events": {"type": "EVENT_TYPE", "items": list(self.items), "filter": None},
            "channel": self.channel.to_dict(),
            "_links": links,
        }


def _invalid(field_name: str, cause: str) -> errors.ApiValidation:
    return errors.ApiValidation(field_name, f"{field_name}: {cause}")


def parse(body: dict[str, Any], old: EventHook | None) -> tuple[str, str | None, list[str], Channel]:
    """The name, description, event types and channel of a create or replace body, checked
    as Okta does (``E0000001`` naming the field)."""
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _invalid("name", "The field cannot be left blank")
    if len(name) > MAX_NAME:
        raise _invalid("name", f"The value must be at most {MAX_NAME} characters.")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise _invalid("description", "The value must be a string.")
    return name, description, _items(body.get("events")), _channel(body.get("channel"), old)


def _items(events: Any) -> list[str]:
    if not isinstance(events, dict):
        raise _invalid("events", "The field cannot be left blank")
    if events.get("type", "EVENT_TYPE") != "EVENT_TYPE":
        raise _invalid("events.type", "The value must be EVENT_TYPE.")
    items = events.get("items")
    if not isinstance(items, list) or not items:
        raise _invalid("events.items", "The field cannot be left blank")
    if len(items) > MAX_EVENTS or not all(isinstance(i, str) and _EVENT_TYPE.match(i) for i in items):
        bad = next((i for i in items if not (isinstance(i, str) and _EVENT_TYPE.match(i))), None)
        raise _invalid(
            "events.items",
            f"The event type {bad!r} is not eligible for event hooks."
            if bad is not None
            else f"At most {MAX_EVENTS} event types.",
        )
    return list(dict.fromkeys(items))


def _channel(channel: Any, old: EventHook | None) -> Channel:
    if not isinstance(channel, dict):
        raise _invalid("channel", "The field cannot be left blank")
    if channel.get("type") != "HTTP":
        raise _invalid("channel.type", "The value must be HTTP.")
    if channel.get("version") != "1.0.0":
        raise _invalid("channel.version", "The only supported version is 1.0.0.")
    config = channel.get("config")
    if not isinstance(config, dict):
        raise _invalid("channel.config", "The field cannot be left blank")
    uri = config.get("uri")
    if not isinstance(uri, str) or not uri.strip():
        raise _invalid("channel.config.uri", "The field cannot be left blank")
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:  # an unbalanced IPv6 bracket, an invalid port
        host = None
    if host is None or parts.scheme != "https":
        raise _invalid("channel.config.uri", "The URI must be a valid HTTPS URL.")
    headers = config.get("headers") or []
    if not isinstance(headers, list) or not all(
        isinstance(h, dict) and isinstance(h.get("key"), str) and isinstance(h.get("value"), str)
        for h in headers
    ):
        raise _invalid("channel.config.headers", "Each header must have a string key and value.")
    auth = config.get("authScheme")
    key = value = None
    if auth is not None:
        if not isinstance(auth, dict) or auth.get("type") != "HEADER" or not isinstance(auth.get("key"), str):
            raise _invalid("channel.config.authScheme", "The type must be HEADER, with a key.")
        key = auth["key"]
        given = auth.get("value")
        if given is not None and not isinstance(given, str):
            raise _invalid("channel.config.authScheme.value", "The value must be a string.")
        # The value is write-only: a replace that leaves it out keeps the one set before.
        value = given if given is not None else (old.channel.auth_value if old is not None else None)
    return Channel(uri, [{"key": h["key"], "value": h["value"]} for h in headers], key, value)
