"""Release assets through PyGithub and the raw API: upload to the release's upload_url,
list, get, download the bytes, rename, delete; a second asset of one name is 422."""

from __future__ import annotations

from typing import Any

import httpx

GH = Any  # conftest.GH


def test_assets__upload_list_get_update_delete_through_pygithub(gh: GH, tmp_path: Any) -> None:
    repo = gh.client.get_repo("acme/orders")
    release = repo.create_git_release("v1.0.0", "One", "First")
    file = tmp_path / "orders.tar.gz"
    file.write_bytes(b"\x1f\x8b" + bytes(range(200)))
    asset = release.upload_asset(str(file), label="Build", content_type="application/gzip")
    assert (asset.name, asset.label, asset.size, asset.state) == ("orders.tar.gz", "Build", 202, "uploaded")
    assert [a.name for a in release.get_assets()] == ["orders.tar.gz"]
    assert repo.get_release(release.id).assets[0].id == asset.id
    fetched = repo.get_release_asset(asset.id)
    assert fetched.content_type == "application/gzip" and fetched.uploader.login == "ancha-agent"
    status, _, chunks = fetched.download_asset()
    assert status == 200 and b"".join(chunks) == file.read_bytes()
    renamed = fetched.update_asset("orders-1.0.0.tar.gz", "Release build")
    assert (renamed.name, renamed.label) == ("orders-1.0.0.tar.gz", "Release build")
    assert renamed.delete_asset() is True
    assert list(release.get_assets()) == []


def test_assets__same_name_twice_is_already_exists(gh: GH, matches_spec: Any) -> None:
    release = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v1.0.0"}).json()
    upload = release["upload_url"].split("{")[0]
    headers = {"Authorization": f"token {gh.token}", "Content-Type": "text/plain"}
    first = httpx.post(
        upload,
        params={"name": "test-upload.txt", "label": "test"},
        content=b"Hello, world!\n",
        headers=headers,
        timeout=10,
    )
    assert first.status_code == 201, first.text
    matches_spec("POST", "/repos/{owner}/{repo}/releases/{release_id}/assets", first.json(), 201)
    again = httpx.post(upload, params={"name": "test-upload.txt"}, content=b"x", headers=headers, timeout=10)
    assert again.status_code == 422
    assert again.json()["errors"] == [{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}]
    listed = gh.raw("GET", f"/repos/acme/orders/releases/{release['id']}/assets").json()
    matches_spec("GET", "/repos/{owner}/{repo}/releases/{release_id}/assets", listed)
    raw = gh.raw(
        "GET",
        f"/repos/acme/orders/releases/assets/{first.json()['id']}",
        headers={"Accept": "application/octet-stream"},
    )
    assert raw.status_code == 200 and raw.content == b"Hello, world!\n"
    reader = gh.token_for("carol")
    assert (
        gh.raw("GET", f"/repos/acme/orders/releases/{release['id']}/assets", token=reader).status_code == 404
    )
