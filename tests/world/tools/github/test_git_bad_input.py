"""Odd input to the git-backed REST routes and to smart HTTP: never a 5xx."""

from __future__ import annotations

from typing import Any

import pytest

GH = Any  # conftest.GH

ODD = [
    ("GET", "/repos/acme/orders/contents/..%2F..%2Fetc"),
    ("GET", "/repos/acme/orders/contents/.git/config"),
    ("GET", "/repos/acme/orders/contents/README.md?ref=" + "x" * 300),
    ("GET", "/repos/acme/orders/contents/README.md?ref=main~1"),
    ("GET", "/repos/acme/orders/contents/README.md?ref=%00"),
    ("GET", "/repos/acme/orders/contents/README.md/inner"),
    ("GET", "/repos/acme/orders/readme/nope"),
    ("GET", "/repos/acme/orders/compare/...."),
    ("GET", "/repos/acme/orders/compare/main..."),
    ("GET", "/repos/acme/orders/compare/a...b...c"),
    ("GET", "/repos/acme/orders/commits?per_page=abc&page=-1"),
    ("GET", "/repos/acme/orders/commits?path=../../x&author=%00"),
    ("GET", "/repos/acme/orders/commits/" + "f" * 40),
    ("GET", "/repos/acme/orders/commits/ffff/status"),
    ("GET", "/repos/acme/orders/git/trees/HEAD?recursive=yes"),
    ("GET", "/repos/acme/orders/git/matching-refs/"),
    ("GET", "/repos/acme/orders/git/ref/heads"),
    ("GET", "/repos/acme/orders/branches/a..b"),
    ("GET", "/repos/acme/orders/branches?protected=maybe"),
    ("POST", "/repos/acme/orders/branches/main/rename"),
    ("PUT", "/repos/acme/orders/branches/main/protection"),
    ("DELETE", "/repos/acme/orders/contents/README.md"),
    ("GET", "/acme/orders.git/info/refs"),
    ("GET", "/acme/orders.git/info/refs?service=git-nope"),
    ("POST", "/acme/orders.git/git-upload-pack"),
    ("GET", "/acme/orders.git/git-upload-pack"),
]


@pytest.mark.parametrize(("method", "path"), ODD)
def test_odd_requests__never_5xx(gh: GH, method: str, path: str) -> None:
    for body in (None, b"{", b"[]", b'{"new_name": 5, "message": [], "sha": {}}'):
        answer = gh.raw(method, path, content=body)
        assert answer.status_code < 500, (method, path, body, answer.text)


def test_gzip_and_bad_gzip_upload_pack__never_5xx(gh: GH) -> None:
    headers = {"Content-Type": "application/x-git-upload-pack-request", "Content-Encoding": "gzip"}
    answer = gh.raw("POST", "/acme/orders.git/git-upload-pack", headers=headers, content=b"not gzip")
    assert answer.status_code == 400
