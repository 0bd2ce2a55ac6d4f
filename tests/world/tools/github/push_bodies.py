"""Raw git-receive-pack requests, for pushes the git CLI will not make (objects git's own
tools refuse to write, ref names git refuses locally), and their answers read back."""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from io import BytesIO

from dulwich.objects import ShaFile

ZERO = b"0" * 40
RECEIVE_PACK = "/acme/orders.git/git-receive-pack"
HEADERS = {"Content-Type": "application/x-git-receive-pack-request"}


def pkt(line: bytes) -> bytes:
    return b"%04x" % (len(line) + 4) + line


@dataclass(frozen=True)
class RawObject:
    """A git object as exact bytes, however odd (dulwich would refuse to parse some)."""

    type_num: int
    raw: bytes

    @property
    def id(self) -> bytes:
        name = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}[self.type_num]
        return hashlib.sha1(name + b" %d\0" % len(self.raw) + self.raw).hexdigest().encode()


def pack_of(objects: Iterable[ShaFile | RawObject]) -> bytes:
    """A version 2 pack of whole objects (no deltas), their bytes as given."""
    items = [o if isinstance(o, RawObject) else RawObject(o.type_num, o.as_raw_string()) for o in objects]
    out = [b"PACK" + struct.pack(">II", 2, len(items))]
    for item in items:
        size = len(item.raw)
        head = bytearray([(item.type_num << 4) | (size & 0x0F)])
        size >>= 4
        while size:
            head[-1] |= 0x80
            head.append(size & 0x7F)
            size >>= 7
        out.append(bytes(head) + zlib.compress(item.raw))
    data = b"".join(out)
    return data + hashlib.sha1(data).digest()


def zero_blobs_pack(sizes: Iterable[int]) -> tuple[bytes, list[bytes]]:
    """A pack of blobs of zeros of these sizes, and their ids, made without holding them."""
    sizes = list(sizes)
    out, ids = [b"PACK" + struct.pack(">II", 2, len(sizes))], []
    for size in sizes:
        packer, sha = zlib.compressobj(1), hashlib.sha1(b"blob %d\0" % size)
        head, rest = bytearray([(3 << 4) | (size & 0x0F)]), size >> 4
        while rest:
            head[-1] |= 0x80
            head.append(rest & 0x7F)
            rest >>= 7
        out.append(bytes(head))
        left = size
        while left:
            chunk = bytes(min(left, 1 << 20))
            sha.update(chunk)
            out.append(packer.compress(chunk))
            left -= len(chunk)
        out.append(packer.flush())
        ids.append(sha.hexdigest().encode())
    data = b"".join(out)
    return data + hashlib.sha1(data).digest(), ids


def push_body(commands: Iterable[tuple[bytes, bytes, bytes]], objects: Iterable[ShaFile | RawObject] = (),
              capabilities: bytes = b"report-status side-band-64k", pack: bytes | None = None) -> bytes:
    """A receive-pack request: ``(old, new, ref)`` commands, then a pack of ``objects``
    (or ``pack`` as given)."""
    lines = []
    commands = list(commands)
    for i, (old, new, ref) in enumerate(commands):
        lines.append(pkt(old + b" " + new + b" " + ref + (b"\0" + capabilities if i == 0 else b"") + b"\n"))
    objects = list(objects)
    if pack is None:
        pack = pack_of(objects) if objects or any(new != ZERO for _, new, _ in commands) else b""
    return b"".join(lines) + b"0000" + pack


@dataclass
class PushAnswer:
    report: list[bytes]
    """report-status lines: ``unpack ok``, ``ok REF``, ``ng REF REASON``."""
    remote: str
    """What git prints as ``remote: ...`` (the progress channel)."""


def read_answer(body: bytes) -> PushAnswer:
    data, progress = b"", b""
    stream = BytesIO(body)
    while True:
        size = stream.read(4)
        if not size:
            break
        length = int(size, 16)
        if length == 0:
            continue
        payload = stream.read(length - 4)
        if payload[:1] == b"\1":
            data += payload[1:]
        else:
            progress += payload[1:]
    report, inner = [], BytesIO(data)
    while True:
        size = inner.read(4)
        if not size:
            break
        length = int(size, 16)
        if length:
            report.append(inner.read(length - 4).rstrip(b"\n"))
    return PushAnswer(report, progress.decode("utf-8", "surrogateescape"))


def gzip_of_zeros(size: int, level: int = 1) -> bytes:
    """A gzip stream that inflates to ``size`` zero bytes, made without holding them."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    out = [packer.compress(chunk) for _ in range(size >> 20)]
    out.append(packer.compress(bytes(size & ((1 << 20) - 1))))
    out.append(packer.flush())
    return b"".join(out)
