"""How the console's world diff shows GitHub: a pull request or an issue as a card (state,
labels, reviews, comments), a repository by its branches and production; the timestamps and
counters GitHub keeps as bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.kernel.rendered import Field, ObjectChange, Rendered, changed, field, fields, shown

REPO_BOOKKEEPING = frozenset({"pushed_at", "updated_at", "open_issues", "open_issues_count", "size",
                              "git.objects_added"})
CARD_BOOKKEEPING = frozenset({"updated_at", "comments", "review_comments", "commits", "additions", "deletions",
                              "changed_files", "mergeable", "mergeable_state", "rebaseable", "reactions",
                              "sub_issues_summary", "_links"})


def render(change: ObjectChange) -> Rendered | None:
    if not isinstance(change.current, Mapping):
        return None
    if change.collection == "repos.pulls":
        return _pull(change)
    if change.collection == "repos.issues":
        return _issue(change)
    if change.collection == "repos":
        return _repo(change)
    return None  # a comment, a label, a milestone: shown in its issue's or repository's card


def _pull(change: ObjectChange) -> Rendered:
    pull: Mapping[str, Any] = change.current
    state = "merged" if pull.get("merged_at") else str(pull.get("state"))
    before = change.before if change.kind == "changed" and isinstance(change.before, Mapping) else None
    was = ("merged" if before.get("merged_at") else str(before.get("state"))) if before else None
    reviews = pull.get("reviews")
    return Rendered(
        "card", f"pull request {_repo_name(change)}#{pull.get('number')}: {pull.get('title')}",
        fields(Field("state", state + (" (draft)" if pull.get("draft") else ""), was if was != state else None),
               Field("author", _login(pull.get("user"))),
               Field("branches", f"{_ref(pull.get('head'))} → {_ref(pull.get('base'))}"),
               field(change, "labels", "labels", _names),
               field(change, "requested reviewers", "requested_reviewers", _logins),
               Field("reviews", _reviews(reviews)) if isinstance(reviews, list) else None,
               field(change, "merged by", "merged_by", _login),
               field(change, "merged at", "merged_at", change.when),
               field(change, "comments", "comments")),
        body=str(pull.get("body") or ""),
        bookkeeping=_only(change, CARD_BOOKKEEPING),
    )


def _issue(change: ObjectChange) -> Rendered:
    issue: Mapping[str, Any] = change.current
    kind = "pull request" if issue.get("pull_request") else "issue"
    title = f"{kind} {_repo_name(change)}#{issue.get('number')}: {issue.get('title')}"
    if kind == "pull request":
        title += " (its conversation)"
    old = {c.get("id") for c in _list(change.before, "comment_bodies")} if change.kind == "changed" else set()
    comments = [Field(f"comment by {_login(c.get('user'))}", str(c.get("body") or ""))
                for c in _list(change.after, "comment_bodies") if c.get("id") not in old]
    return Rendered(
        "card", title,
        fields(field(change, "state", "state"), Field("author", _login(issue.get("user"))),
               field(change, "labels", "labels", _names), field(change, "assignees", "assignees", _logins),
               field(change, "closed by", "closed_by", _login), *comments),
        body=str(issue.get("body") or "") if change.kind == "added" or "body" in change.changed_names else "",
        bookkeeping=_only(change, CARD_BOOKKEEPING),
    )


def _repo(change: ObjectChange) -> Rendered:
    repo: Mapping[str, Any] = change.current
    branches = [Field(f"branch {f.path.removeprefix('git.branches.')}", _sha(f.after) if f.after else "deleted",
                      _sha(f.before) if f.before else "new")
                for f in change.fields if f.path.startswith("git.branches.")]
    return Rendered(
        "object", f"repository {repo.get('full_name')}",
        fields(*branches, changed(change, "production", "production", _production),
               changed(change, "default branch", "default_branch"), changed(change, "archived", "archived")),
        bookkeeping=_only(change, REPO_BOOKKEEPING),
    )


def _only(change: ObjectChange, bookkeeping: frozenset[str]) -> bool:
    return change.kind == "changed" and bool(change.fields) and all(
        f.path in bookkeeping or f.name in bookkeeping for f in change.fields)


def _repo_name(change: ObjectChange) -> str:
    repo = change.parents[-1] if change.parents else {}
    return str(repo.get("full_name") or "")


def _list(value: Any, key: str) -> list[Mapping[str, Any]]:
    items = value.get(key) if isinstance(value, Mapping) else None
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def _login(user: Any) -> str:
    return str(user.get("login")) if isinstance(user, Mapping) else shown(user)


def _logins(users: Any) -> str:
    return ", ".join(_login(u) for u in users) if isinstance(users, list) and users else "—"


def _names(labels: Any) -> str:
    if not isinstance(labels, list) or not labels:
        return "—"
    return ", ".join(str(label.get("name")) if isinstance(label, Mapping) else str(label) for label in labels)


def _reviews(reviews: list[Any]) -> str:
    found = [f"{_login(r.get('user'))}: {str(r.get('state')).lower().replace('_', ' ')}"
             for r in reviews if isinstance(r, Mapping)]
    return "; ".join(found) or "none"


def _ref(side: Any) -> str:
    return str(side.get("ref")) if isinstance(side, Mapping) else "?"


def _sha(value: Any) -> str:
    return str(value)[:7] if value else "—"


def _production(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_sha(v) if isinstance(v, str) and len(v) == 40 else shown(v)}"
                         for k, v in value.items()) or "—"
    return _sha(value) if isinstance(value, str) and len(value) == 40 else shown(value)
