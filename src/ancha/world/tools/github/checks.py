"""Grading the GitHub state checks on the replica's state, and the GitHub predicates.

Each check reads the world as it stands (the seed included, as the reference says of
``github.issue``) and, when it fails, says what it found instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.predicate import CompiledPredicate
from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.github.check_bodies import (
    FileAt,
    IssueLabeledFile,
    IssueMatch,
    PermissionFile,
    ProductionFile,
    PullFile,
    PullMergedFile,
)

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.kernel.trace import TraceEntry
    from ancha.world.tools.github.models.issues import Issue
    from ancha.world.tools.github.models.repos import Repo
    from ancha.world.tools.github.replica import GitHubReplica

SNIPPET = 80
ACCESS = {"read": "read", "triage": "read", "write": "write", "maintain": "write", "admin": "admin"}
"""The reference's levels (read, write, admin) for GitHub's five roles, as GitHub's
``collaborators/{user}/permission`` reports them."""
REF_EVENTS = frozenset({"pull_merged", "ref_updated", "push", "deployment_status_created", "repo_edited"})
ISSUE_EVENTS = frozenset({"issue_opened", "issue_edited", "issue_closed", "issue_reopened", "issue_labeled",
                          "issue_unlabeled"})
PULL_EVENTS = frozenset({"pull_merged", "pull_closed"})
ACCESS_EVENTS = frozenset({"collaborator_added", "collaborator_removed", "repo_edited"})


def _repo(replica: GitHubReplica, world: WorldPort, ref: str) -> Repo:
    owner, _, name = world.ref_id(ref, "repo").partition("/")
    repo = replica.state.repo(owner, name)
    if repo is None:
        raise LookupError(f"${ref} ({owner}/{name}) no longer exists")
    return repo


def _numbered(replica: GitHubReplica, world: WorldPort, ref: str, kind: str) -> tuple[Repo, int]:
    full, _, number = world.ref_id(ref, kind).partition("#")
    owner, _, name = full.partition("/")
    repo = replica.state.repo(owner, name)
    if repo is None:
        raise LookupError(f"${ref}'s repository {full} no longer exists")
    return repo, int(number)


def production_sha(world: WorldPort, repo: Repo) -> str | None:
    """What runs in production: the latest successful deployment to ``production``, else the
    seed's ``production`` (a commit ref, a branch or a SHA)."""
    from ancha.world.tools.github.production import production_sha as deployed

    sha = deployed(repo)
    if sha:
        return str(sha)
    if not repo.production or repo.git is None:
        return None
    record = world.refs.get(repo.production)
    if record is not None and record.kind == "commit":
        return record.id
    return repo.git.resolve(repo.production)  # type: ignore[no-any-return]


# --- evidence: the calls that made what a check found -------------------------------------

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _writes(world: WorldPort, made: Callable[[TraceEntry], bool]) -> list[int]:
    """Seqs of the GitHub calls that worked and changed something (by anyone: the agent, a
    person, a world rule), for which ``made`` holds."""
    return [e.seq for e in world.trace
            if e.tool == "github" and e.worked and e.method in WRITES and made(e)]


def _under(entry: TraceEntry, *paths: str) -> bool:
    """The call's path is one of ``paths`` or below one (GitHub's paths ignore case)."""
    path = entry.path.lower().rstrip("/")
    return any(path == p.lower() or path.startswith(p.lower() + "/") for p in paths)


def _names(entry: TraceEntry, text: str) -> bool:
    """The call's request or its answer holds ``text`` (a SHA, an id)."""
    needle = text.encode()
    return needle in entry.request or needle in entry.response


def _created(entry: TraceEntry, key: str, values: set[int]) -> bool:
    """A create call whose answer's ``key`` is one of ``values`` (an issue's number)."""
    if entry.method != "POST":
        return False
    body = entry.response_json()
    return isinstance(body, dict) and body.get(key) in values


WRITES_COMMITS = ("/contents/", "/merge", "/git/", "git-receive-pack")
"""Paths of the calls that write commits or move branches: the contents API, merges (of a pull
request, or of a branch), the Git database API and pushes."""


