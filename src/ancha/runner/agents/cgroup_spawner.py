"""The spawner process of ``born_in_cgroup``: run as a script (``python -I -S``), standard library only.

It is single-threaded, so the child of its ``clone3`` may run Python until ``execve``
as the child of ``os.fork()`` may (in a multi-threaded process the copied interpreter
can wait forever for a thread that was not copied). ``CLONE_PARENT`` makes each agent
shell a child of the runner that asked, not of this process.

Protocol, on the ``SOCK_SEQPACKET`` socket whose descriptor is its only argument: a
request is one JSON message ``{"command", "cwd", "env"}`` with three descriptors (the
agent's stdin, its output, the cgroup's folder); the answer is ``{"pid": N}`` or
``{"errno": N, "error": TEXT}``. End of file on the socket (the runner has ended) ends the process.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys

SYS_CLONE3 = 435
"""The same number on every Linux architecture (the generic system call table)."""
CLONE_PARENT = 0x8000
CLONE_INTO_CGROUP = 0x200000000
SHELL = "/bin/sh"


class CloneArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size", "tls",
        "set_tid", "set_tid_size", "cgroup")]


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def spawn(request: dict[str, object], stdin: int, output: int, cgroup: int) -> dict[str, object]:
    argv = [SHELL, "-c", str(request["command"])]
    env = {str(k): str(v) for k, v in dict(request["env"]).items()}  # type: ignore[call-overload]
    cwd = str(request["cwd"])
    # With CLONE_PARENT the kernel wants no exit_signal: the child's is this process's own (SIGCHLD).
    args = CloneArgs(flags=CLONE_PARENT | CLONE_INTO_CGROUP, cgroup=cgroup)
    pid = libc.syscall(SYS_CLONE3, ctypes.byref(args), ctypes.c_size_t(ctypes.sizeof(args)))
    if pid == 0:
        try:
            os.setsid()
            for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; the agent must not
                signal.signal(number, signal.SIG_DFL)
            os.dup2(stdin, 0)
            os.dup2(output, 1)
            os.dup2(output, 2)
            os.chdir(cwd)
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            os.execve(SHELL, argv, env)
        except BaseException:  # noqa: BLE001 -- whatever happened, this copy of the spawner must end here
            os._exit(126)
        os._exit(127)
    if pid < 0:
        code = ctypes.get_errno()
        return {"errno": code, "error": f"clone3 into a cgroup: {os.strerror(code)}"}
    return {"pid": pid}


def serve(channel: socket.socket) -> None:
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        except OSError:
            return
        if not message:
            return
        try:
            if len(fds) != 3:
                answer: dict[str, object] = {"errno": 22, "error": f"expected 3 descriptors, got {len(fds)}"}
            else:
                answer = spawn(json.loads(message), *fds)
        except Exception as exc:  # noqa: BLE001 -- a bad request is answered, never the end of the spawner
            answer = {"errno": 22, "error": f"the spawner could not read the request: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        channel.send(json.dumps(answer).encode())


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
