"""Pictures in Slack's answers, on the replica's own host.

A user's ``profile.image_*`` and a bot's ``bot_profile.icons`` are stored as Slack writes
them (Gravatar and ``a.slack-edge.com``): messages cache their wire JSON and seeded history
is text every trial of a scene shares, while the replica's address is known only from the
request being answered. So the answer's bytes carry the vendor's prefix until they leave,
and here each becomes the replica's ``/img/`` folder, where ``web_pages`` serves a picture.
"""

from __future__ import annotations

GRAVATAR = "https://secure.gravatar.com/avatar/"
"""Where Slack's default avatars live: ``profile.image_*`` is ``GRAVATAR + <id>.jpg?s=<size>``."""
SLACK_EDGE = "https://a.slack-edge.com/80588/img/"
"""Slack's static images: apps' ``icons`` are ``SLACK_EDGE + plugins/app/bot_<size>.png``."""

_VENDOR = ((GRAVATAR.encode(), b"/img/avatars/"), (SLACK_EDGE.encode(), b"/img/"))


def on_replica(body: bytes, base_url: str) -> bytes:
    """``body`` with every vendor image URL moved onto ``base_url`` (the same path below ``/img/``)."""
    base = base_url.encode()
    for vendor, folder in _VENDOR:
        if vendor in body:
            body = body.replace(vendor, base + folder)
    return body
