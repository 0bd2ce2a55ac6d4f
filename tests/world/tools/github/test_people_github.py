"""People on GitHub: whom an issue or pull request message reaches, what they learn there,
and how they answer (a comment where asked; a review when asked for one), through the
real server and PyGithub as the agent."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any

import httpx
import pytest

from ancha.scene.model import MessageSelector, Scene
from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.reach import Place
from ancha.world.registry import registry
from ancha.world.selectors import compile_selector
from ancha.world.tools.github.events import domain_event
from ancha.world.tools.github.reach import GitHubReach, mentioned, review_event
from ancha.world.tools.github.routes import ROUTER

SEED: dict[str, Any] = {
    "agent": {"ref": "github_agent", "login": "ancha-agent"},
    "users": [{"ref": "gh_laura", "login": "laura"}, {"ref": "gh_ben", "login": "ben"},
              {"ref": "gh_mike", "login": "mike"}],
    "repos": [
        {"ref": "orders", "name": "acme/orders", "files": {"README.md": "# orders\n"},
         "branches": {"fix-exports": {"from": "main"}},
         "commits": [{"branch": "docs", "message": "Docs", "author": "gh_laura", "files": {"DOCS.md": "Docs\n"}}],
         "permissions": {"github_agent": "write", "gh_laura": "write", "gh_ben": "write", "gh_mike": "write"},
         "issues": [{"ref": "export_bug", "title": "CSV exports are gone", "body": "They vanished.",
                     "author": "gh_mike"},
                    {"ref": "ben_issue", "title": "Flaky test", "author": "gh_ben", "assignees": ["gh_mike"]}],
         "pulls": [{"ref": "fix_pull", "title": "Fix exports", "head": "fix-exports", "author": "gh_ben",
                    "reviewers": ["gh_laura"]}]},
        {"ref": "vault", "name": "ben/vault", "private": True,
         "issues": [{"ref": "secret_issue", "title": "Keys", "author": "gh_ben"}]},
    ],
}

PEOPLE: dict[str, Any] = {
    "laura": {
        "name": "Laura Diaz", "accounts": {"github": "gh_laura"}, "replies_after": [60.0, 60.0],
        "facts": {"workspace": {"text": "We're on acme-prod.", "asked_by": ["workspace"], "match": ["acme-prod"]}},
        "decisions": {"ship": {"asked_by": ["review"], "options": ["ship", "hold"], "chooses": "ship",
                               "text": "LGTM, {option} it."}},
    },
    "ben": {
        "name": "Ben Okafor", "accounts": {"github": "gh_ben"}, "replies_after": [120.0, 120.0],
        "facts": {"root_cause": {"text": "The beta writer drops rows.", "asked_by": ["root cause"],
                                 "match": ["drops rows"]}},
    },
    "mike": {"name": "Mike Chen", "accounts": {"github": "gh_mike"}, "replies_after": [60.0, 60.0]},
}


def _has_route(method: str, path: str) -> bool:
    found = ROUTER.match(path, method)
    return found is not None and method in found[0]


REVIEWS = _has_route("POST", "/repos/acme/orders/pulls/3/reviews")
REQUESTS = _has_route("POST", "/repos/acme/orders/pulls/3/requested_reviewers")


@pytest.fixture
def github_people(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's GitHub with its people adapter (until the tool's spec wires it in)."""
    built = registry()
    spec = built.tools.get("github")
    if spec is not None and spec.reach is None:
        monkeypatch.setitem(built.tools, "github", replace(spec, reach=GitHubReach))


class Trial:
    def __init__(self, gh: Any, env: Environment) -> None:
        self.gh = gh
        self.env = env
        self.base = gh.url.rsplit("/github", 1)[0]

    def wait_until_ended(self, timeout: float = 10.0) -> dict[str, Any]:
        """The agent waits: the world runs what is due (replies), then the trial ends idle."""
        answer = httpx.post(f"{self.base}/waiting", json={"waiting": True}, timeout=10)
        assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + timeout
        while True:
            status = dict(httpx.get(self.base, timeout=10).json())
            if status["status"] != "running" or time.monotonic() > deadline:
                return status
            time.sleep(0.01)

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [{**r.data, "at": r.at} for r in self.env.records.of_kind(kind)]


@pytest.fixture
def trial(make_github: Callable[..., Any], embedded_server: Any, github_people: None) -> Iterator[
        Callable[..., Trial]]:
    def make(people: dict[str, Any] | None = None, seed: dict[str, Any] | None = None) -> Trial:
        gh = make_github(copy.deepcopy(seed or SEED), scene={
            "people": copy.deepcopy(PEOPLE if people is None else people), "clock": {
                "start": "2026-03-02T09:00:00Z", "limit": 7200}})
        env = embedded_server.app.registry.get(gh.context["env_id"])
        return Trial(gh, env)

    yield make


