"""The runs folder, ``.ancha/runs``: every run's folder, and ``latest``, the pointer to the run
``ancha run`` started last.

``ancha run`` makes a run's folder and points ``latest`` at it here; ``explain``, ``report``,
``diff`` and the console find a run through here (a run id, ``latest``, or a run folder's
path), so what ``latest`` is lives in one place.
"""

from __future__ import annotations

from pathlib import Path

from ancha.results.run_folder import RunFolder

RUNS_DIR = Path(".ancha") / "runs"
"""Where a project keeps its runs, relative to the folder ``ancha run`` runs in."""
LATEST = "latest"
"""The pointer to the run started last: a symlink to its folder, or (where there are no
symlinks) a file holding its id."""
NAME_MAX = 255
"""The longest file name, in bytes, that Linux and macOS file systems take."""


def is_folder_name(name: str) -> bool:
    """Whether ``name`` (a run id, scene or trial from a URL) can name one folder inside
    another: at most ``NAME_MAX`` bytes of UTF-8, no NUL or separator, not ``.`` or ``..``.
    Anything else names no item, whatever is on disk."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
        return False
    try:
        return len(name.encode("utf-8")) <= NAME_MAX
    except UnicodeEncodeError:  # a lone surrogate: no file has that name
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False for a path the system refuses to look at (too long, NUL)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


class RunsFolder:
    """``.ancha/runs``: the run folders in it (``latest`` is a pointer, not a run)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of_project(cls, root: Path) -> RunsFolder:
        """The runs of the project in ``root`` (where ``ancha run`` writes them)."""
        return cls(root / RUNS_DIR)

    @classmethod
    def nearest(cls, start: Path | None = None) -> RunsFolder | None:
        """``.ancha/runs`` in ``start`` (default: the working folder) or its nearest parent that has one."""
        here = start or Path.cwd()
        for folder in (here, *here.parents):
            if (folder / RUNS_DIR).is_dir():
                return cls(folder / RUNS_DIR)
        return None

    # --- writing ---------------------------------------------------------------------

    def new_run(self, run_id: str) -> RunFolder:
        """Make the folder of the run ``run_id`` and point ``latest`` at it."""
        folder = RunFolder(self.path / run_id).create()
        self.point_latest(run_id)
        return folder

    def point_latest(self, run_id: str) -> None:
        latest = self.path / LATEST
        try:
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(run_id, target_is_directory=True)
        except OSError:  # no symlinks here (some file systems): a file naming the run does the job
            latest.write_text(run_id + "\n")

    # --- reading ---------------------------------------------------------------------

    def run_ids(self) -> list[str]:
        """Newest first: run ids start with their UTC start time."""
        try:
            names = [p.name for p in self.path.iterdir() if p.is_dir() and p.name != LATEST]
        except OSError:
            return []
        return sorted(names, reverse=True)

    def latest_id(self) -> str | None:
        """The id ``latest`` names (a symlink's target, or the file's text); None without one."""
        pointer = self.path / LATEST
        try:
            if pointer.is_symlink():
                return Path(pointer.readlink()).name
            if pointer.is_file():
                return pointer.read_text().strip() or None
        except (OSError, ValueError):
            return None
        return None

    def run(self, run_id: str) -> RunFolder | None:
        """The run ``run_id`` names, if its folder is here; ``latest`` is the run it points at,
        else (no pointer: runs copied without it) the newest."""
        if run_id == LATEST:
            pointed = self.latest_id()
            ids = self.run_ids()
            run_id = pointed if pointed is not None and pointed in ids else (ids[0] if ids else "")
        if run_id == LATEST or not is_folder_name(run_id):
            return None
        folder = RunFolder(self.path / run_id)
        return folder if is_dir(folder.path) else None
