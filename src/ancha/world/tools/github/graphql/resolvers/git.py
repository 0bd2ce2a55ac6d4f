"""Git objects over the repository's real git store: ``Ref``, ``Commit``, ``Tree``, ``Blob``.

``Repository.object(expression: "main:docs/README.md")`` takes GitHub's expression
syntax (``REV``, ``REV:PATH``, ``:PATH`` from the default branch, a sha) or ``oid``.
Objects that do not exist answer ``null`` without an error, as GitHub does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dulwich.objects import Blob, Commit, ShaFile, Tag, Tree
from graphql import GraphQLResolveInfo

from ancha.world.tools.github.git_objects import CommitInfo, Signature, commit_info
from ancha.world.tools.github.git_trees import SUBMODULE_MODE, Entry
from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.context import ctx
from ancha.world.tools.github.graphql.ids import string_node_id
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.graphql.resolvers.filters import parse_time, pull_state
from ancha.world.tools.github.models import Pull, Repo
from ancha.world.tools.github.models.wire import web_base

PAGE = ("first", "after", "last", "before")


@dataclass(frozen=True, slots=True)
class GitRef:
    graphql_type: ClassVar[str] = "Ref"
    repo: Repo
    qualified: str
    """``refs/heads/main``."""
    sha: str

    @property
    def prefix(self) -> str:
        """``refs/heads/`` of ``refs/heads/feature/x`` (its name is ``feature/x``)."""
        parts = self.qualified.split("/")
        return "/".join(parts[:2]) + "/" if len(parts) > 2 else "refs/"

    @property
    def name(self) -> str:
        return self.qualified[len(self.prefix):]


@dataclass(frozen=True, slots=True)
class GitObject:
    """A commit, tree or blob of one repository; ``graphql_type`` says which."""

    repo: Repo
    obj: ShaFile
    path: str = ""

    @property
    def graphql_type(self) -> str:
        return {"commit": "Commit", "tree": "Tree", "blob": "Blob", "tag": "Tag"}[self.obj.type_name.decode()]

    @property
    def oid(self) -> str:
        return self.obj.id.decode()

    @property
    def info(self) -> CommitInfo:
        assert isinstance(self.obj, Commit)
        return commit_info(self.obj)


@dataclass(frozen=True, slots=True)
class TreeEntry:
    repo: Repo
    name: str
    path: str
    entry: Entry


@dataclass(frozen=True, slots=True)
class GitActor:
    repo: Repo
    signature: Signature


def git_object(repo: Repo, sha: str | None, path: str = "") -> GitObject | None:
    if sha is None or repo.git is None:
        return None
    obj = repo.git.object(sha)
    while isinstance(obj, Tag):
        obj = repo.git.object(obj.object[1].decode())
    return GitObject(repo, obj, path) if isinstance(obj, Commit | Tree | Blob) else None


def default_branch_ref(repo: Repo) -> GitRef | None:
    if repo.git is None:
        return None
    qualified = "refs/heads/" + repo.git.default_branch
    sha = repo.git.ref_sha(qualified)
    return GitRef(repo, qualified, sha) if sha is not None else None


# --- Repository fields ------------------------------------------------------------------

resolver("Repository.defaultBranchRef")(lambda repo, info: default_branch_ref(repo))


@resolver("Repository.ref", args=("qualifiedName",))
def ref(repo: Repo, info: GraphQLResolveInfo, qualifiedName: str) -> GitRef | None:  # noqa: N803
    if repo.git is None:
        return None
    candidates = [qualifiedName] if qualifiedName.startswith("refs/") else [
        "refs/heads/" + qualifiedName, "refs/tags/" + qualifiedName]
    for qualified in candidates:
        sha = repo.git.ref_sha(qualified)
        if sha is not None:
            return GitRef(repo, qualified, sha)
    return None


@resolver("Repository.refs", args=(*PAGE, "refPrefix", "query", "direction", "orderBy"))
def refs(repo: Repo, info: GraphQLResolveInfo, refPrefix: str, query: str | None = None,  # noqa: N803
         direction: str | None = None, orderBy: dict[str, Any] | None = None, **args: Any) -> Page:  # noqa: N803
    found = [GitRef(repo, name, sha) for name, sha in (repo.git.refs(refPrefix) if repo.git else [])]
    if query:
        found = [r for r in found if query.lower() in r.qualified[len(refPrefix):].lower()]
    order = (orderBy or {}).get("direction") or direction
    if (orderBy or {}).get("field") == "TAG_COMMIT_DATE":
        found.sort(key=lambda r: _commit_time(r))
    if order == "DESC":
        found.reverse()
    return paginate(found, "refs", **pagination_args(args))


@resolver("Repository.object", args=("expression", "oid"))
def object_(repo: Repo, info: GraphQLResolveInfo, expression: str | None = None,
            oid: str | None = None) -> GitObject | None:
    git = repo.git
    if git is None:
        return None
    if oid is not None:
        return git_object(repo, oid) if len(oid) == 40 else None
    if expression is None:
        return None
    rev, sep, path = expression.partition(":")
    if not sep:
        obj = git_object(repo, rev) if len(rev) == 40 else None
        return obj or git_object(repo, git.resolve(rev))
    commit = git.resolve(rev or "HEAD")
    if commit is None:
        return None
    if not path.strip("/"):
        root = git_object(repo, commit)
        return git_object(repo, root.info.tree) if root is not None else None
    entry = git.entry(commit, path)
    if entry is None:
        return None
    return git_object(repo, entry.sha.decode(), path.strip("/"))


def _commit_time(ref: GitRef) -> int:
    obj = git_object(ref.repo, ref.sha)
    return obj.info.committer.time if obj is not None and isinstance(obj.obj, Commit) else 0


# --- Ref ------------------------------------------------------------------------------------

plain("Ref", name="name", prefix="prefix",
      id=lambda r: string_node_id("Ref", r.repo.id, r.qualified),
      target=lambda r: git_object(r.repo, r.sha), repository="repo")


@resolver("Ref.associatedPullRequests", args=(*PAGE, "states", "baseRefName", "headRefName"))
def associated_pulls(ref: GitRef, info: GraphQLResolveInfo, states: list[str] | None = None,
                     baseRefName: str | None = None, headRefName: str | None = None,  # noqa: N803
                     **args: Any) -> Page:
    pulls: list[Pull] = [p for p in ref.repo.pulls.values() if p.head == ref.name
                         and (not states or pull_state(p) in states)
                         and (baseRefName is None or p.base == baseRefName)
                         and (headRefName is None or p.head == headRefName)]
    return paginate(pulls, "associatedPullRequests", **pagination_args(args))


# --- objects ----------------------------------------------------------------------------------

def _url(kind: str) -> Any:
    def url(o: GitObject) -> str:
        return f"{web_base()}/{o.repo.full_name}/{kind}/{o.oid}"
    return url


for _kind in ("Commit", "Tree", "Blob"):
    plain(_kind, oid="oid", abbreviatedOid=lambda o: o.oid[:7], repository="repo",
          id=lambda o: string_node_id(o.graphql_type, o.repo.id, o.oid))
plain("Commit", message=lambda o: o.info.message, messageHeadline=lambda o: o.info.message.split("\n", 1)[0],
      messageBody=lambda o: o.info.message.partition("\n")[2].strip("\n"),
      author=lambda o: GitActor(o.repo, o.info.author), committer=lambda o: GitActor(o.repo, o.info.committer),
      authoredDate=lambda o: o.info.author.iso, committedDate=lambda o: o.info.committer.iso,
      url=_url("commit"), commitUrl=_url("commit"), resourcePath=lambda o: f"/{o.repo.full_name}/commit/{o.oid}",
      tree=lambda o: git_object(o.repo, o.info.tree))
plain("Tree", commitUrl=_url("tree"))
plain("Blob", byteSize=lambda o: len(o.obj.data), isBinary=lambda o: _binary(o.obj.data),
      isTruncated=lambda o: False, text=lambda o: None if _binary(o.obj.data) else o.obj.data.decode("utf-8", "replace"),
      commitUrl=_url("blob"))
plain("GitActor", name=lambda a: a.signature.name, email=lambda a: a.signature.email,
      date=lambda a: a.signature.iso)


@resolver("GitActor.user")
def actor_user(actor: GitActor, info: GraphQLResolveInfo) -> Any:
    state = ctx(info).state
    email = actor.signature.email.lower()
    for user in state.users.values():
        if user.email and user.email.lower() == email:
            return user
    return state.user(actor.signature.name)


@resolver("Commit.parents", args=PAGE)
def parents(commit: GitObject, info: GraphQLResolveInfo, **args: Any) -> Page:
    found = [git_object(commit.repo, sha) for sha in commit.info.parents]
    return paginate([p for p in found if p is not None], "parents", **pagination_args(args))


@resolver("Commit.history", args=(*PAGE, "path", "since", "until"))
def history(commit: GitObject, info: GraphQLResolveInfo, path: str | None = None, since: str | None = None,
            until: str | None = None, **args: Any) -> Page:
    git = commit.repo.git
    log = git.log(commit.oid, path=path, since=parse_time(since), until=parse_time(until))
    found = [git_object(commit.repo, info_.sha) for info_ in log]
    return paginate([c for c in found if c is not None], "history", **pagination_args(args))


@resolver("Commit.file", args=("path",))
def file(commit: GitObject, info: GraphQLResolveInfo, path: str) -> TreeEntry | None:
    entry = commit.repo.git.entry(commit.oid, path)
    if entry is None:
        return None
    clean = path.strip("/")
    return TreeEntry(commit.repo, clean.rpartition("/")[2], clean, entry)


@resolver("Tree.entries")
def entries(tree: GitObject, info: GraphQLResolveInfo) -> list[TreeEntry]:
    assert isinstance(tree.obj, Tree)
    prefix = tree.path + "/" if tree.path else ""
    return [TreeEntry(tree.repo, item.path.decode("utf-8", "replace"),
                      prefix + item.path.decode("utf-8", "replace"), Entry(item.mode, item.sha))
            for item in tree.obj.iteritems()]


plain("TreeEntry", name="name", path="path", mode=lambda e: e.entry.mode, type=lambda e: e.entry.kind,
      oid=lambda e: e.entry.sha.decode(), repository="repo",
      extension=lambda e: ("." + e.name.rpartition(".")[2]) if "." in e.name.lstrip(".") else None,
      isGenerated=lambda e: False)


@resolver("TreeEntry.object")
def entry_object(entry: TreeEntry, info: GraphQLResolveInfo) -> GitObject | None:
    if entry.entry.mode == SUBMODULE_MODE:
        return None
    return git_object(entry.repo, entry.entry.sha.decode(), entry.path)


@resolver("TreeEntry.size")
def entry_size(entry: TreeEntry, info: GraphQLResolveInfo) -> int:
    obj = entry.repo.git.object(entry.entry.sha.decode()) if entry.entry.kind == "blob" else None
    return len(obj.data) if isinstance(obj, Blob) else 0


for _connection in ("CommitHistoryConnection", "CommitConnection"):
    plain(_connection, nodes="nodes", edges="edges", pageInfo="page_info", totalCount=lambda p: len(p.items))
plain("CommitEdge", cursor="cursor", node="node")


def _binary(data: bytes) -> bool:
    return b"\0" in data[:8000]
