"""Release assets: upload, list, get (JSON or the bytes), update, delete.

A release's ``upload_url`` is ``{base}/repos/{o}/{r}/releases/{id}/assets{?name,label}``:
GitHub's uploads host lives on the replica's own base (through real hostnames it is
``https://uploads.github.com/repos/...``, led back here by ``real_hosts.py``), and the upload is ``POST`` on that
path with the file as the body and ``name`` (and ``label``) in the query, as Octokit's
``uploadReleaseAsset`` and PyGithub's ``upload_asset`` send it. A second asset of the same
name is 422 ``already_exists``, as GitHub answers.

``GET .../releases/assets/{id}`` with ``Accept: application/octet-stream`` answers the
asset's bytes (200; GitHub may also redirect, and documents both). The
``browser_download_url`` (``{base}/{o}/{r}/releases/download/{tag}/{name}``) serves the
same bytes through ``web.py``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_calls import optional_str
from ancha.world.tools.github.models import Account, Repo, iso, node_id
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.releases import Release, _release, releases_of

RESOURCE = "ReleaseAsset"
OCTET = "application/octet-stream"


class ReleaseAsset:
    def __init__(
        self,
        release: Release,
        id: int,
        name: str,
        label: str | None,
        content_type: str,
        data: bytes,
        uploader: Account,
        at: float,
    ) -> None:
        self.release = release
        self.id = id
        self.name = name
        self.label = label
        self.content_type = content_type
        self.data = data
        self.uploader = uploader
        self.created_at = at
        self.updated_at = at
        self.download_count = 0

    def to_dict(self, base: str) -> dict[str, Any]:
        repo = self.release.repo
        return {
            "url": f"{base}/repos/{repo.full_name}/releases/assets/{self.id}",
            "id": self.id,
            "node_id": node_id("ReleaseAsset", self.id),
            "name": self.name,
            "label": self.label,
            "uploader": self.uploader.simple(base),
            "content_type": self.content_type,
            "state": "uploaded",
            "size": len(self.data),
            "digest": "sha256:" + hashlib.sha256(self.data).hexdigest(),
            "download_count": self.download_count,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "browser_download_url": browser_download_url(base, self),
        }


def browser_download_url(base: str, asset: ReleaseAsset) -> str:
    release = asset.release
    return f"{web_url(base)}/{release.repo.full_name}/releases/download/{release.tag_path}/{asset.name}"


def find_asset(call: Call, repo: Repo) -> ReleaseAsset:
    wanted = call.number("asset_id")
    writer = call.can(repo, "write")
    for release in releases_of(repo):
        if release.draft and not writer:
            continue
        for asset in release.assets:
            if asset.id == wanted:
                return asset
    raise errors.NotFound()


def download(asset: ReleaseAsset) -> Reply:
    asset.download_count += 1
    return Reply(
        200,
        asset.data,
        {
            "content-type": asset.content_type or OCTET,
            "content-disposition": f"attachment; filename={asset.name}",
        },
    )


@route("POST", "/repos/{owner}/{repo}/releases/{release_id}/assets")
def repos_upload_release_asset(call: Call) -> Reply:
    repo = call.repo(need="write")
    release = _release(call, repo)
    name = call.query.get("name", "").strip()
    if not name:
        raise errors.missing_field(RESOURCE, "name")
    label = call.query.get("label")
    if any(asset.name == name for asset in release.assets):
        raise errors.already_exists(RESOURCE, "name")
    kind = call.request_headers.get("content-type", "").strip() or OCTET
    asset = ReleaseAsset(
        release, call.state.ids.next("release_asset"), name, label, kind, call.raw_body, call.user, call.now()
    )
    release.assets.append(asset)
    return created(asset.to_dict(call.base))


@route("GET", "/repos/{owner}/{repo}/releases/{release_id}/assets")
def repos_list_release_assets(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    release = _release(call, repo)
    return [asset.to_dict(call.base) for asset in call.page(release.assets)]


@route("GET", "/repos/{owner}/{repo}/releases/assets/{asset_id}")
def repos_get_release_asset(call: Call) -> Any:
    repo = call.repo()
    asset = find_asset(call, repo)
    if OCTET in call.request_headers.get("accept", ""):
        return download(asset)
    return asset.to_dict(call.base)


@route("PATCH", "/repos/{owner}/{repo}/releases/assets/{asset_id}")
def repos_update_release_asset(call: Call) -> dict[str, Any]:
    repo = call.repo(need="write")
    asset = find_asset(call, repo)
    name = optional_str(call, "name")
    if name is not None and name != asset.name:
        if not name.strip():
            raise errors.invalid_field(RESOURCE, "name", name)
        if any(other.name == name for other in asset.release.assets):
            raise errors.already_exists(RESOURCE, "name")
        asset.name = name
    if "label" in call.body:
        asset.label = optional_str(call, "label") or None
    asset.updated_at = call.now()
    return asset.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/releases/assets/{asset_id}")
def repos_delete_release_asset(call: Call) -> Reply:
    repo = call.repo(need="write")
    asset = find_asset(call, repo)
    asset.release.assets.remove(asset)
    return no_content()
