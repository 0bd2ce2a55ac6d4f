"""GitHub webhook bodies: what a repository's webhook POSTs, in GitHub's shapes.

``for_event(replica, event)`` turns one domain event (``events.py``) into the
webhooks GitHub sends for that change, as ``(X-GitHub-Event name, body)`` pairs; git
ref moves are turned into ``push``/``create``/``delete`` (and ``pull_request``
``synchronize``) by ``webhooks_git``.

The objects inside a webhook are the REST shapes less what webhooks never carry: users
without ``user_view_type``, issues without ``type``/``sub_issues_summary``/``closed_by``,
labels without the archive fields, repositories with ``custom_properties`` and without
the counts only ``GET /repos`` shows, reviews with lower-case ``state``. Every body
has ``action`` (where the event has actions), the event's objects, ``repository``,
``organization`` when an organization owns the repository, and ``sender``; the
``installation`` of GitHub Apps is left out (a repository hook has none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.tools.github.models import (
    Account,
    GitHubState,
    Issue,
    IssueComment,
    Label,
    Org,
    Pull,
    Repo,
    Review,
)
from ancha.world.tools.github.models.pulls import ReviewComment
from ancha.world.tools.github.models.wire import JSONDict, node_id

if TYPE_CHECKING:
    from ancha.world.tools.github.replica import GitHubReplica

Webhook = tuple[str, JSONDict]
"""``(X-GitHub-Event, body)``."""

_REST_ONLY_REPO = ("network_count", "subscribers_count", "permissions")
_REST_ONLY_ISSUE = ("type", "sub_issues_summary", "closed_by")


# --- the objects inside a webhook ----------------------------------------------------------


def user(account: Account, base: str) -> JSONDict:
    body = account.simple(base)
    body.pop("user_view_type", None)
    return body


def _users(body: Any, base: str) -> Any:
    """Every ``simple-user`` inside a REST body, as webhooks show users (recursively)."""
    if isinstance(body, dict):
        if "login" in body and "user_view_type" in body:
            return {k: v for k, v in body.items() if k != "user_view_type"}
        return {k: _users(v, base) for k, v in body.items()}
    if isinstance(body, list):
        return [_users(v, base) for v in body]
    return body


def repository(repo: Repo, base: str) -> JSONDict:
    body = repo.to_dict(base, full=True)
    for key in _REST_ONLY_REPO:
        body.pop(key, None)
    body.pop("organization", None)
    body["owner"] = user(repo.owner, base)
    body["custom_properties"] = {}
    return body


def organization(repo: Repo, base: str) -> JSONDict | None:
    owner = repo.owner
    if not isinstance(owner, Org):
        return None
    return owner.simple_org(base)


def label(item: Label, base: str) -> JSONDict:
    return {k: v for k, v in item.to_dict(base).items() if k not in ("archived_at", "archived_by")}


def _labels(items: list[JSONDict]) -> list[JSONDict]:
    return [{k: v for k, v in item.items() if k not in ("archived_at", "archived_by")} for item in items]


def issue(item: Issue, base: str) -> JSONDict:
    body = _users(item.to_dict(base), base)
    for key in _REST_ONLY_ISSUE:
        body.pop(key, None)
    body["labels"] = _labels(body["labels"])
    return dict(body)


def comment(item: IssueComment, base: str) -> JSONDict:
    return dict(_users(item.to_dict(base), base))


def pull_request(pull: Pull, base: str) -> JSONDict:
    """The ``pull-request`` of ``pull_request`` webhooks (the full REST shape)."""
    body = _users(pull.to_dict(base, full=True), base)
    body["labels"] = _labels(body["labels"])
    for side in ("head", "base"):
        body[side]["repo"] = repository(pull.repo, base)
    return dict(body)


def simple_pull_request(pull: Pull, base: str) -> JSONDict:
    """The ``simple-pull-request`` of review webhooks: without the counts and merge state."""
    body = pull_request(pull, base)
    for key in ("merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
                "review_comments", "maintainer_can_modify", "commits", "additions", "deletions", "changed_files"):
        body.pop(key, None)
    return body


def review(item: Review, base: str) -> JSONDict:
    body = _users(item.to_dict(base), base)
    body["state"] = item.state.lower()
    body["commit_id"] = item.commit_id or item.pull.head_sha
    body.setdefault("submitted_at", None)
    return dict(body)


def review_comment(item: ReviewComment, base: str) -> JSONDict:
    body = _users(item.to_dict(base), base)
    body["commit_id"] = body["original_commit_id"] = item.commit_id or item.pull.head_sha
    body["pull_request_review_id"] = item.review_id or 0
    body.setdefault("position", item.line)
    body.setdefault("original_position", item.line or 1)
    body["original_line"] = item.line or 1
    return dict(body)


def envelope(action: str | None, repo: Repo, sender: Account, base: str, **fields: Any) -> JSONDict:
    """A webhook body: ``action``, the event's own fields, then repository, organization, sender."""
    body: JSONDict = {} if action is None else {"action": action}
    body.update(fields)
    body["repository"] = repository(repo, base)
    org = organization(repo, base)
    if org is not None:
        body["organization"] = org
    body["sender"] = user(sender, base)
    return body


