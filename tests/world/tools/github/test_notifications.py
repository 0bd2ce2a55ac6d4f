"""Notifications through PyGithub and the raw API: activity on an issue notifies the people it
concerns (not whoever acted), marking read (all, per repository, one thread), done, and thread
subscriptions."""

from __future__ import annotations

from typing import Any

GH = Any  # conftest.GH


def test_comment__notifies_author_not_the_commenter(gh: GH, matches_spec: Any) -> None:
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("Exports are back, @laura")
    laura = gh.as_user("laura").get_user()
    [thread] = laura.get_notifications()
    assert (thread.reason, thread.unread, thread.subject.type) == ("mention", True, "Issue")
    assert thread.subject.title == "CSV exports are gone" and thread.repository.full_name == "acme/orders"
    listed = gh.raw("GET", "/notifications", token=gh.token_for("laura")).json()
    matches_spec("GET", "/notifications", listed)
    assert list(gh.client.get_user().get_notifications()) == []  # the agent acted: nothing for them


def test_mark_read__all_repository_and_thread(gh: GH) -> None:
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("On it")
    token = gh.token_for("laura")
    laura = gh.as_user("laura").get_user()
    marked = gh.raw("PUT", "/notifications", token=token, json={})
    assert marked.status_code == 205 and marked.content == b""
    assert list(laura.get_notifications()) == []
    [read] = laura.get_notifications(all=True)
    assert read.unread is False and read.last_read_at is not None
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("Done")
    assert gh.raw("PUT", "/repos/acme/orders/notifications", token=token, json={}).status_code == 205
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("Really done")
    [thread] = laura.get_notifications()
    thread.mark_as_read()
    assert gh.raw("GET", f"/notifications/threads/{thread.id}", token=token).json()["unread"] is False


def test_thread_subscription__ignore_and_done(gh: GH, matches_spec: Any) -> None:
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("First")
    token = gh.token_for("laura")
    [thread] = gh.raw("GET", "/notifications", token=token).json()
    ignored = gh.raw(
        "PUT", f"/notifications/threads/{thread['id']}/subscription", token=token, json={"ignored": True}
    )
    matches_spec("PUT", "/notifications/threads/{thread_id}/subscription", ignored.json())
    assert ignored.json()["ignored"] is True
    gh.raw("PUT", "/notifications", token=token, json={})
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("Second")
    assert gh.raw("GET", "/notifications", token=token).json() == []
    assert (
        gh.raw("DELETE", f"/notifications/threads/{thread['id']}/subscription", token=token).status_code
        == 204
    )
    assert gh.raw("DELETE", f"/notifications/threads/{thread['id']}", token=token).status_code == 204
    assert (
        gh.raw("GET", f"/notifications/threads/{thread['id']}", token=gh.token_for("ben")).status_code == 404
    )
