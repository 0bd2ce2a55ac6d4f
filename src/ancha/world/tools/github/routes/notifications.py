"""Notifications: list (``all``, ``participating``, ``since``, ``before``), mark read (all, by
repository, one thread), mark a thread done, and thread subscriptions.

Threads come from the activity on issues and pull requests (``models/notifications.py``).
Marking read answers 205 with an empty body, as GitHub does when it is done at once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.models.notifications import Thread, threads_of
from ancha.world.tools.github.router import route

PARTICIPATING = frozenset(
    {"assign", "author", "comment", "mention", "review_requested", "manual", "state_change"}
)


def _mine(call: Call) -> list[Thread]:
    user = call.user
    return [
        t
        for t in threads_of(call.state).values()
        if t.user is user and not t.done and call.state.role(t.repo, user) is not None
    ]


def _listed(call: Call, threads: list[Thread]) -> list[dict[str, Any]]:
    every = call.query.get("all", "false") == "true"
    participating = call.query.get("participating", "false") == "true"
    since, before = call.q_time("since"), call.q_time("before")
    shown = [
        t
        for t in threads
        if (every or t.unread)
        and (not participating or t.reason in PARTICIPATING)
        and (since is None or t.updated_at >= since)
        and (before is None or t.updated_at < before)
    ]
    shown.sort(key=lambda t: (t.updated_at, t.id), reverse=True)
    per_page = call.q_int("per_page", 50, 1, 50)
    call.query["per_page"] = str(per_page)
    return [t.to_dict(call.base) for t in call.page(shown)]


def _mark_read(call: Call, threads: list[Thread]) -> Reply:
    stamp = call.field_str("last_read_at", allow_none=False)
    upto = call.now()
    if stamp:
        try:
            upto = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise errors.invalid_request(f"For 'last_read_at', \"{stamp}\" is not a date-time.") from None
    read = call.field_bool("read", True)
    for thread in threads:
        if thread.updated_at <= upto:
            thread.unread = not read
            if read:
                thread.last_read_at = upto
    return Reply(205)


def _thread(call: Call) -> Thread:
    thread = threads_of(call.state).get(call.number("thread_id"))
    if thread is None or thread.user is not call.user or call.state.role(thread.repo, call.user) is None:
        raise errors.NotFound()
    return thread


@route("GET", "/notifications")
def activity_list_notifications_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return _listed(call, _mine(call))


@route("PUT", "/notifications")
def activity_mark_notifications_as_read(call: Call) -> Reply:
    return _mark_read(call, _mine(call))


@route("GET", "/repos/{owner}/{repo}/notifications")
def activity_list_repo_notifications_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    return _listed(call, [t for t in _mine(call) if t.repo is repo])


@route("PUT", "/repos/{owner}/{repo}/notifications")
def activity_mark_repo_notifications_as_read(call: Call) -> Reply:
    repo = call.repo()
    return _mark_read(call, [t for t in _mine(call) if t.repo is repo])


@route("GET", "/notifications/threads/{thread_id}")
def activity_get_thread(call: Call) -> dict[str, Any]:
    return _thread(call).to_dict(call.base)


@route("PATCH", "/notifications/threads/{thread_id}")
def activity_mark_thread_as_read(call: Call) -> Reply:
    thread = _thread(call)
    thread.unread, thread.last_read_at = False, call.now()
    return Reply(205)


@route("DELETE", "/notifications/threads/{thread_id}")
def activity_mark_thread_as_done(call: Call) -> Reply:
    thread = _thread(call)
    thread.done, thread.unread = True, False
    return no_content()


@route("GET", "/notifications/threads/{thread_id}/subscription")
def activity_get_thread_subscription_for_authenticated_user(call: Call) -> dict[str, Any]:
    return _thread(call).subscription(call.base)


@route("PUT", "/notifications/threads/{thread_id}/subscription")
def activity_set_thread_subscription(call: Call) -> dict[str, Any]:
    thread = _thread(call)
    ignored = call.field_bool("ignored", False)
    thread.subscribed, thread.subscribed_at = not ignored, call.now()
    return thread.subscription(call.base)


@route("DELETE", "/notifications/threads/{thread_id}/subscription")
def activity_delete_thread_subscription(call: Call) -> Reply:
    thread = _thread(call)
    thread.subscribed, thread.subscribed_at = None, None
    return no_content()
