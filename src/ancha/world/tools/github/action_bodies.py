"""GitHub's world-rule actions in scene files: each body's one model (``*ActionFile``), as
written and as resolved (refs bare), and the function that resolves it in place.

``github.comment: {issue: $issue_or_pull, from: $user, body}``
``github.review: {pull: $pull, from: $user, event: APPROVE|REQUEST_CHANGES|COMMENT, body}``
``github.merge: {pull: $pull, from: $user, method: merge|squash|rebase}``
``github.commit: {repo: $repo, branch, from: $user, message, files: {path: text|null}}``
``github.issue: {repo: $repo, from: $user, title, body, labels, assignees}``

``from`` is a GitHub user ref (a seeded user or the agent's account). The resolved
body's JSON by alias (the same model, refs bare) is what ``actions.py`` performs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver

TOOL = "github"

ReviewEvent = Literal["APPROVE", "REQUEST_CHANGES", "COMMENT"]
MergeMethod = Literal["merge", "squash", "rebase"]
BranchName = Annotated[str, Expect("a branch name such as main")]


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class CommentActionFile(_File):
    issue: Ref = Field(description="the issue or pull request to comment on")
    """Resolved: the bare ref of an issue or a pull request."""
    from_: Ref = Field(alias="from")
    body: str


class ReviewActionFile(_File):
    pull: Ref
    from_: Ref = Field(alias="from")
    event: ReviewEvent
    body: str = ""


class MergeActionFile(_File):
    pull: Ref
    from_: Ref = Field(alias="from")
    method: MergeMethod = "merge"


class CommitActionFile(_File):
    repo: Ref
    branch: BranchName | None = Field(default=None, description="default: the repository's default branch")
    """A branch that does not exist yet is made from the default branch."""
    from_: Ref = Field(alias="from")
    message: str
    files: dict[str, str | None] = Field(description="path -> new text, or null to delete the file")


class IssueActionFile(_File):
    repo: Ref
    from_: Ref = Field(alias="from")
    title: str
    body: str = ""
    labels: list[str] = Field(default_factory=list)
    assignees: list[Ref] = Field(default_factory=list)
    """Resolved: bare user refs."""


# --- resolving -----------------------------------------------------------------------------


def _ref(body: dict[str, Any], field: str, kind: str | tuple[str, ...], path: str, resolver: Resolver) -> \
        str | None:
    value = body.get(field)
    if value is None:
        return None  # missing: the walker reported it
    return resolver.refs.resolve(value, kind, resolver.source.reporter(join(path, field.rstrip("_"))), tool=TOOL)


def _refs(body: dict[str, Any], path: str, resolver: Resolver, fields: tuple[tuple[str, str | tuple[str, ...]], ...]) \
        -> dict[str, str] | None:
    """``fields`` ((attribute, kind), ...) resolved to bare refs; None if one is missing or wrong."""
    resolved: dict[str, str] = {}
    ok = True
    for field, kind in fields:
        name = _ref(body, field, kind, path, resolver)
        ok = ok and name is not None
        if name is not None:
            resolved["from" if field == "from_" else field] = name
    return resolved if ok else None


def resolve_comment(body: dict[str, Any], path: str, resolver: Resolver) -> CommentActionFile | None:
    refs = _refs(body, path, resolver, (("issue", ("issue", "pull")), ("from_", "user")))
    if refs is None or body.get("body") is None:
        return None
    return CommentActionFile.model_validate({**refs, "body": body["body"]})


def resolve_review(body: dict[str, Any], path: str, resolver: Resolver) -> ReviewActionFile | None:
    refs = _refs(body, path, resolver, (("pull", "pull"), ("from_", "user")))
    if refs is None or body.get("event") is None:
        return None
    if body["event"] != "APPROVE" and not body.get("body"):
        resolver.add(join(path, "body"), f"a {body['event']} review needs a body",
                     "GitHub refuses REQUEST_CHANGES and COMMENT reviews without one")
        return None
    return ReviewActionFile.model_validate({**refs, "event": body["event"], "body": body.get("body") or ""})


def resolve_merge(body: dict[str, Any], path: str, resolver: Resolver) -> MergeActionFile | None:
    refs = _refs(body, path, resolver, (("pull", "pull"), ("from_", "user")))
    if refs is None:
        return None
    return MergeActionFile.model_validate({**refs, "method": body.get("method") or "merge"})


def resolve_commit(body: dict[str, Any], path: str, resolver: Resolver) -> CommitActionFile | None:
    refs = _refs(body, path, resolver, (("repo", "repo"), ("from_", "user")))
    if refs is None or body.get("message") is None or body.get("files") is None:
        return None
    if not body["files"]:
        resolver.add(join(path, "files"), "a commit needs at least one file", "files: {README.md: new text}")
        return None
    return CommitActionFile.model_validate({**refs, "branch": body.get("branch"), "message": body["message"],
                                        "files": body["files"]})


def resolve_issue(body: dict[str, Any], path: str, resolver: Resolver) -> IssueActionFile | None:
    refs = _refs(body, path, resolver, (("repo", "repo"), ("from_", "user")))
    if body.get("title") is None:
        return None
    assignees = [resolver.refs.resolve(a, "user", resolver.source.reporter(join(join(path, "assignees"), i)),
                                       tool=TOOL) for i, a in enumerate(body.get("assignees") or [])]
    if refs is None or not all(assignees):
        return None
    return IssueActionFile.model_validate({**refs, "title": body["title"], "body": body.get("body") or "",
                                       "labels": list(body.get("labels") or []), "assignees": assignees})
