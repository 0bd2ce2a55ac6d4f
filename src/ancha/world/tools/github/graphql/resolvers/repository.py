"""``Query.repository`` and the repository's own fields; ``Query.node``/``nodes``.

Visibility is the REST core's: a private repository the viewer has no role on does
not exist for them (``NOT_FOUND``), through every path that could reach it.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.context import Context, conversation, ctx
from ancha.world.tools.github.graphql.errors import not_found_node
from ancha.world.tools.github.graphql.ids import decode_node_id
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.models import Repo, iso, role_rank
from ancha.world.tools.github.models.wire import web_base

PAGE = ("first", "after", "last", "before")


@resolver("Query.repository", args=("owner", "name", "followRenames"))
def repository(_: Any, info: GraphQLResolveInfo, owner: str, name: str, followRenames: bool = True) -> Repo:  # noqa: N803
    return ctx(info).repo(owner, name)


plain("Repository",
      id="node_id", databaseId="id", name="name", nameWithOwner="full_name", owner="owner",
      description="description", isPrivate="private", visibility=lambda r: r.visibility.upper(),
      url=lambda r: f"{web_base()}/{r.full_name}", resourcePath=lambda r: f"/{r.full_name}",
      homepageUrl="homepage", createdAt=lambda r: iso(r.created_at), updatedAt=lambda r: iso(r.updated_at),
      pushedAt=lambda r: iso(r.pushed_at), isArchived="archived", isFork=lambda r: False,
      isTemplate="is_template", isEmpty=lambda r: r.git is None or not r.git.branches(),
      isInOrganization=lambda r: r.owner.kind == "Organization", hasIssuesEnabled="has_issues",
      hasWikiEnabled="has_wiki", hasProjectsEnabled="has_projects", hasDiscussionsEnabled="has_discussions",
      mergeCommitAllowed="allow_merge_commit", squashMergeAllowed="allow_squash_merge",
      rebaseMergeAllowed="allow_rebase_merge", autoMergeAllowed="allow_auto_merge",
      deleteBranchOnMerge="delete_branch_on_merge", sshUrl=lambda r: f"git@github.com:{r.full_name}.git")

_PERMISSIONS = {1: "READ", 2: "TRIAGE", 3: "WRITE", 4: "MAINTAIN", 5: "ADMIN"}


@resolver("Repository.viewerPermission")
def viewer_permission(repo: Repo, info: GraphQLResolveInfo) -> str | None:
    return _PERMISSIONS.get(role_rank(ctx(info).role(repo)))


@resolver("Repository.viewerCanAdminister")
def viewer_can_administer(repo: Repo, info: GraphQLResolveInfo) -> bool:
    return role_rank(ctx(info).role(repo)) >= 5


@resolver("Repository.assignableUsers", args=(*PAGE, "query"))
def assignable_users(repo: Repo, info: GraphQLResolveInfo, query: str | None = None, **args: Any) -> Page:
    state = ctx(info).state
    found = [u for u in state.users.values() if role_rank(state.role(repo, u)) >= 2
             and (repo.private or u.key in repo.collaborators or u.key == repo.owner.key
                  or u.key in getattr(repo.owner, "members", {}))]
    if query:
        needle = query.lower()
        found = [u for u in found if needle in u.login.lower() or needle in (u.name or "").lower()]
    return paginate(found, "assignableUsers", **pagination_args(args))


# --- nodes ------------------------------------------------------------------------------------

@resolver("Query.node", args=("id",))
def node(_: Any, info: GraphQLResolveInfo, id: str) -> Any:
    found = find_node(ctx(info), id)
    if found is None:
        raise not_found_node(id)
    return found


@resolver("Query.nodes", args=("ids",))
def nodes(_: Any, info: GraphQLResolveInfo, ids: list[str]) -> list[Any]:
    context = ctx(info)
    found = [find_node(context, one) for one in ids]
    missing = [one for one, value in zip(ids, found, strict=True) if value is None]
    if missing:
        raise not_found_node(missing[0])
    return found


def find_node(context: Context, global_id: str) -> Any:
    """The object a global id names, if the viewer may see it; None otherwise."""
    decoded = decode_node_id(global_id)
    if decoded is None:
        return None
    kind, number, rest = decoded
    state = context.state
    found: Any = None
    if kind in ("User", "Bot", "Organization"):
        accounts = [*state.users.values(), *state.orgs.values()]
        found = next((a for a in accounts if a.id == number and a.kind == kind and a.node_id == global_id), None)
        return found
    if kind == "Team":
        teams = [t for org in state.orgs.values() for t in org.teams.values()]
        return next((t for t in teams if t.node_id == global_id), None)
    if kind in ("Ref", "Commit", "Tree", "Blob"):
        return _git_node(context, kind, number, rest)
    for repo in state.repos.values():
        found = _in_repo(repo, kind, number, global_id)
        if found is not None:
            return found if context.can_see(repo) else None
    return None


def _in_repo(repo: Repo, kind: str, number: int, global_id: str) -> Any:
    if kind == "Repository":
        return repo if repo.node_id == global_id else None
    if kind == "Issue":
        return next((conversation(i) for i in repo.issues.values() if i.node_id == global_id), None)
    if kind == "PullRequest":
        return next((p for p in repo.pulls.values() if p.node_id == global_id), None)
    if kind == "IssueComment":
        return next((c for i in repo.issues.values() for c in i.comments if c.node_id == global_id), None)
    if kind == "PullRequestReview":
        return next((r for p in repo.pulls.values() for r in p.reviews if r.node_id == global_id), None)
    if kind == "Label":
        return next((label for label in repo.labels.values() if label.node_id == global_id), None)
    if kind == "Milestone":
        return next((m for m in repo.milestones.values() if m.node_id == global_id), None)
    return None


def _git_node(context: Context, kind: str, repo_id: int, rest: str | None) -> Any:
    from ancha.world.tools.github.graphql.resolvers.git import GitRef, git_object

    repo = context.state.repos_by_id.get(repo_id)
    if repo is None or rest is None or repo.git is None or not context.can_see(repo):
        return None
    if kind == "Ref":
        sha = repo.git.ref_sha(rest)
        return GitRef(repo, rest, sha) if sha is not None else None
    found = git_object(repo, rest)
    return found if found is not None and found.graphql_type == kind else None
