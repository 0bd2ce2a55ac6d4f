"""The git database API: blobs, trees, commits, references and annotated tags.

Objects are real git objects in the repository's ``RepoGit``; creating one stores it
without moving any ref, as on GitHub. References move with GitHub's rules: a non-forced
update must fast-forward (422 ``Update is not a fast forward``).
"""

from __future__ import annotations

from typing import Any

from dulwich.objects import Blob, Commit, Tag, Tree

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_calls import (
    decode64,
    identity_of,
    optional_str,
    person,
    protection,
    repo_git,
    required_str,
)
from ancha.world.tools.github.git_objects import moment, parse_identity
from ancha.world.tools.github.git_store import (
    InvalidPath,
    InvalidRef,
    NotFastForward,
    RefConflict,
    RepoGit,
    UnknownRevision,
)
from ancha.world.tools.github.git_trees import DIR_MODE, Entry, apply_changes
from ancha.world.tools.github.git_wire import encode64, git_commit, git_ref, git_tree_entry, sha_node_id
from ancha.world.tools.github.models import Repo
from ancha.world.tools.github.router import route

MAX_TREE_ENTRIES = 100_000
_MODES = {"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree", "160000": "commit"}


def _is_sha(value: str) -> bool:
    return len(value) == 40 and all(c in "0123456789abcdef" for c in value)


# --- blobs ---------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/git/blobs/{file_sha}")
def git_get_blob(call: Call) -> Any:
    repo, git = repo_git(call)
    sha = call.params["file_sha"].lower()
    blob = git.object(sha) if _is_sha(sha) else None
    if not isinstance(blob, Blob):
        raise errors.NotFound()
    headers: dict[str, str] = getattr(call, "request_headers", {})
    if "application/vnd.github.raw" in headers.get("accept", "").lower():
        return Reply(200, blob.data, {"content-type": "application/vnd.github.raw; charset=utf-8"})
    return {"sha": sha, "node_id": sha_node_id("Blob", sha), "size": len(blob.data),
            "url": f"{call.base}/repos/{repo.full_name}/git/blobs/{sha}", "content": encode64(blob.data),
            "encoding": "base64"}


