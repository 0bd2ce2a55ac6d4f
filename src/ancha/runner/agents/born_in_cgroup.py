"""An agent's shell born inside its cgroup (``clone3`` with ``CLONE_INTO_CGROUP``, Linux 5.7+).

Moving a process into a cgroup (a write to ``cgroup.procs``) takes the kernel's cgroup
threadgroup lock for writing, which waits for an RCU grace period whenever no other move
happened in the last few milliseconds: about 10 ms per trial on a busy machine, longer
than the rest of a trial's overhead. A process created straight into the cgroup takes
no such lock.

The child of ``clone3`` is a copy of this multi-threaded process, so it does nothing but
system calls until ``execve``: every call goes through ``ctypes.PyDLL`` (which keeps the
GIL, so the child holds it as the parent did), on objects built before the clone; the C
library's ``syscall`` wrapper touches no lock. Where the kernel or a seccomp filter
refuses ``clone3`` (``NotSupported``), the caller falls back to moving the shell in.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import signal
from pathlib import Path

SYS_CLONE3 = 435
"""The same number on every Linux architecture (the generic system call table)."""
SYS_CLOSE_RANGE = 436
SYS_SETSID = {"x86_64": 112, "aarch64": 157}
SYS_DUP2_LIKE = {"x86_64": 33, "aarch64": 24}
"""``dup2`` on x86_64, ``dup3`` (with flags 0) on aarch64, which has no ``dup2``."""
SYS_CHDIR = {"x86_64": 80, "aarch64": 49}
SYS_EXECVE = {"x86_64": 59, "aarch64": 221}
SYS_EXIT_GROUP = {"x86_64": 231, "aarch64": 94}
SYS_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}
CLONE_PIDFD = 0x1000
CLONE_INTO_CGROUP = 0x200000000
REFUSED = {errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG, errno.EOPNOTSUPP, errno.EACCES}
SHELL = b"/bin/sh"
RESET_SIGNALS = (int(signal.SIGPIPE), int(signal.SIGXFSZ))
"""Python ignores these; the agent gets them back at their defaults, as ``subprocess`` does."""


class NotSupported(OSError):
    """This machine cannot create a process into a cgroup: move it in instead."""


class _CloneArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size", "tls",
        "set_tid", "set_tid_size", "cgroup")]


class _SigAction(ctypes.Structure):
    """The kernel's ``struct sigaction`` as ``rt_sigaction`` takes it (handler, flags, restorer, mask)."""

    _fields_ = [("handler", ctypes.c_void_p), ("flags", ctypes.c_ulong), ("restorer", ctypes.c_void_p),
                ("mask", ctypes.c_uint64)]


_ARCH = os.uname().machine
_libc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: the GIL is kept across every call, the clone's included
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_unsupported: str | None = None if _ARCH in SYS_SETSID else f"no system call table for {_ARCH}"


class BornProcess:
    """The agent's shell, made by ``spawn``: ``pid``, ``returncode`` once it exited, ``wait()``."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd = pidfd
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()
        loop.add_reader(pidfd, self._reap, loop)  # a pidfd is readable once its process has exited

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


def spawn(command: str, cwd: Path, env: dict[str, str], cgroup: Path, stdin: int, output: int) -> BornProcess:
    """Start ``/bin/sh -c command`` in a new session, inside ``cgroup``, with ``stdin`` on 0 and
    ``output`` on 1 and 2. ``NotSupported`` where the machine refuses; ``OSError`` otherwise."""
    global _unsupported
    if _unsupported is not None:
        raise NotSupported(errno.ENOSYS, _unsupported)
    argv = (ctypes.c_char_p * 4)(SHELL, b"-c", os.fsencode(command), None)
    pairs = [os.fsencode(name) + b"=" + os.fsencode(value) for name, value in env.items()]
    envp = (ctypes.c_char_p * (len(pairs) + 1))(*pairs, None)
    directory = ctypes.c_char_p(os.fsencode(cwd))
    pidfd = ctypes.c_int(-1)
    group = os.open(cgroup, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        args = _CloneArgs(flags=CLONE_PIDFD | CLONE_INTO_CGROUP, pidfd=ctypes.addressof(pidfd),
                          exit_signal=signal.SIGCHLD, cgroup=group)
        default = _SigAction(handler=int(signal.SIG_DFL))
        size_of_args, size_of_mask = ctypes.c_size_t(ctypes.sizeof(args)), ctypes.c_size_t(8)
        calls = (SYS_SETSID[_ARCH], SYS_DUP2_LIKE[_ARCH], SYS_CHDIR[_ARCH], SYS_EXECVE[_ARCH],
                 SYS_EXIT_GROUP[_ARCH], SYS_RT_SIGACTION[_ARCH])
        pid = _syscall(SYS_CLONE3, ctypes.byref(args), size_of_args)
        if pid == 0:  # the child: system calls only, then the shell, or an exit whatever happens
            try:
                _child(calls, stdin, output, directory, argv, envp, ctypes.byref(default), size_of_mask)
            finally:
                _syscall(calls[4], 127)
        if pid < 0:
            code = ctypes.get_errno()
            if code in REFUSED:
                _unsupported = f"clone3 into a cgroup: {os.strerror(code)}"
                raise NotSupported(code, _unsupported)
            raise OSError(code, f"the agent could not be started: {os.strerror(code)}")
    finally:
        os.close(group)
    return BornProcess(pid, pidfd.value)


def _child(calls: tuple[int, int, int, int, int, int], stdin: int, output: int, directory: ctypes.c_char_p,
           argv: ctypes.Array[ctypes.c_char_p], envp: ctypes.Array[ctypes.c_char_p], default: object,
           size_of_mask: ctypes.c_size_t) -> None:
    setsid, dup2, chdir, execve, exit_group, sigaction = calls
    _syscall(setsid)
    for number in RESET_SIGNALS:
        _syscall(sigaction, number, default, None, size_of_mask)
    for target, source in ((0, stdin), (1, output), (2, output)):
        if _syscall(dup2, source, target, 0) < 0:
            _syscall(exit_group, 126)
    if _syscall(chdir, directory) < 0:
        _syscall(exit_group, 126)
    _syscall(SYS_CLOSE_RANGE, 3, ctypes.c_uint(0xFFFFFFFF), 0)  # every other file stays with the runner
    _syscall(execve, SHELL, argv, envp)
    _syscall(exit_group, 127)
