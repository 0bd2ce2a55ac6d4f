"""What the judge sees of GitHub: the issues and pull requests opened during the attempt
and the comments written on any issue or pull request, from the replica's snapshot
(``world.json``'s ``github``), in time order, with the final state of each."""

from __future__ import annotations

from typing import Any

TEXT_CHARS = 2000


def _login(item: dict[str, Any]) -> str:
    user = item.get("user")
    return f"@{user['login']}" if isinstance(user, dict) and user.get("login") else "?"


def _kind(issue: dict[str, Any]) -> str:
    return "pull request" if issue.get("pull_request") else "issue"


def _state(issue: dict[str, Any], pulls: dict[int, dict[str, Any]]) -> str:
    pull = pulls.get(issue.get("number") or 0)
    if pull is not None and pull.get("merged_at"):
        return "merged"
    if pull is not None and pull.get("draft") and issue.get("state") == "open":
        return "draft"
    return str(issue.get("state") or "?")


def judge_view(snapshot: dict[str, Any]) -> str:
    """GitHub's part of what the judge reads, as text."""
    opened: list[tuple[str, str]] = []
    comments: list[tuple[str, str]] = []
    for repo in snapshot.get("repos") or []:
        if not isinstance(repo, dict):
            continue
        name = str(repo.get("full_name") or "?")
        pulls = {int(p.get("number") or 0): p for p in repo.get("pulls") or [] if isinstance(p, dict)}
        for issue in repo.get("issues") or []:
            if not isinstance(issue, dict):
                continue
            where = f"{name}#{issue.get('number')}"
            state = _state(issue, pulls)
            if not issue.get("seeded"):
                labels = ", ".join(str(label.get("name")) for label in issue.get("labels") or []
                                   if isinstance(label, dict))
                assignees = ", ".join(f"@{a.get('login')}" for a in issue.get("assignees") or []
                                      if isinstance(a, dict))
                line = f"- {_kind(issue)} {where} ({state}) by {_login(issue)}: {issue.get('title') or ''}"
                if labels:
                    line += f" [labels: {labels}]"
                if assignees:
                    line += f" [assignees: {assignees}]"
                pull = pulls.get(int(issue.get("number") or 0))
                if pull is not None:
                    head = (pull.get("head") or {}).get("ref")
                    base = (pull.get("base") or {}).get("ref")
                    line += f" [{head} -> {base}]"
                body = str(issue.get("body") or "")[:TEXT_CHARS]
                opened.append((str(issue.get("created_at") or ""), line + (f"\n  {body}" if body else "")))
            for comment in issue.get("comment_bodies") or []:
                if not isinstance(comment, dict) or comment.get("seeded"):
                    continue
                text = str(comment.get("body") or "")[:TEXT_CHARS]
                comments.append((str(comment.get("created_at") or ""),
                                 f"- on {_kind(issue)} {where} \"{issue.get('title') or ''}\" ({state}), "
                                 f"at {comment.get('created_at')}, {_login(comment)}: {text}"))
    lines = ["GitHub issues and pull requests opened during the attempt (final state):"]
    lines += [line for _, line in sorted(opened)] or ["(none)"]
    lines.append("GitHub comments written during the attempt:")
    lines += [line for _, line in sorted(comments)] or ["(none)"]
    return "\n".join(lines)
