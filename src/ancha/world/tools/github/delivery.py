"""What the agent hears from GitHub: repository webhooks, on the event feed and signed.

Every change someone else makes (a person, the world) becomes the webhooks GitHub
sends a repository hook subscribed to everything (``webhooks``, ``webhooks_git``,
``webhooks_deployments``): each is pushed to the feed as ``{"service": "github",
"type": X-GitHub-Event, "at", "payload": body}``. The agent's own writes are not
delivered, as with Slack: a ``per_event`` agent would otherwise wake on its own
comments forever. ``signed_request`` gives the HTTP form GitHub POSTs to a hook URL,
for endpoint agents.

Git ref moves arrive as the ``ref_updated`` domain event the replica publishes for every
move of a repository's refs (data: ``ref``, ``before``, ``after``, the pusher's ``user``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.tool import Tool
from ancha.world.kernel.webhook import Attempt, WebhookForm
from ancha.world.tools.github.replica import GitHubReplica
from ancha.world.tools.github.webhooks import Lookup, Webhook, for_event
from ancha.world.tools.github.webhooks_git import ref_webhooks

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

HOOKSHOT = "GitHub-Hookshot/4a5b1c9"
"""The ``User-Agent`` of GitHub's webhook deliveries (a build of its hookshot service)."""

DELIVERED = (
    "issue_opened", "issue_edited", "issue_closed", "issue_reopened", "issue_labeled", "issue_unlabeled",
    "issue_assigned", "issue_unassigned", "issue_locked", "issue_unlocked", "issue_comment_created",
    "issue_comment_edited", "issue_comment_deleted", "label_created", "label_edited", "label_deleted",
    "pull_opened", "pull_edited", "pull_closed", "pull_merged", "pull_reopened", "review_requested",
    "pull_review_submitted", "pull_review_comment_created", "deployment_created", "deployment_status_created",
)


class GitHubDelivery:
    service = "github"

    def __init__(self, replica: GitHubReplica, world: WorldPort) -> None:
        self.world = world
        self.replica = replica
        self.seen = Lookup()
        self._closed: set[tuple[str, int, float]] = set()
        state = replica.state
        # Deleted labels and comments are gone from the state when their events arrive.
        for repo in state.repos.values():
            for label in repo.labels.values():
                self.seen.labels[(repo.key, label.name.lower())] = label
        self.seen.comments.update(state.comments)
        for kind in DELIVERED:
            world.bus.subscribe(kind, self._on_event)
        world.bus.subscribe("ref_updated", self._on_ref_updated)

    # --- domain events ----------------------------------------------------------------------

    def _on_event(self, event: DomainEvent) -> None:
        data = event.data
        self._remember(event)
        if data.get("actor") == "agent":
            return
        closing = event.type in ("pull_closed", "pull_merged", "issue_closed") and data.get("is_pull")
        if closing and not self._first_close(data):
            return
        for webhook in for_event(self.replica, event, self.seen):
            self._push(webhook, event.at)

    def _remember(self, event: DomainEvent) -> None:
        data = event.data
        owner, _, name = str(data.get("repo", "")).partition("/")
        repo = self.replica.state.repo(owner, name)
        if repo is None:
            return
        if event.type in ("label_created", "label_edited"):
            label = repo.labels.get(str(data.get("label", "")).lower())
            if label is not None:
                self.seen.labels[(repo.key, label.name.lower())] = label
        elif event.type == "issue_comment_created":
            comment = self.replica.state.comments.get(int(data.get("comment_id") or 0))
            if comment is not None:
                self.seen.comments[comment.id] = comment

    def _first_close(self, data: dict[str, Any]) -> bool:
        """A pull closed by merging may be announced twice (closed, merged): one webhook."""
        owner, _, name = str(data.get("repo", "")).partition("/")
        repo = self.replica.state.repo(owner, name)
        number = data.get("number")
        issue = repo.issues.get(number) if repo is not None and isinstance(number, int) else None
        if issue is None or issue.closed_at is None:
            return True
        key = (str(data["repo"]), int(number or 0), issue.closed_at)
        if key in self._closed:
            return False
        self._closed.add(key)
        return True

    # --- ref moves --------------------------------------------------------------------------

    def _on_ref_updated(self, event: DomainEvent) -> None:
        data = event.data
        if data.get("actor") == "agent":
            return
        owner, _, name = str(data.get("repo", "")).partition("/")
        repo = self.replica.state.repo(owner, name)
        pusher = self.replica.state.account(str(data.get("user", "")))
        if repo is None or pusher is None:
            return
        for webhook in ref_webhooks(self.replica.state, repo, pusher, self.replica.base_url, str(data["ref"]),
                                    data.get("before"), data.get("after"), event.at):
            self._push(webhook, event.at)

    # --- the feed ---------------------------------------------------------------------------

    def _push(self, webhook: Webhook, at: float) -> None:
        kind, payload = webhook
        self.world.feed.push({"service": self.service, "type": kind, "at": self.world.clock.isoformat(at),
                            "payload": payload})


def delivery_guid(world: WorldPort) -> str:
    """An ``X-GitHub-Delivery`` GUID from the trial's RNG."""
    hexits = world.random_hex(32)
    return f"{hexits[:8]}-{hexits[8:12]}-{hexits[12:16]}-{hexits[16:20]}-{hexits[20:]}"


def signed_request(event: str, payload: dict[str, Any], secret: str, delivery_id: str) -> tuple[dict[str, str], bytes]:
    """The headers and exact body bytes GitHub POSTs to a hook with this ``secret``.

    ``X-Hub-Signature-256`` is ``sha256=`` and the hex HMAC-SHA256 of the body under the
    secret (what octokit/webhooks verifies); ``X-Hub-Signature`` the same with SHA-1.
    """
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    key = secret.encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": HOOKSHOT,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-Hub-Signature": "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
    }
    return headers, body


def webhook_headers(tool: Tool, event: dict[str, Any], body: bytes, attempt: Attempt) -> dict[str, str]:
    """What GitHub sends with one webhook to an endpoint agent: ``X-GitHub-Event`` (the
    feed event's type), ``X-GitHub-Delivery`` and the signatures under the hook's secret."""
    assert isinstance(tool, GitHubReplica)
    key = tool.signing_secret.encode()
    return {
        "Content-Type": "application/json",
        "User-Agent": HOOKSHOT,
        "X-GitHub-Event": str(event.get("type", "")),
        "X-GitHub-Delivery": attempt.delivery,
        "X-GitHub-Hook-ID": "1",
        "X-Hub-Signature": "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
    }


WEBHOOK = WebhookForm(webhook_headers, timeout_s=10.0)
"""GitHub gives a hook 10 seconds to answer and never redelivers a failed delivery by itself."""


def start_delivery(replica: GitHubReplica, world: WorldPort) -> None:
    """Subscribe the agent's event feed to this world's GitHub."""
    GitHubDelivery(replica, world)