def _seconds(value: datetime) -> float:
    return value.timestamp()


def test_mention_in_issue_comment__she_answers_with_a_comment_after_her_delay(trial: Callable[..., Trial]) -> None:
    t = trial()
    issue = t.gh.client.get_repo("acme/orders").get_issue(1)
    asked = issue.create_comment("@laura which workspace are you on?")
    assert t.wait_until_ended()["status"] == "idle"

    comments = list(issue.get_comments())
    assert [(c.user.login, c.body) for c in comments] == [
        ("ancha-agent", "@laura which workspace are you on?"), ("laura", "We're on acme-prod.")]
    assert abs(_seconds(comments[1].created_at) - _seconds(asked.created_at) - 60) <= 1, "her delay is simulated"
    messages = t.records("message")
    assert [(m["issue"], m["user"], m["item"], m["reached"], m["actor"]) for m in messages] == [
        ("acme/orders#1", "ancha-agent", "comment", ["laura", "mike"], "agent"),
        ("acme/orders#1", "laura", "comment", ["mike"], "person:laura")]
    revealed = t.records("revealed")
    assert [(r["person"], r["fact"], r["message"]) for r in revealed] == [
        ("laura", "laura.workspace", {"issue": "acme/orders#1", "comment": comments[1].id})]
    in_issue = compile_selector(MessageSelector.model_validate({"in": "export_bug", "from_person": "laura"}), t.env)
    assert [in_issue.matches(r.data) for r in t.env.records.of_kind("message")] == [False, True]
    by_laura = [e for e in t.gh.trace() if e["actor"] == "person:laura"]
    assert [(e["method"], e["path"], e["status"]) for e in by_laura] == [
        ("POST", "/repos/acme/orders/issues/1/comments", 201)]


def test_unrelated_issue__reaches_nobody_and_nobody_answers(trial: Callable[..., Trial]) -> None:
    t = trial()
    t.gh.client.get_repo("acme/orders").get_issue(1).create_comment("Which workspace is this?")
    assert t.wait_until_ended()["status"] == "idle"
    messages = t.records("message")
    assert [m["reached"] for m in messages] == [["mike"]], "only the issue's author hears it"
    assert t.records("revealed") == []


def test_author_assignee_and_earlier_commenters__are_reached(trial: Callable[..., Trial]) -> None:
    t = trial()
    repo = t.gh.client.get_repo("acme/orders")
    opened = repo.create_issue("Exports again", body="Ping @ben", assignees=["mike"])
    opened.create_comment("One more thing")
    assert t.wait_until_ended()["status"] == "idle"
    messages = t.records("message")
    first, second = messages[0], messages[1]
    assert (first["issue"], first["item"], first["reached"]) == (f"acme/orders#{opened.number}", "issue",
                                                                   ["ben", "mike"])
    assert second["reached"] == ["ben", "mike"], "mentioned earlier in the conversation, and the assignee"
    assert first["text"] == "Exports again\n\nPing @ben"


def test_private_repository__a_mention_does_not_reach_who_cannot_read_it(trial: Callable[..., Trial]) -> None:
    t = trial()
    ben = t.gh.as_user("ben")
    ben.get_repo("ben/vault").get_issue(1).create_comment("@laura do you see this?")
    assert t.wait_until_ended()["status"] == "idle"
    assert [m["reached"] for m in t.records("message")] == [[]]


def test_fact_learned_on_github__from_a_person_answering_in_the_same_issue(trial: Callable[..., Trial]) -> None:
    t = trial()
    issue = t.gh.client.get_repo("acme/orders").get_issue(1)
    issue.create_comment("@ben what is the root cause here?")
    assert t.wait_until_ended()["status"] == "idle"
    assert [c.body for c in issue.get_comments()][-1] == "The beta writer drops rows."
    knows = [r for r in t.records("knows") if r["via"] == "message"]
    assert [(r["person"], r["fact"]) for r in knows] == [("mike", "ben.root_cause")], \
        "Mike authored the issue, so Ben's answer there reaches him"
    assert [(r["person"], r["fact"]) for r in t.records("revealed")] == [("ben", "ben.root_cause")]


def test_pull_opened__one_message_reaching_who_it_mentions(trial: Callable[..., Trial]) -> None:
    t = trial()
    t.gh.client.get_repo("acme/orders").create_pull(title="Docs", body="@laura please take a look", head="docs",
                                                    base="main")
    assert t.wait_until_ended()["status"] == "idle"
    messages = t.records("message")
    assert [(m["pull"], m["item"], m["text"], m["reached"]) for m in messages] == [
        ("acme/orders#4", "pull", "Docs\n\n@laura please take a look", ["laura"])]


