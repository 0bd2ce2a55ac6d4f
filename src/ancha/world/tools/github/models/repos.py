"""Repositories: settings, collaborators and the indexes of what lives in them.

File content lives in real git (``Repo.git``, filled by ``git_store.build_repo_git``);
this model holds the API-side state. Issues and pull requests share one number space:
``Repo.issues`` holds every number (a pull request's conversation is an ``Issue`` with
``pull`` set) and ``Repo.pulls`` the pull-request side of those numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models.users import Account, role_rank
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models.checks import CheckRun, CommitStatus
    from ancha.world.tools.github.models.deployments import Deployment
    from ancha.world.tools.github.models.issues import Issue, IssueEvent, Label, Milestone
    from ancha.world.tools.github.models.pulls import Pull
    from ancha.world.tools.github.models.releases import Release

_URL_TEMPLATES = (
    ("archive_url", "/{archive_format}{/ref}"), ("assignees_url", "/assignees{/user}"),
    ("blobs_url", "/git/blobs{/sha}"), ("branches_url", "/branches{/branch}"),
    ("collaborators_url", "/collaborators{/collaborator}"), ("comments_url", "/comments{/number}"),
    ("commits_url", "/commits{/sha}"), ("compare_url", "/compare/{base}...{head}"),
    ("contents_url", "/contents/{+path}"), ("contributors_url", "/contributors"),
    ("deployments_url", "/deployments"), ("downloads_url", "/downloads"), ("events_url", "/events"),
    ("forks_url", "/forks"), ("git_commits_url", "/git/commits{/sha}"), ("git_refs_url", "/git/refs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"), ("hooks_url", "/hooks"),
    ("issue_comment_url", "/issues/comments{/number}"), ("issue_events_url", "/issues/events{/number}"),
    ("issues_url", "/issues{/number}"), ("keys_url", "/keys{/key_id}"), ("labels_url", "/labels{/name}"),
    ("languages_url", "/languages"), ("merges_url", "/merges"), ("milestones_url", "/milestones{/number}"),
    ("notifications_url", "/notifications{?since,all,participating}"), ("pulls_url", "/pulls{/number}"),
    ("releases_url", "/releases{/id}"), ("stargazers_url", "/stargazers"), ("statuses_url", "/statuses/{sha}"),
    ("subscribers_url", "/subscribers"), ("subscription_url", "/subscription"), ("tags_url", "/tags"),
    ("teams_url", "/teams"), ("trees_url", "/git/trees{/sha}"),
)


class Repo:
    """One repository. ``full_name`` is ``owner/name`` as created; lookups are case-insensitive."""

    def __init__(self, owner: Account, name: str, id: int, *, private: bool = False,
                 description: str | None = None, default_branch: str = "main", created_at: float = 0.0,
                 ref: str | None = None) -> None:
        self.owner = owner
        self.name = name
        self.id = id
        self.node_id = node_id("Repository", id)
        self.private = private
        self.description = description
        self.homepage: str | None = None
        self.default_branch = default_branch
        self.ref = ref
        self.created_at = created_at
        self.updated_at = created_at
        self.pushed_at = created_at
        self.archived = False
        self.has_issues = True
        self.has_projects = True
        self.has_wiki = True
        self.has_discussions = False
        self.is_template = False
        self.topics: list[str] = []
        self.allow_squash_merge = True
        self.allow_merge_commit = True
        self.allow_rebase_merge = True
        self.allow_auto_merge = False
        self.delete_branch_on_merge = False
        self.collaborators: dict[str, str] = {}
        """Login key -> role (read, triage, write, maintain, admin): direct collaborators."""
        self.labels: dict[str, Label] = {}
        """Lower-case name -> label, in creation order."""
        self.milestones: dict[int, Milestone] = {}
        self.issues: dict[int, Issue] = {}
        """Number -> issue; pull requests too (their ``Issue.pull`` is set)."""
        self.pulls: dict[int, Pull] = {}
        self.events: list[IssueEvent] = []
        """Issue events of every issue, oldest first."""
        self.next_number = 1
        self.next_milestone = 1
        self.git: Any = None
        """The repository's git store (``git_store.RepoGit``), or None before it is built."""
        self.protected_branches: dict[str, Any] = {}
        """Branch name -> protection settings (the seed's ``ProtectionFile`` or a dict)."""
        self.production: str | None = None
        """What runs in production (a branch, commit ref or SHA), as seeded or last deployed."""
        self.deployments: dict[int, Deployment] = {}
        self.statuses: dict[str, list[CommitStatus]] = {}
        """Commit sha -> its statuses, oldest first."""
        self.check_runs: dict[int, CheckRun] = {}
        self.releases: dict[int, Release] = {}
        self.extra: dict[str, Any] = {}
        """Room for other families' state."""

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def key(self) -> str:
        return self.full_name.lower()

    @property
    def visibility(self) -> str:
        return "private" if self.private else "public"

    def new_number(self) -> int:
        """The next issue/pull number (they share one sequence)."""
        number = self.next_number
        self.next_number += 1
        return number

    def association(self, account: Account) -> str:
        """``author_association`` of ``account`` here: OWNER, MEMBER, COLLABORATOR or NONE."""
        if account.key == self.owner.key:
            return "OWNER"
        members = getattr(self.owner, "members", None)
        if members is not None and account.key in members:
            return "MEMBER"
        if account.key in self.collaborators:
            return "COLLABORATOR"
        return "NONE"

    def open_issues_count(self) -> int:
        return sum(1 for issue in self.issues.values() if issue.state == "open")

    def to_dict(self, base: str, *, role: str | None = None, full: bool = False) -> JSONDict:
        """``repository``/``minimal-repository`` (lists), or ``full-repository`` with ``full``.
        ``role`` is the caller's; it fills ``permissions`` as GitHub does for the authenticated."""
        u = f"{base}/repos/{self.full_name}"
        html = f"{web_url(base)}/{self.full_name}"
        open_count = self.open_issues_count()
        stars = len(self.extra.get("stargazers", ()))  # models.social; GitHub's watchers count is the stars
        body: JSONDict = {
            "id": self.id, "node_id": self.node_id, "name": self.name, "full_name": self.full_name,
            "private": self.private, "owner": self.owner.simple(base), "html_url": html,
            "description": self.description, "fork": False, "url": u,
        }
        for key, suffix in _URL_TEMPLATES:
            body[key] = u + suffix
        body.update({
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "pushed_at": iso(self.pushed_at), "git_url": f"git://github.com/{self.full_name}.git",
            "ssh_url": f"git@github.com:{self.full_name}.git", "clone_url": f"{html}.git",
            "svn_url": html, "homepage": self.homepage, "size": 0, "stargazers_count": stars,
            "watchers_count": stars, "language": None, "has_issues": self.has_issues,
            "has_projects": self.has_projects, "has_downloads": True, "has_wiki": self.has_wiki,
            "has_pages": False, "has_discussions": self.has_discussions, "forks_count": 0, "mirror_url": None,
            "archived": self.archived, "disabled": False, "open_issues_count": open_count, "license": None,
            "allow_forking": True, "is_template": self.is_template, "web_commit_signoff_required": False,
            "topics": list(self.topics), "visibility": self.visibility, "forks": 0,
            "open_issues": open_count, "watchers": stars, "default_branch": self.default_branch,
        })
        if role is not None:
            rank = role_rank(role)
            body["permissions"] = {"admin": rank >= 5, "maintain": rank >= 4, "push": rank >= 3,
                                   "triage": rank >= 2, "pull": rank >= 1}
        if full:
            body.update({
                "allow_squash_merge": self.allow_squash_merge, "allow_merge_commit": self.allow_merge_commit,
                "allow_rebase_merge": self.allow_rebase_merge, "allow_auto_merge": self.allow_auto_merge,
                "delete_branch_on_merge": self.delete_branch_on_merge, "allow_update_branch": False,
                "use_squash_pr_title_as_default": False, "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
                "squash_merge_commit_message": "COMMIT_MESSAGES", "merge_commit_title": "MERGE_MESSAGE",
                "merge_commit_message": "PR_TITLE", "network_count": 0,
                "subscribers_count": sum(1 for s in self.extra.get("subscribers", {}).values()
                                         if s.subscribed and not s.ignored),
            })
            if role is not None and role_rank(role) >= 3:
                body["temp_clone_token"] = ""  # GitHub's answer to those who may push (absent for others)
            if self.owner.type == "Organization":
                body["organization"] = self.owner.simple(base)
        return body
