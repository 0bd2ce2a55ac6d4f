"""Which project files an isolated agent gets: ``agent.execution.files`` minus what it must not read.

A container agent sees these at ``/workspace`` (read-only). Left out, whatever ``files`` says:
dotfiles and dot folders (``.env``, ``.git``, ``.venv``, ``.ssh``...), VCS and dependency
folders, common credential files, and Ancha's own files (``ancha.yaml``, ``ancha/``, scene
folders and the run's scene files), so the agent cannot read the checks it is graded by.
``select_files`` is a plain function over paths, for any engine that ships a working folder.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ancha.errors import AnchaUserError

MAX_FILES = 5_000
MAX_BYTES = 512 * 1024 * 1024

EXCLUDED_FOLDERS = frozenset({
    "node_modules", "__pycache__", "venv", "site-packages", "bower_components", "jspm_packages",
    "CVS", "_darcs", "ancha",
})
"""Folders left out wherever they are (a dot folder is left out anyway)."""
EXCLUDED_FILES = (
    "ancha.yaml", "ancha.yml", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "credentials", "credentials.json", "*.tfstate",
    "*.tfstate.backup", "service-account*.json", "secrets.yaml", "secrets.yml", "secrets.json",
)
"""File names (shell patterns) left out wherever they are; dotfiles (``.env``, ``.netrc``,
``.npmrc``, ``.pypirc``, ``.git-credentials``...) are left out anyway."""


class WorkspaceFilesInvalid(AnchaUserError):
    """``agent.execution.files`` names a path that is not there, or more than the limits allow."""

    exit_code = 2

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"error[CONFIG_INVALID]: agent.execution.files: {message}\nhint: {hint}")


def is_excluded(relative: Path) -> bool:
    """Whether a path relative to the project root is one an agent never gets, whatever ``files`` says."""
    parts = relative.parts
    for part in parts[:-1]:
        if part.startswith(".") or part in EXCLUDED_FOLDERS:
            return True
    if not parts:
        return False
    name = parts[-1]
    return name.startswith(".") or any(fnmatch.fnmatchcase(name, pattern) for pattern in EXCLUDED_FILES)


def select_files(project_root: Path, patterns: Sequence[str], excluded_paths: Iterable[Path] = ()) -> list[Path]:
    """The regular files under ``patterns`` (project paths or globs, relative to ``project_root``),
    sorted, minus ``is_excluded`` ones and anything at or under ``excluded_paths`` (such as
    the run's scene files and folders). Symbolic links are followed only to files inside
    the project. Raises ``WorkspaceFilesInvalid`` for a path outside the project or not
    there, and past ``MAX_FILES`` files or ``MAX_BYTES`` bytes."""
    root = project_root.resolve()
    excluded = [Path(p).resolve() for p in excluded_paths]
    found: dict[Path, None] = {}
    total = 0
    for pattern in patterns:
        for start in _starts(root, pattern):
            for path in _walk(start):
                resolved = path.resolve()
                if not resolved.is_relative_to(root) or not path.is_file():
                    continue  # a link out of the project, or to something that is not a file
                relative = path.relative_to(root)
                if is_excluded(relative) or _under(path, excluded) or _under(resolved, excluded):
                    continue
                if path in found:
                    continue
                found[path] = None
                total += path.stat().st_size
                if len(found) > MAX_FILES:
                    raise WorkspaceFilesInvalid(
                        f"more than {MAX_FILES:,} files",
                        "list only what the agent needs in agent.execution.files, such as [agent.py, src]")
                if total > MAX_BYTES:
                    raise WorkspaceFilesInvalid(
                        f"more than {MAX_BYTES // 1024 // 1024} MiB",
                        "list only what the agent needs in agent.execution.files; put large dependencies in "
                        "the image")
    return sorted(found)


def _starts(root: Path, pattern: str) -> list[Path]:
    """The paths a ``files`` entry names, checked to be inside the project."""
    if Path(pattern).is_absolute():
        raise WorkspaceFilesInvalid(f"{pattern} is an absolute path", "name paths relative to the project folder")
    if glob.has_magic(pattern):
        starts = [Path(p) for p in sorted(glob.glob(pattern, root_dir=root, recursive=True))]
        starts = [root / p for p in starts]
    else:
        starts = [root / pattern]
        if not starts[0].exists():
            raise WorkspaceFilesInvalid(f"{pattern} is not in the project folder {root}",
                                        "fix the path (relative to the project folder) or remove it")
    for start in starts:
        if not start.resolve().is_relative_to(root):
            raise WorkspaceFilesInvalid(f"{pattern} is outside the project folder {root}",
                                        "copy only paths inside the project folder")
    return starts


def _walk(start: Path) -> Iterable[Path]:
    if not start.is_dir():
        yield start
        return
    for folder, dirs, files in os.walk(start):  # never into linked folders: they may lead anywhere
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in EXCLUDED_FOLDERS)
        for name in sorted(files):
            yield here / name


def _under(path: Path, excluded: list[Path]) -> bool:
    return any(path == p or path.is_relative_to(p) for p in excluded)


def ancha_paths(root: Path, config_file: Path | None, scene_files: Iterable[str | Path],
                scene_globs: Iterable[str]) -> list[Path]:
    """Ancha's own files in a project, which an agent must never read: the config file, every
    scene file, each scene file's folder and the top folder of each ``scenes`` entry, such
    as ``scenes/`` (never the project folder itself)."""
    root = root.resolve()
    paths: list[Path] = [root / "ancha.yaml", root / "ancha.yml", root / "ancha"]
    if config_file is not None:
        paths.append(config_file.resolve())
    for scene in scene_files:
        file = Path(scene).resolve()
        paths.append(file)
        if file.parent != root and file.parent.is_relative_to(root):
            paths.append(file.parent)
    for pattern in scene_globs:
        parts = Path(pattern).parts
        if not glob.has_magic(pattern):  # a scene file named outright
            file = (root / pattern).resolve()
            paths.append(file)
            if file.parent != root and file.parent.is_relative_to(root):
                paths.append(file.parent)
        fixed = []
        for part in parts[:-1]:
            if glob.has_magic(part):
                break
            fixed.append(part)
        if fixed:  # the folder the scenes live under, such as scenes/
            folder = (root / fixed[0]).resolve()
            if folder != root and folder.is_relative_to(root):
                paths.append(folder)
    return paths
