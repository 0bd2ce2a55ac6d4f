"""Domain events the GitHub replica publishes on the environment's bus.

Every write publishes one event per change, after the state has changed, as
``DomainEvent(type, "github", at, data)``. Every ``data`` holds:

- ``repo``: ``owner/name``; ``number``: the issue or pull number, or None;
- ``actor``: the trace actor (``agent``, ``person:NAME``, ``world``);
- ``user``: the login of the account that acted;
- ``is_pull``: True when the number is a pull request (issue events on pulls too).

and, per type:

====================================  ==================================================
type                                  extra data
====================================  ==================================================
issue_opened                          title, body, labels [names], assignees [logins]
issue_edited                          changes {field: {"from": old}} (title, body, milestone)
issue_closed                          state_reason
issue_reopened                        -
issue_labeled / issue_unlabeled       label (name), labels (all names after the change)
issue_assigned / issue_unassigned     assignee (login)
issue_comment_created                 comment_id, body
issue_comment_edited                  comment_id, body, changes {"body": {"from": old}}
issue_comment_deleted                 comment_id
label_created / label_edited          label (name), color, changes (edited)
label_deleted                         label (name)
milestone_created                     milestone (number), title
pull_opened                           title, head, base, draft
pull_edited                           changes
pull_closed                           merged False (closed unmerged, through the Pulls or Issues API)
pull_reopened                         - (through the Pulls or Issues API)
pull_merged                           merge_commit_sha, base
pull_review_submitted                 review_id, state, body
pull_review_comment_created           comment_id, path, body
review_requested                      reviewers [logins]
deployment_created                    deployment_id, ref, sha, environment
deployment_status_created             deployment_id, state, environment
status_created                        sha, state, context
check_run_created                     check_run_id, name, head_sha, status, conclusion
release_published                     release_id, tag_name, name
repo_created / repo_edited /          changes (edited)
repo_deleted
collaborator_added /                  collaborator (login), permission
collaborator_removed
issue_locked / issue_unlocked         lock_reason
ref_updated                           ref (refs/heads/x), before, after (None when created / deleted):
                                      any ref move (git push, the refs and contents APIs, merges)
====================================  ==================================================

Seeding publishes nothing: the seed is the world as it was before the trial.
"""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.bus import DomainEvent

EVENT_TYPES = (
    "issue_opened", "issue_edited", "issue_closed", "issue_reopened", "issue_labeled", "issue_unlabeled",
    "issue_assigned", "issue_unassigned", "issue_comment_created", "issue_comment_edited",
    "issue_comment_deleted", "issue_locked", "issue_unlocked", "label_created", "label_edited",
    "label_deleted", "milestone_created", "pull_opened", "pull_edited", "pull_closed", "pull_reopened",
    "pull_merged", "pull_review_submitted", "pull_review_comment_created", "review_requested", "deployment_created",
    "deployment_status_created", "status_created", "check_run_created", "release_published",
    "repo_created", "repo_edited", "repo_deleted", "collaborator_added", "collaborator_removed",
    "ref_updated",
)


def domain_event(type: str, at: float, *, repo: str, actor: str, user: str, number: int | None = None,
                 is_pull: bool = False, **data: Any) -> DomainEvent:
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown GitHub domain event {type!r}")
    return DomainEvent(type, "github", at, {"repo": repo, "number": number, "actor": actor, "user": user,
                                             "is_pull": is_pull, **data})
