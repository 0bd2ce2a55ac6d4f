"""A container agent's network: a namespace of its own in which only Ancha's endpoints answer.

Each agent container gets a network namespace with nothing but a loopback interface: no
route, no DNS server it can reach, no other host. For every endpoint the agent may use
(the Ancha server's listeners, the model gateway), the runner opens a listening socket
*inside* that namespace and forwards each connection to the real endpoint from the host
side. So a request to anything else fails at once: connection refused on loopback, network
unreachable elsewhere. No firewall rules are touched and no network of the engine's is
made, so nothing is left on the host if the runner dies but a container (and, as root
with podman, a namespace's name) that the next run removes.

How the listening sockets get into the namespace depends on the engine (``Enclosure``):

- podman as root: the runner makes the namespace (``ip netns add``), listens in it from a
  thread that entered it with ``setns``, and the container joins it (``--network ns:PATH``);
- rootless podman: the namespace must belong to podman's user namespace, so a small helper
  (``container_netns_helper``) started with ``podman unshare`` makes it and hands its
  listening sockets back over a Unix socket; the container joins it by path;
- Docker Engine (no ``--network ns:PATH``): the container starts with ``--network none``
  and waits for a line on its stdin; the runner enters the container's own namespace
  through ``/proc/PID/ns/net``, listens there, then sends the line.

An endpoint on the host's loopback keeps its address (the same port answers inside); a
named host keeps its name (``--add-host NAME:127.0.0.1``), so TLS names still match; any
other address is rewritten to a loopback port (``plan_endpoints``, ``rewrite_url``).
"""

from __future__ import annotations

import array
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
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ancha.errors import RunFailed
from ancha.runner.agents.container_engine import Engine, EngineProbe
from ancha.runner.agents.containment import process_running

CLONE_NEWNET = 0x40000000
NETNS_FOLDER = "/run/netns"
CHUNK = 64 * 1024
SPARE_PORTS = 40_000
"""Where endpoints whose port is taken inside are moved to."""
HELPER = Path(__file__).with_name("container_netns_helper.py")
HELPER_TIMEOUT_S = 60.0
NETWORK_HINT = "run ancha as root on Linux (as in CI), or use mode: host; the agent is never run with an open network"


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


def isolation_problem(path: str | None = None, engine: Engine | None = None) -> str | None:
    """Why the agent's namespace cannot be made here for ``engine`` (``path``: where to look
    for ``ip``), or None. Without an engine: for podman as this user."""
    if not hasattr(os, "geteuid") or not os.path.exists("/proc/self/ns/net"):
        return "container network isolation needs Linux network namespaces"
    if engine is not None and engine.remote is not None:
        return (f"{engine.name}: {engine.remote}, where ancha cannot make the agent's network (a namespace "
                "with only Ancha's endpoints in it)")
    if engine is not None and engine.limits_problem is not None:
        return engine.limits_problem
    if engine is not None and engine.name == "podman" and engine.rootless:
        return None  # podman unshare makes it in podman's own user namespace
    if os.geteuid() != 0:
        if engine is not None and engine.name == "docker":
            return ("docker: entering a container's network namespace to open Ancha's endpoints in it needs "
                    "root (CAP_SYS_ADMIN)")
        return "making a network namespace for the agent needs root (CAP_SYS_ADMIN)"
    if (engine is None or engine.name == "podman") and shutil.which("ip", path=path) is None:
        return "the `ip` command (iproute2) is not on PATH"
    return None


def network_hint(engine: Engine | None) -> str:
    """What to do when ``isolation_problem`` says no."""
    if engine is not None and engine.limits_problem is not None:
        return ("use cgroup v2 with the cpu, memory and pids controllers delegated to your user (systemd's "
                "user@.service Delegate=), or run ancha as root, or use Docker Engine; agents never run without "
                "their limits")
    if engine is not None and engine.name == "docker":
        return ("run ancha as root on the Linux machine of the Docker Engine, or use rootless podman "
                "(ANCHA_CONTAINER_ENGINE=podman); the agent is never run with an open network")
    return NETWORK_HINT


def isolation_summary(engine: Engine) -> str:
    """How the agent's network is isolated on ``engine``, for ``ancha execution``."""
    answer = "only Ancha's server and the model gateway answer"
    if engine.name == "docker":
        return f"the container's own network namespace, with only a loopback: {answer}"
    if engine.rootless:
        return f"a network namespace per container, made in podman's user namespace: {answer}"
    return f"a network namespace per container: {answer}"


