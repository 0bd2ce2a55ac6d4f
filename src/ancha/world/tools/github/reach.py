"""GitHub's side of reach: which people a GitHub message reaches, and writing as someone.

Messages are what people read in an issue or pull request's conversation: a new issue
or pull request (title and body), a comment on either, a review (its body; a dismissal
is none), a review comment on a pull request's code, and a review request (``Review
requested from @login: title``, reaching the requested reviewers only). Each is said
in ``Place("github", "owner/repo#N")`` and answered in the same place. The ``message``
record's fields: ``issue`` (or ``pull``) ``owner/repo#N``, so ``in: $issue_ref``
selects it; ``user``, the writer's login; ``item`` (``issue``, ``pull``, ``comment``,
``review``, ``review_comment``, ``review_request``); and the id of the ``comment``,
``review`` or ``review_comment`` where there is one.

A message on issue or pull request N reaches person P (never its writer, and never
someone who cannot read the repository) when P's account

- authored N, is assigned to it, or is a requested reviewer of it (direct);
- is @-mentioned in the message (direct), or was requested by this review request
  (direct);
- was @-mentioned earlier in N's conversation, commented there, or reviewed it
  (reached, not addressed).

Answers: a person answers with a comment on N (through the REST API with a token of
their own account, traced as ``person:NAME``), with one exception that scene authors
control through the person's text. On a pull request where P has been asked for a
review (P is a requested reviewer, or a review was requested from P during the
trial), an answer whose text starts with ``approve``, ``approved`` or ``lgtm``
(any case) is submitted as an ``APPROVE`` review with that text as its body, and one
starting with ``request changes`` or ``changes requested`` as a ``REQUEST_CHANGES``
review. So a decision ``text: "LGTM, ship {option}."`` approves, and ``pending: "I
can't approve until ..."`` stays a comment. If GitHub refuses the review (an author
cannot approve their own pull request) the answer is posted as a comment instead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.kernel.reach import Directory, Place, Utterance
from ancha.world.tools.github.actor import GitHubActor

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.github.models import Issue, Repo
    from ancha.world.tools.github.replica import GitHubReplica

TOOL = "github"

MENTION = re.compile(r"(?<![\w@/`.-])@([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})")
"""An @-mention of a login (not an e-mail address, not a team ``@org/team``'s second part)."""

APPROVE = ("approve", "approved", "lgtm")
REQUEST_CHANGES = ("request changes", "changes requested")


def mentioned(text: str) -> set[str]:
    """Lower-cased logins @-mentioned in ``text``."""
    return {m.lower() for m in MENTION.findall(text or "")}


def review_event(text: str) -> str | None:
    """The review an answer submits by its first words (see the module docstring), or None."""
    start = text.strip().lower()
    if any(start.startswith(p) for p in REQUEST_CHANGES):
        return "REQUEST_CHANGES"
    if any(start.startswith(p) for p in APPROVE):
        return "APPROVE"
    return None


class GitHubReach:
    tool: str = TOOL
    events: tuple[str, ...] = ("issue_opened", "pull_opened", "issue_comment_created", "pull_review_submitted",
                               "pull_review_comment_created", "review_requested")

    def __init__(self, replica: GitHubReplica, world: WorldPort, directory: Directory) -> None:
        self.directory = directory
        self.actor = GitHubActor(replica, world)
        self.state = replica.state
        for user in self.state.users.values():
            if user.person:
                directory.link(TOOL, user.login, user.person.removeprefix("$").rpartition(".")[2])
        self.people = directory.people_on(TOOL)
        self._conversations: dict[tuple[str, int], tuple[set[str], set[str]]] = {}
        """(repo, number) -> (logins that wrote there, logins @-mentioned there), lower-case."""
        self._asked_review: set[tuple[str, str]] = set()
        """(``owner/repo#N``, lower-cased login) of review requests made during the trial."""

    # --- what was written -----------------------------------------------------------------

    def _issue(self, data: dict[str, Any]) -> tuple[Repo, Issue] | None:
        repo = self.state.repos.get(str(data.get("repo") or "").lower())
        number = data.get("number")
        issue = repo.issues.get(number) if repo is not None and isinstance(number, int) else None
        return (repo, issue) if repo is not None and issue is not None else None

    def utterance(self, event: DomainEvent) -> Utterance | None:
        data = event.data
        if event.type == "issue_opened" and data.get("is_pull"):
            return None  # the pull's own event (pull_opened) says it
        if event.type == "pull_review_submitted" and data.get("state") == "DISMISSED":
            return None  # a dismissal writes nothing
        found = self._issue(data)
        if found is None:
            return None
        repo, issue = found
        container = f"{repo.full_name}#{issue.number}"
        is_pull = issue.pull is not None
        writer = str(data.get("user") or "")
        item, text, extra = self._what(event, issue)
        if item == "review_request":
            requested = {str(r).lower() for r in data.get("reviewers") or ()}
            for login in requested:
                self._asked_review.add((container, login))
            audience = self._audience_of_request(repo, writer, requested)
        else:
            audience = self._audience(repo, issue, writer, text)
        place = Place(TOOL, container)
        where = "pull" if is_pull else "issue"
        locator: dict[str, Any] = {where: container, **extra}
        return Utterance(
            tool=TOOL, place=place, reply_place=place, author=writer, actor=data.get("actor") or "agent",
            text=text, at=event.at, locator=locator,
            fields={where: container, "user": writer, "item": item, **extra}, audience=audience,
        )

    def _what(self, event: DomainEvent, issue: Issue) -> tuple[str, str, dict[str, Any]]:
        """(item, text, locator extras) of the message ``event`` announces."""
        data = event.data
        heading = f"{issue.title}\n\n{issue.body}" if issue.body else issue.title
        if event.type == "issue_opened":
            return "issue", heading, {}
        if event.type == "pull_opened":
            return "pull", heading, {}
        if event.type == "issue_comment_created":
            return "comment", str(data.get("body") or ""), {"comment": data.get("comment_id")}
        if event.type == "pull_review_submitted":
            return "review", str(data.get("body") or ""), {"review": data.get("review_id")}
        if event.type == "pull_review_comment_created":
            return "review_comment", str(data.get("body") or ""), {"review_comment": data.get("comment_id")}
        reviewers = " ".join(f"@{r}" for r in data.get("reviewers") or ())
        return "review_request", f"Review requested from {reviewers}: {heading}", {}

    def _reads(self, repo: Repo, login: str) -> bool:
        user = self.state.user(login)
        return user is not None and self.state.role(repo, user) is not None

    def _audience(self, repo: Repo, issue: Issue, writer: str, text: str) -> dict[str, bool]:
        if not self.people:
            return {}
        named = mentioned(text)
        owners = {issue.user.login.lower(), *(a.login.lower() for a in issue.assignees)}
        if issue.pull is not None:
            owners.update(r.login.lower() for r in issue.pull.requested_reviewers)
        earlier, were_mentioned = self._conversation(repo, issue)
        audience: dict[str, bool] = {}
        for person, login in self.people:
            key = login.lower()
            if key == writer.lower() or not self._reads(repo, login):
                continue
            if key in named or key in owners:
                audience[person] = True
            elif key in earlier or key in were_mentioned:
                audience[person] = False
        earlier.add(writer.lower())
        were_mentioned.update(named)
        return audience

    def _conversation(self, repo: Repo, issue: Issue) -> tuple[set[str], set[str]]:
        """Who has written in the conversation of ``issue`` and who was @-mentioned there: read
        once from the issue, then kept as messages arrive, so a message costs O(1) in its length
        rather than O(the conversation)."""
        key = (repo.full_name.lower(), issue.number)
        known = self._conversations.get(key)
        if known is None:
            writers = {c.user.login.lower() for c in issue.comments}
            texts = [issue.body or "", *(c.body for c in issue.comments)]
            if issue.pull is not None:
                writers.update(r.user.login.lower() for r in issue.pull.reviews)
                writers.update(c.user.login.lower() for c in issue.pull.review_comments)
            known = self._conversations[key] = (writers, {m for t in texts for m in mentioned(t)})
        return known

    def _audience_of_request(self, repo: Repo, writer: str, requested: set[str]) -> dict[str, bool]:
        return {person: True for person, login in self.people
                if login.lower() in requested and login.lower() != writer.lower() and self._reads(repo, login)}

    # --- writing as a person ----------------------------------------------------------------

    def post(self, person: str, place: Place, text: str) -> dict[str, Any] | None:
        login = self.directory.account(person, TOOL)
        repo_name, sep, number = place.container.rpartition("#")
        if login is None or not sep or not is_plain_int(number):
            return None
        actor = f"person:{person}"
        repo = self.state.repos.get(repo_name.lower())
        issue = repo.issues.get(int(number)) if repo is not None else None
        event = review_event(text)
        if issue is not None and issue.pull is not None and event is not None and self._asked(place, issue, login):
            status, answer = self.actor.call(login, actor, "POST", f"/repos/{repo_name}/pulls/{number}/reviews",
                                             {"body": text, "event": event})
            if status == 200 and isinstance(answer, dict):
                return {"pull": place.container, "review": answer.get("id")}
        status, answer = self.actor.call(login, actor, "POST", f"/repos/{repo_name}/issues/{number}/comments",
                                         {"body": text})
        if status != 201 or not isinstance(answer, dict):
            return None
        where = "pull" if issue is not None and issue.pull is not None else "issue"
        return {where: place.container, "comment": answer.get("id")}

    def _asked(self, place: Place, issue: Issue, login: str) -> bool:
        """Whether ``login`` was asked to review this pull request."""
        assert issue.pull is not None
        key = login.lower()
        return (place.container, key) in self._asked_review or any(
            r.login.lower() == key for r in issue.pull.requested_reviewers)
