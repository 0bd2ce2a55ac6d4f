"""Property tests: whatever arguments a caller sends, the replica answers Slack-shaped JSON, never 500."""

from __future__ import annotations

import json

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.world.tools.slack.router import ROUTES

_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.sampled_from(["", "0", "-1", "1.5", "1234567890.123456", "99999999999999999999", "true", "#support",
                     "C0000000000", "U0000000000", "bmV4dF90czoxMjM=", "dXNlcjpVMQ==", "[]", "{}", "[{}]",
                     "public_channel,im", "eyes", ":eyes:"]),
)
_JSON_VALUES = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | _VALUES,
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3), max_leaves=6)
_NAMES = st.sampled_from(["channel", "text", "ts", "thread_ts", "limit", "cursor", "oldest", "latest", "inclusive",
                          "types", "exclude_archived", "user", "users", "email", "name", "timestamp", "blocks",
                          "attachments", "message_ts", "return_im", "reply_broadcast", "metadata", "include_num_members"])
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(answer: httpx.Response) -> None:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert isinstance(body, dict) and isinstance(body["ok"], bool)
    if not body["ok"]:
        assert isinstance(body["error"], str) and body["error"]


@_SETTINGS
@given(method=st.sampled_from(sorted(ROUTES)), args=st.dictionaries(_NAMES, _VALUES, max_size=6))
def test_form_arguments__never_500(slack, method, args):
    form = {k: str(v) for k, v in args.items()}
    _check(slack.raw(method, headers={"Authorization": f"Bearer {slack.token}"}, data=form))


@_SETTINGS
@given(method=st.sampled_from(sorted(ROUTES)), args=st.dictionaries(_NAMES, _JSON_VALUES, max_size=6))
def test_json_arguments__never_500(slack, method, args):
    _check(slack.raw(method, headers={"Authorization": f"Bearer {slack.token}",
                                      "Content-Type": "application/json; charset=utf-8"},
                     content=json.dumps(args)))


@_SETTINGS
@given(method=st.sampled_from([*sorted(ROUTES), "foo.bar", "api.test"]), body=st.binary(max_size=60),
       content_type=st.sampled_from(["application/json", "application/x-www-form-urlencoded", "text/plain", ""]))
def test_garbage_bodies__never_500(slack, method, body, content_type):
    headers = {"Authorization": f"Bearer {slack.token}"}
    if content_type:
        headers["Content-Type"] = content_type
    _check(slack.raw(method, headers=headers, content=body))
