"""Build one trial's GitHub world from ``world.github``: accounts, repos, history.

Ids come from the trial's RNG (``world.random_hex``) and per-kind counters, so the same
scene and trial give the same world. Seeded items without a time are spaced before
``clock.start``: repositories a year before, issues and pulls an hour apart in seed
order ending an hour before the start, their comments evenly between their opening
and the start. Seeding publishes no domain events.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models import (
    Account,
    GitHubState,
    Ids,
    Issue,
    IssueComment,
    Label,
    Milestone,
    Org,
    Pull,
    Repo,
    Review,
    ReviewComment,
    Team,
    User,
)
from ancha.world.tools.github.scene_file import GitHubFile, IssueFile, LabelFile, PullFile, RepoFile

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

DAY = 86400.0
HOUR = 3600.0
DEFAULT_LABELS = (
    ("bug", "d73a4a", "Something isn't working"), ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"), ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"), ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"), ("wontfix", "ffffff", "This will not be worked on"),
)


def _ts(at: datetime | None) -> float | None:
    if at is None:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()


class Seeder:
    """Turns a ``GitHubFile`` into a ``GitHubState`` and registers its refs."""

    def __init__(self, world: WorldPort, seed: GitHubFile) -> None:
        self.world = world
        self.seed = seed
        self.start = world.clock.start
        self.state = GitHubState(Ids(world.random_hex(6)))
        self.refs: dict[str, str] = {}
        """User ref -> login."""

    # --- accounts -------------------------------------------------------------------------

    def account(self, name: str | None, *, fallback: Account | None = None) -> Account:
        """A seeded user by ref or login (org logins too); an unknown login becomes a user."""
        if not name:
            if fallback is None:
                raise ValueError("github: a user is required here")
            return fallback
        name = name.removeprefix("$").split(".")[-1] if name.startswith("$") else name
        login = self.refs.get(name, name)
        found = self.state.account(login)
        if found is not None:
            return found
        return self.state.add_user(User(login, self.state.ids.next("user"), created_at=self.start - 400 * DAY))

    def user(self, name: str | None, *, fallback: Account | None = None) -> User:
        account = self.account(name, fallback=fallback)
        if not isinstance(account, User):
            raise ValueError(f"github: {name!r} is an organization, not a user")
        return account

    def build(self) -> tuple[GitHubState, User]:
        seed, state, ids = self.seed, self.state, self.state.ids
        agent = state.add_user(User(seed.agent.login, ids.next("user"), name=seed.agent.name,
                                    email=seed.agent.email, ref=seed.agent.ref, created_at=self.start - 200 * DAY))
        self.refs[seed.agent.ref] = agent.login
        self.world.register_ref(seed.agent.ref, "user", "github", agent.login)
        for seeded in seed.users:
            user = state.add_user(User(seeded.login, ids.next("user"), name=seeded.name, email=seeded.email,
                                       type=seeded.type, ref=seeded.ref, person=seeded.person,
                                       created_at=self.start - 400 * DAY))
            if seeded.ref:
                self.refs[seeded.ref] = user.login
            self.world.register_ref(seeded.ref, "user", "github", user.login)
        for seeded_org in seed.orgs:
            org = state.add_org(Org(seeded_org.login, ids.next("org"), name=seeded_org.name,
                                    description=seeded_org.description,
                                    default_permission=seeded_org.default_permission,
                                    created_at=self.start - 800 * DAY))
            for member in seeded_org.members:
                org.members.setdefault(self.user(member).key, "member")
            for admin in seeded_org.admins:
                org.members[self.user(admin).key] = "admin"
        for i, seeded_repo in enumerate(seed.repos):
            self.repo(seeded_repo, self.start - (365 - i) * DAY)
        for seeded_org in seed.orgs:  # teams name repos, so they come last
            org = state.orgs[seeded_org.login.lower()]
            for seeded_team in seeded_org.teams:
                team = Team(org, ids.next("team"), seeded_team.name, seeded_team.slug,
                            description=seeded_team.description, privacy=seeded_team.privacy,
                            permission=seeded_team.permission, created_at=self.start - 300 * DAY)
                org.teams[team.slug] = team
                for member in seeded_team.members:
                    team.members[self.user(member).key] = "member"
                    org.members.setdefault(self.user(member).key, "member")
                for member in seeded_team.maintainers:
                    team.members[self.user(member).key] = "maintainer"
                    org.members.setdefault(self.user(member).key, "member")
                repos = (seeded_team.repos if isinstance(seeded_team.repos, dict)
                         else dict.fromkeys(seeded_team.repos, seeded_team.permission))
                for name, role in repos.items():
                    team.repos[self._repo_key(org, name)] = role
        return state, agent

    def _repo_key(self, org: Org, name: str) -> str:
        record = self.world.refs.get(name)
        if record is not None and record.kind == "repo":
            return record.id.lower()
        return (name if "/" in name else f"{org.login}/{name}").lower()

    # --- repositories -----------------------------------------------------------------------

    def repo(self, seeded: RepoFile, default_created: float) -> Repo:
        state, ids = self.state, self.state.ids
        owner = self.account(seeded.owner)
        created = _ts(seeded.at) or default_created
        repo = state.add_repo(Repo(owner, seeded.repo, ids.next("repo"), private=seeded.private,
                                   description=seeded.description, default_branch=seeded.default_branch,
                                   created_at=created, ref=seeded.ref))
        repo.updated_at = repo.pushed_at = max(created, self.start - DAY)
        self.world.register_ref(seeded.ref, "repo", "github", repo.full_name)
        for who, role in seeded.permissions.items():
            repo.collaborators[self.account(who).key] = role
        for label in seeded.labels or [_default(name, color, text) for name, color, text in DEFAULT_LABELS]:
            repo.labels[label.name.lower()] = Label(repo, ids.next("label"), label.name, label.color,
                                                    label.description, default=not seeded.labels)
        author = self._default_author(repo)
        for seeded_milestone in seeded.milestones:
            number = repo.next_milestone
            repo.next_milestone += 1
            repo.milestones[number] = Milestone(
                repo, ids.next("milestone"), number, seeded_milestone.title, author,
                description=seeded_milestone.description, state=seeded_milestone.state,
                due_on=_ts(seeded_milestone.due_on), created_at=_ts(seeded_milestone.at) or created + DAY)
        repo.protected_branches = {p.branch: p for p in seeded.protected_branches}
        repo.production = seeded.production
        self._git(repo, seeded)
        self._issues(repo, seeded, author)
        return repo

    def _default_author(self, repo: Repo) -> Account:
        if isinstance(repo.owner, Org):
            admins = [k for k, role in repo.owner.members.items() if role == "admin"] or list(repo.owner.members)
            if admins:
                return self.state.users[admins[0]]
            return self.state.users[self.refs[self.seed.agent.ref].lower()]
        return repo.owner

    def _git(self, repo: Repo, seeded: RepoFile) -> None:
        try:
            from ancha.world.tools.github.git_seed import Identity
            from ancha.world.tools.github.git_store import build_repo_git
        except ImportError:  # the git store is optional until it lands
            return
        identities: dict[str, Any] = {}
        for user in self.state.users.values():
            identity = Identity(user.name or user.login, user.email or f"{user.id}+{user.login}@users.noreply.github.com")
            identities[user.login] = identity
            if user.ref:
                identities[user.ref] = identity
        repo.git = build_repo_git(seeded, datetime.fromtimestamp(self.start, UTC), identities)
        for ref, sha in repo.git.commits.items():
            self.world.register_ref(ref, "commit", "github", sha)

    def _issues(self, repo: Repo, seeded: RepoFile, author: Account) -> None:
        items: list[IssueFile | PullFile] = [*seeded.issues, *seeded.pulls]
        taken = {item.number for item in items if item.number is not None}
        numbers: list[int] = []
        free = 1
        for item in items:
            if item.number is not None:
                numbers.append(item.number)
                continue
            while free in taken:
                free += 1
            taken.add(free)
            numbers.append(free)
        repo.next_number = max(taken, default=0) + 1
        undated = [i for i, item in enumerate(items) if item.at is None]
        times = {i: self.start - HOUR * (len(undated) - k) for k, i in enumerate(undated)}
        for i, (item, number) in enumerate(zip(items, numbers, strict=True)):
            at = _ts(item.at) or times[i]
            issue = self._issue(repo, item, number, at, author)
            if isinstance(item, PullFile):
                self._pull(repo, issue, item)
            self.world.register_ref(item.ref, "pull" if isinstance(item, PullFile) else "issue", "github",
                                  f"{repo.full_name}#{number}")

    def _issue(self, repo: Repo, item: IssueFile | PullFile, number: int, at: float, author: Account) -> Issue:
        ids = self.state.ids
        issue = Issue(repo, ids.next("issue"), number, item.title, self.account(item.author, fallback=author), at,
                      body=item.body, ref=item.ref, seeded=True, actor="seed")
        for name in item.labels:
            label = repo.labels.get(name.lower())
            if label is None:
                label = repo.labels[name.lower()] = Label(repo, ids.next("label"), name)
            issue.labels.append(label)
        issue.assignees = [self.account(a) for a in item.assignees]
        if isinstance(item, IssueFile) and item.milestone:
            issue.milestone = next((m for m in repo.milestones.values() if m.title == item.milestone), None)
            if issue.milestone is None:
                raise ValueError(f"github {repo.full_name}#{number}: no milestone titled {item.milestone!r}")
        span = max(self.start - at, 60.0)
        for k, seeded_comment in enumerate(c for c in item.comments if c.path is None):
            when = _ts(seeded_comment.at) or at + span * (k + 1) / (len(item.comments) + 2)
            comment = IssueComment(issue, ids.next("comment"), self.account(seeded_comment.author),
                                   seeded_comment.body, when, seeded=True, actor="seed")
            issue.comments.append(comment)
            self.state.comments[comment.id] = comment
            issue.updated_at = max(issue.updated_at, when)
        if item.state == "closed" or (isinstance(item, PullFile) and item.merged):
            issue.state = "closed"
            closed = _ts(item.closed_at) if isinstance(item, IssueFile) else None
            issue.closed_at = closed or at + span * (len(item.comments) + 1) / (len(item.comments) + 2)
            issue.closed_by = issue.user
            issue.updated_at = max(issue.updated_at, issue.closed_at)
            if isinstance(item, IssueFile):
                issue.state_reason = item.state_reason or "completed"
        if isinstance(item, IssueFile) and item.locked:
            issue.locked = True
        repo.issues[number] = issue
        return issue

    def _pull(self, repo: Repo, issue: Issue, item: PullFile) -> None:
        ids = self.state.ids
        pull = Pull(issue, ids.next("pull"), item.head, item.base or repo.default_branch, draft=item.draft)
        if repo.git is not None:
            pull.head_sha = repo.git.branch_sha(pull.head) or ""
            pull.base_sha = repo.git.branch_sha(pull.base) or ""
        if item.merged:
            pull.merged_at = issue.closed_at
            pull.merged_by = issue.user
        pull.requested_reviewers = [self.account(r) for r in item.reviewers]
        span = max(self.start - issue.created_at, 60.0)
        for k, seeded_review in enumerate(item.reviews):
            when = _ts(seeded_review.at) or issue.created_at + span * (k + 1) / (len(item.reviews) + 2)
            pull.reviews.append(Review(pull, ids.next("review"), self.account(seeded_review.author),
                                       seeded_review.state, seeded_review.body,
                                       None if seeded_review.state == "PENDING" else when, pull.head_sha))
        for seeded_comment in (c for c in item.comments if c.path is not None):
            when = _ts(seeded_comment.at) or issue.created_at + span / 2
            pull.review_comments.append(ReviewComment(pull, ids.next("review_comment"),
                                                      self.account(seeded_comment.author), seeded_comment.body,
                                                      seeded_comment.path or "", when, line=seeded_comment.line,
                                                      commit_id=pull.head_sha))
        repo.pulls[issue.number] = pull


def _default(name: str, color: str, description: str) -> LabelFile:
    return LabelFile(name=name, color=color, description=description)


def seed_state(world: WorldPort, seed: GitHubFile) -> tuple[GitHubState, User]:
    """The world and the agent's account."""
    return Seeder(world, seed).build()
