"""What the git-backed REST handlers share: the repository's git, refs, identities.

``repo_git(call, need)`` applies GitHub's access rules and gives the repository with its
``RepoGit``; ``commit_of(call, git, ref)`` resolves a ``ref`` query (default branch
when absent) as GitHub does, 404 ``No commit found for the ref X`` otherwise.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call
from ancha.world.tools.github.git_protection import Protection, protection_of
from ancha.world.tools.github.git_seed import Identity
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.models import Repo, User


def repo_git(call: Call, need: str = "read") -> tuple[Repo, RepoGit]:
    repo = call.repo(need=need)
    git = repo.git
    if not isinstance(git, RepoGit):
        raise errors.Conflict("Git Repository is empty.")
    return repo, git


def commit_of(call: Call, git: RepoGit, ref: str | None) -> tuple[str, str]:
    """(the ref as named, or the default branch; its commit sha)."""
    if not git.branches():
        raise errors.NotFound("This repository is empty.")
    name = ref or git.default_branch
    sha = git.resolve(name)
    if sha is None:
        raise errors.NotFound(f"No commit found for the ref {name}")
    return name, sha


def identity_of(user: User) -> Identity:
    """The git identity GitHub uses for a user's web and API commits."""
    return Identity(user.name or user.login, user.email or f"{user.id}+{user.login}@users.noreply.github.com")


WEB_COMMITTER = Identity("GitHub", "noreply@github.com")


def person(call: Call, field: str, default: Identity, resource: str) -> tuple[Identity, float | None]:
    """An ``author``/``committer`` body object (``name``, ``email``, optional ``date``)."""
    value = call.body.get(field)
    if value is None:
        return default, None
    if not isinstance(value, dict):
        raise errors.invalid_request(f"For '{field}', {value!r} is not an object.")
    name, email = value.get("name"), value.get("email")
    if not isinstance(name, str) or not name.strip():
        raise errors.invalid_request('"name" wasn\'t supplied.' if name is None else
                                     f"For 'properties/name', {name!r} is not a string.")
    if not isinstance(email, str) or not email.strip():
        raise errors.invalid_request('"email" wasn\'t supplied.' if email is None else
                                     f"For 'properties/email', {email!r} is not a string.")
    when: float | None = None
    date = value.get("date")
    if date is not None:
        try:
            when = datetime.fromisoformat(str(date).replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise errors.invalid_field(resource, f"{field}.date", date) from None
    return Identity(name.strip(), email.strip()), when


def required_str(call: Call, name: str) -> str:
    value = call.body.get(name)
    if value is None:
        raise errors.invalid_request(f'"{name}" wasn\'t supplied.')
    if not isinstance(value, str):
        raise errors.invalid_request(f"For '{name}', {_show(value)} is not a string.")
    return value


def optional_str(call: Call, name: str) -> str | None:
    value = call.body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise errors.invalid_request(f"For '{name}', {_show(value)} is not a string.")
    return value


def decode64(text: str, what: str = "content") -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise errors.invalid_request(f"{what} is not valid Base64") from None


def protection(repo: Repo, branch: str) -> Protection | None:
    return protection_of(repo.protected_branches.get(branch))


def _show(value: Any) -> str:
    import json

    return json.dumps(value)
