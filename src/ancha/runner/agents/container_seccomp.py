"""The seccomp profile of a container agent: the engine's default, with no way to make a namespace.

A user namespace gives its maker every capability inside it: with one, an agent could mount
file systems (a tmpfs, a FUSE) and reach kernel code that an unprivileged process never
does. Docker's default profile already refuses ``unshare``, ``setns``, ``mount`` and
``clone`` with a namespace flag to a container without ``CAP_SYS_ADMIN`` (and agents have
no capability), so Docker keeps its own. Podman's default (containers-common's
``seccomp.json``) allows them, so podman's containers get that profile with those calls
taken out of every rule and refused (``EPERM``), ``clone`` allowed only without a
namespace flag, and ``clone3`` answered ``ENOSYS``, which makes the C library fall back to
``clone`` for threads and processes (its flags cannot be filtered). Where podman's
default profile cannot be read, a small profile that allows every call but those is used.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import platform
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ancha.runner.agents.container_engine import PROBE_TIMEOUT_S, Engine

REFUSED = ("unshare", "setns", "mount", "umount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig", "fspick",
           "move_mount", "open_tree", "mount_setattr")
"""Calls that make or join a namespace or mount a file system: refused with EPERM."""
CLONE_NAMESPACES = 0x7E020000
"""CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET."""
EPERM, ENOSYS = 1, 38


def restrict(profile: dict[str, Any]) -> dict[str, Any]:
    """``profile`` (an engine's seccomp JSON) with no namespace or mount call left: see the module."""
    made = copy.deepcopy(profile)
    taken = {*REFUSED, "clone", "clone3"}
    rules = []
    for rule in made.get("syscalls") or []:
        names = [n for n in rule.get("names") or [] if n not in taken]
        if rule.get("name") in taken:
            continue
        if names or "name" in rule:
            rules.append({**rule, "names": names} if "names" in rule else rule)
    flags = 1 if platform.machine() in ("s390", "s390x") else 0  # clone's flags come second there
    rules += [
        {"names": list(REFUSED), "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
        {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": flags, "value": CLONE_NAMESPACES, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    ]
    made["syscalls"] = rules
    return made


def fallback_profile() -> dict[str, Any]:
    """Every call allowed but the namespace and mount ones (for an engine whose default cannot be read)."""
    return restrict({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []})


def seccomp_profile(engine: Engine, environ: Mapping[str, str]) -> Path | None:
    """The profile file for ``--security-opt seccomp=PATH`` on ``engine``, or None to keep the engine's own."""
    if engine.name != "podman":
        return None
    profile = fallback_profile()
    with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
        answer = subprocess.run(engine.command("info", "--format", "{{.Host.Security.SECCOMPProfilePath}}"),
                                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                                env=dict(environ))
        default = answer.stdout.strip()
        if answer.returncode == 0 and default:
            loaded = json.loads(Path(default).read_text())
            if isinstance(loaded, dict) and loaded.get("syscalls"):
                profile = restrict(loaded)
    text = json.dumps(profile, indent=1, sort_keys=True)
    return _write_private(f"seccomp-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json", text)


def _write_private(name: str, text: str) -> Path | None:
    """``text`` in a folder of this user's alone (0700), or None where there is no such folder."""
    folder = Path(tempfile.gettempdir()) / f"ancha-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
            return None
        path = folder / name
        fd, partial = tempfile.mkstemp(dir=folder, prefix=".seccomp-")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(partial, 0o644)  # podman's runtime reads it
        os.replace(partial, path)
        return path
    except OSError:
        return None
