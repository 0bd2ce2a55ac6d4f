"""Search: issues and pull requests (``GET /search/issues``).

Supported qualifiers: ``repo:``, ``org:``, ``user:``, ``is:``/``type:`` (issue, pr,
pull-request, open, closed, merged, unmerged, locked, draft), ``state:``, ``label:``
(several must all match; ``-label:`` excludes), ``author:``, ``assignee:``,
``mentions:``, ``involves:``, ``commenter:``, ``milestone:``, ``no:`` (label, assignee,
milestone), ``in:`` (title, body, comments) and free words, each of which must appear.
"""

from __future__ import annotations

import shlex
from typing import Any

from ancha.world.kernel.query_limits import MAX_QUERY_LENGTH
from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call
from ancha.world.tools.github.models import Issue
from ancha.world.tools.github.models.wire import dumps, raw_list
from ancha.world.tools.github.router import route

MAX_QUERY = min(256, MAX_QUERY_LENGTH)
"""GitHub's documented bound on a search (tighter than the replicas' shared one); past it,
422 ``The search is longer than 256 characters.``"""
_UNSEARCHABLE = ("The listed users and repositories cannot be searched either because the resources do not exist "
                 "or you do not have permission to view them.")


def _terms(q: str) -> list[str]:
    try:
        return shlex.split(q)
    except ValueError:
        return q.replace('"', " ").split()


class IssueQuery:
    def __init__(self, call: Call, q: str) -> None:
        self.call = call
        self.repos: list[str] = []
        self.owners: list[str] = []
        self.checks: list[tuple[bool, str, str]] = []
        """(negated, qualifier, value)."""
        self.words: list[str] = []
        self.where: set[str] = set()
        for term in _terms(q):
            negated = term.startswith("-") and ":" in term
            key, sep, value = term.removeprefix("-").partition(":") if ":" in term else ("", "", term)
            key = key.lower()
            if not sep or key not in _QUALIFIERS:
                self.words.append(term.lower())
            elif key == "repo":
                self.repos.append(value.lower())
            elif key in ("org", "user"):
                self.owners.append(value.lower())
            elif key == "in":
                self.where.update(v.lower() for v in value.split(","))
            else:
                self.checks.append((negated, key, value))

    def matches(self, issue: Issue) -> bool:
        for negated, key, value in self.checks:
            if _check(issue, key, value.lower()) == negated:
                return False
        if self.words:
            where = self.where or {"title", "body"}
            parts = []
            if "title" in where:
                parts.append(issue.title)
            if "body" in where:
                parts.append(issue.body or "")
            if "comments" in where:
                parts += [c.body for c in issue.comments]
            text = "\n".join(parts).lower()
            if not all(word in text for word in self.words):
                return False
        return True


def _check(issue: Issue, key: str, value: str) -> bool:
    if key in ("is", "type"):
        return {"issue": not issue.is_pull, "pr": issue.is_pull, "pull-request": issue.is_pull,
                "open": issue.state == "open", "closed": issue.state == "closed",
                "merged": issue.pull is not None and issue.pull.merged,
                "unmerged": issue.pull is not None and not issue.pull.merged and issue.state == "closed",
                "locked": issue.locked, "unlocked": not issue.locked,
                "draft": issue.pull is not None and issue.pull.draft}.get(value, False)
    if key == "state":
        return issue.state == value
    if key == "label":
        return any(label.name.lower() in value.split(",") for label in issue.labels)
    if key == "author":
        return issue.user.key == value
    if key == "assignee":
        return any(a.key == value for a in issue.assignees)
    if key == "mentions":
        return issue.mentions(value)
    if key == "commenter":
        return any(c.user.key == value for c in issue.comments)
    if key == "involves":
        return (issue.user.key == value or any(a.key == value for a in issue.assignees) or issue.mentions(value)
                or any(c.user.key == value for c in issue.comments))
    if key == "milestone":
        return issue.milestone is not None and issue.milestone.title.lower() == value
    if key == "no":
        return {"label": not issue.labels, "assignee": not issue.assignees,
                "milestone": issue.milestone is None}.get(value, False)
    return False


_QUALIFIERS = {"repo", "org", "user", "in", "is", "type", "state", "label", "author", "assignee", "mentions",
               "commenter", "involves", "milestone", "no"}
_SORTS = {"comments": lambda i: len(i.comments), "created": lambda i: i.created_at,
          "updated": lambda i: i.updated_at}


def _item(call: Call, issue: Issue) -> str:
    if issue.body is not None:
        return f'{issue.wire(call.base)[:-1]},"score":1.0}}'  # the cached issue text, plus its score
    item = {**issue.to_dict(call.base), "score": 1.0}
    del item["body"]  # the search item schema types body as a string: an empty one is left out
    return dumps(item)


@route("GET", "/search/issues", resource="search",
       partial="lexical only; no reactions/interactions sorts, date-range or number qualifiers, text_matches")
def search_issues_and_pull_requests(call: Call) -> dict[str, Any]:
    q = call.query.get("q", "").strip()
    if not q:
        raise errors.ValidationFailed({"resource": "Search", "field": "q", "code": "missing"})
    if len(q) > MAX_QUERY:
        raise errors.ValidationFailed({"message": "The search is longer than 256 characters.", "resource": "Search",
                                       "field": "q", "code": "invalid"})
    query = IssueQuery(call, q)
    repos = []
    for name in query.repos:
        owner, _, repo_name = name.partition("/")
        repo = call.state.repo(owner, repo_name)
        if repo is None or call.role(repo) is None:
            raise errors.ValidationFailed({"message": _UNSEARCHABLE, "resource": "Search", "field": "q",
                                           "code": "invalid"})
        repos.append(repo)
    for owner in query.owners:
        if call.state.account(owner) is None:
            raise errors.ValidationFailed({"message": _UNSEARCHABLE, "resource": "Search", "field": "q",
                                           "code": "invalid"})
    if not repos:
        repos = [r for r in call.state.repos.values() if call.role(r) is not None
                 and (not query.owners or r.owner.key in query.owners)]
    found = [i for r in repos for i in r.issues.values() if query.matches(i)]
    sort = call.query.get("sort", "")
    order = call.q_enum("order", ("asc", "desc"), "desc")
    found.sort(key=_SORTS.get(sort, _SORTS["updated"]), reverse=order == "desc")
    items = raw_list(_item(call, i) for i in call.page(found))
    body: dict[str, Any] = {"total_count": len(found), "incomplete_results": False, "items": items,
                            "search_type": "lexical"}
    if call.query.get("search_type") in ("semantic", "hybrid"):
        body["lexical_fallback_reason"] = ["service_unavailable"]  # only lexical search is replicated
    return body
