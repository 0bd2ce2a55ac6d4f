"""api.github.com's shapes for git things: commits, diff entries, contents, refs, trees.

API URLs are built on the replica's base URL (``base``), web URLs on github.com, as
``models.wire`` explains. A commit's ``author``/``committer`` account is the user whose
email (or ``users.noreply.github.com`` address) matches the git identity, else null.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ancha.world.tools.github.git_history import FileChange
from ancha.world.tools.github.git_objects import CommitInfo, Signature
from ancha.world.tools.github.models.wire import JSONDict, node_id, raw_url, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models import GitHubState, Repo, User

MAX_INLINE = 1024 * 1024
"""GitHub inlines file content up to 1 MB; larger files come with ``encoding: none``."""
_NOREPLY = re.compile(r"^(?:\d+\+)?(?P<login>[^@]+)@users\.noreply\.github\.com$", re.IGNORECASE)
UNSIGNED = {"verified": False, "reason": "unsigned", "signature": None, "payload": None, "verified_at": None}


def sha_node_id(kind: str, sha: str) -> str:
    """Git objects' node ids are derived from their sha, so they are stable everywhere."""
    return node_id(kind, int(sha[:12], 16))


def encode64(data: bytes) -> str:
    """Ruby's ``Base64.encode64`` as GitHub sends content: 60-character lines, each ending in a newline."""
    text = base64.b64encode(data).decode()
    return "".join(text[i:i + 60] + "\n" for i in range(0, len(text), 60))


def path_url(path: str) -> str:
    return quote(path, safe="/")


class Accounts:
    """Git identities -> the replica's users, indexed once per request."""

    def __init__(self, state: GitHubState) -> None:
        self.state = state
        self._by_email: dict[str, User] | None = None

    def find(self, email: str) -> User | None:
        if self._by_email is None:
            self._by_email = {u.email.lower(): u for u in self.state.users.values() if u.email}
        found = self._by_email.get(email.lower())
        if found is not None:
            return found
        noreply = _NOREPLY.match(email)
        return self.state.user(noreply["login"]) if noreply else None


def git_user(sig: Signature) -> JSONDict:
    return {"name": sig.name, "email": sig.email, "date": sig.iso}


def parents(base: str, full_name: str, info: CommitInfo) -> list[JSONDict]:
    return [{"sha": p, "url": f"{base}/repos/{full_name}/commits/{p}", "html_url": f"{web_url(base)}/{full_name}/commit/{p}"}
            for p in info.parents]


def git_commit(base: str, full_name: str, info: CommitInfo) -> JSONDict:
    """``git-commit`` (the git data API's commit)."""
    return {
        "sha": info.sha, "node_id": sha_node_id("Commit", info.sha),
        "url": f"{base}/repos/{full_name}/git/commits/{info.sha}",
        "html_url": f"{web_url(base)}/{full_name}/commit/{info.sha}",
        "author": git_user(info.author), "committer": git_user(info.committer),
        "tree": {"sha": info.tree, "url": f"{base}/repos/{full_name}/git/trees/{info.tree}"},
        "message": info.message,
        "parents": [{"sha": p, "url": f"{base}/repos/{full_name}/git/commits/{p}",
                     "html_url": f"{web_url(base)}/{full_name}/commit/{p}"} for p in info.parents],
        "verification": dict(UNSIGNED),
    }


def commit(base: str, repo: Repo, info: CommitInfo, accounts: Accounts,
           files: list[FileChange] | None = None) -> JSONDict:
    """``commit`` (the REST commits API's shape); with ``files``, ``stats`` and ``files`` too."""
    full = repo.full_name
    author = accounts.find(info.author.email)
    committer = accounts.find(info.committer.email)
    body: JSONDict = {
        "sha": info.sha, "node_id": sha_node_id("Commit", info.sha),
        "commit": {
            "author": git_user(info.author), "committer": git_user(info.committer), "message": info.message,
            "tree": {"sha": info.tree, "url": f"{base}/repos/{full}/git/trees/{info.tree}"},
            "url": f"{base}/repos/{full}/git/commits/{info.sha}", "comment_count": 0,
            "verification": dict(UNSIGNED),
        },
        "url": f"{base}/repos/{full}/commits/{info.sha}", "html_url": f"{web_url(base)}/{full}/commit/{info.sha}",
        "comments_url": f"{base}/repos/{full}/commits/{info.sha}/comments",
        "author": author.simple(base) if author is not None else None,
        "committer": committer.simple(base) if committer is not None else None,
        "parents": parents(base, full, info),
    }
    if files is not None:
        additions = sum(f.additions for f in files)
        deletions = sum(f.deletions for f in files)
        body["stats"] = {"total": additions + deletions, "additions": additions, "deletions": deletions}
        body["files"] = [diff_entry(base, repo, f, info.sha) for f in files]
    return body


