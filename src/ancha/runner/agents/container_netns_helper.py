"""Rootless podman's half of a container agent's network (see ``container_network``).

Run as ``podman unshare PYTHON -I -S container_netns_helper.py CHANNEL PORT...``: inside
podman's user namespace, where this user is root, it makes a network namespace of its own
(owned by that user namespace, so podman's runtime may join it), brings its loopback up,
listens on 127.0.0.1:PORT for each port, and sends the runner the namespace's path with
the listening sockets (``SCM_RIGHTS``) over the Unix socket CHANNEL, which it connected to
before leaving the host's network. The runner accepts and forwards from the host's side;
this process only keeps the path valid until the runner closes CHANNEL.

Standard library only, and nothing of ancha's: it starts in a bare interpreter (``-I -S``).
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import os
import socket
import struct
import sys

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def main(argv: list[str]) -> int:
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    channel.connect(argv[1])
    listeners: list[socket.socket] = []
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"unshare(CLONE_NEWNET): {os.strerror(errno)}")
        loopback_up()
        for port in argv[2:]:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listeners.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", int(port)))
            sock.listen(128)
    except OSError as exc:
        channel.sendall(f"error: {exc}\n".encode())
        print(f"ancha netns helper: {exc}", file=sys.stderr)
        return 1
    fds = array.array("i", [sock.fileno() for sock in listeners])
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)] if listeners else []
    channel.sendmsg([f"/proc/{os.getpid()}/ns/net\n".encode()], ancillary)
    for sock in listeners:
        sock.close()  # the runner has its own copies
    while channel.recv(4096):  # until the runner closes it
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
