"""Shared by the REST property tests: filling a route template with drawn values, and what
every answer to any input must be (never a 500; errors in GitHub's body shape)."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx


def fill_path(template: str, values: list[str]) -> str:
    """``template`` with each ``{param}`` replaced by the next drawn value, URL-quoted."""
    it = iter(values)
    return re.sub(r"\{[^}]+\}", lambda _: quote(next(it, "x"), safe=""), template)


def check_answer(answer: httpx.Response, text_types: tuple[str, ...] = ()) -> None:
    """Never a 500; an error is GitHub's JSON with ``message`` and ``status``. A 200 whose
    content type starts with one of ``text_types`` (raw text routes) is not JSON."""
    assert answer.status_code != 500, answer.text
    if answer.status_code in (204, 304):
        return
    if text_types and answer.status_code == 200 and answer.headers["content-type"].startswith(text_types):
        return
    body = answer.json()
    if answer.status_code >= 400:
        assert isinstance(body, dict) and isinstance(body.get("message"), str), answer.text
        assert body["status"] == str(answer.status_code), answer.text
