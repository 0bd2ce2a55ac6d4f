"""Identifiers: 12 hex characters for every public object."""

from __future__ import annotations

import secrets


def new_id() -> str:
    """A fresh 12-hex-character id (48 random bits)."""
    return secrets.token_hex(6)


def looks_like_id(value: str) -> bool:
    return len(value) == 12 and all(c in "0123456789abcdef" for c in value)