@route("POST", "/repos/{owner}/{repo}/git/blobs")
def git_create_blob(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    content = required_str(call, "content")
    encoding = optional_str(call, "encoding") or "utf-8"
    if encoding not in ("utf-8", "base64"):
        raise errors.invalid_field("Blob", "encoding", encoding)
    data = decode64(content) if encoding == "base64" else content.encode()
    sha = git.add_blob(data)
    url = f"{call.base}/repos/{repo.full_name}/git/blobs/{sha}"
    return created({"url": url, "sha": sha}, url)


# --- trees ---------------------------------------------------------------------------


def _tree_body(call: Call, repo: Repo, git: RepoGit, tree_sha: str, recursive: bool) -> dict[str, Any]:
    entries = git.tree_entries(tree_sha, recursive=recursive) or []
    truncated = len(entries) > MAX_TREE_ENTRIES
    items = []
    for path, entry in entries[:MAX_TREE_ENTRIES]:
        size = None
        if entry.kind == "blob":
            blob = git.object(entry.sha.decode())
            size = len(blob.data) if isinstance(blob, Blob) else 0
        items.append(git_tree_entry(call.base, repo, path, entry.mode, entry.kind, entry.sha.decode(), size))
    return {"sha": tree_sha, "url": f"{call.base}/repos/{repo.full_name}/git/trees/{tree_sha}", "tree": items,
            "truncated": truncated}


@route("GET", "/repos/{owner}/{repo}/git/trees/{tree_sha}")
def git_get_tree(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    name = call.params["tree_sha"]
    obj = git.object(name.lower()) if _is_sha(name.lower()) else None
    if not isinstance(obj, Tree):
        commit = git.resolve(name)
        info = git.commit_info(commit) if commit is not None else None
        if info is None:
            raise errors.NotFound()
        name = info.tree
    recursive = call.query.get("recursive", "") not in ("", "0", "false")
    return _tree_body(call, repo, git, name.lower(), recursive)


@route("POST", "/repos/{owner}/{repo}/git/trees")
def git_create_tree(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    items = call.body.get("tree")
    if not isinstance(items, list):
        raise errors.invalid_request('"tree" wasn\'t supplied.' if items is None else "For 'tree', is not an array.")
    base_tree = optional_str(call, "base_tree")
    base: bytes | None = None
    if base_tree is not None:
        if not _is_sha(base_tree.lower()) or not isinstance(git.object(base_tree.lower()), Tree):
            raise errors.ValidationFailed({"resource": "Tree", "field": "base_tree", "code": "invalid"},
                                          message="base_tree is not a valid tree oid")
        base = base_tree.lower().encode()
    changes: dict[str, bytes | Entry | None] = {}
    for index, item in enumerate(items):
        changes.update(_tree_item(git, item, index, deleting_allowed=base is not None))
    try:
        tree = apply_changes(lambda sha: git.store[sha], git.store.add_object, base, changes)  # type: ignore[index]
    except InvalidPath as exc:
        raise errors.invalid_field("Tree", "tree.path", str(exc)) from None
    sha = tree.decode()
    return created(_tree_body(call, repo, git, sha, False), f"{call.base}/repos/{repo.full_name}/git/trees/{sha}")


def _tree_item(git: RepoGit, item: Any, index: int, deleting_allowed: bool) -> dict[str, bytes | Entry | None]:
    where = f"tree[{index}]"
    if not isinstance(item, dict):
        raise errors.invalid_request(f"For '{where}', {item!r} is not an object.")
    path, mode, kind = item.get("path"), item.get("mode"), item.get("type")
    if not isinstance(path, str) or not path:
        raise errors.invalid_field("Tree", f"{where}.path", path)
    if mode not in _MODES:
        raise errors.invalid_request(f"For '{where}/mode', {mode!r} is not one of 100644, 100755, 040000, "
                                     "160000, 120000.")
    if kind is not None and kind != _MODES[mode]:
        raise errors.invalid_field("Tree", f"{where}.type", kind)
    if "content" in item and item["content"] is not None:
        if not isinstance(item["content"], str):
            raise errors.invalid_field("Tree", f"{where}.content", item["content"])
        blob = Blob.from_string(item["content"].encode())
        git.add_object(blob)
        return {path: Entry(int(mode, 8), blob.id)}
    sha = item.get("sha")
    if sha is None:
        if not deleting_allowed:
            raise errors.invalid_request(f"Must supply either {where}.sha or {where}.content")
        return {path: None}
    expected = {"blob": Blob, "tree": Tree, "commit": Commit}[_MODES[mode]]
    if not isinstance(sha, str) or (expected is not Commit and not isinstance(git.object(sha.lower()), expected)):
        raise errors.ValidationFailed({"resource": "Tree", "field": f"{where}.sha", "code": "invalid"},
                                      message=f"{where}.sha {sha} is not a valid {_MODES[mode]}")
    return {path: Entry(DIR_MODE if mode == "040000" else int(mode, 8), sha.lower().encode())}


# --- commits ---------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/git/commits/{commit_sha}")
def git_get_commit(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    sha = call.params["commit_sha"].lower()
    info = git.commit_info(sha) if _is_sha(sha) else None
    if info is None:
        raise errors.NotFound()
    return git_commit(call.base, repo.full_name, info)


@route("POST", "/repos/{owner}/{repo}/git/commits", partial="signature is ignored (commits are unsigned)")
def git_create_commit(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    message = required_str(call, "message")
    tree = required_str(call, "tree").lower()
    if not _is_sha(tree) or not isinstance(git.object(tree), Tree):
        raise errors.ValidationFailed({"resource": "Commit", "field": "tree", "code": "invalid"},
                                      message="Tree SHA does not exist")
    parents = call.body.get("parents", [])
    if parents is None:
        parents = []
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise errors.invalid_request("For 'parents', is not an array of strings.")
    for parent in parents:
        if not _is_sha(parent.lower()) or git.commit_info(parent.lower()) is None:
            raise errors.ValidationFailed({"resource": "Commit", "field": "parents", "code": "invalid"},
                                          message="Parent SHA does not exist or is not a commit object")
    author, authored_at = person(call, "author", identity_of(call.user), "Commit")
    committer, committed_at = person(call, "committer", author, "Commit")
    now = call.now()
    sha = git.commit_tree(tree, [p.lower() for p in parents], message, author, authored_at or now, committer,
                          committed_at or authored_at or now)
    info = git.commit_info(sha)
    assert info is not None
    return created(git_commit(call.base, repo.full_name, info), f"{call.base}/repos/{repo.full_name}/git/commits/{sha}")


# --- references ---------------------------------------------------------------------------


def _ref_body(call: Call, repo: Repo, git: RepoGit, ref: str, sha: str) -> dict[str, Any]:
    kind = "tag" if isinstance(git.object(sha), Tag) else "commit"
    return git_ref(call.base, repo, ref, sha, kind)


def _full_ref(name: str) -> str:
    return name if name.startswith("refs/") else "refs/" + name


@route("GET", "/repos/{owner}/{repo}/git/ref/{ref}")
def git_get_ref(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    ref = _full_ref(call.params["ref"])
    sha = git.ref_sha(ref)
    if sha is None:
        raise errors.NotFound()
    return _ref_body(call, repo, git, ref, sha)


@route("GET", "/repos/{owner}/{repo}/git/refs/{ref}")
def git_get_ref_legacy(call: Call) -> Any:
    """The older form: an exact ref is an object, a prefix a list of matches."""
    repo, git = repo_git(call)
    ref = _full_ref(call.params["ref"])
    sha = git.ref_sha(ref)
    if sha is not None:
        return _ref_body(call, repo, git, ref, sha)
    matches = [_ref_body(call, repo, git, name, value) for name, value in git.refs(ref.rstrip("/") + "/")]
    if not matches:
        raise errors.NotFound()
    return call.page(matches)


@route("GET", "/repos/{owner}/{repo}/git/refs")
def git_list_refs(call: Call) -> Any:
    repo, git = repo_git(call)
    return call.page([_ref_body(call, repo, git, name, sha) for name, sha in git.refs()])


@route("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref}")
def git_list_matching_refs(call: Call) -> Any:
    repo, git = repo_git(call)
    prefix = _full_ref(call.params.get("ref", ""))
    return call.page([_ref_body(call, repo, git, name, sha) for name, sha in git.refs(prefix)])


def _guard(call: Call, repo: Repo, ref: str) -> None:
    if ref.startswith("refs/heads/"):
        rule = protection(repo, ref.removeprefix("refs/heads/"))
        if rule is not None and rule.push_rule(call.can(repo, "admin")) is not None:
            raise errors.Unprocessable(f"Protected branch update failed for {ref}.")


@route("POST", "/repos/{owner}/{repo}/git/refs")
def git_create_ref(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    ref = required_str(call, "ref")
    sha = required_str(call, "sha").lower()
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise errors.Unprocessable("Reference name must start with 'refs/' and have at least two slashes.")
    if not _is_sha(sha) or git.object(sha) is None:
        raise errors.Unprocessable("Object does not exist")
    try:
        git.create_ref(ref, sha, actor=call.actor)
    except RefConflict:
        raise errors.Unprocessable("Reference already exists") from None
    except (InvalidRef, UnknownRevision):
        raise errors.Unprocessable(f"{ref} is not a valid ref name.") from None
    body = _ref_body(call, repo, git, ref, sha)
    return created(body, body["url"])


@route("PATCH", "/repos/{owner}/{repo}/git/refs/{ref}")
def git_update_ref(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call, need="write")
    ref = _full_ref(call.params["ref"])
    sha = required_str(call, "sha").lower()
    force = call.field_bool("force", False)
    if git.ref_sha(ref) is None:
        raise errors.Unprocessable("Reference does not exist")
    if not _is_sha(sha) or git.object(sha) is None:
        raise errors.Unprocessable("Object does not exist")
    _guard(call, repo, ref)
    try:
        git.set_ref(ref, sha, force=bool(force), actor=call.actor)
    except NotFastForward:
        raise errors.Unprocessable("Update is not a fast forward") from None
    except (RefConflict, InvalidRef, UnknownRevision):
        raise errors.Unprocessable("Reference cannot be updated") from None
    return _ref_body(call, repo, git, ref, sha)


@route("DELETE", "/repos/{owner}/{repo}/git/refs/{ref}")
def git_delete_ref(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    ref = _full_ref(call.params["ref"])
    if git.ref_sha(ref) is None:
        raise errors.Unprocessable("Reference does not exist")
    _guard(call, repo, ref)
    try:
        git.delete_ref(ref, actor=call.actor)
    except RefConflict as exc:
        raise errors.Unprocessable(str(exc)) from None
    return no_content()


# --- annotated tags -----------------------------------------------------------------------


def _tag_body(call: Call, repo: Repo, tag: Tag) -> dict[str, Any]:
    sha = tag.id.decode()
    kind_class, target = tag.object
    kind = {Commit: "commit", Tree: "tree", Blob: "blob", Tag: "tag"}.get(kind_class, "commit")
    # A pushed tag may lack a tagger, or name itself in any bytes, at any date git takes (git_fsck).
    name, email = parse_identity(tag.tagger or b"")
    when = moment(tag.tag_time or 0).strftime("%Y-%m-%dT%H:%M:%SZ") if tag.tagger else None
    full = repo.full_name
    return {"node_id": sha_node_id("Tag", sha), "sha": sha, "url": f"{call.base}/repos/{full}/git/tags/{sha}",
            "tag": tag.name.decode("utf-8", "replace"), "message": (tag.message or b"").decode("utf-8", "replace"),
            "tagger": {"name": name, "email": email, "date": when},
            "object": {"sha": target.decode(), "type": kind,
                       "url": f"{call.base}/repos/{full}/git/{kind}s/{target.decode()}"},
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                             "verified_at": None}}


@route("GET", "/repos/{owner}/{repo}/git/tags/{tag_sha}")
def git_get_tag(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    sha = call.params["tag_sha"].lower()
    tag = git.object(sha) if _is_sha(sha) else None
    if not isinstance(tag, Tag):
        raise errors.NotFound()
    return _tag_body(call, repo, tag)


@route("POST", "/repos/{owner}/{repo}/git/tags")
def git_create_tag(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    name = required_str(call, "tag")
    message = required_str(call, "message")
    target = required_str(call, "object").lower()
    kind = required_str(call, "type")
    classes = {"commit": Commit, "tree": Tree, "blob": Blob}
    if kind not in classes:
        raise errors.invalid_request(f"For 'type', \"{kind}\" is not one of commit, tree, blob.")
    obj = git.object(target) if _is_sha(target) else None
    if not isinstance(obj, classes[kind]):
        raise errors.ValidationFailed({"resource": "Tag", "field": "object", "code": "invalid"},
                                      message="Object does not exist")
    tagger, tagged_at = person(call, "tagger", identity_of(call.user), "Tag")
    tag = Tag()
    tag.name = name.encode()
    tag.message = message.encode()
    tag.object = (classes[kind], obj.id)
    tag.tagger = f"{tagger.name} <{tagger.email}>".encode()
    tag.tag_time = int(tagged_at or call.now())
    tag.tag_timezone = 0
    sha = git.add_object(tag)
    return created(_tag_body(call, repo, tag), f"{call.base}/repos/{repo.full_name}/git/tags/{sha}")
