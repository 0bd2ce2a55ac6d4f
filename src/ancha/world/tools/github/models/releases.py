"""Releases (tags with notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.tools.github.models.reactions import rollup
from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id, uploads_url, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models.repos import Repo


class Release:
    def __init__(self, repo: Repo, id: int, tag_name: str, author: Account, created_at: float, *,
                 target_commitish: str = "main", name: str | None = None, body: str | None = None,
                 draft: bool = False, prerelease: bool = False) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("Release", id)
        self.tag_name = tag_name
        self.author = author
        self.target_commitish = target_commitish
        self.name = name
        self.body = body
        self.draft = draft
        self.prerelease = prerelease
        self.created_at = created_at
        self.updated_at = created_at
        self.published_at: float | None = None if draft else created_at

    def to_dict(self, base: str) -> JSONDict:
        r = f"{base}/repos/{self.repo.full_name}"
        u = f"{r}/releases/{self.id}"
        return {"url": u, "html_url": f"{web_url(base)}/{self.repo.full_name}/releases/tag/{self.tag_name}",
                "assets_url": f"{u}/assets", "upload_url": f"{uploads_url(base)}/repos/{self.repo.full_name}/releases/{self.id}/assets{{?name,label}}",
                "tarball_url": f"{r}/tarball/{self.tag_name}", "zipball_url": f"{r}/zipball/{self.tag_name}",
                "id": self.id, "node_id": self.node_id, "tag_name": self.tag_name,
                "target_commitish": self.target_commitish, "name": self.name, "body": self.body,
                "draft": self.draft, "prerelease": self.prerelease, "immutable": False,
                "created_at": iso(self.created_at), "published_at": iso(self.published_at),
                "updated_at": iso(self.updated_at), "author": self.author.simple(base), "assets": [],
                "reactions": rollup(self.repo, ("release", self.id), u)}
