"""files.*: slack_sdk's files_upload_v2 against the replica (getUploadURLExternal, the POST
to the upload URL, completeUploadExternal), reading the bytes back, listing and deleting."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import jsonschema
import pytest
from slack_sdk.errors import SlackApiError

from ancha.world.tools.slack.files import MAX_FILE_BYTES

# Fields current Slack sends in a file object that the 2020 OpenAPI file predates or types
# more narrowly (its ``shares`` allows no channel entries at all).
_NEWER_FILE_FIELDS = {"file_access": {"type": "string"}, "alt_txt": {"type": "string"},
                      "shares": {"type": "object"}}


@pytest.fixture
def file_spec(openapi: dict[str, Any]) -> Callable[[str, dict[str, Any]], None]:
    """Assert a body fits the vendor's 200 schema for a files.* method."""

    def check(method: str, body: dict[str, Any]) -> None:
        definitions = copy.deepcopy(openapi["definitions"])
        definitions["objs_file"]["properties"].update(_NEWER_FILE_FIELDS)
        operation = openapi["paths"][f"/{method}"]
        schema = copy.deepcopy((operation.get("get") or operation.get("post"))["responses"]["200"]["schema"])
        jsonschema.Draft4Validator({**schema, "definitions": definitions}).validate(body)

    return check


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _bytes_at(slack: Any, url: str) -> httpx.Response:
    return httpx.get(url, headers={"authorization": f"Bearer {slack.token}"}, timeout=10)


def test_files_upload_v2__the_official_client_uploads_and_shares_a_file(slack, file_spec):
    support = slack.channel("support")
    answer = slack.client.files_upload_v2(channel=support, content="line one\nline two\n", filename="notes.txt",
                                          title="Meeting notes", initial_comment="Notes from today")
    file = answer["file"]
    assert file["id"].startswith("F") and file["title"] == "Meeting notes" and file["name"] == "notes.txt"
    assert file["size"] == len(b"line one\nline two\n") and file["filetype"] == "text"
    assert file["channels"] == [support] and file["is_public"]

    info = slack.client.files_info(file=file["id"])
    file_spec("files.info", info.data)
    assert info["file"]["title"] == "Meeting notes"
    assert info["file"]["shares"]["public"][support][0]["ts"]
    downloaded = _bytes_at(slack, info["file"]["url_private"])
    assert downloaded.status_code == 200 and downloaded.content == b"line one\nline two\n"
    assert downloaded.headers["content-type"].startswith("text/plain")
    assert _bytes_at(slack, info["file"]["url_private_download"]).content == b"line one\nline two\n"

    latest = slack.client.conversations_history(channel=support, limit=1)["messages"][0]
    assert latest["text"] == "Notes from today"
    assert latest["ts"] == info["file"]["shares"]["public"][support][0]["ts"]
    assert [f["id"] for f in latest["files"]] == [file["id"]]
    assert latest["bot_id"] == slack.client.auth_test()["bot_id"]


def test_files_upload_v2__bytes_and_several_files_in_one_share(slack):
    support = slack.channel("support")
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    answer = slack.client.files_upload_v2(channel=support, file_uploads=[
        {"file": png, "filename": "chart.png", "title": "Chart"},
        {"content": "a,b\n1,2\n", "filename": "data.csv"},
    ])
    first, second = answer["files"]
    assert (first["mimetype"], first["filetype"]) == ("image/png", "png")
    assert (second["title"], second["filetype"]) == ("data.csv", "csv")
    assert _bytes_at(slack, slack.client.files_info(file=first["id"])["file"]["url_private"]).content == png
    latest = slack.client.conversations_history(channel=support, limit=1)["messages"][0]
    assert [f["id"] for f in latest["files"]] == [first["id"], second["id"]]


def test_files_upload_v2__thread_ts_shares_as_a_reply(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="Logs please")
    slack.client.files_upload_v2(channel=support, content="ERROR x", filename="app.log", thread_ts=parent["ts"])
    thread = slack.client.conversations_replies(channel=support, ts=parent["ts"])["messages"]
    assert len(thread) == 2 and thread[1]["files"][0]["name"] == "app.log"
    assert thread[1]["thread_ts"] == parent["ts"]


def test_files_upload_v2__without_a_channel_the_file_stays_private(slack):
    answer = slack.client.files_upload_v2(content="draft", filename="draft.txt")
    info = slack.client.files_info(file=answer["file"]["id"])["file"]
    assert info["channels"] == [] and info["shares"] == {} and not info["is_public"]


