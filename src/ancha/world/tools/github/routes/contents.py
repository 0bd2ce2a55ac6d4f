"""Repository contents: get a file or directory, the README, create/update/delete a file.

Files are read from and committed to the repository's real git (``RepoGit``). A write
needs push access, the blob ``sha`` of the file it replaces (422 when missing, 409 when
stale) and a branch that protection does not close to direct changes (409).
``Accept: application/vnd.github.raw`` answers a file's bytes.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.git_calls import (
    commit_of,
    decode64,
    identity_of,
    optional_str,
    person,
    protection,
    repo_git,
    required_str,
)
from ancha.world.tools.github.git_store import InvalidPath, RefConflict, RepoGit, UnknownRevision
from ancha.world.tools.github.git_wire import content_entry, content_file, content_links, git_commit
from ancha.world.tools.github.models import Repo
from ancha.world.tools.github.router import route

README_NAMES = ("readme.md", "readme", "readme.markdown", "readme.rst", "readme.txt", "readme.adoc", "readme.org")


def _accepts(call: Call, kind: str) -> bool:
    headers: dict[str, str] = getattr(call, "request_headers", {})
    return f"application/vnd.github.{kind}" in headers.get("accept", "").lower()


def _raw(data: bytes) -> Reply:
    return Reply(200, data, {"content-type": "application/vnd.github.raw; charset=utf-8"})


def _file(call: Call, repo: Repo, git: RepoGit, path: str, ref: str, sha: str) -> Any:
    entry = git.entry(sha, path)
    if entry is None or not path.strip("/") and not entry.is_dir:
        raise errors.NotFound()
    path = path.strip("/")
    if entry.is_dir:
        listing = git.list_dir(sha, path) or []
        items = [content_entry(call.base, repo, e.name, e.path, e.type, e.sha, e.size, ref) for e in listing]
        if _accepts(call, "object"):
            name = path.rsplit("/", 1)[-1]
            return {"type": "dir", "size": 0, "name": name, "path": path, "sha": entry.sha.decode(),
                    **content_links(call.base, repo, path, entry.sha.decode(), ref, "dir"), "entries": items}
        return items
    if entry.kind == "commit":
        return {"type": "submodule", "submodule_git_url": "", "size": 0, "name": path.rsplit("/", 1)[-1],
                "path": path, "sha": entry.sha.decode(),
                **content_links(call.base, repo, path, entry.sha.decode(), ref, "submodule")}
    data = git.read_file(sha, path) or b""
    if _accepts(call, "raw"):
        return _raw(data)
    kind = "symlink" if entry.mode == 0o120000 else "file"
    return content_file(call.base, repo, path, entry.sha.decode(), data, ref, kind)


@route("GET", "/repos/{owner}/{repo}/contents/{path}",
       partial="no 302 redirects for submodules; application/vnd.github.html is answered as JSON")
def repos_get_content(call: Call) -> Any:
    repo, git = repo_git(call)
    ref, sha = commit_of(call, git, call.query.get("ref"))
    return _file(call, repo, git, call.params.get("path", ""), ref, sha)


@route("GET", "/repos/{owner}/{repo}/contents")
def repos_get_content_root(call: Call) -> Any:
    repo, git = repo_git(call)
    ref, sha = commit_of(call, git, call.query.get("ref"))
    return _file(call, repo, git, "", ref, sha)


def _readme(call: Call, folder: str) -> Any:
    repo, git = repo_git(call)
    ref, sha = commit_of(call, git, call.query.get("ref"))
    listing = git.list_dir(sha, folder.strip("/"))
    for wanted in README_NAMES:
        for item in listing or []:
            if item.type == "file" and item.name.lower() == wanted:
                return _file(call, repo, git, item.path, ref, sha)
    raise errors.NotFound()


@route("GET", "/repos/{owner}/{repo}/readme")
def repos_get_readme(call: Call) -> Any:
    return _readme(call, "")


@route("GET", "/repos/{owner}/{repo}/readme/{dir}")
def repos_get_readme_in_directory(call: Call) -> Any:
    return _readme(call, call.params.get("dir", ""))


def _write(call: Call, deleting: bool) -> Reply:
    repo, git = repo_git(call, need="write")
    path = call.params.get("path", "").strip("/")
    message = required_str(call, "message")
    content = None if deleting else decode64(required_str(call, "content"))
    given_sha = optional_str(call, "sha")
    branch = optional_str(call, "branch") or git.default_branch
    tip = git.branch_sha(branch)
    if tip is None:
        raise errors.NotFound(f"Branch {branch} not found")
    rule = protection(repo, branch)
    if rule is not None and rule.push_rule(call.can(repo, "admin")) is not None:
        raise errors.Conflict("Changes must be made through a pull request.")
    current = git.entry(tip, path) if path else None
    if current is not None and current.is_dir:
        raise errors.invalid_request(f"{path} is a directory") if not deleting else errors.NotFound()
    if deleting:
        if current is None:
            raise errors.NotFound()
        if given_sha is None:
            raise errors.invalid_request('"sha" wasn\'t supplied.')
    elif current is not None and given_sha is None:
        raise errors.invalid_request('"sha" wasn\'t supplied.')
    if current is not None and given_sha is not None and given_sha != current.sha.decode():
        raise errors.Conflict(f"{path} does not match {given_sha}")
    committer, committed_at = person(call, "committer", identity_of(call.user), "Commit")
    author, authored_at = person(call, "author", committer, "Commit")
    now = call.now()
    try:
        sha = git.write_files(branch, {path: content}, message, author, authored_at or committed_at or now,
                              committer=committer, expected_parent=tip, actor=call.actor,
                              committed_at=committed_at or now)
    except InvalidPath as exc:
        raise errors.invalid_request(str(exc)) from None
    except (RefConflict, UnknownRevision):
        raise errors.Conflict(f"{path} does not match {given_sha}") from None
    info = git.commit_info(sha)
    assert info is not None
    commit = git_commit(call.base, repo.full_name, info)
    if deleting:
        return Reply(200, {"content": None, "commit": commit})
    entry = git.entry(sha, path)
    assert entry is not None and content is not None
    body = content_file(call.base, repo, path, entry.sha.decode(), content, branch)
    for key in ("content", "encoding"):
        body.pop(key, None)
    return Reply(200 if current is not None else 201, {"content": body, "commit": commit})


@route("PUT", "/repos/{owner}/{repo}/contents/{path}", partial="no signed commits")
def repos_create_or_update_file_contents(call: Call) -> Reply:
    return _write(call, deleting=False)


@route("DELETE", "/repos/{owner}/{repo}/contents/{path}")
def repos_delete_file(call: Call) -> Reply:
    return _write(call, deleting=True)
