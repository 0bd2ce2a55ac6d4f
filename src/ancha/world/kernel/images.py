"""Pictures a replica hands out: avatars, team icons, emoji.

Vendors answer with image URLs on their own hosts (gravatar, slack-edge, githubassets). A
replica names its own host instead, so an agent that follows one stays inside the world, and
answers it with a small PNG drawn from a key: distinct per key, the same on every run.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

LARGEST = 512
"""The largest side drawn, in pixels (vendors' largest avatar size)."""


def placeholder_png(key: str, size: int = 40) -> bytes:
    """A square PNG of ``size`` pixels (1 to ``LARGEST``) in one colour drawn from ``key``."""
    rgb = bytes(hashlib.sha256(key.encode()).digest()[:3])
    size = max(1, min(size, LARGEST))
    raw = b"".join(b"\x00" + rgb * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                      "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082")
"""A transparent 1x1 PNG: an icon or logo with nothing to tell apart."""