# --- domain events -> webhooks ---------------------------------------------------------------


_ISSUE_ACTIONS = {"issue_opened": "opened", "issue_closed": "closed", "issue_reopened": "reopened",
                  "issue_labeled": "labeled", "issue_unlabeled": "unlabeled", "issue_assigned": "assigned",
                  "issue_unassigned": "unassigned", "issue_edited": "edited", "issue_locked": "locked",
                  "issue_unlocked": "unlocked"}
_PULL_ACTIONS = {"pull_opened": "opened", "pull_closed": "closed", "pull_merged": "closed",
                 "pull_reopened": "reopened", "pull_edited": "edited"}
_COMMENT_ACTIONS = {"issue_comment_created": "created", "issue_comment_edited": "edited",
                    "issue_comment_deleted": "deleted"}
_LABEL_ACTIONS = {"label_created": "created", "label_edited": "edited", "label_deleted": "deleted"}


class Lookup:
    """What a webhook needs that the state no longer holds (deleted labels and comments),
    kept by the delivery as the objects are seen."""

    def __init__(self) -> None:
        self.labels: dict[tuple[str, str], Label] = {}
        self.comments: dict[int, IssueComment] = {}


def for_event(replica: GitHubReplica, event: DomainEvent, seen: Lookup | None = None) -> list[Webhook]:
    """The webhooks GitHub sends for one domain event (none for events without one)."""
    data = event.data
    state, base = replica.state, replica.base_url
    owner, _, name = str(data.get("repo", "")).partition("/")
    repo = state.repo(owner, name)
    sender = state.account(str(data.get("user", "")))
    if repo is None or sender is None:
        return []
    seen = seen or Lookup()
    kind = event.type
    number = data.get("number")
    item = repo.issues.get(number) if isinstance(number, int) else None
    if kind in _LABEL_ACTIONS:
        return _label_event(kind, repo, sender, base, data, seen)
    if kind in _COMMENT_ACTIONS:
        return _comment_event(kind, item, repo, sender, base, data, seen)
    if item is not None and item.pull is not None and (kind in _PULL_ACTIONS or kind in _ISSUE_ACTIONS):
        return _pull_event(kind, state, item.pull, repo, sender, base, data)
    if item is not None and kind in _ISSUE_ACTIONS:
        return _issue_event(kind, state, item, repo, sender, base, data)
    if kind == "review_requested" and item is not None and item.pull is not None:
        pull = item.pull
        reviewers = [state.account(login) for login in data.get("reviewers") or ()]
        return [("pull_request", envelope("review_requested", repo, sender, base, number=pull.number,
                                          pull_request=pull_request(pull, base), requested_reviewer=user(r, base)))
                for r in reviewers if r is not None]
    if kind == "pull_review_submitted" and item is not None and item.pull is not None:
        found = next((r for r in item.pull.reviews if r.id == data.get("review_id")), None)
        if found is None:
            return []
        action = "dismissed" if found.state == "DISMISSED" else "submitted"
        return [("pull_request_review", envelope(action, repo, sender, base, review=review(found, base),
                                                 pull_request=simple_pull_request(item.pull, base)))]
    if kind == "pull_review_comment_created" and item is not None and item.pull is not None:
        note = next((c for c in item.pull.review_comments if c.id == data.get("comment_id")), None)
        if note is None:
            return []
        return [("pull_request_review_comment", envelope(
            "created", repo, sender, base, comment=review_comment(note, base),
            pull_request=simple_pull_request(item.pull, base)))]
    if kind in ("deployment_created", "deployment_status_created"):
        from ancha.world.tools.github.webhooks_deployments import deployment_webhooks

        return deployment_webhooks(kind, repo, sender, base, data, event.at)
    return []


def _issue_event(kind: str, state: GitHubState, item: Issue, repo: Repo, sender: Account, base: str, data: dict[str, Any]) -> list[Webhook]:
    action = _ISSUE_ACTIONS[kind]
    fields: JSONDict = {"issue": issue(item, base)}
    if kind == "issue_edited":
        return _edited("issues", item, repo, sender, base, data, fields)
    fields.update(_detail(kind, state, repo, base, data))
    return [("issues", envelope(action, repo, sender, base, **fields))]


