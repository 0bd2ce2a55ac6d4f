"""The ``world.okta`` seed, resolved: what an Okta replica is built from.

Refs are bare here (``okta_dana``); a user's ``groups`` hold group refs or group names.
``OktaWorld.parse`` accepts this model or its JSON form (the server hands over either).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["STAGED", "PROVISIONED", "ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED", "SUSPENDED",
                 "DEPROVISIONED"]
STATUSES: tuple[str, ...] = ("STAGED", "PROVISIONED", "ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED",
                             "SUSPENDED", "DEPROVISIONED")
"""Okta's user statuses (the ``UserStatus`` enum of the Management API)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class OktaUser(_Model):
    """A seeded user. ``login`` is Okta's sign-in name (an email by default)."""

    ref: str | None = None
    login: str
    email: str | None = None
    """Default: the login."""
    first_name: str | None = None
    last_name: str | None = None
    status: Status = "ACTIVE"
    groups: list[str] = Field(default_factory=list)
    """Group refs (bare) or group names."""
    person: str | None = None


class OktaGroup(_Model):
    """A seeded group (an ``OKTA_GROUP``; Okta's built-in ``Everyone`` always exists besides)."""

    ref: str | None = None
    name: str
    description: str | None = None


class OktaWorld(_Model):
    users: list[OktaUser] = Field(default_factory=list)
    groups: list[OktaGroup] = Field(default_factory=list)

    @classmethod
    def parse(cls, seed: OktaWorld | dict[str, Any] | None) -> OktaWorld:
        if isinstance(seed, OktaWorld):
            return seed
        return cls.model_validate(seed or {})
