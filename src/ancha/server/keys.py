"""Server keys: the bearer key a server's control API requires, and where the CLI finds it.

``ancha serve`` makes a key unless told ``--no-key``, prints it, and keeps it in a file only
its user can read (0600, in a 0700 folder of the user's state directory), one file per
server address. Every command that talks to a server (``ancha run`` with ``server.url``,
``ancha doctor``, ``ancha check``, the console following a live trial) takes
``ANCHA_SERVER_KEY`` when it is set, else the key kept for that server. ``ancha run``'s
embedded server has a key of its own, made for the run; no agent is ever given a key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from platformdirs import user_state_dir

KEY_VAR = "ANCHA_SERVER_KEY"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def new_key() -> str:
    """A fresh random key (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def keys_folder() -> Path:
    """Where kept keys live (``$XDG_STATE_HOME/ancha/server-keys`` on Linux)."""
    return Path(user_state_dir("ancha")) / "server-keys"


def key_file(url: str) -> Path:
    """The file that keeps the key of the server at ``url``: one per host and port, every
    loopback name of one port sharing it (``localhost`` and ``127.0.0.1`` are the same server)."""
    split = urlsplit(url if "//" in url else f"//{url}")
    host = (split.hostname or "").lower()
    try:
        port = split.port or (443 if split.scheme == "https" else 80)
    except ValueError:
        port = 0
    name = "loopback" if host in LOOPBACK else host
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{0,100}", name):
        name = hashlib.sha256(name.encode()).hexdigest()[:16]
    return keys_folder() / f"{name}-{port}.key"


def save_key(url: str, key: str) -> Path:
    """Keep ``key`` for the server at ``url``, readable by this user only; the file's path."""
    path = key_file(url)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        path.parent.chmod(0o700)
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (key + "\n").encode())
    finally:
        os.close(fd)
    os.replace(partial, path)
    return path


def forget_key(url: str, key: str) -> None:
    """Remove the kept key of ``url`` if it is still ``key`` (a newer server's stays)."""
    path = key_file(url)
    with contextlib.suppress(OSError):
        if path.read_text().strip() == key:
            path.unlink()


def server_key(url: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key to send to the server at ``url``: ``ANCHA_SERVER_KEY`` when set, else the one
    kept for that server (``save_key``), else None."""
    environ = os.environ if environ is None else environ
    if environ.get(KEY_VAR):
        return environ[KEY_VAR]
    if not url:
        return None
    try:
        kept = key_file(url).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return kept or None
