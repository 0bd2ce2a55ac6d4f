"""Labels: the repository's set, and the labels on one issue."""

from __future__ import annotations

import re
from typing import Any

from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Label, Repo
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.issues import labels_by_name

_COLOR = re.compile(r"^#?[0-9a-fA-F]{6}$")


def _label(call: Call, repo: Repo) -> Label:
    label = repo.labels.get(call.params["name"].lower())
    if label is None:
        raise errors.NotFound()
    return label


def _color(call: Call, default: str | None) -> str | None:
    color = call.field_str("color", allow_none=False)
    if color is None:
        return default
    if not _COLOR.match(color):
        raise errors.invalid_field("Label", "color")
    return color.lstrip("#").lower()


@route("GET", "/repos/{owner}/{repo}/labels")
def issues_list_labels_for_repo(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    return [label.to_dict(call.base) for label in call.page(list(repo.labels.values()))]


@route("POST", "/repos/{owner}/{repo}/labels")
def issues_create_label(call: Call) -> Reply:
    repo = call.repo(need="write")
    name = (call.field_str("name", resource="Label", required=True) or "").strip()
    if not name:
        raise errors.missing_field("Label", "name")
    if name.lower() in repo.labels:
        raise errors.already_exists("Label", "name")
    color = _color(call, "ededed") or "ededed"
    label = Label(repo, call.state.ids.next("label"), name, color, call.field_str("description"))
    repo.labels[name.lower()] = label
    call.replica.publish("label_created", repo, call.user, call.actor, label=name, color=color)
    return created(label.to_dict(call.base), label.to_dict(call.base)["url"])


@route("GET", "/repos/{owner}/{repo}/labels/{name}")
def issues_get_label(call: Call) -> dict[str, Any]:
    return _label(call, call.repo()).to_dict(call.base)


@route("PATCH", "/repos/{owner}/{repo}/labels/{name}")
def issues_update_label(call: Call) -> dict[str, Any]:
    repo = call.repo(need="write")
    label = _label(call, repo)
    edits: dict[str, Any] = {}
    new_name = call.field_str("new_name", allow_none=False)
    if new_name is not None and new_name.strip() and new_name != label.name:
        if new_name.lower() in repo.labels and repo.labels[new_name.lower()] is not label:
            raise errors.already_exists("Label", "name")
        edits["name"] = {"from": label.name}
        del repo.labels[label.name.lower()]
        label.name = new_name.strip()
        repo.labels[label.name.lower()] = label
    color = _color(call, None)
    if color is not None and color != label.color:
        edits["color"] = {"from": label.color}
        label.color = color
    if "description" in call.body:
        edits["description"] = {"from": label.description}
        label.description = call.field_str("description")
    call.replica.publish("label_edited", repo, call.user, call.actor, label=label.name, color=label.color,
                         changes=edits)
    return label.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/labels/{name}")
def issues_delete_label(call: Call) -> Reply:
    repo = call.repo(need="write")
    label = _label(call, repo)
    del repo.labels[label.name.lower()]
    for issue in repo.issues.values():
        issue.labels = [x for x in issue.labels if x is not label]
    call.replica.publish("label_deleted", repo, call.user, call.actor, label=label.name)
    return no_content()


# --- labels on an issue -----------------------------------------------------------------------


def _names(call: Call) -> list[str]:
    """``labels`` from a body that is an object, or (as GitHub also takes) a bare array."""
    call.body_or_array("labels")
    names = call.field_list("labels")
    if names is None:
        raise errors.invalid_request("\"labels\" wasn't supplied.")
    return names


def _issue_labels(call: Call, repo: Repo, number_labels: list[Label]) -> list[dict[str, Any]]:
    return [label.to_dict(call.base) for label in number_labels]


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def issues_list_labels_on_issue(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    issue = call.issue(repo)
    return [label.to_dict(call.base) for label in call.page(issue.labels)]


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def issues_add_labels(call: Call) -> list[dict[str, Any]]:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    for label in labels_by_name(call, repo, _names(call)):
        changes.add_label(call, issue, label)
    return _issue_labels(call, repo, issue.labels)


@route("PUT", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def issues_set_labels(call: Call) -> list[dict[str, Any]]:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    names = _names(call) if call.has_body else []
    changes.set_labels(call, issue, labels_by_name(call, repo, names))
    return _issue_labels(call, repo, issue.labels)


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def issues_remove_all_labels(call: Call) -> Reply:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    changes.set_labels(call, issue, [])
    return no_content()


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}")
def issues_remove_label(call: Call) -> list[dict[str, Any]]:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    label = repo.labels.get(call.params["name"].lower())
    if label is None or not changes.remove_label(call, issue, label):
        raise errors.NotFound("Label does not exist")
    return _issue_labels(call, repo, issue.labels)
