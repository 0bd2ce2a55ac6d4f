"""Check runs (create, get, update, list for a ref) and the check suites of a ref.

On GitHub only a GitHub App may create check runs; here any caller with write access
may (the replica has no apps), and runs carry ``app: null``. Every run on a sha
belongs to that sha's one check suite, whose status and conclusion follow its runs.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created
from ancha.world.tools.github.git_calls import optional_str, repo_git
from ancha.world.tools.github.models import Repo, iso, node_id
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route

STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
_BAD = ("action_required", "cancelled", "failure", "timed_out")


class CheckRun:
    def __init__(self, repo: Repo, id: int, suite_id: int, name: str, head_sha: str, at: float) -> None:
        self.repo = repo
        self.id = id
        self.suite_id = suite_id
        self.name = name
        self.head_sha = head_sha
        self.status = "queued"
        self.conclusion: str | None = None
        self.started_at: float | None = at
        self.completed_at: float | None = None
        self.details_url: str | None = None
        self.external_id: str | None = ""
        self.output: dict[str, Any] = {"title": None, "summary": None, "text": None}
        self.annotations = 0

    def to_dict(self, base: str) -> dict[str, Any]:
        full = self.repo.full_name
        url = f"{base}/repos/{full}/check-runs/{self.id}"
        return {
            "id": self.id, "head_sha": self.head_sha, "node_id": node_id("CheckRun", self.id),
            "external_id": self.external_id, "url": url, "html_url": f"{web_url(base)}/{full}/runs/{self.id}",
            "details_url": self.details_url or f"{web_url(base)}/{full}/runs/{self.id}", "status": self.status,
            "conclusion": self.conclusion, "started_at": iso(self.started_at),
            "completed_at": iso(self.completed_at),
            "output": {**self.output, "annotations_count": self.annotations,
                       "annotations_url": f"{url}/annotations"},
            "name": self.name, "check_suite": {"id": self.suite_id}, "app": None, "pull_requests": [],
        }


def runs_of(repo: Repo) -> list[CheckRun]:
    found: list[CheckRun] = repo.extra.setdefault("check_runs", [])
    return found


def _suite_id(call: Call, repo: Repo, sha: str) -> int:
    suites: dict[str, int] = repo.extra.setdefault("check_suites", {})
    if sha not in suites:
        suites[sha] = call.state.ids.next("check_suite")
    return suites[sha]


def _apply(call: Call, run: CheckRun) -> None:
    """The body's fields, as create and update share them."""
    status = optional_str(call, "status")
    if status is not None and status not in STATUSES:
        raise errors.invalid_request(f"For 'status', \"{status}\" is not one of {', '.join(STATUSES)}.")
    conclusion = optional_str(call, "conclusion")
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise errors.invalid_request(f"For 'conclusion', \"{conclusion}\" is not one of {', '.join(CONCLUSIONS)}.")
    if status == "completed" and conclusion is None and run.conclusion is None:
        raise errors.invalid_request('"conclusion" wasn\'t supplied.')
    for key in ("details_url", "external_id"):
        if key in call.body:
            setattr(run, key, optional_str(call, key))
    for key in ("started_at", "completed_at"):
        if call.body.get(key) is not None:
            setattr(run, key, _time(call, key))
    output = call.body.get("output")
    if output is not None:
        if not isinstance(output, dict):
            raise errors.invalid_request(f"For 'output', {json.dumps(output)} is not an object.")
        for key in ("title", "summary", "text"):
            if key in output:
                if output[key] is not None and not isinstance(output[key], str):
                    raise errors.invalid_request(f"For 'output/{key}', {json.dumps(output[key])} is not a string.")
                run.output[key] = output[key]
        annotations = output.get("annotations")
        if isinstance(annotations, list):
            run.annotations += len(annotations)
    renamed = optional_str(call, "name")
    if renamed:
        run.name = renamed
    if status is not None:
        run.status = status
    if conclusion is not None:
        run.conclusion = conclusion
        run.status = "completed"
    if run.status == "completed" and run.completed_at is None:
        run.completed_at = call.now()


def _time(call: Call, name: str) -> float:
    value = call.body.get(name)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not a date-time.") from None


def _run(call: Call, repo: Repo) -> CheckRun:
    wanted = call.number("check_run_id")
    for run in runs_of(repo):
        if run.id == wanted:
            return run
    raise errors.NotFound()