def test_files_upload_v2__a_channel_the_bot_is_not_in_is_not_in_channel(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_upload_v2(channel=slack.channel("random"), content="x", filename="x.txt")
    assert _error(excinfo) == "not_in_channel"


def test_upload_url__takes_a_multipart_form_as_curl_sends_it(slack):
    ticket = slack.client.files_getUploadURLExternal(filename="report.md", length=9)
    answer = httpx.post(ticket["upload_url"], files={"filename": ("report.md", b"# Report\n")}, timeout=10)
    assert answer.status_code == 200 and answer.text == "OK - 9"
    done = slack.client.files_completeUploadExternal(files=[{"id": ticket["file_id"]}], channel_id="#support")
    assert done["files"][0]["title"] == "report.md"
    url = slack.client.files_info(file=ticket["file_id"])["file"]["url_private"]
    assert _bytes_at(slack, url).content == b"# Report\n"


def test_upload_url__an_unknown_or_used_ticket_is_not_found(slack):
    ticket = slack.client.files_getUploadURLExternal(filename="a.txt", length=1)
    assert httpx.post(ticket["upload_url"] + "x", content=b"a", timeout=10).status_code == 404
    assert httpx.post(ticket["upload_url"], content=b"a", timeout=10).status_code == 200
    slack.client.files_completeUploadExternal(files=[{"id": ticket["file_id"]}])
    assert httpx.post(ticket["upload_url"], content=b"b", timeout=10).status_code == 404


def test_files_get_upload_url_external__over_the_cap_is_file_upload_size_restricted(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_getUploadURLExternal(filename="big.bin", length=MAX_FILE_BYTES + 1)
    assert _error(excinfo) == "file_upload_size_restricted"


def test_files_get_upload_url_external__bad_arguments_get_slacks_errors(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_getUploadURLExternal(filename="empty.txt", length=0)
    assert _error(excinfo) == "missing_argument"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("files.getUploadURLExternal", params={"length": 3})
    assert _error(excinfo) == "invalid_arguments"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_getUploadURLExternal(filename="a.txt", length="lots")
    assert _error(excinfo) == "invalid_arguments"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_getUploadURLExternal(filename="a.png", length=3, alt_txt="x" * 1001)
    assert _error(excinfo) == "alt_txt_too_large"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_getUploadURLExternal(filename="a.py", length=2 * 1024 * 1024, snippet_type="python")
    assert _error(excinfo) == "snippet_too_large"


def test_files_complete_upload_external__a_file_never_uploaded_or_unknown_is_file_not_found(slack):
    ticket = slack.client.files_getUploadURLExternal(filename="a.txt", length=1)
    for files in ([{"id": ticket["file_id"]}], [{"id": "F0000000000"}]):
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.files_completeUploadExternal(files=files, channel_id=slack.channel("support"))
        assert _error(excinfo) == "file_not_found"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("files.completeUploadExternal", params={"files": "not json"})
    assert _error(excinfo) == "invalid_arguments"


def test_files_complete_upload_external__completes_only_once(slack):
    answer = slack.client.files_upload_v2(content="once", filename="once.txt")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_completeUploadExternal(files=[{"id": answer["file"]["id"]}])
    assert _error(excinfo) == "file_not_found"


def test_files_upload__the_retired_method_answers_method_deprecated(slack):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # slack_sdk warns that files.upload is retired
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.files_upload(channels=slack.channel("support"), content="old way", filename="old.txt")
    assert _error(excinfo) == "method_deprecated"


def test_files_list__newest_first_with_paging_and_filters(slack, file_spec):
    support = slack.channel("support")
    ids = [slack.client.files_upload_v2(channel=support, content=f"n{i}", filename=f"n{i}.txt")["file"]["id"]
           for i in range(3)]
    slack.client.files_upload_v2(channel=support, file=b"\x89PNG\r\n\x1a\n", filename="pic.png")
    listed = slack.client.files_list(count=2, page=1, types="all")
    file_spec("files.list", listed.data)
    assert listed["paging"] == {"count": 2, "total": 4, "page": 1, "pages": 2}
    second = slack.client.files_list(count=2, page=2)
    assert [f["id"] for f in second["files"]] == [ids[1], ids[0]]
    images = slack.client.files_list(types="images")["files"]
    assert [f["name"] for f in images] == ["pic.png"]
    assert slack.client.files_list(channel=slack.channel("ops"))["files"] == []
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_list(types="movies")
    assert _error(excinfo) == "unknown_type"


def test_files_delete__the_message_keeps_a_tombstone_and_the_bytes_are_gone(slack, file_spec):
    support = slack.channel("support")
    file = slack.client.files_upload_v2(channel=support, content="secret", filename="s.txt")["file"]
    url = slack.client.files_info(file=file["id"])["file"]["url_private"]
    deleted = slack.client.files_delete(file=file["id"])
    file_spec("files.delete", deleted.data)
    latest = slack.client.conversations_history(channel=support, limit=1)["messages"][0]
    assert latest["files"] == [{"id": file["id"], "mode": "tombstone"}]
    assert _bytes_at(slack, url).status_code == 404
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_info(file=file["id"])
    assert _error(excinfo) == "file_deleted"
    assert slack.client.files_list()["files"] == []


def test_files_info__an_unknown_file_is_file_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_info(file="F0000000000")
    assert _error(excinfo) == "file_not_found"


def test_url_private__without_a_token_redirects_to_the_replicas_sign_in(slack):
    file = slack.client.files_upload_v2(content="x", filename="x.txt")["file"]
    url = slack.client.files_info(file=file["id"])["file"]["url_private"]
    answer = httpx.get(url, timeout=10)
    assert answer.status_code == 302 and answer.headers["location"].startswith(slack.url + "/?redir=")
    assert httpx.get(answer.headers["location"], timeout=10).status_code == 200  # the replica's sign-in page


def test_world_json__lists_files_without_their_bytes(slack):
    support = slack.channel("support")
    file = slack.client.files_upload_v2(channel=support, content="x", filename="x.txt", title="X")["file"]
    [listed] = slack.state()["files"]
    assert listed["id"] == file["id"] and listed["title"] == "X" and listed["channels"] == [support]
    assert listed["completed"] and not listed["deleted"] and listed["size"] == 1
