"""Every URL the Slack replica hands out leads back to it, and answers there: permalinks,
file URLs, the workspace URL and icons. An agent that follows a link, as a browser or an
SDK would, never leaves for slack.com."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

_ELSEWHERE = ("https://docs.example.com/",)
"""The agent's own URLs, handed back as given (a remote file's external_url)."""
_NOT_YET = ("https://secure.gravatar.com/avatar/", "https://a.slack-edge.com/80588/img/plugins/app/bot_")
"""Users' avatars and the bot's icons on messages (docs/tools/slack.md says so)."""


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        yield value


def test_every_url_in_the_answers_leads_back_to_the_replica(slack):
    client = slack.client
    support = slack.channel("support")
    posted = client.chat_postMessage(channel=support, text="find the export link")
    file = client.files_upload_v2(channel=support, content="csv", filename="export.csv")["file"]
    remote = client.files_remote_add(external_id="d", external_url="https://docs.example.com/d", title="Doc")
    client.files_remote_share(external_id="d", channels=support)
    bot_id = client.auth_test()["bot_id"]
    answers = [
        client.auth_test(),
        client.team_info(),
        client.bots_info(bot=bot_id),
        posted,
        client.chat_getPermalink(channel=support, message_ts=posted["ts"]),
        client.files_info(file=file["id"]),
        client.files_list(),
        remote,
        client.files_remote_list(),
        client.conversations_history(channel=support),
        client.conversations_info(channel=support),
        client.users_list(),
    ]
    urls = {url for answer in answers for url in _urls(answer.data)}
    ours = {url for url in urls if not url.startswith(_ELSEWHERE + _NOT_YET)}
    assert ours and all(url.startswith(slack.url + "/") for url in ours), sorted(ours)
    for url in ours:
        answer = httpx.get(url, headers={"authorization": f"Bearer {slack.token}"}, timeout=10)
        assert answer.status_code == 200, url
