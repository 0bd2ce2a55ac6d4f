"""Releases: list, get (by id, latest, by tag), create, update, delete.

Publishing a release whose tag does not exist creates the tag ref at
``target_commitish`` (default branch by default) through the repository's git, as
GitHub does; a draft names its tag without creating it. Drafts are seen only by
those with write access. Deleting a release leaves its tag.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_calls import optional_str, repo_git
from ancha.world.tools.github.git_store import RefError, RepoGit
from ancha.world.tools.github.models import Account, Repo, iso, node_id
from ancha.world.tools.github.models.wire import uploads_url, web_url
from ancha.world.tools.github.router import route

RESOURCE = "Release"


class Release:
    def __init__(self, repo: Repo, id: int, tag_name: str, target: str, author: Account, at: float) -> None:
        self.repo = repo
        self.id = id
        self.tag_name = tag_name
        self.target_commitish = target
        self.author = author
        self.name: str | None = None
        self.body: str | None = None
        self.draft = False
        self.prerelease = False
        self.created_at = at
        self.updated_at = at
        self.published_at: float | None = None
        self.assets: list[Any] = []
        """Its ``ReleaseAsset``s (routes/release_assets.py), in upload order."""

    @property
    def tag_path(self) -> str:
        """The release's place in web URLs: ``untagged-{id}`` while a draft, else its tag."""
        return f"untagged-{self.id}" if self.draft else self.tag_name

    def to_dict(self, base: str) -> dict[str, Any]:
        full = self.repo.full_name
        url = f"{base}/repos/{full}/releases/{self.id}"
        tag_path = f"untagged-{self.id}" if self.draft else f"tag/{self.tag_name}"
        return {
            "url": url, "html_url": f"{web_url(base)}/{full}/releases/{tag_path}", "assets_url": f"{url}/assets",
            "upload_url": f"{uploads_url(base)}/repos/{full}/releases/{self.id}/assets{{?name,label}}",
            "tarball_url": None if self.draft else f"{base}/repos/{full}/tarball/{self.tag_name}",
            "zipball_url": None if self.draft else f"{base}/repos/{full}/zipball/{self.tag_name}",
            "id": self.id, "node_id": node_id("Release", self.id), "tag_name": self.tag_name,
            "target_commitish": self.target_commitish, "name": self.name, "body": self.body, "draft": self.draft,
            "prerelease": self.prerelease, "immutable": False, "created_at": iso(self.created_at),
            "published_at": iso(self.published_at), "updated_at": iso(self.updated_at),
            "author": self.author.simple(base), "assets": [asset.to_dict(base) for asset in self.assets],
        }


def releases_of(repo: Repo) -> list[Release]:
    found: list[Release] = repo.extra.setdefault("releases", [])
    return found


def _visible(call: Call, repo: Repo) -> list[Release]:
    writer = call.can(repo, "write")
    return [r for r in releases_of(repo) if writer or not r.draft]


def _newest_first(releases: list[Release]) -> list[Release]:
    return sorted(releases, key=lambda r: (r.published_at or r.created_at, r.id), reverse=True)


