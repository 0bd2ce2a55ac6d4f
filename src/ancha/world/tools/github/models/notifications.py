"""Notifications: one thread per (user, issue or pull request), made by the activity on it.

A write on an issue or a pull request (``GitHubReplica.publish`` with a number) notifies
everyone it concerns except whoever made it, with GitHub's reasons, strongest first:
``review_requested``, ``assign``, ``mention``, ``author``, ``comment``, then
``subscribed`` (watching the repository). The thread turns unread and its
``updated_at`` moves; a thread subscription set to ``ignored`` (or a thread marked done)
stops it, until new activity for a done thread. State lives beside the trial's
``GitHubState``, as pending invitations do.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from ancha.world.tools.github.models.repos import Repo
from ancha.world.tools.github.models.social import watching
from ancha.world.tools.github.models.state import GitHubState
from ancha.world.tools.github.models.users import Account, User
from ancha.world.tools.github.models.wire import JSONDict, iso


@dataclass(slots=True)
class Thread:
    id: int
    user: User
    repo: Repo
    number: int
    reason: str
    updated_at: float
    unread: bool = True
    last_read_at: float | None = None
    done: bool = False
    subscribed: bool | None = None
    """The thread subscription the user set: True, False (ignored), or None (none set)."""
    subscribed_at: float | None = None

    def to_dict(self, base: str) -> JSONDict:
        issue = self.repo.issues[self.number]
        kind = "PullRequest" if issue.is_pull else "Issue"
        api = f"{base}/repos/{self.repo.full_name}/{'pulls' if issue.is_pull else 'issues'}/{self.number}"
        latest = (
            f"{base}/repos/{self.repo.full_name}/issues/comments/{issue.comments[-1].id}"
            if issue.comments
            else api
        )
        url = f"{base}/notifications/threads/{self.id}"
        return {
            "id": str(self.id),
            "unread": self.unread,
            "reason": self.reason,
            "updated_at": iso(self.updated_at),
            "last_read_at": iso(self.last_read_at),
            "subject": {"title": issue.title, "url": api, "latest_comment_url": latest, "type": kind},
            "repository": self.repo.to_dict(base),
            "url": url,
            "subscription_url": f"{url}/subscription",
        }

    def subscription(self, base: str) -> JSONDict:
        url = f"{base}/notifications/threads/{self.id}"
        return {
            "subscribed": self.subscribed is not False,
            "ignored": self.subscribed is False,
            "reason": None if self.subscribed is not None else self.reason,
            "created_at": iso(self.subscribed_at if self.subscribed_at is not None else self.updated_at),
            "url": f"{url}/subscription",
            "thread_url": url,
        }


_THREADS: WeakKeyDictionary[GitHubState, dict[int, Thread]] = WeakKeyDictionary()


def threads_of(state: GitHubState) -> dict[int, Thread]:
    """Thread id -> thread, every user's."""
    found = _THREADS.get(state)
    if found is None:
        found = _THREADS[state] = {}
    return found


def _reason(state: GitHubState, repo: Repo, number: int, user: User) -> str | None:
    issue = repo.issues[number]
    pull = repo.pulls.get(number) if issue.is_pull else None
    if pull is not None and any(a.key == user.key for a in pull.requested_reviewers):
        return "review_requested"
    if any(a.key == user.key for a in issue.assignees):
        return "assign"
    if issue.mentions(user.login):
        return "mention"
    if issue.user.key == user.key:
        return "author"
    if any(c.user.key == user.key for c in issue.comments):
        return "comment"
    if any(s.user.key == user.key for s in watching(repo)):
        return "subscribed"
    return None


def record(state: GitHubState, repo: Repo, number: int, who: Account, at: float) -> None:
    """Activity by ``who`` on ``repo#number``: notify everyone else it concerns who can read it."""
    if number not in repo.issues:
        return
    threads = threads_of(state)
    for user in state.users.values():
        if user.key == who.key or state.role(repo, user) is None:
            continue
        reason = _reason(state, repo, number, user)
        thread = next(
            (t for t in threads.values() if t.user is user and t.repo is repo and t.number == number), None
        )
        if thread is not None and thread.subscribed is False:
            continue
        if reason is None and (thread is None or not thread.subscribed):
            continue
        if thread is None:
            thread = Thread(state.ids.next("thread"), user, repo, number, reason or "subscribed", at)
            threads[thread.id] = thread
        thread.reason = reason or thread.reason
        thread.updated_at, thread.unread, thread.done = at, True, False
