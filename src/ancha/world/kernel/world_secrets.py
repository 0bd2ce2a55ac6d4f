"""The world's secrets: tokens, keys and passwords a trial hands out, drawn from its seed.

A replica's tokens must be unguessable to anyone who does not know the trial's seed, and
the same for the same seed, so that a replayed trial (``ancha replay``) hands out the very
tokens the agent used. They come from SHA-256 in counter mode over a key made of the
scene's hash, the trial and the run's seed: a stream of its own, so drawing a token never
shifts the ids the trial's RNG gives.
"""

from __future__ import annotations

import base64
import hashlib
import string

URLSAFE = string.ascii_letters + string.digits + "-_"


class WorldSecrets:
    def __init__(self, source_hash: str, trial: int, seed: int, salt: str = "") -> None:
        """``salt``: a random one for a world with no seed (its tokens are then unrepeatable)."""
        self._key = hashlib.sha256(f"ancha-secrets:{source_hash}:{trial}:{seed}:{salt}".encode()).digest()
        self._counter = 0
        self._pool = b""

    def token_bytes(self, n: int) -> bytes:
        while len(self._pool) < n:
            self._counter += 1
            self._pool += hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
        out, self._pool = self._pool[:n], self._pool[n:]
        return out

    def token_hex(self, n: int) -> str:
        """``2n`` hex digits (as ``secrets.token_hex(n)``)."""
        return self.token_bytes(n).hex()

    def token_urlsafe(self, n: int) -> str:
        """As ``secrets.token_urlsafe(n)``: ``n`` bytes in URL-safe base64, unpadded."""
        return base64.urlsafe_b64encode(self.token_bytes(n)).rstrip(b"=").decode("ascii")

    def choice(self, alphabet: str, length: int) -> str:
        """``length`` characters drawn evenly from ``alphabet`` (at most 256 of them)."""
        size = len(alphabet)
        limit = 256 - 256 % size  # rejection sampling keeps every character equally likely
        out: list[str] = []
        while len(out) < length:
            for byte in self.token_bytes(length - len(out) + 8):
                if byte < limit and len(out) < length:
                    out.append(alphabet[byte % size])
        return "".join(out)
