"""The agent's clock follows the world's: libfaketime, preloaded into the agent's processes.

Trials start at the scene's ``clock.start`` and the world's clock jumps while the agent
waits; the agent's machine clock reads today. Agents use their own clock (``time.time()``,
``Date.now()``) and should not have to know, so Ancha starts them under libfaketime
(Debian's ``faketime`` package), preloaded with ``LD_PRELOAD``. It reads the world's offset
from real time from a file the world rewrites whenever its clock moved under the agent
(``ancha.world.agent_clock``), on every reading of the clock (``FAKETIME_NO_CACHE``), so a
jump is seen by the agent's next reading. Monotonic clocks follow the world's too: with
them left real (``FAKETIME_DONT_FAKE_MONOTONIC``), libfaketime 0.9.10 breaks sleeps to an
absolute monotonic time (Python's ``time.sleep`` fails with EINVAL).

Where the library is missing the run says so once (``ancha doctor`` too) and agents run on
the wall clock. ``agent.clock: wall`` opts out.
"""

from __future__ import annotations

import glob
import os
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from ancha.config.model import AnchaConfig

LIBRARY = "libfaketime.so.1"
LIBRARY_ENV = "ANCHA_LIBFAKETIME"
"""A path to the library, where it is installed somewhere we do not look."""
IN_CONTAINER = "/usr/lib/ancha-faketime/" + LIBRARY
"""Where the host's library is mounted, read-only, in a container agent."""
CLOCK_IN_CONTAINER = "/etc/ancha-clock"
"""Where the world's clock folder is mounted, read-only, in a container agent."""
MISSING = (
    "libfaketime is not installed, so agents run on the wall clock, not the world's "
    "(an agent's time.time() or Date.now() reads today, not the scene's time): "
    "install Debian's faketime package (apt-get install faketime), or set agent.clock: wall"
)
"""The one line a run prints when agents should follow the world's clock and cannot."""


def wants_world_clock(config: AnchaConfig) -> bool:
    """``agent.clock: world`` (the default), for an agent process Ancha starts: a command, or an
    endpoint's ``agent.start`` (a server at a URL of your own runs on its own clock); not with
    Slack Socket Mode."""
    agent = config.agent
    if agent is None or agent.clock != "world" or agent.slack_transport == "socket":
        return False  # Socket Mode clients check their connection's pings against their clock: a jump drops it
    return agent.kind != "endpoint" or bool(agent.start)


def find_library(environ: Mapping[str, str] | None = None) -> Path | None:
    """The libfaketime to preload: ``$ANCHA_LIBFAKETIME``, else where Debian, Fedora, Arch and
    ``make install`` put it (for this machine's architecture first); None when it is nowhere."""
    environ = os.environ if environ is None else environ
    given = environ.get(LIBRARY_ENV)
    if given:
        return Path(given) if Path(given).is_file() else None
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    folders = [f"/usr/lib/{multiarch}/faketime"] if multiarch else []
    folders += [
        "/usr/lib/faketime",
        "/usr/lib64/faketime",
        "/usr/local/lib/faketime",
        "/usr/local/lib64/faketime",
    ]
    candidates = [Path(folder) / LIBRARY for folder in folders]
    candidates += [Path(p) for p in sorted(glob.glob(f"/usr/lib/*/faketime/{LIBRARY}"))]
    return next((path for path in candidates if path.is_file()), None)


def clock_variables(library: str, timestamp_file: str, preload: str | None = None) -> dict[str, str]:
    """What puts a process (and its children) on the world's clock: the library first in
    ``LD_PRELOAD`` (before ``preload``, what was there), the world's file, read on every call."""
    return {
        "LD_PRELOAD": f"{library} {preload}".strip() if preload else library,
        "FAKETIME_TIMESTAMP_FILE": timestamp_file,
        "FAKETIME_NO_CACHE": "1",
    }


def timestamp_file(context: Mapping[str, object]) -> str | None:
    """The world's clock file for this trial (the create answer's ``agent_clock.file``), when the
    world writes one and it is on this machine (a server elsewhere writes its own disk)."""
    clock = context.get("agent_clock")
    if not isinstance(clock, dict):
        return None
    path = clock.get("file")
    return str(path) if isinstance(path, str) and os.path.isfile(path) else None
