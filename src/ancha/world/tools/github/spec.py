"""GitHub, as one tool of the world: everything Ancha needs to know about it, in one object."""

from __future__ import annotations

from typing import Any

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.spec import ActionKind, PredicateKind, StateKind, ToolSpec
from ancha.world.tools.github import action_bodies, actions, checkpoint, checks
from ancha.world.tools.github import check_bodies as bodies
from ancha.world.tools.github.coverage import COVERAGE
from ancha.world.tools.github.delivery import WEBHOOK, start_delivery
from ancha.world.tools.github.graphql.data_check import schema_builds
from ancha.world.tools.github.judge import judge_view
from ancha.world.tools.github.reach import GitHubReach
from ancha.world.tools.github.real_hosts import real_hosts
from ancha.world.tools.github.render import render
from ancha.world.tools.github.replica import GitHubReplica
from ancha.world.tools.github.scene_file import GitHubFile, build_world
from ancha.world.tools.github.smart_http import MAX_BODY, body_too_large, decode_request


def _agent_accounts(seed: dict[str, Any]) -> list[str]:
    return [str((seed.get("agent") or {}).get("ref") or "github_agent")]


def _state(key: str, file_model: Any, resolve: Any, grade: checks.Grade, events: frozenset[str], about: str,
           siblings: dict[str, Any] | None = None) -> StateKind[GitHubReplica]:
    return StateKind(BodyKind(key, "github", file_model, resolve, about, siblings or {}), grade, events)


TOOL: ToolSpec[GitHubReplica] = ToolSpec(
    name="github",
    world=WorldSection("github", GitHubFile, build_world),
    replica=GitHubReplica,
    reach=GitHubReach,
    delivery=start_delivery,
    webhook=WEBHOOK,
    checks=(
        _state("github.file_at", bodies.FileAtFile, bodies.resolve_file_at, checks.file_at, checks.REF_EVENTS,
               "a file's text at a revision", {"contains": str, "equals": str}),
        _state("github.pull", bodies.PullFile, bodies.resolve_pull, checks.pull, checks.PULL_EVENTS,
               "a pull request's merged state"),
        _state("github.production", bodies.ProductionFile, bodies.resolve_production, checks.production,
               checks.REF_EVENTS, "the commit production runs"),
        _state("github.issue", bodies.IssueFile, bodies.resolve_issue, checks.issue, checks.ISSUE_EVENTS,
               "issues of a repository (not pull requests)"),
        _state("github.permission", bodies.PermissionBodyFile, bodies.resolve_permission, checks.permission,
               checks.ACCESS_EVENTS, "a user's effective access to a repository", bodies.PERMISSION_SIBLINGS),
    ),
    predicates=(
        PredicateKind(BodyKind("issue_labeled", "github", bodies.IssueLabeledFile, bodies.resolve_issue_labeled,
                               "an issue got these labels"), checks.IssueLabeledHeld),
        PredicateKind(BodyKind("pull_merged", "github", bodies.PullMergedFile, bodies.resolve_pull_merged,
                               "a pull request was merged"), checks.PullMergedHeld),
    ),
    actions=(
        ActionKind(BodyKind("github.comment", "github", action_bodies.CommentActionFile, action_bodies.resolve_comment,
                            "comment on an issue or pull request as a user"), actions.comment),
        ActionKind(BodyKind("github.review", "github", action_bodies.ReviewActionFile, action_bodies.resolve_review,
                            "review a pull request as a user"), actions.review),
        ActionKind(BodyKind("github.merge", "github", action_bodies.MergeActionFile, action_bodies.resolve_merge,
                            "merge a pull request as a user"), actions.merge),
        ActionKind(BodyKind("github.commit", "github", action_bodies.CommitActionFile, action_bodies.resolve_commit,
                            "commit files to a branch as a user"), actions.commit),
        ActionKind(BodyKind("github.issue", "github", action_bodies.IssueActionFile, action_bodies.resolve_issue,
                            "open an issue as a user"), actions.issue),
    ),
    real_hosts=real_hosts,
    shared=checkpoint.shared,
    judge_view=judge_view,
    render=render,
    secret_patterns=(r"gh[pousr]_[A-Za-z0-9_]+", r"github_pat_[A-Za-z0-9_]+"),
    vendor_files=("rest", "webhooks", "graphql"),
    coverage=COVERAGE,
    data_check=schema_builds,
    agent_accounts=_agent_accounts,
    body_too_large=body_too_large,
    decode_body=decode_request,
    max_body=MAX_BODY,
)
