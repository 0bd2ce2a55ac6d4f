"""Containment of an agent's whole process tree, so that nothing it starts outlives its trial.

A process group is not enough: a child can move to its own group, or double-fork and call
``setsid``. The runner uses the first of these that works here:

1. **A cgroup v2 per agent process** (``CgroupTree``), made under the runner's own cgroup when
   this process may create one there (root, a container, or a systemd scope delegated to the
   user). Membership is inherited by every descendant and cannot be left without privilege,
   and ``cgroup.kill`` ends every member at once, so no fork race can outrun it.
2. **A child subreaper** (``ReaperTree``): the runner sets ``PR_SET_CHILD_SUBREAPER``, so an
   orphan anywhere below it is re-parented to the runner instead of init and never leaves
   its tree. At the end, the runner kills the agent's descendants and every process it
   adopted that carries the agent's marker variable, until a pass finds none. Needs no
   privilege, only Linux.
3. Elsewhere (macOS), the process group alone (``GroupTree``).

A PID namespace (``unshare --pid --fork --kill-child``) would need a user namespace for an
unprivileged user, which several distributions switch off, and would run the agent as a
mapped root; the subreaper works for every Linux user, so it is the fallback.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import secrets
import shlex
import signal
import sys
import time
from pathlib import Path

KILL_DEADLINE_S = 10.0
"""How long the runner waits for a killed tree to be gone before it gives up on it."""
POLL_S = 0.01
PR_SET_CHILD_SUBREAPER = 36
MARKER_VARIABLE = "ANCHA_PROCESS_TREE"


class GroupTree:
    """The agent's process group: all that can be contained where nothing better exists."""

    kind = "process group"

    def __init__(self) -> None:
        self.leader: int | None = None

    def command(self, command: str) -> str:
        """The shell command that starts the agent inside the tree."""
        return command

    def environment(self) -> dict[str, str]:
        """Variables the agent's processes carry so the tree can find them."""
        return {}

    def started(self, pid: int) -> None:
        self.leader = pid

    def signal(self, sig: int) -> None:
        """Send ``sig`` to every process of the tree still running."""
        if self.leader is not None:
            _killpg(self.leader, sig)

    async def kill(self) -> None:
        """Kill every process of the tree and wait (up to a deadline) until none is left."""
        self.signal(signal.SIGKILL)