def choose_engine(probes: list[EngineProbe], path: str | None = None) -> tuple[EngineProbe | None, str | None]:
    """The engine trials use: the first that answers and can isolate the agent's network here,
    else the first that answers, with why it cannot (``None, None`` when none answers)."""
    answering = [p for p in probes if p.engine is not None]
    for probe in answering:
        if isolation_problem(path, probe.engine) is None:
            return probe, None
    if not answering:
        return None, None
    return answering[0], isolation_problem(path, answering[0].engine)


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

    name: str | None
    """The namespace's name under /run/netns when the runner made it, else None."""
    plan: dict[Endpoint, Endpoint] = field(default_factory=dict)
    """Each allowed endpoint -> the address that reaches it from inside."""
    servers: list[asyncio.base_events.Server] = field(default_factory=list)
    connections: set[asyncio.Task[None]] = field(default_factory=set)
    ns_path: str | None = None
    """Where the namespace is, for ``--network ns:PATH``."""
    helper: asyncio.subprocess.Process | None = None
    channel: socket.socket | None = None

    @property
    def path(self) -> str:
        assert self.ns_path is not None
        return self.ns_path

    @classmethod
    async def open(cls, plan: Mapping[Endpoint, Endpoint]) -> Enclosure:
        """As root: a new namespace with a forwarder for each planned endpoint
        (``plan_endpoints``), listening before the agent starts."""
        problem = isolation_problem()
        if problem is not None:
            raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: {problem}\nhint: {NETWORK_HINT}")
        name = f"ancha-{os.getpid()}-{secrets.token_hex(4)}"
        enclosure = cls(name, dict(plan), ns_path=f"{NETNS_FOLDER}/{name}")
        await _ip("netns", "add", name)
        try:
            await _ip("-n", name, "link", "set", "lo", "up")
        except BaseException:
            await enclosure.close()
            raise
        return await enclosure._listen()

    @classmethod
    async def enter(cls, plan: Mapping[Endpoint, Endpoint], ns_path: str) -> Enclosure:
        """Forwarders inside a namespace the engine made (a Docker container's, by its PID)."""
        return await cls(None, dict(plan), ns_path=ns_path)._listen()

    async def _listen(self) -> Enclosure:
        """Listen inside the namespace on each planned port and forward from there; closed on failure."""
        try:
            targets = list(self.plan)
            sockets = await asyncio.to_thread(_listen_inside, self.path, [self.plan[t].port for t in targets])
            await self._serve(targets, sockets)
        except BaseException:
            await self.close()
            raise
        return self

    @classmethod
    async def open_rootless(cls, plan: Mapping[Endpoint, Endpoint], engine: Engine,
                            environ: Mapping[str, str]) -> Enclosure:
        """Rootless podman: the helper makes the namespace in podman's user namespace and sends
        its listening sockets back; it stays until ``close()`` so the path stays valid."""
        enclosure = cls(None, dict(plan))
        targets = list(plan)
        with tempfile.TemporaryDirectory(prefix="ancha-netns-") as folder:
            address = os.path.join(folder, "channel")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listener.bind(address)
                listener.listen(1)
                listener.setblocking(False)
                enclosure.helper = await asyncio.create_subprocess_exec(
                    *engine.command("unshare", sys.executable, "-I", "-S", str(HELPER), address,
                                    *(str(plan[t].port) for t in targets)),
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE, env=dict(environ), start_new_session=True)
                loop = asyncio.get_running_loop()
                try:
                    channel, _ = await asyncio.wait_for(loop.sock_accept(listener), HELPER_TIMEOUT_S)
                except TimeoutError:
                    raise NetworkUnavailable(await enclosure._helper_failure("did not answer")) from None
                enclosure.channel = channel
                said, fds = await asyncio.wait_for(asyncio.to_thread(_receive_sockets, channel, len(targets)),
                                                   HELPER_TIMEOUT_S)
                if not said.startswith("/proc/") or len(fds) != len(targets):
                    for fd in fds:
                        os.close(fd)
                    raise NetworkUnavailable(await enclosure._helper_failure(said or "closed its channel"))
                enclosure.ns_path = said
                sockets = [socket.socket(fileno=fd) for fd in fds]
                for sock in sockets:
                    sock.setblocking(False)
                await enclosure._serve(targets, sockets)
            except BaseException:
                await enclosure.close()
                raise
            finally:
                listener.close()
        return enclosure

    async def _helper_failure(self, said: str) -> str:
        err = b""
        if self.helper is not None and self.helper.stderr is not None:
            with contextlib.suppress(TimeoutError):
                if self.helper.returncode is not None or said != "did not answer":
                    err = await asyncio.wait_for(self.helper.stderr.read(), 5)
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [said]
        return (f"error[CONTAINER_NETWORK]: rootless podman's network namespace for the agent could not be made "
                f"(`podman unshare`): {tail[0]}\nhint: check that `podman unshare true` works for this user "
                "(subuid/subgid ranges in /etc/subuid and /etc/subgid), or run ancha as root")

    async def _serve(self, targets: list[Endpoint], sockets: list[socket.socket]) -> None:
        for target, sock in zip(targets, sockets, strict=True):
            self.servers.append(await asyncio.start_server(
                functools.partial(self._forward, target=target), sock=sock))

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
        if self.channel is not None:
            self.channel.close()  # the helper's cue to end
            self.channel = None
        if self.helper is not None:
            if self.helper.returncode is None:
                try:
                    await asyncio.wait_for(self.helper.wait(), HELPER_TIMEOUT_S)
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        self.helper.kill()
                    await self.helper.wait()
            self.helper = None
        if self.name is not None:
            with contextlib.suppress(RunFailed):
                await _ip("netns", "delete", self.name)


def _receive_sockets(channel: socket.socket, count: int) -> tuple[str, list[int]]:
    """The helper's one message: its namespace's path (or an error) and ``count`` descriptors."""
    channel.setblocking(True)
    fds = array.array("i")
    data, ancillary, _, _ = channel.recvmsg(4096, socket.CMSG_SPACE(max(count, 1) * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    return data.decode(errors="replace").strip(), list(fds)


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
                                 f"hint: {NETWORK_HINT}")
    return made


async def _ip(*args: str) -> None:
    process = await asyncio.create_subprocess_exec("ip", *args, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await process.communicate()
    if process.returncode != 0:
        raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: `ip {' '.join(args)}` failed: "
                                 f"{err.decode(errors='replace').strip()}\nhint: run ancha as root on Linux, "
                                 "or use mode: host")