def diff_entry(base: str, repo: Repo, change: FileChange, ref: str) -> JSONDict:
    full, path = repo.full_name, path_url(change.filename)
    body: JSONDict = {
        "sha": change.sha, "filename": change.filename, "status": change.status, "additions": change.additions,
        "deletions": change.deletions, "changes": change.changes,
        "blob_url": f"{web_url(base)}/{full}/blob/{ref}/{path}", "raw_url": f"{web_url(base)}/{full}/raw/{ref}/{path}",
        "contents_url": f"{base}/repos/{full}/contents/{path}?ref={ref}",
    }
    if change.patch is not None:
        body["patch"] = change.patch
    if change.previous_filename is not None:
        body["previous_filename"] = change.previous_filename
    return body


def content_links(base: str, repo: Repo, path: str, sha: str, ref: str, kind: str) -> JSONDict:
    """The URL fields every contents entry has (``url``, ``git_url``, ``html_url``, ``download_url``, ``_links``)."""
    full, quoted = repo.full_name, path_url(path)
    url = f"{base}/repos/{full}/contents/{quoted}?ref={quote(ref, safe='')}"
    git_url = f"{base}/repos/{full}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
    html_url = f"{web_url(base)}/{full}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{quoted}"
    # On the replica's own host (routes/raw_files.py) unless reached through real hostnames,
    # so a client following it stays inside the world.
    download = raw_url(base, full, quote(ref, safe="/"), quoted) if kind == "file" else None
    return {"url": url, "git_url": git_url, "html_url": html_url, "download_url": download,
            "_links": {"self": url, "git": git_url, "html": html_url}}


def content_entry(base: str, repo: Repo, name: str, path: str, kind: str, sha: str, size: int,
                  ref: str) -> JSONDict:
    """One entry of a directory listing (no content)."""
    return {"name": name, "path": path, "sha": sha, "size": size, "type": kind,
            **content_links(base, repo, path, sha, ref, kind)}


def content_file(base: str, repo: Repo, path: str, sha: str, data: bytes, ref: str, kind: str = "file",
                 ) -> JSONDict:
    """``content-file``: the file with its base64 content (``encoding: none`` past 1 MB)."""
    name = path.rsplit("/", 1)[-1]
    body: JSONDict = {"name": name, "path": path, "sha": sha, "size": len(data), "type": kind}
    body.update(content_links(base, repo, path, sha, ref, kind))
    if kind == "symlink":
        body["target"] = data.decode("utf-8", "replace")
    if len(data) > MAX_INLINE:
        body.update({"content": "", "encoding": "none"})
    else:
        body.update({"content": encode64(data), "encoding": "base64"})
    return body


def short_branch(base: str, repo: Repo, name: str, sha: str, protected: bool) -> JSONDict:
    full = repo.full_name
    body: JSONDict = {"name": name, "commit": {"sha": sha, "url": f"{base}/repos/{full}/commits/{sha}"},
                      "protected": protected}
    return body


def git_ref(base: str, repo: Repo, ref: str, sha: str, kind: str) -> JSONDict:
    full = repo.full_name
    kind_path = {"commit": "commits", "tag": "tags", "tree": "trees", "blob": "blobs"}.get(kind, "commits")
    digest = int(hashlib.sha1(f"{full}:{ref}".encode()).hexdigest()[:12], 16)
    return {"ref": ref, "node_id": node_id("Ref", digest),
            "url": f"{base}/repos/{full}/git/{quote(ref, safe='/')}",
            "object": {"sha": sha, "type": kind, "url": f"{base}/repos/{full}/git/{kind_path}/{sha}"}}


def git_tree_entry(base: str, repo: Repo, path: str, mode: int, kind: str, sha: str,
                   size: int | None) -> dict[str, Any]:
    full = repo.full_name
    entry: dict[str, Any] = {"path": path, "mode": f"{mode:06o}", "type": kind, "sha": sha}
    if kind == "blob":
        entry["size"] = size or 0
    if kind != "commit":
        entry["url"] = f"{base}/repos/{full}/git/{kind}s/{sha}"
    return entry
