"""Raw git-receive-pack requests, for pushes the git CLI will not make (objects git's own
tools refuse to write, ref names git refuses locally), and their answers read back."""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from io import BytesIO

from dulwich.object_format import SHA1
from dulwich.objects import ShaFile
from dulwich.pack import write_pack_objects

ZERO = b"0" * 40
RECEIVE_PACK = "/acme/orders.git/git-receive-pack"
HEADERS = {"Content-Type": "application/x-git-receive-pack-request"}


def pkt(line: bytes) -> bytes:
    return b"%04x" % (len(line) + 4) + line


def push_body(commands: Iterable[tuple[bytes, bytes, bytes]], objects: Iterable[ShaFile] = (),
              capabilities: bytes = b"report-status side-band-64k") -> bytes:
    """A receive-pack request: ``(old, new, ref)`` commands, then a pack of ``objects``
    (sent as is: their raw bytes, however odd)."""
    lines = []
    for i, (old, new, ref) in enumerate(commands):
        lines.append(pkt(old + b" " + new + b" " + ref + (b"\0" + capabilities if i == 0 else b"") + b"\n"))
    pack = BytesIO()
    objects = list(objects)
    if objects or any(new != ZERO for _, new, _ in commands):
        write_pack_objects(pack.write, [(obj, None) for obj in objects], SHA1)
    return b"".join(lines) + b"0000" + pack.getvalue()


def raw_object(type_num: int, raw: bytes) -> ShaFile:
    """An object from its exact bytes (dulwich keeps them as given, odd or not)."""
    return ShaFile.from_raw_string(type_num, raw)


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
    return PushAnswer(report, progress.decode("utf-8", "replace"))


def gzip_of_zeros(size: int, level: int = 1) -> bytes:
    """A gzip stream that inflates to ``size`` zero bytes, made without holding them."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    out = [packer.compress(chunk) for _ in range(size >> 20)]
    out.append(packer.compress(bytes(size & ((1 << 20) - 1))))
    out.append(packer.flush())
    return b"".join(out)
