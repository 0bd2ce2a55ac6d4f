"""An agent's shell born inside its cgroup (``clone3`` with ``CLONE_INTO_CGROUP``, Linux 5.7+).

Moving a process into a cgroup (a write to ``cgroup.procs``) takes the kernel's cgroup
threadgroup lock for writing, which waits for an RCU grace period whenever no other move
happened in the last few milliseconds: 6 to 14 ms per trial, more than the rest of a
trial's overhead. A process created straight into the cgroup takes no such lock.

The runner is multi-threaded, and the child of a raw ``clone3`` of it could wait forever
on the interpreter's lock for a thread that was not copied; so a small single-threaded
spawner process (``cgroup_spawner.py``, one per runner process, started on first use)
makes each shell, with ``CLONE_PARENT`` so that the shell is the runner's own child. It
is also cheaper to copy than the runner. Where the kernel or a seccomp filter refuses
``clone3`` (``NotSupported``), the caller falls back to moving the shell in.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

SPAWNER = Path(__file__).with_name("cgroup_spawner.py")
REFUSED = {errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG, errno.EOPNOTSUPP, errno.EACCES}
"""What a kernel without ``CLONE_INTO_CGROUP``, or a seccomp filter, answers ``clone3``."""


class NotSupported(OSError):
    """This machine cannot create a process into a cgroup: move it in instead."""


class BornProcess:
    """The agent's shell, made by ``spawn``: ``pid``, ``returncode`` once it exited, ``wait()``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)  # the runner's own child, not reaped yet: it cannot be another
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()
        loop.add_reader(self._pidfd, self._reap, loop)  # a pidfd is readable once its process has exited

    def _reap(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_reader(self._pidfd)
        try:
            _, status = os.waitpid(self.pid, 0)
            code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # reaped elsewhere: its status is lost
            code = 255
        finally:
            os.close(self._pidfd)
        self.returncode = code
        if not self._exited.done():
            self._exited.set_result(code)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)


class _Spawner:
    """The spawner process of this runner process, and the socket to it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SPAWNER), str(theirs.fileno())], pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        self.channel = ours
        self.owner = os.getpid()

    def ask(self, request: dict[str, object], fds: list[int]) -> dict[str, object]:
        socket.send_fds(self.channel, [json.dumps(request).encode()], fds)
        answer = self.channel.recv(1 << 16)
        if not answer:
            raise ConnectionError("the cgroup spawner ended")
        reply: dict[str, object] = json.loads(answer)
        return reply

    def close(self) -> None:
        self.channel.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


_lock = threading.Lock()
_spawner: _Spawner | None = None
_unsupported: str | None = None if sys.platform.startswith("linux") else "not Linux"


def spawn(command: str, cwd: Path, env: dict[str, str], cgroup: Path, stdin: int, output: int) -> BornProcess:
    """Start ``/bin/sh -c command`` in a new session, inside ``cgroup``, with ``stdin`` on 0 and
    ``output`` on 1 and 2. ``NotSupported`` where the machine refuses; ``OSError`` otherwise."""
    global _spawner, _unsupported
    with _lock:
        if _unsupported is not None:
            raise NotSupported(errno.ENOSYS, _unsupported)
        group = os.open(cgroup, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        request: dict[str, object] = {"command": command, "cwd": str(cwd), "env": env}
        try:
            for attempt in (1, 2):  # a spawner that died (killed from outside) is started again, once
                if _spawner is None or _spawner.owner != os.getpid():  # none yet, or a parent process's
                    _spawner = _Spawner()
                try:
                    answer = _spawner.ask(request, [stdin, output, group])
                    break
                except (OSError, ValueError) as exc:
                    _spawner.close()
                    _spawner = None
                    if attempt == 2:
                        _unsupported = f"the cgroup spawner failed: {exc}"
                        raise NotSupported(errno.ENOSYS, _unsupported) from exc
        finally:
            os.close(group)
    if "pid" in answer:
        return BornProcess(int(str(answer["pid"])))
    code = int(str(answer.get("errno", errno.EINVAL)))
    if code in REFUSED:
        _unsupported = str(answer.get("error"))
        raise NotSupported(code, _unsupported)
    raise OSError(code, f"the agent could not be started: {answer.get('error')}")
