"""A client agent for real hostnames: githubkit with only a token (https://api.github.com)
reads issue #2 of acme/orders over REST, comments on it, and reads it again over GraphQL."""

from __future__ import annotations

import os
import sys

from githubkit import GitHub

ISSUE = 2
QUERY = """
query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { title comments(first: 50) { totalCount } } }
}
"""


def main() -> int:
    github = GitHub(os.environ["ANCHA_GITHUB_TOKEN"])
    issue = github.rest.issues.get("acme", "orders", ISSUE).parsed_data
    comment = github.rest.issues.create_comment("acme", "orders", ISSUE,
                                                body=f"githubkit read {issue.title!r} at api.github.com").parsed_data
    answer = github.graphql(QUERY, {"owner": "acme", "name": "orders", "number": ISSUE})
    read = answer["repository"]["issue"]
    if read["title"] != issue.title or read["comments"]["totalCount"] < 1:
        print(f"githubkit: GraphQL answered {read}, expected {issue.title!r} with a comment", file=sys.stderr)
        return 1
    print(f"github_githubkit: read issue #{ISSUE} ({issue.title!r}) over REST and GraphQL, "
          f"commented {comment.html_url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
