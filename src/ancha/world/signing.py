"""Signing checkpoints: a checkpoint is code as much as data, so a server takes back only its own.

Every checkpoint Ancha makes is signed with a key kept for the user on this machine
(``checkpoint.key`` in Ancha's data folder, readable by the user alone); ``POST
/checkpoints`` restores only what verifies. A checkpoint from anywhere else is refused,
and its world is rebuilt by replaying the trial's calls instead.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from functools import cache
from pathlib import Path

from platformdirs import user_data_dir

PREFIX = b"ancha-signature "


class SignatureInvalid(ValueError):
    pass


def key_path() -> Path:
    return Path(os.environ.get("ANCHA_DATA_DIR") or user_data_dir("ancha")) / "checkpoint.key"


@cache
def _key() -> bytes:
    path = key_path()
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_hex(32)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(fresh)
    try:  # the first writer wins: every process then signs with the one key
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        temporary.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text().strip())


def sign(data: bytes) -> bytes:
    mac = hmac.new(_key(), data, hashlib.sha256).hexdigest()
    return PREFIX + mac.encode() + b"\n" + data


def verify(signed: bytes) -> bytes:
    """The checkpoint inside ``signed``; ``SignatureInvalid`` unless this machine's key signed it."""
    first, newline, data = signed.partition(b"\n")
    if not newline or not first.startswith(PREFIX):
        raise SignatureInvalid("the checkpoint is not signed")
    expected = hmac.new(_key(), data, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(first[len(PREFIX):], expected):
        raise SignatureInvalid("the checkpoint was not signed on this machine (or was changed since)")
    return data


def unsigned(data: bytes) -> bytes:
    """``data`` without its signature line, if it has one (not verified)."""
    if data.startswith(PREFIX):
        return data.partition(b"\n")[2]
    return data