@pytest.mark.skipif(not REVIEWS, reason="the replica does not serve POST /repos/{o}/{r}/pulls/{n}/reviews yet")
def test_requested_reviewer_asked_to_review__answers_with_an_approve_review(trial: Callable[..., Trial]) -> None:
    t = trial()
    pull = t.gh.client.get_repo("acme/orders").get_pull(3)
    pull.create_issue_comment("@laura could you review this?")
    assert t.wait_until_ended()["status"] == "idle"
    reviews = list(pull.get_reviews())
    assert [(r.user.login, r.state, r.body) for r in reviews] == [("laura", "APPROVED", "LGTM, ship it.")]
    decided = t.records("decided")
    assert [(r["person"], r["option"], r["message"]) for r in decided] == [
        ("laura", "ship", {"pull": "acme/orders#3", "review": reviews[0].id})]
    review_message = t.records("message")[-1]
    assert (review_message["pull"], review_message["item"], review_message["user"]) == (
        "acme/orders#3", "review", "laura")


@pytest.mark.skipif(not (REVIEWS and REQUESTS), reason="the replica does not serve pull reviews yet")
def test_review_requested__the_reviewer_answers_with_an_approve_review(trial: Callable[..., Trial]) -> None:
    seed = copy.deepcopy(SEED)
    seed["repos"][0]["pulls"][0]["reviewers"] = []
    t = trial(seed=seed)
    pull = t.gh.client.get_repo("acme/orders").get_pull(3)
    pull.create_review_request(reviewers=["laura"])
    assert t.wait_until_ended()["status"] == "idle"
    request = t.records("message")[0]
    assert (request["pull"], request["item"], request["reached"]) == ("acme/orders#3", "review_request", ["laura"])
    assert [(r.user.login, r.state, r.body) for r in pull.get_reviews()] == [("laura", "APPROVED", "LGTM, ship it.")]


# --- the adapter in-process -------------------------------------------------------------------


@pytest.fixture
def env(github_people: None, make_github: Callable[..., Any]) -> Environment:
    """An environment built in this process, driven by hand (no server, no ticker)."""
    make_github  # noqa: B018  (registers GitHub in the registry when the tool's spec does not)
    scene = Scene.model_validate({"name": "people-github", "clock": {"start": "2026-03-02T09:00:00Z"},
                                  "world": {"github": copy.deepcopy(SEED)}, "people": copy.deepcopy(PEOPLE)})
    return Environment("env-people-github", scene, 1)


def _adapter(env: Environment) -> GitHubReach:
    adapter = next(a for a in env.people.adapters if a.tool == "github")
    assert isinstance(adapter, GitHubReach)
    return adapter


def test_review_request_event__reaches_the_requested_reviewer_directly(env: Environment) -> None:
    event: DomainEvent = domain_event("review_requested", env.clock.now(), repo="acme/orders", actor="agent",
                                      user="ancha-agent", number=3, is_pull=True, reviewers=["mike"])
    said = _adapter(env).utterance(event)
    assert said is not None
    assert said.audience == {"mike": True}
    assert said.place == said.reply_place == Place("github", "acme/orders#3")
    assert said.fields == {"pull": "acme/orders#3", "user": "ancha-agent", "item": "review_request"}
    assert said.text == "Review requested from @mike: Fix exports"


def test_answer_that_approves__is_a_comment_where_no_review_was_asked(env: Environment) -> None:
    message = _adapter(env).post("mike", Place("github", "acme/orders#3"), "LGTM")
    assert message is not None and set(message) == {"pull", "comment"}
    pull = env.tools["github"].state.repos["acme/orders"].issues[3]  # type: ignore[attr-defined]
    assert [(c.user.login, c.body, c.actor) for c in pull.comments] == [("mike", "LGTM", "person:mike")]


def test_refused_review__the_answer_is_posted_as_a_comment(env: Environment) -> None:
    # Ben wrote the pull: GitHub refuses an author's approval (and a replica without reviews answers 501).
    adapter = _adapter(env)
    adapter._asked_review.add(("acme/orders#3", "ben"))
    message = adapter.post("ben", Place("github", "acme/orders#3"), "Approved.")
    assert message is not None and "comment" in message
    assert [e.path for e in env.trace.by_actor("person:ben")][-1] == \
        "/repos/acme/orders/issues/3/comments"


def test_review_event__by_the_first_words() -> None:
    assert review_event("LGTM, ship it.") == "APPROVE"
    assert review_event("  approved") == "APPROVE"
    assert review_event("Request changes: the test is missing") == "REQUEST_CHANGES"
    assert review_event("Changes requested.") == "REQUEST_CHANGES"
    assert review_event("I can't approve until CI passes") is None


def test_mentions__logins_not_emails_or_team_parts() -> None:
    assert mentioned("cc @Laura and @ben-o, mail x@y.com, team @acme/backend") == {"laura", "ben-o", "acme"}
