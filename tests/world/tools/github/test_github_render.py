"""GitHub in the console's world diff: pull requests and issues as cards, a repository's
timestamps and counters as bookkeeping."""

from __future__ import annotations

from ancha.world.kernel.rendered import FieldChange, ObjectChange
from ancha.world.tools.github.render import render

REPO = {"full_name": "acme/orders"}


def test_github_render__a_pull_request_is_a_card_with_state_labels_and_reviews() -> None:
    pull = {"number": 3, "title": "Fix the runbook", "state": "closed", "merged_at": "2026-03-02T09:14:30Z",
            "user": {"login": "acme-helper"}, "head": {"ref": "fix"}, "base": {"ref": "main"},
            "labels": [{"name": "ops"}], "reviews": [{"user": {"login": "laura"}, "state": "APPROVED"}],
            "body": "Step 2 deleted the namespace.", "comments": 1}
    shown = render(ObjectChange("repos.pulls", "id=5", "added", None, pull, (), parents=(REPO,)))
    assert shown is not None and shown.kind == "card"
    assert shown.title == "pull request acme/orders#3: Fix the runbook"
    values = {f.label: f.value for f in shown.fields}
    assert values["state"] == "merged" and values["labels"] == "ops" and values["reviews"] == "laura: approved"
    assert values["merged at"] == "2026-03-02 09:14:30 UTC"
    assert shown.body == "Step 2 deleted the namespace."


def test_github_render__an_issue_shows_its_state_change_and_new_comments() -> None:
    before = {"number": 7, "title": "Exports broken", "state": "open", "user": {"login": "laura"}, "labels": [],
              "comment_bodies": []}
    after = {**before, "state": "closed", "labels": [{"name": "p1"}],
             "comment_bodies": [{"id": 1, "user": {"login": "acme-helper"}, "body": "Fixed in #3."}]}
    fields = (FieldChange("state", "changed", "open", "closed"), FieldChange("labels", "changed", [], ["p1"]))
    shown = render(ObjectChange("repos.issues", "id=7", "changed", before, after, fields, parents=(REPO,)))
    assert shown is not None and not shown.bookkeeping
    state = next(f for f in shown.fields if f.label == "state")
    assert (state.before, state.value) == ("open", "closed")
    assert any(f.label == "comment by acme-helper" and f.value == "Fixed in #3." for f in shown.fields)


def test_github_render__a_repository_whose_timestamps_and_counters_moved_is_bookkeeping() -> None:
    before = {"full_name": "acme/orders", "pushed_at": "2026-03-01T09:00:00Z", "git": {"objects_added": 0}}
    after = {"full_name": "acme/orders", "pushed_at": "2026-03-02T09:00:00Z", "git": {"objects_added": 5}}
    fields = (FieldChange("pushed_at", "changed", before["pushed_at"], after["pushed_at"]),
              FieldChange("git.objects_added", "changed", 0, 5))
    shown = render(ObjectChange("repos", "id=1", "changed", before, after, fields))
    assert shown is not None and shown.bookkeeping


def test_github_render__a_moved_branch_is_not_bookkeeping() -> None:
    before = {"full_name": "acme/orders", "git": {"branches": {"main": "c8cb493ddc"}}}
    after = {"full_name": "acme/orders", "git": {"branches": {"main": "a75eac0a32"}}}
    fields = (FieldChange("git.branches.main", "changed", "c8cb493ddc", "a75eac0a32"),)
    shown = render(ObjectChange("repos", "id=1", "changed", before, after, fields))
    assert shown is not None and not shown.bookkeeping
    assert [(f.label, f.before, f.value) for f in shown.fields] == [("branch main", "c8cb493", "a75eac0")]
