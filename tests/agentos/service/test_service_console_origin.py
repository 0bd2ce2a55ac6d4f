"""The hosted console takes forms only from itself: a sign-in posted from another site
(login CSRF) is refused, whatever key it carries."""

from __future__ import annotations

import secrets

import httpx

from agentos.db import Database
from agentos.keys import issue_key
from conftest import ServerThread


def test_a_sign_in_posted_from_another_site_is_refused(service: ServerThread, key_database: Database) -> None:
    key = issue_key(key_database, f"ws-{secrets.token_hex(4)}", "viewer")
    host = service.url.removeprefix("http://")
    for origin, status in (("https://evil.example", 403), ("null", 403), (service.url, 303), (None, 303)):
        headers = {"origin": origin} if origin else {}
        answer = httpx.post(f"{service.url}/ui/sign-in", data={"key": key, "next": "/ui/"}, headers=headers)
        assert answer.status_code == status, (origin, answer.text)
        assert (answer.status_code == 403) == ("agentos_session" not in answer.headers.get("set-cookie", ""))
    referred = httpx.post(f"{service.url}/ui/sign-in", data={"key": key},
                          headers={"referer": "https://evil.example/page", "host": host})
    assert referred.status_code == 403 and "sent from another site" in referred.text
