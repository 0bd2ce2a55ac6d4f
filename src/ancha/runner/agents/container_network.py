"""A container agent's network: a namespace of its own in which only Ancha's endpoints answer.

Each agent container gets a fresh network namespace with nothing but a loopback interface: no
route, no DNS server it can reach, no other host. For every endpoint the agent may use
(the Ancha server's listeners, the model gateway), the runner opens a listening socket
*inside* that namespace (a thread enters it with ``setns``) and forwards each connection
to the real endpoint from the host side. The container joins the namespace
(``--network ns:PATH``), so a request to anything else fails at once: connection refused
on loopback, network unreachable elsewhere. No firewall rules are touched, so nothing
is left behind on the host if the runner dies, beyond the namespace's name.

An endpoint on the host's loopback keeps its address (the same port answers inside); a
named host keeps its name (``--add-host NAME:127.0.0.1``), so TLS names still match; any
other address is rewritten to a loopback port (``plan_endpoints``, ``rewrite_url``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import ipaddress
import os
import secrets
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from ancha.errors import RunFailed

CLONE_NEWNET = 0x40000000
NETNS_FOLDER = "/run/netns"
CHUNK = 64 * 1024
SPARE_PORTS = 40_000
"""Where endpoints whose port is taken inside are moved to."""


class NetworkUnavailable(RunFailed):
    """The namespace that isolates the agent cannot be made here: the run stops, never runs it open."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        """``host:port`` (``[v6]:port`` too)."""
        split = urlsplit(f"//{text}")
        if split.hostname is None or split.port is None:
            raise ValueError(f"expected host:port, got {text!r}")
        return cls(split.hostname, split.port)

    @classmethod
    def of_url(cls, url: str) -> Endpoint | None:
        split = urlsplit(url)
        if split.scheme not in ("http", "https") or not split.hostname:
            return None
        return cls(split.hostname, split.port or (443 if split.scheme == "https" else 80))


def isolation_problem(path: str | None = None) -> str | None:
    """Why a namespace cannot be made here (``path``: where to look for ``ip``), or None."""
    if not hasattr(os, "geteuid") or not os.path.exists("/proc/self/ns/net"):
        return "container network isolation needs Linux network namespaces"
    if os.geteuid() != 0:
        return "making a network namespace for the agent needs root (CAP_SYS_ADMIN)"
    if shutil.which("ip", path=path) is None:
        return "the `ip` command (iproute2) is not on PATH"
    return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def plan_endpoints(endpoints: Iterable[Endpoint]) -> dict[Endpoint, Endpoint]:
    """Where each endpoint answers inside the namespace: its own port on loopback when free
    there, under its own name when it has one (``--add-host``), else on 127.0.0.1."""
    plan: dict[Endpoint, Endpoint] = {}
    used: set[int] = set()
    spare = SPARE_PORTS
    for endpoint in dict.fromkeys(endpoints):
        port = endpoint.port
        if port in used:
            while spare in used:
                spare += 1
            port = spare
        used.add(port)
        named = not _is_address(endpoint.host)
        plan[endpoint] = Endpoint(endpoint.host if named or endpoint.host == "127.0.0.1" else "127.0.0.1", port)
    return plan


def add_hosts(plan: Mapping[Endpoint, Endpoint]) -> list[tuple[str, str]]:
    """``--add-host`` pairs: named hosts resolve to the loopback forwarders."""
    return sorted({(inner.host, "127.0.0.1") for inner in plan.values()
                   if not _is_address(inner.host) and inner.host != "localhost"})


def rewrite_url(url: str, plan: Mapping[Endpoint, Endpoint]) -> str:
    """``url`` as the agent inside reaches it (unchanged when it already does)."""
    endpoint = Endpoint.of_url(url)
    inner = plan.get(endpoint) if endpoint is not None else None
    if endpoint is None or inner is None or inner == endpoint:
        return url
    split = urlsplit(url)
    netloc = f"{inner.host}:{inner.port}"
    if split.username or split.password:
        netloc = split.netloc.rsplit("@", 1)[0] + "@" + netloc
    return urlunsplit((split.scheme, netloc, split.path, split.query, split.fragment))


@dataclass
class Enclosure:
    """One agent container's namespace and its forwarders; ``close()`` removes both."""

    name: str
    plan: dict[Endpoint, Endpoint] = field(default_factory=dict)
    """Each allowed endpoint -> the address that reaches it from inside."""
    servers: list[asyncio.base_events.Server] = field(default_factory=list)
    connections: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def path(self) -> str:
        return f"{NETNS_FOLDER}/{self.name}"

    @classmethod
    async def open(cls, plan: Mapping[Endpoint, Endpoint]) -> Enclosure:
        """A new namespace with a forwarder for each planned endpoint (``plan_endpoints``),
        listening before the agent starts."""
        problem = isolation_problem()
        if problem is not None:
            raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: {problem}\nhint: run ancha as root on Linux "
                                     "(as in CI), or use mode: host; the agent is never run with an open network")
        enclosure = cls(f"ancha-{os.getpid()}-{secrets.token_hex(4)}", dict(plan))
        await _ip("netns", "add", enclosure.name)
        try:
            await _ip("-n", enclosure.name, "link", "set", "lo", "up")
            targets = list(plan)
            sockets = await asyncio.to_thread(_listen_inside, enclosure.path, [plan[t].port for t in targets])
            for target, sock in zip(targets, sockets, strict=True):
                enclosure.servers.append(await asyncio.start_server(
                    functools.partial(enclosure._forward, target=target), sock=sock))
        except BaseException:
            await enclosure.close()
            raise
        return enclosure

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: Endpoint) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.connections.add(task)
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(target.host, target.port)
            except OSError:
                return
            try:
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            finally:
                up_writer.close()
        finally:
            writer.close()
            self.connections.discard(task)

    async def close(self) -> None:
        for server in self.servers:
            server.close()
        for task in list(self.connections):
            task.cancel()
        for server in self.servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self.servers.clear()
        with contextlib.suppress(RunFailed):
            await _ip("netns", "delete", self.name)


def remove_stale_namespaces() -> None:
    """Delete the namespaces of runners that are gone (killed before they could): named
    ``ancha-PID-...``, for a PID no longer running."""
    try:
        names = os.listdir(NETNS_FOLDER)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "ancha" and parts[1].isdigit() and not process_running(int(parts[1])):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def process_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


def _listen_inside(path: str, ports: list[int]) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1 inside the namespace at ``path``: a thread of its own
    enters it (setns moves only the calling thread) and ends there; the sockets stay in it."""
    made: list[socket.socket] = []
    failure: list[BaseException] = []

    def enter_and_listen() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(path, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns {path}: {os.strerror(errno)}")
            finally:
                os.close(fd)
            for port in ports:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                made.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
                sock.listen(128)
                sock.setblocking(False)
        except BaseException as exc:  # reported in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=enter_and_listen, name="ancha-netns", daemon=True)
    thread.start()
    thread.join()
    if failure:
        for sock in made:
            sock.close()
        raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: the agent's network could not be made: {failure[0]}\n"
                                 "hint: run ancha as root on Linux, or use mode: host")
    return made


async def _ip(*args: str) -> None:
    process = await asyncio.create_subprocess_exec("ip", *args, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await process.communicate()
    if process.returncode != 0:
        raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: `ip {' '.join(args)}` failed: "
                                 f"{err.decode(errors='replace').strip()}\nhint: run ancha as root on Linux, "
                                 "or use mode: host")