@route("GET", "/repos/{owner}/{repo}/releases")
def repos_list_releases(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    return [r.to_dict(call.base) for r in call.page(_newest_first(_visible(call, repo)))]


@route("GET", "/repos/{owner}/{repo}/releases/latest")
def repos_get_latest_release(call: Call) -> dict[str, Any]:
    repo = call.repo()
    latest = repo.extra.get("latest_release")
    published = [r for r in releases_of(repo) if not r.draft and not r.prerelease]
    chosen = next((r for r in published if r.id == latest), None) or next(iter(_newest_first(published)), None)
    if chosen is None:
        raise errors.NotFound()
    return chosen.to_dict(call.base)


@route("GET", "/repos/{owner}/{repo}/releases/tags/{tag}")
def repos_get_release_by_tag(call: Call) -> dict[str, Any]:
    repo = call.repo()
    tag = call.params.get("tag", "")
    found = next((r for r in releases_of(repo) if r.tag_name == tag and not r.draft), None)
    if found is None:
        raise errors.NotFound()
    return found.to_dict(call.base)


def _release(call: Call, repo: Repo) -> Release:
    wanted = call.number("release_id")
    found = next((r for r in _visible(call, repo) if r.id == wanted), None)
    if found is None:
        raise errors.NotFound()
    return found


@route("GET", "/repos/{owner}/{repo}/releases/{release_id}")
def repos_get_release(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return _release(call, repo).to_dict(call.base)


def _fields(call: Call, release: Release) -> None:
    if "name" in call.body:
        release.name = optional_str(call, "name")
    if "body" in call.body:
        release.body = optional_str(call, "body")
    prerelease = call.field_bool("prerelease")
    if prerelease is not None:
        release.prerelease = prerelease
    latest = call.body.get("make_latest")
    if latest is not None and latest not in ("true", "false", "legacy"):
        raise errors.invalid_request(f"For 'make_latest', {latest!r} is not one of true, false, legacy.")


def _publish(call: Call, repo: Repo, git: RepoGit, release: Release) -> None:
    """Create the tag when missing, stamp the release published, announce it."""
    if git.ref_sha("refs/tags/" + release.tag_name) is None:
        sha = git.resolve(release.target_commitish)
        if sha is None:
            raise errors.invalid_field(RESOURCE, "target_commitish")
        try:
            git.create_ref("refs/tags/" + release.tag_name, sha, actor=call.actor)
        except (RefError, LookupError):
            raise errors.invalid_field(RESOURCE, "tag_name") from None
    release.published_at = call.now()
    if call.body.get("make_latest", "true") == "true" and not release.prerelease:
        repo.extra["latest_release"] = release.id
    call.replica.publish("release_published", repo, call.user, call.actor, release_id=release.id,
                         tag_name=release.tag_name, name=release.name, prerelease=release.prerelease)


@route("POST", "/repos/{owner}/{repo}/releases", partial="generate_release_notes is ignored")
def repos_create_release(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    if call.body.get("tag_name") is None:
        raise errors.invalid_request('"tag_name" wasn\'t supplied.')
    tag = optional_str(call, "tag_name") or ""
    if not tag.strip() or any(c in tag for c in " ~^:?*[\\") or ".." in tag:
        raise errors.invalid_field(RESOURCE, "tag_name", tag)
    if any(r.tag_name == tag for r in releases_of(repo)):
        raise errors.already_exists(RESOURCE, "tag_name")
    target = optional_str(call, "target_commitish") or git.default_branch
    if git.ref_sha("refs/tags/" + tag) is None and git.resolve(target) is None:
        raise errors.invalid_field(RESOURCE, "target_commitish")
    release = Release(repo, call.state.ids.next("release"), tag, target, call.user, call.now())
    _fields(call, release)
    release.draft = bool(call.field_bool("draft", False))
    if not release.draft:
        _publish(call, repo, git, release)
    releases_of(repo).append(release)
    return created(release.to_dict(call.base), f"{call.base}/repos/{repo.full_name}/releases/{release.id}")


@route("PATCH", "/repos/{owner}/{repo}/releases/{release_id}")
def repos_update_release(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call, need="write")
    release = _release(call, repo)
    tag = optional_str(call, "tag_name")
    if tag is not None and tag != release.tag_name:
        if not tag.strip() or any(r.tag_name == tag for r in releases_of(repo)):
            raise errors.already_exists(RESOURCE, "tag_name") if tag.strip() else errors.invalid_field(
                RESOURCE, "tag_name", tag)
        release.tag_name = tag
    target = optional_str(call, "target_commitish")
    if target is not None:
        if git.resolve(target) is None:
            raise errors.invalid_field(RESOURCE, "target_commitish")
        release.target_commitish = target
    _fields(call, release)
    draft = call.field_bool("draft")
    release.updated_at = call.now()
    if draft is False and release.draft:
        release.draft = False
        _publish(call, repo, git, release)
    elif draft:
        release.draft = True
    return release.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/releases/{release_id}")
def repos_delete_release(call: Call) -> Reply:
    repo = call.repo(need="write")
    release = _release(call, repo)
    repo.extra["releases"] = [r for r in releases_of(repo) if r is not release]
    return no_content()