@route("POST", "/repos/{owner}/{repo}/check-runs", partial="any writer may create (GitHub requires a GitHub App); "
       "no actions or annotation lists")
def checks_create(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    for field in ("name", "head_sha"):
        if call.body.get(field) is None:
            raise errors.invalid_request(f'"{field}" wasn\'t supplied.')
    name = optional_str(call, "name") or ""
    given = optional_str(call, "head_sha") or ""
    sha = git.resolve(given) if len(given) >= 4 else None
    if sha is None:
        raise errors.Unprocessable(f"No commit found for SHA: {given}")
    run = CheckRun(repo, call.state.ids.next("check_run"), _suite_id(call, repo, sha), name, sha, call.now())
    _apply(call, run)
    if run.status in ("queued", "waiting", "requested", "pending") and "started_at" not in call.body:
        run.started_at = call.now()
    runs_of(repo).append(run)
    call.replica.publish("check_run_created", repo, call.user, call.actor, check_run_id=run.id, name=run.name,
                         head_sha=sha, status=run.status, conclusion=run.conclusion)
    return created(run.to_dict(call.base))


@route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def checks_get(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return _run(call, repo).to_dict(call.base)


@route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def checks_update(call: Call) -> dict[str, Any]:
    repo = call.repo(need="write")
    run = _run(call, repo)
    _apply(call, run)  # events.py names no check_run update event yet, so none is published
    return run.to_dict(call.base)


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs")
def checks_list_for_ref(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    ref = call.params.get("ref", "")
    sha = git.resolve(ref)
    if sha is None:
        raise errors.Unprocessable(f"No commit found for SHA: {ref}")
    status = call.query.get("status")
    if status is not None:
        call.q_enum("status", ("queued", "in_progress", "completed"), "queued")
    mode = call.q_enum("filter", ("latest", "all"), "latest")
    name = call.query.get("check_name")
    runs = [r for r in reversed(runs_of(repo)) if r.head_sha == sha and (name is None or r.name == name)
            and (status is None or r.status == status)]
    if mode == "latest":
        newest: dict[str, CheckRun] = {}
        for run in runs:
            newest.setdefault(run.name, run)
        runs = list(newest.values())
    return {"total_count": len(runs), "check_runs": [r.to_dict(call.base) for r in call.page(runs)]}


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-suites", partial="one suite per sha; no apps")
def checks_list_suites_for_ref(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    ref = call.params.get("ref", "")
    sha = git.resolve(ref)
    if sha is None:
        raise errors.Unprocessable(f"No commit found for SHA: {ref}")
    runs = [r for r in runs_of(repo) if r.head_sha == sha]
    if not runs:
        return {"total_count": 0, "check_suites": []}
    suite_id = runs[0].suite_id
    done = all(r.status == "completed" for r in runs)
    conclusions = [r.conclusion or "" for r in runs]
    conclusion = (None if not done else next((c for c in _BAD if c in conclusions), None)
                  or ("success" if "success" in conclusions else "neutral"))
    info = git.commit_info(sha)
    assert info is not None
    times = [t for r in runs for t in (r.started_at, r.completed_at) if t is not None]
    branch = next((name for name, tip in git.branches() if tip == sha), None)
    suite = {
        "id": suite_id, "node_id": node_id("CheckSuite", suite_id), "head_branch": branch, "head_sha": sha,
        "status": "completed" if done else "in_progress", "conclusion": conclusion,
        "url": f"{call.base}/repos/{repo.full_name}/check-suites/{suite_id}", "before": None, "after": sha,
        "pull_requests": [], "app": None, "repository": repo.to_dict(call.base),
        "created_at": iso(min(times, default=None)), "updated_at": iso(max(times, default=None)),
        "head_commit": {"id": sha, "tree_id": info.tree, "message": info.message, "timestamp": info.committer.iso,
                        "author": {"name": info.author.name, "email": info.author.email},
                        "committer": {"name": info.committer.name, "email": info.committer.email}},
        "latest_check_runs_count": len({r.name for r in runs}),
        "check_runs_url": f"{call.base}/repos/{repo.full_name}/check-suites/{suite_id}/check-runs",
        "rerequestable": True, "runs_rerequestable": True,
    }
    return {"total_count": 1, "check_suites": [suite]}
