"""What a runner killed mid-trial (``kill -9``) leaves behind, and removing it once that runner is gone.

A runner that ends normally removes each container, its volumes and its network namespace as
the agent process ends. One that is killed cannot: its containers keep running, with their
volumes, podman's namespaces (``ancha-PID-...`` under /run/netns) and host agents' cgroups
(``ancha-agent-PID-...``) stay. Everything is marked with its runner (``Owner``): containers
by labels, volumes by name, namespaces and cgroups by name. ``clean_leftovers`` removes what
belongs to a runner that is no longer alive, and never what a live run holds, so two runs
at once leave each other alone.

Every run cleans at its start (``clean_after_dead_runs``): host leftovers always (a listing
of two folders), an engine's only when a container run that is gone left a marker saying it
used that engine, so a run on the host asks no engine anything otherwise. A container run
also cleans its engine in full before its first trial, and ``ancha doctor --clean`` cleans
every engine that answers.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ancha.runner.agents.container_engine import Engine, probe_engines
from ancha.runner.agents.container_network import NETNS_FOLDER, remove_stale_namespaces
from ancha.runner.agents.containment import process_running, remove_stale_cgroups

RUNNER_LABEL = "ancha.runner-pid"
OWNER_LABEL = "ancha.runner"
"""``PID-START-BOOT``: the runner's process ID, its start time and the machine's boot (``Owner``)."""
VOLUME_PREFIX = "ancha-"
CLEAN_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Owner:
    """A runner process, told apart from a later process with the same ID (its start time in
    clock ticks since boot) and from one of an earlier boot (the boot's ID, shortened)."""

    pid: int
    start: int
    boot: str

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), _start_time(os.getpid()) or 0, _boot_id())

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        parts = text.split("-")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or not parts[2].isalnum():
            return None
        return cls(int(parts[0]), int(parts[1]), parts[2])

    def __str__(self) -> str:
        return f"{self.pid}-{self.start}-{self.boot}"

    def alive(self) -> bool:
        if self.boot != _boot_id():
            return False
        if not process_running(self.pid):
            return False
        start = _start_time(self.pid)
        return start is None or self.start in (0, start)


@cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
    except OSError:
        return "noboot"


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat, or None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_labels() -> list[str]:
    """``--label`` values for a container of this runner."""
    me = Owner.me()
    return [f"{RUNNER_LABEL}={me.pid}", f"{OWNER_LABEL}={me}"]


def volume_name(container: str, role: str) -> str:
    """The name of a container's volume: its runner in it, so a volume left alone is found too."""
    return f"{VOLUME_PREFIX}{Owner.me()}-{container.removeprefix('ancha-')}-{role}"


def _volume_owner(name: str) -> Owner | None:
    parts = name.removeprefix(VOLUME_PREFIX).split("-")
    return Owner.parse("-".join(parts[:3])) if name.startswith(VOLUME_PREFIX) and len(parts) >= 5 else None


def _container_is_stale(labels: Mapping[str, str]) -> bool:
    owner = Owner.parse(labels.get(OWNER_LABEL, ""))
    if owner is not None:
        return not owner.alive()
    pid = labels.get(RUNNER_LABEL, "")  # labelled by an older version: its process ID alone
    return pid.isdigit() and not process_running(int(pid))


