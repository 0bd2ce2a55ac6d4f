"""Git's smart HTTP protocol (v0/v1) for one trial's repositories, as github.com serves it.

Paths below the tool's base URL: ``GET /OWNER/REPO.git/info/refs?service=git-upload-pack``
(or ``git-receive-pack``), ``POST /OWNER/REPO.git/git-upload-pack`` and
``POST /OWNER/REPO.git/git-receive-pack``, with or without ``.git``. dulwich's own
upload-pack and receive-pack handlers do the protocol over in-memory streams; this
module adds GitHub's rules around them.

The replica calls ``serve_git(replica, request)`` first in ``handle``: it answers git
paths (None for any other path), resolving the token and the caller's role on the
repository itself. ``handle_git(request, route, GitAccess(...))`` is the same without
the replica, for callers that resolved access themselves.

Access, as GitHub answers it: wrong credentials are 401 with ``WWW-Authenticate: Basic
realm="GitHub"``; anonymous clones of a public repository work, anything else
anonymous is 401; a repository the caller cannot read is 404 ``Repository not found.``;
a push without write access is 403. Pushes to a protected branch are refused per ref
(``ng refs/heads/main protected branch hook declined``) with GitHub's ``GH006`` lines on
the progress channel. Accepted ref moves reach ``RepoGit.on_ref_update`` with the actor.

A request body may come gzipped (``Content-Encoding: gzip``, as git sends large fetch
negotiations). It is inflated a MiB at a time against the same 100 MiB limit as any body,
and refused as an oversized body is (413) as soon as it passes it, so a small bomb never
inflates further. The server does that in a worker thread (``decode_request``, GitHub's
``ToolSpec.decode_body``): 100 MiB take about half a second, too long to hold the event loop.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from dulwich.errors import (
    ApplyDeltaError,
    ChecksumMismatch,
    GitProtocolError,
    HangupException,
    ObjectFormatException,
)
from dulwich.objects import ObjectID
from dulwich.protocol import CAPABILITY_ATOMIC, SIDE_BAND_CHANNEL_PROGRESS, ReceivableProtocol
from dulwich.refs import ZERO_SHA, Ref
from dulwich.server import Backend, BackendRepo, ReceivePackHandler, UploadPackHandler

from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.github.git_fsck import funny_ref
from ancha.world.tools.github.git_objects import PackRefused, PackTooLarge
from ancha.world.tools.github.git_protection import BranchRule, protection_of
from ancha.world.tools.github.git_store import RepoGit

if TYPE_CHECKING:
    from ancha.world.tools.github.replica import GitHubReplica

MAX_BODY = 100 * 1024 * 1024
"""GitHub's limit on a request body, inflated or not: git pushes can be large."""
INFLATE_STEP = 1024 * 1024
TEXT = "text/plain; charset=utf-8"
_PATH = re.compile(r"^/(?P<owner>[^/]+)/(?P<repo>[^/]+?)(?:\.git)?/(?P<endpoint>info/refs|git-upload-pack|"
                   r"git-receive-pack)/?$")
_SERVICES = ("git-upload-pack", "git-receive-pack")
_NO_CACHE = {"cache-control": "no-cache, max-age=0, must-revalidate", "expires": "Fri, 01 Jan 1980 00:00:00 GMT",
             "pragma": "no-cache"}


@dataclass(frozen=True, slots=True)
class GitRoute:
    owner: str
    repo: str
    endpoint: str
    """``info/refs``, ``git-upload-pack`` or ``git-receive-pack``."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"


def _no_rule(branch: str) -> BranchRule | None:
    return None


@dataclass(frozen=True, slots=True)
class GitAccess:
    """What the replica resolved about the caller and the repository."""

    repo: RepoGit | None
    credentials_given: bool
    authenticated: bool
    can_read: bool
    can_write: bool
    login: str = ""
    actor: str = "agent"
    rule: Callable[[str], BranchRule | None] = _no_rule


def git_route(request: ToolRequest) -> GitRoute | None:
    """The repository and endpoint of a git smart-HTTP path, or None."""
    path = request.path
    if "/info/refs" not in path and "/git-" not in path:  # every REST call asks first: a cheap no
        return None
    found = _PATH.match(path)
    if found is None:
        return None
    return GitRoute(found["owner"], found["repo"], found["endpoint"])


def git_token(request: ToolRequest) -> str | None:
    """The token a git client sent: Basic auth's password (or its user name when the
    password is empty, as ``https://TOKEN@github.com/...`` sends), ``token X`` or ``Bearer X``."""
    header = request.headers.get("authorization", "").strip()
    scheme, _, value = header.partition(" ")
    value = value.strip()
    if scheme.lower() in ("token", "bearer"):
        return value or None
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, _, password = decoded.partition(":")
    return password or user or None


