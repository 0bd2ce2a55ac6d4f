"""The REST handlers, one module per family of GitHub operations.

To add a family: write ``routes/<family>.py`` with ``@route(...)`` handlers and append
its name to ``MODULES`` (one line each, any order). Then regenerate the coverage
ledger: ``python -m ancha.world.tools.github.coverage --regenerate``.
"""

from __future__ import annotations

from importlib import import_module

from ancha.world.tools.github.router import Route, Router, registered

MODULES = (
    "meta",
    "users",
    "repos",
    "collaborators",
    "issues",
    "issue_comments",
    "labels",
    "milestones",
    "issue_events",
    "search",
    "contents",
    "git_data",
    "branches",
    "commits",
    "pulls", "pull_comments", "pull_reviews", "pull_merge",
    "statuses", "deployments", "check_runs", "releases", "release_assets", "archives",
    "stars",
    "protection_parts",
    "reactions",
    "org_members",
    "repo_stats",
    "raw_files",
    "accounts",
    "reference",
    "quiet_lists",
    "markdown",
    "notifications",
    "invitations",
)


def load_all() -> None:
    for module in MODULES:
        import_module(f"{__name__}.{module}")


def build_router() -> Router[Route]:
    load_all()
    router: Router[Route] = Router()
    for served in registered():
        router.add(served.method, served.template, served)
    return router


ROUTER = build_router()