class CgroupTree(GroupTree):
    """A cgroup v2 of the agent's own; see the module's docstring."""

    kind = "cgroup"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def command(self, command: str) -> str:
        # The shell moves itself in before it runs the command: every process it starts is born inside.
        procs = shlex.quote(str(self.path / "cgroup.procs"))
        return f"echo 0 > {procs}\n{command}"

    def members(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def signal(self, sig: int) -> None:
        super().signal(sig)
        for pid in self.members():
            _kill(pid, sig)

    async def kill(self) -> None:
        super().signal(signal.SIGKILL)
        deadline = time.monotonic() + KILL_DEADLINE_S
        while time.monotonic() < deadline:
            try:
                (self.path / "cgroup.kill").write_text("1")
            except OSError:  # kernels before 5.14 have no cgroup.kill: one process at a time
                for pid in self.members():
                    _kill(pid, signal.SIGKILL)
            if not self.members():
                try:
                    self.path.rmdir()
                    return
                except FileNotFoundError:
                    return
                except OSError:  # members still leaving
                    pass
            await asyncio.sleep(POLL_S)


class ReaperTree(GroupTree):
    """The runner as the subreaper of the agent's processes; see the module's docstring."""

    kind = "subreaper"

    def __init__(self) -> None:
        super().__init__()
        self.marker = secrets.token_hex(8)
        become_subreaper()

    def environment(self) -> dict[str, str]:
        return {MARKER_VARIABLE: self.marker}

    def members(self) -> set[int]:
        """The leader's descendants and the orphans adopted by the runner that carry the marker
        (with their descendants). Zombies are dead already and left out."""
        parents = _parents()
        me = os.getpid()
        roots = {pid for pid, parent in parents.items() if parent == me and self._marked(pid)}
        if self.leader is not None and self.leader in parents:
            roots.add(self.leader)
        found = set(roots)
        frontier = set(roots)
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
            found |= frontier
        found.discard(me)
        return found

    def _marked(self, pid: int) -> bool:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            return False
        return f"\0{MARKER_VARIABLE}={self.marker}\0".encode() in b"\0" + environ + b"\0"

    def signal(self, sig: int) -> None:
        super().signal(sig)
        for pid in self.members():
            _kill(pid, sig)

    async def kill(self) -> None:
        super().signal(signal.SIGKILL)
        adopted: set[int] = set()
        deadline = time.monotonic() + KILL_DEADLINE_S
        while time.monotonic() < deadline:
            members = self.members()
            parents = _parents()
            for pid in members:
                _kill(pid, signal.SIGKILL)
            adopted |= {pid for pid in members if parents.get(pid) == os.getpid() and pid != self.leader}
            adopted = {pid for pid in adopted if not _reaped(pid)}
            if not members and not adopted:
                return
            await asyncio.sleep(POLL_S)


def contain() -> GroupTree:
    """The best containment this machine allows, for one agent process."""
    if not sys.platform.startswith("linux"):
        return GroupTree()
    tree = cgroup_tree()
    if tree is not None:
        return tree
    try:
        return ReaperTree()
    except OSError:
        return GroupTree()


def cgroup_tree() -> CgroupTree | None:
    """A new cgroup v2 under this process's own, or None where one cannot be made."""
    own = _own_cgroup()
    if own is None:
        return None
    path = own / f"ancha-agent-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        path.mkdir()
    except OSError:
        return None
    if not os.access(path / "cgroup.procs", os.W_OK):
        path.rmdir()
        return None
    return CgroupTree(path)


def remove_stale_cgroups() -> list[Path]:
    """The agents' cgroups of runners that are gone (killed before they could remove them),
    under this process's own cgroup: their processes killed and the folders removed. What
    was removed. A live runner's (its process ID still running) are left alone."""
    own = _own_cgroup()
    if own is None:
        return []
    removed: list[Path] = []
    for path in own.glob("ancha-agent-*"):
        parts = path.name.split("-")
        if len(parts) != 4 or not parts[2].isdigit() or process_running(int(parts[2])):
            continue
        for _ in range(100):  # members that leave at once: a few rounds at most
            try:
                (path / "cgroup.kill").write_text("1")
            except OSError:
                for pid in CgroupTree(path).members():
                    _kill(pid, signal.SIGKILL)
            try:
                path.rmdir()
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(POLL_S)
                continue
            removed.append(path)
            break
    return removed


def process_running(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _own_cgroup() -> Path | None:
    """The folder of this process's cgroup v2 (``0::/PATH`` in /proc/self/cgroup) on the cgroup2 mount."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    relative = next((line[3:] for line in lines if line.startswith("0::")), None)
    mount = None
    for line in mounts:
        fields, _, rest = line.partition(" - ")
        if rest.split(" ", 1)[0] == "cgroup2":
            mount = fields.split(" ")[4]
            break
    if relative is None or mount is None or relative.endswith("(deleted)"):
        return None
    path = Path(mount) / relative.lstrip("/")
    return path if path.is_dir() else None


_subreaper = False


def become_subreaper() -> None:
    """Make this process the subreaper of its descendants (once); OSError where Linux refuses."""
    global _subreaper
    if _subreaper:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    _subreaper = True


def _parents() -> dict[int, int]:
    """Every live (not zombie) process's parent, from /proc/PID/stat."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) >= 2 and fields[0] not in ("Z", "X"):
            parents[int(entry)] = int(fields[1])
    return parents


def _reaped(pid: int) -> bool:
    """Reap ``pid`` if it is a dead child of the runner; True once it is gone."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
