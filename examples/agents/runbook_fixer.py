"""The GitHub example: fix a runbook line through a reviewed pull request, with PyGithub.

Branch, commit, pull request, review request, then wait on Ancha's event feed for Laura's
review (a `pull_request_review` webhook): waiting there is what lets the clock jump over
her ten to twenty minutes. Merge once she approves, and tell her on Slack.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from typing import Any

from github import Auth, Github
from slack_sdk import WebClient

WRONG = "`kubectl delete namespace orders`"
RIGHT = "`kubectl rollout restart deployment/orders -n orders`"
BRANCH = "fix-runbook-restart"


def wait_for_review(pull_number: int, timeout_s: float = 3600) -> dict[str, Any]:
    """The first review of the pull request that arrives on the feed."""
    url, token, cursor = os.environ["ANCHA_EVENTS_URL"], os.environ["ANCHA_EVENTS_TOKEN"], "0"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        query = urllib.parse.urlencode({"after": cursor, "wait": "20s"})
        request = urllib.request.Request(f"{url}?{query}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = json.load(answer)
        cursor = body["cursor"]
        for event in body["events"]:
            payload = event["payload"]
            if event["type"] == "pull_request_review" and payload["pull_request"]["number"] == pull_number:
                return dict(payload["review"])
    raise SystemExit("gave up waiting for a review")


def run(slack: WebClient) -> None:
    github = Github(auth=Auth.Token(os.environ["ANCHA_GITHUB_TOKEN"]), base_url=os.environ["ANCHA_GITHUB_URL"])
    repo = github.get_repo("acme/orders")
    main = repo.get_branch(repo.default_branch)
    repo.create_git_ref(f"refs/heads/{BRANCH}", main.commit.sha)
    runbook = repo.get_contents("docs/runbook.md", ref=BRANCH)
    assert not isinstance(runbook, list)
    text = runbook.decoded_content.decode()
    repo.update_file(runbook.path, "Runbook: restart with a rollout, never by deleting the namespace",
                     text.replace(WRONG, RIGHT), runbook.sha, branch=BRANCH)
    pull = repo.create_pull(title="Fix the restart command in the on-call runbook", head=BRANCH,
                            base=repo.default_branch,
                            body=f"Step 2 said {WRONG}, which deletes the service. It now says {RIGHT}.")
    pull.create_review_request(reviewers=["laura"])
    pull.create_issue_comment("@laura could you review this runbook fix?")

    review = wait_for_review(pull.number)
    if review["state"].lower() != "approved":
        raise SystemExit(f"laura did not approve: {review['state']} {review.get('body')}")
    pull.merge(merge_method="squash")

    ops = next(c["id"] for c in slack.conversations_list(types="public_channel")["channels"] if c["name"] == "ops")
    laura = slack.users_lookupByEmail(email="laura@acme.test")["user"]["id"]
    slack.chat_postMessage(channel=ops, text=f"<@{laura}> the runbook is fixed: restart step now uses {RIGHT} "
                                             f"(pull request #{pull.number}, merged). Thanks for the review!")
    print(f"merged acme/orders#{pull.number}")
