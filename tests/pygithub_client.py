"""PyGithub as the tests drive the GitHub replica.

PyGithub 2 spaces its calls out by default, for github.com's sake: a quarter second between
any two requests and a second between writes. Against a replica on loopback that pause is
all a test would measure, so the tests' clients send at once; nothing else about the client
changes.
"""

from __future__ import annotations

from typing import Any

UNTHROTTLED: dict[str, Any] = {"seconds_between_requests": None, "seconds_between_writes": None}
"""Keyword arguments for ``github.Github`` that turn its client-side pacing off."""
