"""``Query.search(type: ISSUE)``: GitHub's issue search qualifiers over issues and pulls.

Qualifiers: ``repo:``, ``org:``/``user:``, ``is:issue|pr``, ``type:``, ``is:open|closed|merged|
unmerged|draft``, ``state:``, ``label:`` (``-label:`` excludes), ``no:label|assignee|milestone``,
``author:``, ``assignee:``, ``mentions:``, ``involves:``, ``milestone:``, ``in:title|body|comments``,
``sort:created|updated|comments[-asc|-desc]``, and free text (quoted phrases kept whole).
Results are the viewer's visible repositories only, newest first unless sorted.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.context import conversation, ctx
from ancha.world.tools.github.graphql.errors import NotImplementedHere
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.models import Issue
from graphql import GraphQLResolveInfo

MAX_RESULTS = 1000


@dataclass(slots=True)
class IssueQuery:
    terms: list[str] = field(default_factory=list)
    include: dict[str, list[str]] = field(default_factory=dict)
    exclude: dict[str, list[str]] = field(default_factory=dict)
    sort: str = ""

    @classmethod
    def parse(cls, text: str) -> IssueQuery:
        try:
            words = shlex.split(text)
        except ValueError:  # an unbalanced quote: GitHub searches the words as typed
            words = text.split()
        query = cls()
        for word in words:
            negated = word.startswith("-") and ":" in word
            key, sep, value = word.removeprefix("-").partition(":") if negated else word.partition(":")
            if sep and value and key.isalpha():
                key = key.lower()
                if key == "sort":
                    query.sort = value.lower()
                else:
                    target = query.exclude if negated else query.include
                    target.setdefault(key, []).append(value)
            else:
                query.terms.append(word.lower())
        return query

    def matches(self, issue: Issue) -> bool:
        return all(_qualifier(issue, key, value) for key, values in self.include.items() for value in values) \
            and not any(_qualifier(issue, key, value) for key, values in self.exclude.items() for value in values) \
            and self._text(issue)

    def _text(self, issue: Issue) -> bool:
        if not self.terms:
            return True
        where = {w.lower() for w in self.include.get("in", [])} or {"title", "body"}
        haystack = []
        if "title" in where:
            haystack.append(issue.title)
        if "body" in where:
            haystack.append(issue.body or "")
        if "comments" in where:
            haystack.extend(c.body for c in issue.comments)
        text = "\n".join(haystack).lower()
        return all(term in text for term in self.terms)


def _qualifier(issue: Issue, key: str, value: str) -> bool:
    v = value.lower()
    pull = issue.pull
    if key == "repo":
        return issue.repo.key == v
    if key in ("org", "user", "owner"):
        return issue.repo.owner.key == v
    if key in ("is", "type", "state"):
        return _is(issue, v)
    if key == "label":
        names = {n.lower() for n in v.split(",")}
        return any(label.name.lower() in names for label in issue.labels)
    if key == "no":
        return {"label": not issue.labels, "assignee": not issue.assignees,
                "milestone": issue.milestone is None}.get(v, True)
    if key == "author":
        return issue.user.key == v.removeprefix("@")
    if key == "assignee":
        return any(a.key == v.removeprefix("@") for a in issue.assignees)
    if key == "mentions":
        return issue.mentions(v.removeprefix("@"))
    if key == "involves":
        login = v.removeprefix("@")
        return (issue.user.key == login or any(a.key == login for a in issue.assignees) or issue.mentions(login)
                or any(c.user.key == login for c in issue.comments))
    if key == "milestone":
        return issue.milestone is not None and issue.milestone.title.lower() == v
    if key == "in":
        return True  # scopes the free text (see IssueQuery._text)
    if key in ("head", "base"):
        return pull is not None and (pull.head if key == "head" else pull.base).lower() == v
    if key == "draft":
        return pull is not None and pull.draft == (v == "true")
    if key == "archived":
        return issue.repo.archived == (v == "true")
    raise NotImplementedHere(f"Search qualifier '{key}:' is not implemented by this replica")


def _is(issue: Issue, value: str) -> bool:
    pull = issue.pull
    checks = {
        "issue": pull is None, "pr": pull is not None, "pull-request": pull is not None,
        "open": issue.state == "open", "closed": issue.state == "closed",
        "merged": pull is not None and pull.merged, "unmerged": pull is not None and not pull.merged,
        "draft": pull is not None and pull.draft, "locked": issue.locked, "unlocked": not issue.locked,
        "public": not issue.repo.private, "private": issue.repo.private,
    }
    if value not in checks:
        raise NotImplementedHere(f"Search qualifier 'is:{value}' is not implemented by this replica")
    return checks[value]


def _sorted(issues: list[Issue], sort: str) -> list[Issue]:
    field_name, _, direction = sort.partition("-")
    keys = {"created": lambda i: (i.created_at, i.id), "updated": lambda i: (i.updated_at, i.id),
            "comments": lambda i: (len(i.comments), i.id)}
    key = keys.get(field_name, keys["created"])
    return sorted(issues, key=key, reverse=direction != "asc")


@resolver("Query.search", args=("first", "after", "last", "before", "query", "type"))
def search(_: Any, info: GraphQLResolveInfo, query: str, type: str, **args: Any) -> Page:
    if type != "ISSUE":
        raise NotImplementedHere(f"Search type '{type}' is not implemented by this replica")
    context = ctx(info)
    parsed = IssueQuery.parse(query)
    found = [issue for repo in context.state.repos.values() if context.can_see(repo)
             for issue in repo.issues.values() if parsed.matches(issue)]
    found = _sorted(found, parsed.sort)[:MAX_RESULTS]
    nodes = [conversation(issue) for issue in found]
    return paginate(nodes, "search", extra={"issueCount": len(nodes)}, **pagination_args(args))


def _count(kind: str) -> Any:
    def count(page: Page) -> int:
        return (page.extra or {}).get(kind, 0)
    return count


plain("SearchResultItemConnection", issueCount=_count("issueCount"), repositoryCount=_count("repositoryCount"),
      userCount=_count("userCount"), discussionCount=_count("discussionCount"), codeCount=_count("codeCount"),
      wikiCount=_count("wikiCount"))
plain("SearchResultItemEdge", textMatches=lambda edge: [])
