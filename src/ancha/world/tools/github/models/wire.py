"""What every wire shape shares: timestamps, node ids, ids, the hosts URLs name.

API URLs (``url``, ``*_url`` pointing at the REST API) are built on the replica's own
base URL so that SDKs following them (PyGithub completes objects through ``url``) stay
inside the replica. Web URLs (``html_url``, ``avatar_url``, ``.diff``, archives) are on the
same base, where ``web.py`` serves github.com's pages: every URL handed out leads back to
the replica. The GraphQL resolvers read the same base through ``web_base()``.

With real hostnames (``agent.hostnames: real``) the base is GitHub's own (``API``), and each
URL names the host GitHub puts it on (``github.com``, ``avatars.githubusercontent.com``,
``raw.githubusercontent.com``, ``uploads.github.com``, ``codeload.github.com``,
``github.githubassets.com``); ``real_hosts.py`` leads each of those hosts back to the path
the replica serves it at. The helpers below build both forms from the base.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any

import orjson

API = "https://api.github.com"
"""GitHub's REST base: a replica whose base is this was reached through GitHub's real hostnames."""
HTML = "https://github.com"
AVATARS = "https://avatars.githubusercontent.com"
RAW = "https://raw.githubusercontent.com"
UPLOADS = "https://uploads.github.com"
CODELOAD = "https://codeload.github.com"
ASSETS = "https://github.githubassets.com"

AVATAR_PATH = "/avatars/u/"
"""Where the replica serves avatars on its own base (``avatars.githubusercontent.com/u/{id}``)."""
RAW_PATH = "/raw/"
"""Where the replica serves raw files on its own base (``raw.githubusercontent.com/{o}/{r}/{ref}/{path}``)."""
ARCHIVE_KINDS = {".tar.gz": "legacy.tar.gz", ".zip": "legacy.zip"}
"""An archive's extension on the replica (``/{o}/{r}/archive/{ref}.tar.gz``) and its kind on codeload."""


def web_url(base: str) -> str:
    """Where github.com's pages are (``html_url``, ``clone_url``, ``.diff``): github.com itself
    through real hostnames, else the replica's own base."""
    return HTML if base == API else base


def avatar_url(base: str, account_id: int) -> str:
    if base == API:
        return f"{AVATARS}/u/{account_id}?v=4"
    return f"{base}{AVATAR_PATH}{account_id}?v=4"


def raw_url(base: str, full_name: str, ref: str, path: str) -> str:
    """A file's ``download_url`` (``ref`` and ``path`` already quoted for a URL)."""
    if base == API:
        return f"{RAW}/{full_name}/{ref}/{path}"
    return f"{base}{RAW_PATH}{full_name}/{ref}/{path}"


def uploads_url(base: str) -> str:
    """The base of release asset uploads (``upload_url``): uploads.github.com through real hostnames."""
    return UPLOADS if base == API else base


def archive_url(base: str, full_name: str, ref: str, ext: str) -> str:
    """Where ``GET /repos/{o}/{r}/tarball/{ref}`` (``ext`` ``.tar.gz``) or ``zipball`` (``.zip``)
    redirects. ``ref`` is quoted for a URL; through real hostnames it is the full ref name
    (``refs/heads/main``) or a commit, as in GitHub's ``Location``."""
    if base == API:
        return f"{CODELOAD}/{full_name}/{ARCHIVE_KINDS[ext]}/{ref}"
    return f"{base}/{full_name}/archive/{ref}{ext}"


def assets_url(base: str) -> str:
    """The base of GitHub's static pictures (``GET /emojis``): github.githubassets.com through real hostnames."""
    return ASSETS if base == API else base


_QUERY_BASE: ContextVar[str] = ContextVar("github_query_base", default=API)


def query_base() -> str:
    """The replica's base URL while a GraphQL query runs (its resolvers build ``url`` fields
    without a ``base`` argument); GitHub's own outside one."""
    return _QUERY_BASE.get()


def web_base() -> str:
    """Where github.com's pages are while a GraphQL query runs (``web_url`` of ``query_base``)."""
    return web_url(_QUERY_BASE.get())


def set_web_base(base: str) -> Token[str]:
    """Sets the replica's base URL for the GraphQL query about to run."""
    return _QUERY_BASE.set(base)