def _commit_calls(world: WorldPort, repo: Repo, shas: list[str]) -> list[int]:
    """The calls that wrote these commits or moved a branch to them (their request or answer
    names the SHA): they made the repository's state."""
    rest, git = f"/repos/{repo.full_name}", f"/{repo.full_name.lower()}"

    def wrote(entry: TraceEntry) -> bool:
        path = entry.path.lower()
        return ((_under(entry, rest) or path.startswith(git)) and any(part in path for part in WRITES_COMMITS)
                and any(_names(entry, sha) for sha in shas))

    return _writes(world, wrote)


def _outcome(passed: bool, expected: str, actual: str, evidence: list[int] | None = None) -> StateOutcome:
    explanation = (f"Passed: expected {expected}, and found {actual}." if passed
                   else f"Failed: expected {expected}; actually {actual}.")
    return StateOutcome(passed, expected, actual, explanation, evidence or [])


Grade = Callable[[dict[str, Any], "GitHubReplica", "WorldPort"], StateOutcome]
"""A state check's ``evaluate``: ``(body, replica, world)``."""


def _guarded(expected: Callable[[dict[str, Any]], str]) -> Callable[[Grade], Grade]:
    """Answer a failed outcome, not an error, when a ref names nothing in this world."""

    def wrap(grade: Grade) -> Grade:
        def run(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
            try:
                return grade(body, replica, world)
            except LookupError as exc:
                return _outcome(False, expected(body), str(exc.args[0]) if exc.args else str(exc))
        return run
    return wrap


def _snippet(text: str) -> str:
    return repr(text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…")


# --- github.file_at ------------------------------------------------------------------------


def _file_at_expected(body: dict[str, Any]) -> str:
    spec = FileAt.model_validate(body)
    at = f"${spec.revision}" if spec.commit else spec.revision
    how = f"containing {spec.contains!r}" if spec.contains is not None else f"equal to {spec.equals!r}"
    return f"{spec.path} in ${spec.repo} at {at} {how}"


@_guarded(_file_at_expected)
def file_at(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
    spec = FileAt.model_validate(body)
    expected = _file_at_expected(body)
    repo = _repo(replica, world, spec.repo)
    if spec.commit:
        sha: str | None = world.ref_id(spec.revision, "commit")
    elif spec.revision == "default":
        sha = repo.git.resolve(repo.default_branch)
    elif spec.revision == "production":
        sha = production_sha(world, repo)
        if sha is None:
            return _outcome(False, expected, f"{repo.full_name} has no production deployment")
    else:
        sha = repo.git.resolve(spec.revision)
        if sha is None:
            return _outcome(False, expected, f"{repo.full_name} has no branch {spec.revision}")
    data = repo.git.read_file(sha, spec.path) if sha else None
    evidence = _file_evidence(world, repo, sha, spec.path, spec.revision == "production")
    if data is None:
        return _outcome(False, expected, f"{spec.path} does not exist at {spec.revision} ({(sha or '')[:7]})",
                        evidence)
    text = data.decode("utf-8", errors="replace")
    if spec.contains is not None:
        passed = spec.contains in text
        found = "the file contains it" if passed else f"the file does not contain it (it begins {_snippet(text)})"
    else:
        passed = text == spec.equals
        found = "the file is exactly that" if passed else f"the file differs (it begins {_snippet(text)})"
    return _outcome(passed, expected, f"{found} at {(sha or '')[:7]}", evidence)


def _file_evidence(world: WorldPort, repo: Repo, sha: str | None, path: str, production: bool) -> list[int]:
    """The calls that wrote the commit that last changed ``path`` and that brought the
    revision to its commit (a merge, a push), and the deployment that put it in production."""
    if not sha:
        return []
    try:
        last = next(iter(repo.git.log(sha, path)), None)
    except LookupError:
        last = None
    shas = [last.sha, sha] if last is not None and last.sha != sha else [sha]  # what wrote it, what brought it
    deployed = _deployment_calls(world, repo) if production else []
    return sorted({*_commit_calls(world, repo, shas), *deployed})


# --- github.pull, github.production ---------------------------------------------------------


def _pull_expected(body: dict[str, Any]) -> str:
    spec = PullFile.model_validate(body)
    return f"${spec.pull} {'merged' if spec.merged else 'not merged'}"


@_guarded(_pull_expected)
def pull(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
    spec = PullFile.model_validate(body)
    repo, number = _numbered(replica, world, spec.pull, "pull")
    found = repo.pulls.get(number)
    if found is None:
        return _outcome(False, _pull_expected(body), f"{repo.full_name} has no pull request #{number}")
    merged = found.merged
    state = "merged" if merged else f"not merged ({found.issue.state})"
    base = f"/repos/{repo.full_name}"
    if merged:  # the merge; else what closed or reopened it
        evidence = _writes(world, lambda e: _under(e, f"{base}/pulls/{number}/merge"))
    else:
        evidence = _writes(world, lambda e: e.method == "PATCH" and _under(e, f"{base}/pulls/{number}")
                           and not _under(e, f"{base}/pulls/{number}/merge")
                           or e.method == "PATCH" and e.path.lower() == f"{base}/issues/{number}".lower())
    return _outcome(merged == spec.merged, _pull_expected(body), f"#{number} is {state}", evidence)


def _production_expected(body: dict[str, Any]) -> str:
    spec = ProductionFile.model_validate(body)
    return f"production of ${spec.repo} at ${spec.commit}"


@_guarded(_production_expected)
def production(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
    spec = ProductionFile.model_validate(body)
    repo = _repo(replica, world, spec.repo)
    wanted = world.ref_id(spec.commit, "commit")
    sha = production_sha(world, repo)
    if sha is None:
        return _outcome(False, _production_expected(body), f"{repo.full_name} has nothing in production")
    actual = f"production runs {sha[:7]}" + ("" if sha == wanted else f", not {wanted[:7]}")
    return _outcome(sha == wanted, _production_expected(body), actual, _deployment_calls(world, repo))


def _deployment_calls(world: WorldPort, repo: Repo) -> list[int]:
    """The calls behind what runs in production: the deployment's creation and the status
    that made it succeed (none when the seed's production still runs)."""
    from ancha.world.tools.github.production import PRODUCTION, deployments_of

    live = next((d for d in reversed(deployments_of(repo))
                 if d.environment == PRODUCTION and d.state == "success"), None)
    if live is None:
        return []
    base = f"/repos/{repo.full_name}/deployments"
    statuses = {status.id for status in live.statuses}
    return _writes(world, lambda e: e.path.lower() == base.lower() and _created(e, "id", {live.id})
                   or e.path.lower() == f"{base}/{live.id}/statuses".lower() and _created(e, "id", statuses))


# --- github.issue --------------------------------------------------------------------------


def _issue_expected(body: dict[str, Any]) -> str:
    spec = IssueMatch.model_validate(body)
    parts = []
    if spec.title_contains:
        parts.append("a title containing " + " and ".join(repr(t) for t in spec.title_contains))
    if spec.body_contains:
        parts.append("a body containing " + " and ".join(repr(t) for t in spec.body_contains))
    if spec.labels:
        parts.append("labels " + ", ".join(spec.labels))
    if spec.state:
        parts.append(f"state {spec.state}")
    if spec.count is not None:
        amount = f"exactly {spec.count} issue{'' if spec.count == 1 else 's'}"
    elif spec.count_gte is not None or spec.count_lte is not None:
        low = f"at least {spec.count_gte}" if spec.count_gte is not None else ""
        high = f"at most {spec.count_lte}" if spec.count_lte is not None else ""
        amount = " and ".join(p for p in (low, high) if p) + " issues"
    else:
        amount = "an issue"
    return f"{amount} in ${spec.repo}" + (" with " + ", ".join(parts) if parts else "")


def _issue_misses(spec: IssueMatch, issue: Issue) -> list[str]:
    missed: list[str] = []
    title, text = issue.title.lower(), (issue.body or "").lower()
    if any(t.lower() not in title for t in spec.title_contains):
        missed.append(f"its title is {_snippet(issue.title)}")
    if any(t.lower() not in text for t in spec.body_contains):
        missed.append(f"its body is {_snippet(issue.body or '')}")
    names = {label.name.lower() for label in issue.labels}
    lacking = [name for name in spec.labels if name.lower() not in names]
    if lacking:
        missed.append(f"it lacks label{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}")
    if spec.state and issue.state != spec.state:
        missed.append(f"it is {issue.state}")
    return missed


@_guarded(_issue_expected)
def issue(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
    spec = IssueMatch.model_validate(body)
    repo = _repo(replica, world, spec.repo)
    issues = [i for i in repo.issues.values() if not i.is_pull]
    matching = [i for i in issues if not _issue_misses(spec, i)]
    n = len(matching)
    if spec.count is not None:
        passed = n == spec.count
    else:
        passed = n >= (spec.count_gte if spec.count_gte is not None else 1 if spec.count_lte is None else 0)
        passed = passed and (spec.count_lte is None or n <= spec.count_lte)
    numbers = ", ".join(f"#{i.number}" for i in matching[:10])
    actual = f"{n} matching issue{'' if n == 1 else 's'}" + (f" ({numbers})" if numbers else "")
    closest: Issue | None = None
    if not matching and issues:
        closest = min(issues, key=lambda i: (len(_issue_misses(spec, i)), -i.number))
        actual += f"; the closest, #{closest.number}, fails because " + " and ".join(_issue_misses(spec, closest))
    elif not issues:
        actual += f"; {repo.full_name} has no issues"
    shown = matching or ([closest] if closest is not None else [])
    return _outcome(passed, _issue_expected(body), actual, _issue_calls(world, repo, {i.number for i in shown}))


def _issue_calls(world: WorldPort, repo: Repo, numbers: set[int]) -> list[int]:
    """The calls that opened these issues and changed them since (edits, labels, closing)."""
    if not numbers:
        return []
    base = f"/repos/{repo.full_name}/issues"
    return _writes(world, lambda e: e.path.lower() == base.lower() and _created(e, "number", numbers)
                   or any(_under(e, f"{base}/{n}") for n in numbers))


# --- github.permission ----------------------------------------------------------------------


def _permission_expected(body: dict[str, Any]) -> str:
    spec = PermissionFile.model_validate(body)
    return f"${spec.user}'s access to ${spec.repo} to be {spec.is_}"


@_guarded(_permission_expected)
def permission(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> StateOutcome:
    spec = PermissionFile.model_validate(body)
    repo = _repo(replica, world, spec.repo)
    state = replica.state
    account = state.account(world.ref_id(spec.user, "user"))
    role = state.role(repo, account) if account is not None else None
    access = ACCESS.get(role or "", "none")
    actual = f"it is {access}" + (f" (role {role})" if role else " (no access)")
    login = account.login if account is not None else ""
    base = f"/repos/{repo.full_name}"
    evidence = _writes(world, lambda e: bool(login) and e.path.lower() == f"{base}/collaborators/{login}".lower()
                       or e.path.lower().endswith(f"/repos{base}".lower()) and "/teams/" in e.path.lower()
                       or e.method == "PATCH" and e.path.lower() == base.lower())
    return _outcome(access == spec.is_, _permission_expected(body), actual, evidence)


# --- predicates --------------------------------------------------------------------------


class IssueLabeledHeld(CompiledPredicate):
    """``issue_labeled: {repo, labels}``: an issue of the repo got every label (at creation or later).

    It holds the first time a label is given during the trial (an issue opened with its
    labels, or a label added, by anyone) and the issue then has every one of ``labels``. The
    seed never makes it hold: labels an issue was seeded with were not given during the trial
    (``github.issue: { labels }`` reads the world as it stands, seed included)."""

    events = frozenset({"issue_opened", "issue_labeled"})

    def __init__(self, key: str, body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> None:
        super().__init__(key)
        self.world = world
        spec = IssueLabeledFile.model_validate(body)
        self.repo = world.ref_id(spec.repo, "repo").lower()
        self.labels = {label.lower() for label in spec.labels}

    def on_event(self, event: DomainEvent) -> bool:
        data = event.data
        if not self.holds and str(data.get("repo", "")).lower() == self.repo and not data.get("is_pull"):
            labels = {str(name).lower() for name in data.get("labels") or ()}
            given = labels if event.type == "issue_opened" else {str(data.get("label", "")).lower()}
            if self.labels <= labels and given & self.labels:
                self._set(True, event.at, [len(self.world.trace) + 1])
        return self.holds


class PullMergedHeld(CompiledPredicate):
    """``pull_merged: {repo, pull}``: the pull request was merged during the trial."""

    events = frozenset({"pull_merged"})

    def __init__(self, key: str, body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> None:
        super().__init__(key)
        self.world = world
        spec = PullMergedFile.model_validate(body)
        full, _, number = world.ref_id(spec.pull, "pull").partition("#")
        self.repo, self.number = full.lower(), int(number)

    def on_event(self, event: DomainEvent) -> bool:
        data = event.data
        if not self.holds and str(data.get("repo", "")).lower() == self.repo and data.get("number") == self.number:
            self._set(True, event.at, [len(self.world.trace) + 1])
        return self.holds
