"""Every URL a replica hands out leads back to it.

An agent follows the links it is given the way the official SDKs do: Octokit posts a release
asset to ``upload_url``, the ``pagerduty`` client pages through ``self`` links, a person opens
a Slack permalink. Each replica here is seeded as its own tests seed it, on a real server;
every read route it serves is called with the seeded world's ids, every absolute URL in every
answer (JSON values at any depth, ``Link`` and ``Location`` headers) is collected, and each
must name this environment on the server, then answer when fetched: no 404 (but where the vendor
answers one itself) and no 5xx (but 501, the replica's documented coverage gap). A URL with a
template (``{org}``, ``{/sha}``: a form to fill, not a resource) is checked for where it leads,
not fetched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from replica_routes import scene_of, seeded_path, served_routes
from tool_calls import auth_headers

from ancha.server.embedded import EmbeddedServer

TOOLS = ["slack", "github", "datadog", "okta", "pagerduty"]
URL = re.compile(r"https?://[^\s\"'<>)\]]+")
TEMPLATE = re.compile(r"\{[^{}]*\}")
DOCUMENTATION_KEYS = frozenset({"documentation_url", "docs_url"})
"""Keys whose URL is the vendor's documentation for an error, as the vendor answers it: a page
for people to read, not a resource of the world."""
SLACK_READS = ["auth.test", "team.info", "users.list", "conversations.list", "files.list", "emoji.list",
               "usergroups.list", "bots.info", "team.profile.get", "users.profile.get", "dnd.info", "pins.list",
               "stars.list", "reminders.list", "bookmarks.list", "search.messages", "search.all"]
"""Slack methods called without arguments, before the crawl reaches channels and messages."""
VENDOR_NOT_FOUND = {"github": ("/authorizations", "/hub", "/downloads", "/merges", "/subscription")}
"""Paths the vendor itself answers 404 to a GET of, though its answers name them: GitHub's root
names retired APIs, ``merges_url`` takes only a POST, and a repository one is not watching has
no ``subscription``."""
FOLLOWED_PER_TOOL = 400
"""A bound on the URLs fetched per tool (each distinct URL once); every URL seen is still checked."""


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as running:
        yield running


def _urls(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, url)`` for every absolute URL in a JSON value, at any depth."""
    if isinstance(value, dict):
        for name, inner in value.items():
            yield from _urls(inner, str(name))
    elif isinstance(value, list):
        for inner in value:
            yield from _urls(inner, key)
    elif isinstance(value, str) and value.startswith(("http://", "https://")) and " " not in value:
        yield key, value


def _answer_urls(answer: httpx.Response) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for header in ("link", "location"):
        found += [(header, url) for url in URL.findall(answer.headers.get(header, ""))]
    if "json" in answer.headers.get("content-type", ""):
        try:
            found += list(_urls(answer.json()))
        except json.JSONDecodeError:
            pass
    return found


class Walk:
    """One tool's crawl: what was asked, what was handed out, and what did not lead back."""

    def __init__(self, server: EmbeddedServer, context: dict[str, Any], tool: str) -> None:
        self.tool = tool
        self.credentials = context["tools"][tool]
        self.env_id = context["env_id"]
        origins = {urlsplit(server.url).netloc, urlsplit(server.tls_url).netloc}
        self.origins = origins
        self.client = httpx.Client(timeout=30, headers=auth_headers(tool, self.credentials), follow_redirects=False)
        self.seen: dict[str, str] = {}
        """URL -> where it was found."""
        self.followed: set[str] = set()
        self.elsewhere: list[str] = []
        self.broken: list[str] = []

    def leads_back(self, url: str) -> bool:
        parts = urlsplit(TEMPLATE.sub("", url))
        return parts.netloc in self.origins and f"/envs/{self.env_id}/" in parts.path + "/"

    def call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        answer = self.client.request(method, url, **kwargs)
        for key, found in _answer_urls(answer):
            if key in DOCUMENTATION_KEYS or found in self.seen:
                continue
            self.seen[found] = f"{key} in {method} {url}"
            if not self.leads_back(found):
                self.elsewhere.append(f"{found}  ({self.seen[found]})")
        return answer

    def follow_all(self) -> None:
        """Fetch every URL handed out that leads back (breadth first), up to the bound."""
        while True:
            pending = [url for url in self.seen if url not in self.followed and self.leads_back(url)
                       and not TEMPLATE.search(url)]
            if not pending or len(self.followed) >= FOLLOWED_PER_TOOL:
                return
            for url in pending[: FOLLOWED_PER_TOOL - len(self.followed)]:
                self.followed.add(url)
                answer = self.call("GET", url)
                path = urlsplit(url).path
                vendor_404 = path.endswith(VENDOR_NOT_FOUND.get(self.tool, ()))
                if (answer.status_code == 404 and not vendor_404) or (answer.status_code >= 500 and answer.status_code != 501):
                    self.broken.append(f"{url} -> {answer.status_code} {answer.text[:120]!r}  ({self.seen[url]})")


def _slack_crawl(walk: Walk, base: str) -> None:
    for method in SLACK_READS:
        walk.call("POST", f"{base}/api/{method}")
    channels = walk.call("POST", f"{base}/api/conversations.list",
                         data={"types": "public_channel,private_channel,mpim,im"}).json().get("channels", [])
    for channel in channels:
        walk.call("POST", f"{base}/api/conversations.info", data={"channel": channel["id"]})
        history = walk.call("POST", f"{base}/api/conversations.history", data={"channel": channel["id"]}).json()
        for message in history.get("messages", []):
            walk.call("POST", f"{base}/api/chat.getPermalink", data={"channel": channel["id"], "message_ts": message["ts"]})
            walk.call("POST", f"{base}/api/conversations.replies", data={"channel": channel["id"], "ts": message["ts"]})
    for user in walk.call("POST", f"{base}/api/users.list").json().get("members", []):
        walk.call("POST", f"{base}/api/users.info", data={"user": user["id"]})
    for file in walk.call("POST", f"{base}/api/files.list").json().get("files", []):
        walk.call("POST", f"{base}/api/files.info", data={"file": file["id"]})


def _rest_crawl(walk: Walk, base: str, server: EmbeddedServer, tool: str) -> None:
    env = server.app.registry.envs[walk.env_id]
    for method, template in served_routes(tool):
        if method == "GET":
            walk.call("GET", base + seeded_path(env, tool, template))


@pytest.mark.parametrize("tool", TOOLS)
def test_every_url_a_replica_hands_out__leads_back_to_it_and_answers(server: EmbeddedServer, tool: str) -> None:
    created = httpx.post(f"{server.url}/envs", json={"scene": {"name": f"urls-{tool}", **scene_of(tool)}, "trial": 1},
                         timeout=60)
    assert created.status_code == 201, created.text
    context = created.json()
    walk = Walk(server, context, tool)
    base = context["tools"][tool]["url"]
    if tool == "slack":
        _slack_crawl(walk, base)
    else:
        _rest_crawl(walk, base, server, tool)
    walk.follow_all()
    httpx.delete(f"{server.url}/envs/{walk.env_id}", timeout=30)

    assert walk.seen, f"the crawl of {tool} found no URL at all"
    assert not walk.elsewhere, f"{len(walk.elsewhere)} URLs of {tool} lead elsewhere:\n" + "\n".join(walk.elsewhere[:40])
    assert not walk.broken, f"{len(walk.broken)} URLs of {tool} do not answer:\n" + "\n".join(walk.broken[:40])
