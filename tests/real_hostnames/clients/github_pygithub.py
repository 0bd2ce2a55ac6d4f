"""A client agent for real hostnames: PyGithub with only a token (https://api.github.com)
reads issue #1 of acme/orders and comments on it."""

from __future__ import annotations

import os
import sys

from github import Auth, Github

ISSUE = 1


def main() -> int:
    # No pacing between calls: it is not a base URL, and PyGithub's default for github.com
    # (0.25 s a request, 1 s a write) only slows the test down.
    github = Github(auth=Auth.Token(os.environ["ANCHA_GITHUB_TOKEN"]), seconds_between_requests=0,
                    seconds_between_writes=0)
    issue = github.get_repo("acme/orders").get_issue(ISSUE)
    comment = issue.create_comment(f"PyGithub read {issue.title!r} at api.github.com")
    print(f"github_pygithub: read issue #{issue.number} ({issue.title!r}), commented {comment.html_url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
