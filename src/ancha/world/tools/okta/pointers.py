"""How scene bodies name an Okta user or group: a ``$ref`` (resolved to a bare ref) or a
login / a group's name (kept as written)."""

from __future__ import annotations

from typing import Annotated, Any

from ancha.config.validation import Expect
from ancha.scene.predicates import Resolver

TOOL = "okta"
UserPointer = Annotated[str, Expect("a user ref such as $okta_dana, or a login such as dana@acme.com")]
GroupPointer = Annotated[str, Expect("a group ref such as $okta_eng, or a group's name")]


def resolve_user(resolver: Resolver, value: Any, path: str) -> tuple[str | None, str | None, bool]:
    """(bare ref, login, ok) of a user pointer."""
    if not isinstance(value, str) or not value.strip():
        resolver.add(path, f"expected a user ref such as $okta_dana or a login, got {value!r}")
        return None, None, False
    if value.startswith("$"):
        name = resolver.refs.resolve(value, "user", resolver.source.reporter(path), tool=TOOL)
        return name, None, name is not None
    return None, value, True