def serve_git(replica: GitHubReplica, request: ToolRequest) -> ToolResponse | None:
    """Answer a git smart-HTTP request to the replica, or None when the path is not one."""
    route = git_route(request)
    if route is None:
        return None
    token = git_token(request)
    caller = replica.tokens.get(token) if token is not None else None
    repo = replica.state.repo(route.owner, route.repo)
    role = replica.state.role(repo, caller.user if caller is not None else None) if repo is not None else None
    rank = {"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}.get(role or "", 0)
    protected = repo.protected_branches if repo is not None else {}

    def rule(branch: str) -> BranchRule | None:
        protection = protection_of(protected.get(branch))
        return protection.push_rule(rank >= 5) if protection is not None else None

    git = getattr(repo, "git", None) if repo is not None else None
    access = GitAccess(repo=git if isinstance(git, RepoGit) else None,
                       credentials_given=bool(request.headers.get("authorization", "").strip()),
                       authenticated=caller is not None, can_read=rank >= 1, can_write=rank >= 3,
                       login=caller.user.login if caller is not None else "",
                       actor=caller.actor if caller is not None else "agent", rule=rule)
    return handle_git(request, route, access)


def handle_git(request: ToolRequest, route: GitRoute, access: GitAccess) -> ToolResponse:
    """Answer one smart-HTTP request exactly as github.com would."""
    actor = access.actor
    service = _service(request, route)
    if service is None:
        if route.endpoint == "info/refs":
            return _text(403, "Please upgrade your git client.\nGitHub.com no longer supports git over dumb-http: "
                              "https://github.com/blog/809-git-dumb-http-transport-to-be-turned-off-in-90-days\n",
                         actor)
        return _text(405, "Method Not Allowed\n", actor)
    if access.credentials_given and not access.authenticated:
        return _unauthorized("Invalid username or token. Password authentication is not supported for Git "
                             "operations.\n", actor)
    repo = access.repo
    if repo is None or not access.can_read:
        if not access.authenticated:
            return _unauthorized("", actor)
        return _text(404, "Repository not found.\n", actor)
    if service == "git-receive-pack":
        if not access.authenticated:
            return _unauthorized("", actor)
        if not access.can_write:
            return _text(403, f"Permission to {route.full_name}.git denied to {access.login}.\n", actor)
    if route.endpoint == "info/refs":
        return _advertise(repo, service, actor)
    if request.headers.get("content-type", "") != f"application/x-{service}-request":
        return _text(415, "Unsupported Media Type\n", actor)
    body = _request_body(request, actor)
    if isinstance(body, ToolResponse):
        return body
    return _serve(repo, service, body, access)


def _service(request: ToolRequest, route: GitRoute) -> str | None:
    if route.endpoint == "info/refs":
        if request.method not in ("GET", "HEAD"):
            return None
        service = parse_qs(request.query).get("service", [""])[0]
        return service if service in _SERVICES else None
    return route.endpoint if request.method == "POST" else None


def body_too_large(limit: int) -> ToolResponse:
    """GitHub's answer to a body over its limit (given), as sent or once inflated."""
    body = {"message": "Request body too large", "documentation_url": "https://docs.github.com/rest"}
    return ToolResponse(413, json.dumps(body).encode(), "application/json; charset=utf-8")


class InflatedTooLarge(Exception):
    """A compressed body that inflates past the limit."""


def inflate(data: bytes, limit: int) -> bytes | None:
    """A gzip body inflated (one member or several), or None when it is not gzip. Raises
    ``InflatedTooLarge`` as soon as more than ``limit`` bytes came out: it inflates
    ``INFLATE_STEP`` bytes at a time, so no more than the limit and a step is ever held."""
    out: list[bytes] = []
    size = 0
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            pending = rest
            while not inflater.eof:
                chunk = inflater.decompress(pending, INFLATE_STEP)
                pending = inflater.unconsumed_tail
                if not chunk and not pending:
                    return None  # the body ends before the stream does
                size += len(chunk)
                if size > limit:
                    raise InflatedTooLarge(limit)
                out.append(chunk)
            rest = inflater.unused_data
    except zlib.error:
        return None
    return b"".join(out)


def decode_request(request: ToolRequest, limit: int) -> Callable[[], ToolRequest | ToolResponse] | None:
    """``ToolSpec.decode_body`` for GitHub: the job that inflates a gzipped git request (the
    request without its ``Content-Encoding``, 413 past ``limit``, 400 when it is not gzip);
    None for anything else (REST bodies go to their routes as sent)."""
    route = git_route(request)
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if route is None or route.endpoint == "info/refs" or encoding not in ("gzip", "x-gzip"):
        return None

    def job() -> ToolRequest | ToolResponse:
        try:
            body = inflate(request.body, limit)
        except InflatedTooLarge:
            return body_too_large(limit)
        if body is None:
            return _text(400, "Bad Request\n", "agent")
        headers = {k: v for k, v in request.headers.items() if k != "content-encoding"}
        return ToolRequest(request.method, request.path, request.query, headers, body)

    return job


def _request_body(request: ToolRequest, actor: str) -> bytes | ToolResponse:
    """The body, inflated (callers that skip the server's ``decode_request`` get the same limit)."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return request.body
    if encoding in ("gzip", "x-gzip"):
        try:
            body = inflate(request.body, MAX_BODY)
        except InflatedTooLarge:
            return body_too_large(MAX_BODY)
        if body is not None:
            return body
    return _text(400, "Bad Request\n", actor)


class _Backend(Backend):
    """One repository, whatever path dulwich asks for."""

    def __init__(self, repo: BackendRepo) -> None:
        self.repo = repo

    def open_repository(self, path: str) -> BackendRepo:
        return self.repo


_UNPACK_ERRORS = (OSError, ChecksumMismatch, ApplyDeltaError, AssertionError, zlib.error, ObjectFormatException)


class _GitHubReceivePack(ReceivePackHandler):
    """Receive-pack as GitHub's: git's own checks on what a push names and carries (funny
    ref names, fsck of the pack, all or nothing), branch protection, and git's report
    lines for each (``unpack ...``, ``ok REF``, ``ng REF REASON``)."""

    def __init__(self, backend: Backend, proto: ReceivableProtocol, repo_git: RepoGit, access: GitAccess,
                 advertise_refs: bool = False) -> None:
        super().__init__(backend, ["/"], proto, stateless_rpc=True, advertise_refs=advertise_refs)
        self.repo_git = repo_git
        self.access = access

    def _receive_max_input_size(self) -> int | None:
        return MAX_BODY

    def _apply_pack(self, refs: list[tuple[ObjectID, ObjectID, Ref]]) -> Iterator[tuple[bytes, bytes]]:
        """git-receive-pack's order: unpack (a refused pack refuses every ref as ``unpacker
        error``), then each ref's checks, then the moves (none at all when an ``atomic``
        push has a refused ref)."""
        for _, new, ref in refs:
            if funny_ref(ref, new == ZERO_SHA):
                self._remote(b"error: refusing to update funny ref '" + ref + b"' remotely\n")
        if any(new != ZERO_SHA for _, new, _ in refs):
            failure = self._unpack()
            if failure is not None:
                yield b"unpack", failure
                for _, _, ref in refs:
                    yield ref, b"unpacker error"
                return
        yield b"unpack", b"ok"
        reasons = [b"funny refname" if funny_ref(ref, new == ZERO_SHA) else self._on_update(ref, old, new)
                   for old, new, ref in refs]
        if self.has_capability(CAPABILITY_ATOMIC) and any(reasons):
            for (_, _, ref), reason in zip(refs, reasons, strict=True):
                yield ref, reason or b"atomic push failed"
            return
        for (old, new, ref), reason in zip(refs, reasons, strict=True):
            yield ref, reason or self._move(ref, old, new)

    def _unpack(self) -> bytes | None:
        """Take the pushed pack (None), or git's unpack status for why not, with git's
        lines on the progress channel (``remote: error: object SHA: hasDotgit: ...``)."""
        try:
            self.repo_git.store.add_thin_pack(self.proto.read, getattr(self.proto, "recv", None),
                                              max_input_size=MAX_BODY)
        except PackRefused as refused:
            self._remote("".join(f"error: object {refused.sha}: {problem}\n" for problem in refused.problems)
                         + "fatal: fsck error in packed object\n")
            return f"{refused.unpacker} abnormal exit".encode()
        except PackTooLarge:
            self._remote("fatal: pack exceeds maximum allowed size\n")
            return b"unpack-objects abnormal exit"
        except _UNPACK_ERRORS as exc:
            self._remote(f"fatal: {exc}\n".replace("\n", " ").rstrip() + "\n")
            return b"unpack-objects abnormal exit"
        return None

    def _move(self, ref: Ref, old: ObjectID, new: ObjectID) -> bytes:
        refs = self.repo_git.repo.refs
        if new == ZERO_SHA:
            return b"ok" if refs.remove_if_equals(ref, old) else b"failed to delete"
        return b"ok" if refs.set_if_equals(ref, old, new) else b"failed to update ref"

    def _on_update(self, ref_name: Ref, old_sha: ObjectID, new_sha: ObjectID) -> bytes | None:
        deleting = new_sha == ZERO_SHA
        if not deleting and new_sha not in self.repo_git.store:
            return b"missing necessary objects"
        name = ref_name.decode("utf-8", "replace")
        if deleting and name == "refs/heads/" + self.repo_git.default_branch:
            return b"deletion of the current branch prohibited"
        if not name.startswith("refs/heads/"):
            return None
        rule = self.access.rule(name.removeprefix("refs/heads/"))
        if rule is None:
            return None
        reason: str | None = None
        if deleting and not rule.allow_deletions:
            reason = "Cannot delete this protected branch"
        elif not deleting and rule.pull_request_required:
            reason = "Changes must be made through a pull request."
        elif not deleting and old_sha != ZERO_SHA and not rule.allow_force_pushes \
                and not self.repo_git.is_ancestor(old_sha.decode(), new_sha.decode()):
            reason = "Cannot force-push to this branch"
        if reason is None:
            return None
        self._remote(f"error: GH006: Protected branch update failed for {name}.\nerror: {reason}\n")
        return b"protected branch hook declined"

    def _remote(self, text: str | bytes) -> None:
        """Lines git prints as ``remote: ...`` (when the client listens on the progress channel)."""
        if self._client_capabilities is not None and self.has_capability(b"side-band-64k"):
            self.proto.write_sideband(SIDE_BAND_CHANNEL_PROGRESS, text.encode() if isinstance(text, str) else text)


def _protocol(body: bytes, out: list[bytes]) -> ReceivableProtocol:
    def write(data: bytes) -> int:
        out.append(data)
        return len(data)

    return ReceivableProtocol(BytesIO(body).read, write)


def _advertise(repo: RepoGit, service: str, actor: str) -> ToolResponse:
    out: list[bytes] = []
    proto = _protocol(b"", out)
    handler = _handler(repo, service, proto, None, advertise=True)
    proto.write_pkt_line(b"# service=" + service.encode() + b"\n")
    proto.write_pkt_line(None)
    handler.handle()
    return ToolResponse(200, b"".join(out), f"application/x-{service}-advertisement", dict(_NO_CACHE),
                        actor=actor)


def _serve(repo: RepoGit, service: str, body: bytes, access: GitAccess) -> ToolResponse:
    out: list[bytes] = []
    handler = _handler(repo, service, _protocol(body, out), access, advertise=False)
    try:
        handler.handle()
    except (GitProtocolError, HangupException) as exc:
        return _text(400, f"{exc}\n", access.actor)
    except Exception as exc:  # a malformed request dulwich did not expect: still the client's fault
        return _text(400, f"{type(exc).__name__}: {exc}\n", access.actor)
    finally:
        if service == "git-receive-pack":
            repo.flush_ref_updates(access.actor)
    return ToolResponse(200, b"".join(out), f"application/x-{service}-result", dict(_NO_CACHE),
                        actor=access.actor)


def _handler(repo: RepoGit, service: str, proto: ReceivableProtocol, access: GitAccess | None,
             advertise: bool) -> UploadPackHandler | ReceivePackHandler:
    backend = _Backend(repo.repo)  # type: ignore[arg-type]
    if service == "git-upload-pack":
        return UploadPackHandler(backend, ["/"], proto, stateless_rpc=True, advertise_refs=advertise)
    return _GitHubReceivePack(backend, proto, repo, access or _READ_ONLY, advertise_refs=advertise)


_READ_ONLY = GitAccess(None, False, False, False, False)


def _text(status: int, text: str, actor: str, headers: dict[str, Any] | None = None) -> ToolResponse:
    return ToolResponse(status, text.encode(), TEXT, dict(headers or {}), actor=actor)


def _unauthorized(text: str, actor: str) -> ToolResponse:
    return _text(401, text, actor, {"www-authenticate": 'Basic realm="GitHub"'})
