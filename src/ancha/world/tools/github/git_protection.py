"""Branch protection: what a protected branch refuses, and its REST shapes.

``Repo.protected_branches`` maps a branch name to the seed's ``ProtectionFile`` or to a
``Protection`` (set through ``PUT .../branches/{branch}/protection``); ``protection_of``
reads either. A seeded protection requires pull requests (its ``required_reviews`` is
the approving-review count), as a protected ``main`` does on most teams' GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class BranchRule:
    """What a protected branch refuses to a push."""

    pull_request_required: bool = True
    """Changes must come through a pull request (required reviews or status checks)."""
    allow_force_pushes: bool = False
    allow_deletions: bool = False


@dataclass(slots=True)
class Protection:
    required_reviews: int | None = 0
    """Approving reviews a pull request needs; None: pull requests are not required."""
    dismiss_stale_reviews: bool = False
    require_code_owner_reviews: bool = False
    require_last_push_approval: bool = False
    required_checks: list[str] | None = field(default_factory=list)
    """Status check contexts; None: status checks are not required."""
    strict: bool = False
    enforce_admins: bool = False
    required_linear_history: bool = False
    allow_force_pushes: bool = False
    allow_deletions: bool = False
    block_creations: bool = False
    required_conversation_resolution: bool = False
    lock_branch: bool = False
    allow_fork_syncing: bool = False
    restrictions: dict[str, list[str]] | None = None
    """Who may push (``users`` logins, ``teams`` slugs, ``apps``); None: anyone with write."""
    dismissal_restrictions: dict[str, list[str]] | None = None
    """Who may dismiss reviews (``users``, ``teams``, ``apps``); None: not restricted."""

    def push_rule(self, is_admin: bool) -> BranchRule | None:
        """What a push by this caller may not do (None: nothing is refused)."""
        if is_admin and not self.enforce_admins:
            return None
        return BranchRule(pull_request_required=self.required_reviews is not None or bool(self.required_checks)
                          or self.lock_branch,
                          allow_force_pushes=self.allow_force_pushes, allow_deletions=self.allow_deletions)

    def to_dict(self, url: str, *, put: bool = False) -> dict[str, Any]:
        """GitHub's ``branch-protection`` (GET), or ``protected-branch`` (the PUT's answer)."""
        body: dict[str, Any] = {"url": url}
        if self.required_checks is not None:
            body["required_status_checks"] = {
                "url": f"{url}/required_status_checks", "strict": self.strict,
                "contexts": list(self.required_checks), "contexts_url": f"{url}/required_status_checks/contexts",
                "checks": [{"context": c, "app_id": None} for c in self.required_checks]}
        if self.required_reviews is not None:
            body["required_pull_request_reviews"] = {
                "url": f"{url}/required_pull_request_reviews", "dismiss_stale_reviews": self.dismiss_stale_reviews,
                "require_code_owner_reviews": self.require_code_owner_reviews,
                "require_last_push_approval": self.require_last_push_approval,
                "required_approving_review_count": self.required_reviews}
        body["required_signatures"] = {"url": f"{url}/required_signatures", "enabled": False}
        body["enforce_admins"] = {"url": f"{url}/enforce_admins", "enabled": self.enforce_admins}
        for name in ("required_linear_history", "allow_force_pushes", "allow_deletions", "block_creations",
                     "required_conversation_resolution", "lock_branch", "allow_fork_syncing"):
            body[name] = {"enabled": getattr(self, name)}
        if not put:
            body["enabled"] = True
        return body


def protection_of(value: Any) -> Protection | None:
    """A ``Protection`` from what ``Repo.protected_branches`` holds (None stays None)."""
    if value is None or isinstance(value, Protection):
        return value
    if isinstance(value, dict):
        value = type("Seeded", (), value)
    reviews = getattr(value, "required_reviews", 0)
    checks = getattr(value, "required_checks", None)
    return Protection(required_reviews=int(reviews or 0), required_checks=list(checks) if checks else None,
                      enforce_admins=bool(getattr(value, "enforce_admins", False)))
