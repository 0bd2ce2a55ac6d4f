"""Every form of slack_sdk's files_upload_v2 shares the file (the forms slack_sdk's own
integration tests use): ``channel``, ``channels`` as a list or a bare string, and
``files.completeUploadExternal(channel_id=...)``; with ``initial_comment``, ``thread_ts``,
``alt_txt`` and ``snippet_type``; content and file, as str, bytes, a BytesIO or a path;
several files at once; through WebClient and AsyncWebClient. The shared file is then in
``files.info``, ``files.list`` and the channel's history, and ``files.delete`` removes it."""

from __future__ import annotations

import asyncio
import warnings
from io import BytesIO
from pathlib import Path
from typing import Any

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient


def _shared_in(slack: Any, channel: str, file_id: str) -> None:
    """The file is in files.info, files.list and the channel's history, shared in ``channel``."""
    info = slack.client.files_info(file=file_id)["file"]
    assert channel in info["channels"] + info["groups"]
    assert file_id in [f["id"] for f in slack.client.files_list(channel=channel)["files"]]
    history = slack.client.conversations_history(channel=channel, limit=20)["messages"]
    assert any(file_id in [f["id"] for f in m.get("files", [])] for m in history)


@pytest.mark.parametrize("form", ["channel", "channels_list", "channels_str"])
def test_upload_v2__every_channel_form_shares_the_file(slack, form):
    support = slack.channel("support")
    args: dict[str, Any] = (
        {"channel": support}
        if form == "channel"
        else {"channels": [support]}
        if form == "channels_list"
        else {"channels": support}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # slack_sdk recommends channel over channels
        answer = slack.client.files_upload_v2(content="hello", filename="hello.txt", title="Hello", **args)
    file = answer["file"]
    assert file["title"] == "Hello" and file["name"] == "hello.txt"
    _shared_in(slack, support, file["id"])


def test_complete_upload_external__channel_id_shares_the_file(slack):
    support = slack.channel("support")
    started = slack.client.files_getUploadURLExternal(filename="raw.txt", length=3)
    assert httpx.post(started["upload_url"], content=b"raw", timeout=10).status_code == 200
    answer = slack.client.files_completeUploadExternal(
        files=[{"id": started["file_id"], "title": "Raw"}], channel_id=support
    )
    _shared_in(slack, support, answer["files"][0]["id"])


def test_upload_v2__channels_str_split_by_the_sdk_names_one_channel_not_its_letters(slack):
    """slack_sdk joins a str ``channels`` letter by letter; an unknown id so split is still unknown."""
    with pytest.raises(SlackApiError) as excinfo, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slack.client.files_upload_v2(content="x", filename="x.txt", channels="C0NOSUCH00")
    assert excinfo.value.response["error"] == "channel_not_found"


@pytest.mark.parametrize(
    "source", ["content_str", "content_bytes", "file_bytes", "file_bytesio", "file_path"]
)
def test_upload_v2__content_and_file_in_every_type(slack, tmp_path: Path, source):
    support = slack.channel("support")
    data = "line one\nline two\n"
    path = tmp_path / "notes.txt"
    path.write_text(data)
    payload: dict[str, Any] = {
        "content_str": {"content": data},
        "content_bytes": {"content": data.encode()},
        "file_bytes": {"file": data.encode()},
        "file_bytesio": {"file": BytesIO(data.encode())},
        "file_path": {"file": str(path)},
    }[source]
    file = slack.client.files_upload_v2(channel=support, filename="notes.txt", **payload)["file"]
    assert file["size"] == len(data)
    got = httpx.get(file["url_private"], headers={"authorization": f"Bearer {slack.token}"}, timeout=10)
    assert got.status_code == 200 and got.text == data
    _shared_in(slack, support, file["id"])


def test_upload_v2__comment_thread_alt_text_and_snippet_type(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="Send the script")
    answer = slack.client.files_upload_v2(
        channel=support,
        content="print(1)\n",
        filename="run.py",
        snippet_type="python",
        alt_txt="a one-line script",
        initial_comment="Here it is",
        thread_ts=parent["ts"],
    )
    file = answer["file"]
    assert (
        file["filetype"] == "python" and file["mode"] == "snippet" and file["alt_txt"] == "a one-line script"
    )
    [reply] = slack.client.conversations_replies(channel=support, ts=parent["ts"])["messages"][1:]
    assert reply["text"] == "Here it is" and [f["id"] for f in reply["files"]] == [file["id"]]


def test_upload_v2__several_files_share_in_one_message_and_delete_removes_one(slack):
    support = slack.channel("support")
    answer = slack.client.files_upload_v2(
        channel=support,
        initial_comment="two files",
        file_uploads=[
            {"content": "a,b\n", "filename": "a.csv", "title": "A"},
            {"file": BytesIO(b"\x89PNG\r\n\x1a\n"), "filename": "b.png", "title": "B"},
        ],
    )
    first, second = (f["id"] for f in answer["files"])
    [message] = [
        m for m in slack.client.conversations_history(channel=support)["messages"] if m["text"] == "two files"
    ]
    assert [f["id"] for f in message["files"]] == [first, second]
    slack.client.files_delete(file=first)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_info(file=first)
    assert excinfo.value.response["error"] == "file_deleted"
    assert first not in [f["id"] for f in slack.client.files_list()["files"]]
    _shared_in(slack, support, second)


def test_upload_v2__async_client_shares_in_every_channel_form(slack):
    support = slack.channel("support")
    client = AsyncWebClient(token=slack.token, base_url=slack.url + "/api/")

    async def upload() -> list[str]:
        ids = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for args in ({"channel": support}, {"channels": support}, {"channels": [support]}):
                answer = await client.files_upload_v2(file=b"bytes", filename="b.bin", **args)
                ids.append(answer["file"]["id"])
        return ids

    for file_id in asyncio.run(upload()):
        _shared_in(slack, support, file_id)
