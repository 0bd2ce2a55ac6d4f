"""Reference answers (licenses, gitignore templates, emojis, meta, versions, zen, octocat)
and account lists (users, organizations, the caller's emails)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

GH = Any  # conftest.GH


def test_licenses__list_and_get(gh: GH, matches_spec: Callable[..., None]) -> None:
    listed = gh.raw("GET", "/licenses").json()
    matches_spec("GET", "/licenses", listed)
    assert "mit" in [lic["key"] for lic in listed] and len(listed) == 13
    assert [lic["key"] for lic in gh.raw("GET", "/licenses", params={"featured": "true"}).json()] == \
        ["apache-2.0", "gpl-3.0", "mit"]
    mit = gh.raw("GET", "/licenses/mit").json()
    matches_spec("GET", "/licenses/{license}", mit)
    assert mit["spdx_id"] == "MIT" and "Permission is hereby granted" in mit["body"]
    assert gh.client.get_license("mit").name == "MIT License"
    assert [lic.key for lic in gh.client.get_licenses()][:2] == ["agpl-3.0", "apache-2.0"]
    assert gh.raw("GET", "/licenses/nope").status_code == 404


def test_gitignore_templates(gh: GH, matches_spec: Callable[..., None]) -> None:
    names = gh.raw("GET", "/gitignore/templates").json()
    matches_spec("GET", "/gitignore/templates", names)
    assert "Python" in names and names == sorted(names)
    python = gh.client.get_gitignore_template("Python")
    assert python.name == "Python" and "__pycache__/" in python.source
    raw = gh.raw("GET", "/gitignore/templates/python", headers={"Accept": "application/vnd.github.raw+json"})
    assert raw.text.startswith("# Byte-compiled")
    assert gh.raw("GET", "/gitignore/templates/Nope").status_code == 404


def test_emojis_meta_versions(gh: GH, matches_spec: Callable[..., None]) -> None:
    emojis = gh.raw("GET", "/emojis").json()
    matches_spec("GET", "/emojis", emojis)
    assert "shipit" in gh.client.get_emojis()
    assert emojis["+1"].startswith(gh.url + "/")  # the picture is on the replica, which serves it
    picture = httpx.get(emojis["+1"], timeout=10)
    assert picture.status_code == 200 and picture.content.startswith(b"\x89PNG")
    assert gh.raw("GET", "/images/icons/emoji/unicode/no-such-emoji.png", token=None).status_code == 404
    meta = gh.raw("GET", "/meta", token=None).json()
    matches_spec("GET", "/meta", meta)
    assert meta["verifiable_password_authentication"] is False and meta["git"]
    versions = gh.raw("GET", "/versions").json()
    matches_spec("GET", "/versions", versions)
    assert versions[0] == "2022-11-28"


def test_zen_and_octocat__plain_text(gh: GH) -> None:
    zen = gh.raw("GET", "/zen")
    assert zen.status_code == 200 and zen.headers["content-type"].startswith("text/plain") and zen.text.endswith(".")
    cat = gh.raw("GET", "/octocat", params={"s": "Ship it"})
    assert cat.headers["content-type"] == "application/octocat-stream" and "Ship it" in cat.text


def test_users_and_organizations__paged_by_since(gh: GH, matches_spec: Callable[..., None]) -> None:
    users = gh.raw("GET", "/users").json()
    matches_spec("GET", "/users", users)
    logins = [u["login"] for u in users]
    assert {"ancha-agent", "laura", "ben", "carol", "acme"} <= set(logins)
    first = gh.raw("GET", "/users", params={"per_page": 2})
    assert len(first.json()) == 2 and 'rel="next"' in first.headers["link"]
    after = gh.raw("GET", "/users", params={"per_page": 2, "since": first.json()[-1]["id"]}).json()
    assert [u["login"] for u in after] == logins[2:4]
    assert [u.login for u in gh.client.get_users()] == logins
    orgs = gh.raw("GET", "/organizations").json()
    matches_spec("GET", "/organizations", orgs)
    assert [o["login"] for o in orgs] == ["acme"] and [o.login for o in gh.client.get_organizations()] == ["acme"]


def test_user_emails(gh: GH, matches_spec: Callable[..., None]) -> None:
    laura = gh.token_for("laura")
    emails = gh.raw("GET", "/user/emails", token=laura).json()
    matches_spec("GET", "/user/emails", emails)
    assert emails[0] == {"email": "laura@acme.test", "primary": True, "verified": True, "visibility": "public"}
    public = gh.raw("GET", "/user/public_emails", token=laura).json()
    matches_spec("GET", "/user/public_emails", public)
    assert [e["email"] for e in public] == ["laura@acme.test"]
    assert [e.email for e in gh.as_user("laura").get_user().get_emails()][0] == "laura@acme.test"
    assert gh.raw("GET", "/user/emails", token=None).status_code == 401
