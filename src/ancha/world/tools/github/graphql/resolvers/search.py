"""``Query.search(type: ISSUE)``: the REST API's issue search (``routes/search.py``) as a connection.

The query string is parsed by the REST core's ``IssueQuery``, so both APIs take the
same qualifiers (``repo:``, ``is:issue|pr``, ``is:open|closed``, ``label:``, ``author:``,
``assignee:``, ``in:title|body``, free words, ...). GraphQL carries the order inside
the query (``sort:created-asc``); without one, results are most recently updated first,
as the REST search's default. A repository the viewer cannot see is left out, not refused.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.context import conversation, ctx
from ancha.world.tools.github.graphql.errors import InvalidArgument, NotImplementedHere
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.graphql.rest import call_for
from ancha.world.tools.github.models import Issue
from ancha.world.tools.github.routes.search import MAX_QUERY, IssueQuery

MAX_RESULTS = 1000
_SORTS = {"created": lambda i: (i.created_at, i.id), "updated": lambda i: (i.updated_at, i.id),
          "comments": lambda i: (len(i.comments), i.id)}


def _split_sort(text: str) -> tuple[str, str, bool]:
    """The query without ``sort:`` words, the sort field, and whether it is descending."""
    kept, field, descending = [], "updated", True
    for word in text.split():
        if word.lower().startswith("sort:"):
            name, _, direction = word[5:].lower().partition("-")
            field, descending = (name if name in _SORTS else "updated"), direction != "asc"
        else:
            kept.append(word)
    return " ".join(kept), field, descending


@resolver("Query.search", args=("first", "after", "last", "before", "query", "type"))
def search(_: Any, info: GraphQLResolveInfo, query: str, type: str, **args: Any) -> Page:
    if type != "ISSUE":
        raise NotImplementedHere(f"Search type '{type}' is not implemented by this replica")
    if len(query) > MAX_QUERY:  # the REST search's bound: the same parser reads it
        raise InvalidArgument(f"The search is longer than {MAX_QUERY} characters.")
    context = ctx(info)
    text, field, descending = _split_sort(query)
    call, _handler = call_for(context, "GET", "/search/issues", query="")
    parsed = IssueQuery(call, text)
    repos = [r for r in context.state.repos.values() if context.can_see(r)
             and (not parsed.repos or r.key in parsed.repos)
             and (not parsed.owners or r.owner.key in parsed.owners)]
    found: list[Issue] = [i for r in repos for i in r.issues.values() if parsed.matches(i)]
    found.sort(key=_SORTS[field], reverse=descending)
    nodes = [conversation(issue) for issue in found[:MAX_RESULTS]]
    return paginate(nodes, "search", extra={"issueCount": len(nodes)}, **pagination_args(args))


def _count(kind: str) -> Any:
    def count(page: Page) -> int:
        return int((page.extra or {}).get(kind, 0))
    return count


plain("SearchResultItemConnection", issueCount=_count("issueCount"), repositoryCount=_count("repositoryCount"),
      userCount=_count("userCount"), discussionCount=_count("discussionCount"), codeCount=_count("codeCount"),
      wikiCount=_count("wikiCount"))
