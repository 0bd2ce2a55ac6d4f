"""The world's time, written where the agent's libfaketime reads it.

An agent reads its own clock (``time.time()``, ``Date.now()``), not the world's. Run under
libfaketime with ``FAKETIME_TIMESTAMP_FILE`` naming this file, its clock follows the
world's: the file holds the world's offset from real time (``+86400.250000`` is a day and
a quarter second ahead), so the agent's clock ticks in real time from the world's now, as
the world's does while the agent works at ``clock.speed`` 1. At each moment the world's
clock can have moved under the agent (it resumes after the agent waited and the clock
jumped, or stood still) the offset is written again, before the agent is answered; with
``FAKETIME_NO_CACHE`` the agent's next reading of its clock sees it.

The file is replaced whole (written beside, then renamed), so a reader never sees half of
it; its folder is mounted into a container agent (a mount of the file itself would keep
the old copy after a rename).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

FILE_NAME = "faketime"
STEADY_S = 0.001
"""An offset that moved less than this is not written again (real and world time flow alike)."""


class AgentClockFile:
    """One trial's offset file, in a folder of its own (removed with ``close()``)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="ancha-clock-"))
        self.folder.chmod(0o755)  # an agent run as another user (a container's) reads it
        self.path = self.folder / FILE_NAME
        self.offset: float | None = None
        """The offset last written, in seconds (the world's now minus real time)."""

    def follow(self, world_now: float) -> None:
        """Write the world's offset from real time now, unless it is what the file says."""
        offset = world_now - time.time()
        if self.offset is not None and abs(offset - self.offset) < STEADY_S:
            return
        fd, temporary = tempfile.mkstemp(prefix=".faketime-", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(f"{offset:+.6f}\n")
            os.chmod(temporary, 0o644)
            os.replace(temporary, self.path)
        except OSError:  # a folder gone under us (torn down): the agent keeps its last offset
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return
        self.offset = offset

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