def clean_engine(engine: Engine, environ: Mapping[str, str] | None = None) -> list[str]:
    """Remove the containers and volumes of ``engine`` whose runner is gone; what was removed."""
    env = dict(os.environ if environ is None else environ)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(engine.command(*args), capture_output=True, text=True, env=env,
                                  stdin=subprocess.DEVNULL, timeout=CLEAN_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # an engine that hangs: what it holds stays for the next clean
            return subprocess.CompletedProcess(args, -1, "", "")

    removed: list[str] = []
    names = run("ps", "--all", "--filter", f"label={RUNNER_LABEL}", "--format", "{{.Names}}").stdout.split()
    if names:
        inspected = run("container", "inspect", "--format", "{{.Name}}\t{{json .Config.Labels}}", *names).stdout
        for line in inspected.splitlines():
            name, _, labels = line.partition("\t")
            try:
                parsed = json.loads(labels) or {}
            except ValueError:
                continue
            if isinstance(parsed, dict) and _container_is_stale(parsed):
                name = name.lstrip("/")
                if run("rm", "--force", "--volumes", name).returncode == 0:
                    removed.append(f"container {name} ({engine.name})")
    volumes = run("volume", "ls", "--format", "{{.Name}}").stdout.split()
    for volume in volumes:
        owner = _volume_owner(volume)
        if owner is not None and not owner.alive() and run("volume", "rm", "--force", volume).returncode == 0:
            removed.append(f"volume {volume} ({engine.name})")
    return removed


def clean_host() -> list[str]:
    """Remove the network namespaces and agent cgroups of runners that are gone; what was removed."""
    before = set(_listing(NETNS_FOLDER))
    remove_stale_namespaces()
    removed = [f"network namespace {n}" for n in sorted(before - set(_listing(NETNS_FOLDER)))]
    return removed + [f"cgroup {path}" for path in remove_stale_cgroups()]


def clean_leftovers(environ: Mapping[str, str] | None = None) -> list[str]:
    """``ancha doctor --clean``: every engine that answers, and this machine's namespaces and cgroups."""
    removed = clean_host()
    for probe in probe_engines(environ):
        if probe.engine is not None:
            removed += clean_engine(probe.engine, environ)
    _forget_dead_markers()
    return removed


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


# --- markers: which engine a container run used, for the runs that come after it ---------


def _marker_folder() -> Path | None:
    """A folder of this user's alone (0700) for the markers, or None where none can be trusted."""
    folder = Path(tempfile.gettempdir()) / f"ancha-{os.getuid()}" / "container-runs"
    try:
        folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        for path in (folder.parent, folder):
            found = os.lstat(path)
            if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
                return None
    except OSError:
        return None
    return folder


def mark_container_run(engine: Engine) -> None:
    """Say that this runner makes containers on ``engine``, for whoever starts after it is gone."""
    folder = _marker_folder()
    if folder is None:
        return
    body = json.dumps({"engine": engine.name, "program": engine.program, "run_flags": list(engine.run_flags)})
    path = folder / f"{Owner.me()}.json"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(body)
    except OSError:
        pass


def forget_container_run() -> None:
    """This runner is done with its containers (all removed): no run after it needs to look."""
    folder = _marker_folder()
    if folder is not None:
        (folder / f"{Owner.me()}.json").unlink(missing_ok=True)


def _dead_markers() -> list[tuple[Path, Engine]]:
    folder = _marker_folder()
    if folder is None:
        return []
    found = []
    for path in folder.glob("*.json"):
        owner = Owner.parse(path.stem)
        if owner is None or owner.alive():
            continue
        try:
            said = json.loads(path.read_text())
            engine = Engine(str(said["engine"]), str(said["program"]), "", tuple(said.get("run_flags", ())))
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        found.append((path, engine))
    return found


def _forget_dead_markers() -> None:
    for path, _ in _dead_markers():
        path.unlink(missing_ok=True)


def clean_after_dead_runs(environ: Mapping[str, str] | None = None) -> list[str]:
    """At the start of every run: the host's leftovers of runners that are gone, and the
    engine leftovers of container runs that are gone (by their markers)."""
    removed = clean_host()
    engines: dict[str, Engine] = {}
    markers = _dead_markers()
    for _, engine in markers:
        engines.setdefault(engine.program, engine)
    for engine in engines.values():
        try:
            removed += clean_engine(engine, environ)
        except (OSError, subprocess.SubprocessError):
            continue  # the engine is gone or does not answer: its marker stays for the next run
        for path, used in markers:
            if used.program == engine.program:
                path.unlink(missing_ok=True)
    return removed