def _pull_event(kind: str, state: GitHubState, pull: Pull, repo: Repo, sender: Account, base: str, data: dict[str, Any]) -> list[Webhook]:
    action = _PULL_ACTIONS.get(kind) or _ISSUE_ACTIONS[kind]
    if action in ("locked", "unlocked"):
        return [("pull_request", envelope(action, repo, sender, base, number=pull.number,
                                          pull_request=pull_request(pull, base)))]
    fields: JSONDict = {"number": pull.number, "pull_request": pull_request(pull, base)}
    if kind in ("pull_edited", "issue_edited"):
        return _edited("pull_request", pull.issue, repo, sender, base, data, fields)
    fields.update(_detail(kind, state, repo, base, data))
    return [("pull_request", envelope(action, repo, sender, base, **fields))]


def _detail(kind: str, state: GitHubState, repo: Repo, base: str, data: dict[str, Any]) -> JSONDict:
    """The ``label`` of labeled/unlabeled and the ``assignee`` of (un)assigned."""
    if kind in ("issue_labeled", "issue_unlabeled"):
        found = repo.labels.get(str(data.get("label", "")).lower())
        if found is not None:
            return {"label": label(found, base)}
        # A label removed from the repository meanwhile: what the event still knows of it.
        name = str(data.get("label", ""))
        return {"label": {"id": 0, "node_id": node_id("Label", 0), "url": f"{base}/repos/{repo.full_name}/labels/{name}",
                          "name": name, "color": "ededed", "default": False, "description": None}}
    if kind in ("issue_assigned", "issue_unassigned"):
        account = state.account(str(data.get("assignee", "")))
        return {"assignee": user(account, base) if account is not None else None}
    return {}


def _edited(event: str, item: Issue, repo: Repo, sender: Account, base: str, data: dict[str, Any],
            fields: JSONDict) -> list[Webhook]:
    """``edited`` for title/body changes; a milestone change is ``milestoned``/``demilestoned``."""
    changes = dict(data.get("changes") or {})
    out: list[Webhook] = []
    milestone = changes.pop("milestone", None)
    if milestone is not None:
        action = "milestoned" if item.milestone is not None else "demilestoned"
        extra: JSONDict = {}
        if item.milestone is not None:
            extra["milestone"] = _users(item.milestone.to_dict(base), base)
        else:
            previous = milestone.get("from")
            gone = next((m for m in repo.milestones.values() if m.title == previous), None)
            if gone is not None:
                extra["milestone"] = _users(gone.to_dict(base), base)
        out.append((event, envelope(action, repo, sender, base, **fields, **extra)))
    if (changes.pop("state", None) or {}).get("from") == "closed":  # reopened through the Pulls API
        out.append((event, envelope("reopened", repo, sender, base, **fields)))
    wire: JSONDict = {key: {"from": value.get("from") or ""} for key, value in changes.items()
                      if key in ("title", "body") and isinstance(value, dict)}
    previous_base = ((changes.get("base") or {}).get("ref") or {}).get("from")
    if previous_base and item.pull is not None:
        git = repo.git
        old_sha = git.branch_sha(previous_base) if git is not None else None
        wire["base"] = {"ref": {"from": previous_base}, "sha": {"from": old_sha or item.pull.base_sha}}
    if wire:
        number = fields.pop("number", None)
        head = {"number": number} if number is not None else {}
        out.append((event, envelope("edited", repo, sender, base, **head, changes=wire, **fields)))
    return out


def _label_event(kind: str, repo: Repo, sender: Account, base: str, data: dict[str, Any], seen: Lookup) -> list[Webhook]:
    name = str(data.get("label", ""))
    found = repo.labels.get(name.lower()) or seen.labels.get((repo.key, name.lower()))
    if found is None:
        return []
    fields: JSONDict = {"label": label(found, base)}
    if kind == "label_edited":
        changes = {key: {"from": value.get("from") or ""} for key, value in (data.get("changes") or {}).items()
                   if key in ("name", "color", "description") and isinstance(value, dict)}
        if changes:
            fields["changes"] = changes
    return [("label", envelope(_LABEL_ACTIONS[kind], repo, sender, base, **fields))]


def _comment_event(kind: str, item: Issue | None, repo: Repo, sender: Account, base: str, data: dict[str, Any],
                   seen: Lookup) -> list[Webhook]:
    if item is None:
        return []
    comment_id = data.get("comment_id")
    note = next((c for c in item.comments if c.id == comment_id), None)
    if note is None and isinstance(comment_id, int):
        note = seen.comments.get(comment_id)
    if note is None:
        return []
    fields: JSONDict = {}
    if kind == "issue_comment_edited":
        previous = (data.get("changes") or {}).get("body") or {}
        fields["changes"] = {"body": {"from": previous.get("from") or ""}}
    fields["issue"] = issue(item, base)
    fields["comment"] = comment(note, base)
    return [("issue_comment", envelope(_COMMENT_ACTIONS[kind], repo, sender, base, **fields))]

