"""Writes to issues (and the conversation side of pulls) that several routes share.

Each change updates the state, appends GitHub's issue event where GitHub logs one
(``closed``, ``labeled``, ``assigned``, ``renamed``, ...) and publishes the domain event
(``events.py``). Pull routes use the same functions for a pull's labels, assignees,
comments and open/closed state, so the Issues and Pulls APIs always agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models import Account, Issue, IssueComment, IssueEvent, Label, Milestone

if TYPE_CHECKING:
    from ancha.world.tools.github.call import Call


def log(call: Call, issue: Issue, event: str, at: float, **fields: Any) -> IssueEvent:
    """Append one issue event (GitHub's ``/issues/{n}/events`` log)."""
    entry = IssueEvent(issue, call.state.ids.next("event"), event, call.user, at, **fields)
    issue.events.append(entry)
    issue.repo.events.append(entry)
    return entry


def publish(call: Call, type: str, issue: Issue, **data: Any) -> None:
    call.replica.publish(type, issue.repo, call.user, call.actor, issue.number, issue.is_pull, **data)


def touch(issue: Issue, at: float) -> None:
    issue.updated_at = at
    issue.repo.updated_at = max(issue.repo.updated_at, at)


def open_issue(call: Call, issue: Issue) -> None:
    """Store a new issue (built by the caller) and announce it with its labels and assignees.
    For a pull's conversation (``issue.pull`` set) no ``issue_opened`` is published: the pull
    routes publish ``pull_opened``; its labels and assignees still publish (``is_pull`` True)."""
    repo = issue.repo
    repo.issues[issue.number] = issue
    at = issue.created_at
    if not issue.is_pull:
        publish(call, "issue_opened", issue, title=issue.title, body=issue.body or "", labels=issue.label_names(),
                assignees=[a.login for a in issue.assignees])
    for label in issue.labels:
        log(call, issue, "labeled", at, label=label)
        publish(call, "issue_labeled", issue, label=label.name, labels=issue.label_names())
    for assignee in issue.assignees:
        log(call, issue, "assigned", at, assignee=assignee, assigner=call.user)
        publish(call, "issue_assigned", issue, assignee=assignee.login)
    if issue.milestone is not None:
        log(call, issue, "milestoned", at, milestone=issue.milestone.title)


def set_state(call: Call, issue: Issue, state: str, reason: str | None = None) -> bool:
    """Close or reopen; False when it already was in that state (only the reason may change).
    Publishes ``issue_closed``/``issue_reopened``, or for a pull ``pull_closed`` (merged False)/
    ``pull_reopened`` whichever API closed it; a pull closed by merging publishes nothing here
    (the merge route publishes ``pull_merged``)."""
    at = call.now()
    if issue.state == state:
        if state == "closed" and reason and reason != issue.state_reason:
            issue.state_reason = reason
            touch(issue, at)
        return False
    issue.state = state
    touch(issue, at)
    if state == "closed":
        issue.closed_at = at
        issue.closed_by = call.user
        issue.state_reason = reason or "completed"
        log(call, issue, "closed", at, state_reason=issue.state_reason)
        if issue.pull is None:
            publish(call, "issue_closed", issue, state_reason=issue.state_reason)
        elif not issue.pull.merged:  # a merge publishes its own ``pull_merged``
            publish(call, "pull_closed", issue, merged=False)
    else:
        issue.closed_at = None
        issue.closed_by = None
        issue.state_reason = "reopened"
        log(call, issue, "reopened", at)
        publish(call, "issue_reopened" if issue.pull is None else "pull_reopened", issue)
    return True


def add_label(call: Call, issue: Issue, label: Label) -> bool:
    if any(existing is label for existing in issue.labels):
        return False
    at = call.now()
    issue.labels.append(label)
    touch(issue, at)
    log(call, issue, "labeled", at, label=label)
    publish(call, "issue_labeled", issue, label=label.name, labels=issue.label_names())
    return True


def remove_label(call: Call, issue: Issue, label: Label) -> bool:
    if not any(existing is label for existing in issue.labels):
        return False
    at = call.now()
    issue.labels = [existing for existing in issue.labels if existing is not label]
    touch(issue, at)
    log(call, issue, "unlabeled", at, label=label)
    publish(call, "issue_unlabeled", issue, label=label.name, labels=issue.label_names())
    return True


def set_labels(call: Call, issue: Issue, labels: list[Label]) -> None:
    for label in list(issue.labels):
        if not any(label is wanted for wanted in labels):
            remove_label(call, issue, label)
    for label in labels:
        add_label(call, issue, label)


def assign(call: Call, issue: Issue, user: Account) -> bool:
    if any(a.key == user.key for a in issue.assignees) or len(issue.assignees) >= 10:
        return False
    at = call.now()
    issue.assignees.append(user)
    touch(issue, at)
    log(call, issue, "assigned", at, assignee=user, assigner=call.user)
    publish(call, "issue_assigned", issue, assignee=user.login)
    return True


def unassign(call: Call, issue: Issue, user: Account) -> bool:
    if not any(a.key == user.key for a in issue.assignees):
        return False
    at = call.now()
    issue.assignees = [a for a in issue.assignees if a.key != user.key]
    touch(issue, at)
    log(call, issue, "unassigned", at, assignee=user, assigner=call.user)
    publish(call, "issue_unassigned", issue, assignee=user.login)
    return True


def set_assignees(call: Call, issue: Issue, users: list[Account]) -> None:
    keys = {u.key for u in users}
    for user in list(issue.assignees):
        if user.key not in keys:
            unassign(call, issue, user)
    for user in users:
        assign(call, issue, user)


def set_milestone(call: Call, issue: Issue, milestone: Milestone | None) -> None:
    if issue.milestone is milestone:
        return
    at = call.now()
    previous = issue.milestone
    if previous is not None:
        log(call, issue, "demilestoned", at, milestone=previous.title)
    issue.milestone = milestone
    if milestone is not None:
        log(call, issue, "milestoned", at, milestone=milestone.title)
    touch(issue, at)
    publish(call, "pull_edited" if issue.is_pull else "issue_edited", issue,
            changes={"milestone": {"from": previous.title if previous is not None else None}})


def edit(call: Call, issue: Issue, *, title: str | None = None, body: str | None = None,
         body_given: bool = False) -> None:
    """Change title and/or body; one ``issue_edited`` (``pull_edited``) with what changed."""
    changes: dict[str, Any] = {}
    at = call.now()
    if title is not None and title != issue.title:
        changes["title"] = {"from": issue.title}
        log(call, issue, "renamed", at, rename={"from": issue.title, "to": title})
        issue.title = title
    if body_given and body != issue.body:
        changes["body"] = {"from": issue.body}
        issue.body = body
    if changes:
        touch(issue, at)
        publish(call, "pull_edited" if issue.is_pull else "issue_edited", issue, changes=changes,
                title=issue.title)


def add_comment(call: Call, issue: Issue, body: str) -> IssueComment:
    at = call.now()
    comment = IssueComment(issue, call.state.ids.next("comment"), call.user, body, at, actor=call.actor)
    issue.comments.append(comment)
    call.state.comments[comment.id] = comment
    touch(issue, at)
    publish(call, "issue_comment_created", issue, comment_id=comment.id, body=body)
    return comment


def edit_comment(call: Call, comment: IssueComment, body: str) -> None:
    previous = comment.body
    comment.body = body
    comment.updated_at = call.now()
    publish(call, "issue_comment_edited", comment.issue, comment_id=comment.id, body=body,
            changes={"body": {"from": previous}})


def delete_comment(call: Call, comment: IssueComment) -> None:
    issue = comment.issue
    issue.comments = [c for c in issue.comments if c.id != comment.id]
    call.state.comments.pop(comment.id, None)
    touch(issue, call.now())
    publish(call, "issue_comment_deleted", issue, comment_id=comment.id)
