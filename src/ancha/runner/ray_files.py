"""The project files a Ray run ships to its workers, as Ray's ``working_dir``.

A worker needs the agent's files and the scene files (it loads each scene from its own
copy, and checks the copy has the hash the driver loaded). What is never shipped is what
a container agent never gets either (``agents/workspace_files.py``): dotfiles and dot
folders (``.env``, ``.git``, ``.venv``, the run folders in ``.ancha``), VCS and dependency
folders, common credential files, and ``ancha.yaml`` (the config travels as data). The
files are staged, hard-linked where the file system allows, in a folder of their own, so
that Ray's upload (content-hashed: an unchanged project is uploaded once per cluster) sees
exactly this list and no ``.gitignore`` of the project changes it.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ancha.errors import RunFailed
from ancha.runner.agents.workspace_files import EXCLUDED_FILES, EXCLUDED_FOLDERS, MAX_BYTES, MAX_FILES

SHIPPED_ANCHA_FOLDERS = frozenset({"ancha"})
"""Left out of a container's view but shipped to workers: a project may keep its scenes there."""
NEVER_FOLDERS = EXCLUDED_FOLDERS - SHIPPED_ANCHA_FOLDERS


class ShippingRefused(RunFailed):
    """The project cannot be shipped to Ray workers as it is (exit 3)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"error[RAY_FILES]: {message}\nhint: {hint}")


def shipped(relative: Path) -> bool:
    """Whether a file (its path relative to the project folder) goes to the workers."""
    parts = relative.parts
    if not parts or any(p.startswith(".") or p in NEVER_FOLDERS for p in parts[:-1]):
        return False
    name = parts[-1]
    return not name.startswith(".") and not any(fnmatch.fnmatchcase(name, p) for p in EXCLUDED_FILES)


def project_files(root: Path) -> list[Path]:
    """Every file shipped from ``root``, relative to it, sorted; refused past the container limits."""
    root = root.resolve()
    found: list[Path] = []
    total = 0
    for folder, dirs, files in os.walk(root):  # never into linked folders: they may lead anywhere
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in NEVER_FOLDERS)
        for name in sorted(files):
            path = here / name
            relative = path.relative_to(root)
            if not shipped(relative) or not path.is_file() or not path.resolve().is_relative_to(root):
                continue
            found.append(relative)
            total += path.stat().st_size
            if len(found) > MAX_FILES or total > MAX_BYTES:
                raise ShippingRefused(
                    f"the project folder {root} holds more than {MAX_FILES:,} files or "
                    f"{MAX_BYTES // 1024 // 1024} MiB to ship to the Ray workers",
                    "run from a folder with only the agent and its scenes, or move data and "
                    "dependencies out of it (dependency folders such as node_modules are never shipped)")
    return found


def check_scenes_inside(root: Path, scene_paths: Iterable[str | Path]) -> list[str]:
    """Each scene file's path relative to ``root``; a scene outside it could not be shipped."""
    root = root.resolve()
    relative: list[str] = []
    for scene in scene_paths:
        path = Path(scene).resolve()
        if not path.is_relative_to(root) or not shipped(path.relative_to(root)):
            raise ShippingRefused(
                f"the scene {path} is not shipped to the Ray workers: only files inside the project "
                f"folder {root} are, and never dotfiles, credential or dependency folders",
                "keep the scenes in the project folder (such as scenes/NAME/scene.yaml) and run ancha from it")
        relative.append(path.relative_to(root).as_posix())
    return relative


def stage(root: Path, files: list[Path]) -> Path:
    """A new folder holding ``files`` (relative to ``root``) at their relative paths; remove it after."""
    target = Path(tempfile.mkdtemp(prefix="ancha-ray-"))
    try:
        for relative in files:
            source, copy = root / relative, target / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, copy)
            except OSError:  # another file system, or no hard links here
                shutil.copy2(source, copy)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise ShippingRefused(f"the project files could not be staged for the Ray workers: {exc}",
                              "check that the project folder is readable and the temporary folder has space") from exc
    return target