def reset_web_base(token: Token[str]) -> None:
    _QUERY_BASE.reset(token)

JSONDict = dict[str, Any]


def iso(t: float | None) -> str | None:
    """GitHub's timestamp: whole seconds, UTC, ``Z``."""
    global _last_iso
    if t is None:
        return None
    second = int(t)
    last = _last_iso
    if last[0] == second:  # an object's timestamps, and calls close together, share their second
        return last[1]
    text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_iso = (second, text)
    return text


_last_iso: tuple[int | None, str] = (None, "")


def node_id(kind: str, number: int) -> str:
    """A legacy global node id (``MDQ6VXNlcjE=`` is ``04:User1``), stable for a kind and id."""
    return base64.b64encode(f"{len(kind):02d}:{kind}{number}".encode()).decode()


class Ids:
    """Integer ids per kind: deterministic, counting up from a base drawn once per trial."""

    def __init__(self, seed_hex: str) -> None:
        self._base = 1_000_000 + int(seed_hex, 16) % 9_000_000
        self._next: dict[str, int] = {}

    def next(self, kind: str) -> int:
        value = self._next.get(kind, self._base * _SCALE.get(kind, 10))
        self._next[kind] = value + 1
        return value


# Realistic magnitudes: repositories in the hundreds of millions, comments in the billions.
_SCALE = {"user": 1, "org": 1, "team": 1, "repo": 100, "issue": 1000, "comment": 2000, "label": 1000,
          "milestone": 10, "event": 10000, "pull": 1000, "review": 2000, "review_comment": 1000,
          "deployment": 200, "deployment_status": 400, "status": 5000, "check_run": 5000,
          "check_suite": 2000, "release": 100, "release_asset": 300}


# --- answers as JSON text ---------------------------------------------------------------------

_standard_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(value: Any) -> str:
    """The replica's one JSON encoding (compact, UTF-8 as is); cached fragments use it too.
    orjson writes the same text at a tenth of the cost; what it refuses (an int past 64 bits,
    a key that is not a string) the standard library encodes."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _standard_dumps(value)


class RawJSON(str):
    """JSON text an answer embeds as is: an object's cached wire form, or a page of them.

    A page kept for reuse (an unchanged list answered again) also keeps its UTF-8 bytes and
    their SHA-256, so an answer repeated costs neither encoding nor hashing again."""

    def utf8(self) -> bytes:
        cached: bytes | None = self.__dict__.get("_utf8")
        if cached is None:
            cached = self.__dict__["_utf8"] = self.encode()
        return cached

    def sha256(self) -> str:
        cached: str | None = self.__dict__.get("_sha256")
        if cached is None:
            cached = self.__dict__["_sha256"] = hashlib.sha256(self.utf8()).hexdigest()
        return cached


def raw_list(items: Iterable[str]) -> RawJSON:
    """A JSON array of already-encoded items, byte-identical to ``dumps`` of the decoded list."""
    return RawJSON("[" + ",".join(items) + "]")


def encode_utf8(value: Any) -> bytes:
    """``encode(value).encode()``, in one step where orjson can: the answer body's bytes."""
    if isinstance(value, RawJSON):
        return value.utf8()
    spliced = value
    if isinstance(value, dict) and any(isinstance(item, RawJSON) for item in value.values()):
        spliced = {key: orjson.Fragment(item.utf8()) if isinstance(item, RawJSON) else item for key, item in value.items()}
    elif isinstance(value, list) and any(isinstance(item, RawJSON) for item in value):
        spliced = [orjson.Fragment(item.utf8()) if isinstance(item, RawJSON) else item for item in value]
    try:
        return orjson.dumps(spliced)
    except TypeError:  # what orjson refuses (see ``dumps``)
        return encode(value).encode()


def encode(value: Any) -> str:
    """``dumps(value)``, splicing ``RawJSON`` (the value, or a top-level member or item) as is."""
    if isinstance(value, RawJSON):
        return value
    if isinstance(value, dict) and any(isinstance(item, RawJSON) for item in value.values()):
        return "{" + ",".join(f"{dumps(key)}:{encode(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list) and any(isinstance(item, RawJSON) for item in value):
        return "[" + ",".join(encode(item) for item in value) + "]"
    return dumps(value)
