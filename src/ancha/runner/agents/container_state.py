"""A container agent's ``/state``, carried between the container and the trial's ``state/`` folder
as an archive stream, so that no link the agent makes is ever followed on the host.

Into the container (``copy_in``): the trial's folder goes as a tar stream to the engine's
``cp - NAME:/state``, which unpacks it inside the container's own file system, before the
agent starts. Only regular files and folders are sent, each read without following a link.

Out of the container (``copy_out``): ``cp NAME:/state/. -`` (Docker) or ``volume export``
(podman, whose ``cp`` costs a mount of the container's storage, about 0.3 s more) gives a
tar stream of what the agent left. It is unpacked into a fresh folder of the trial's, keeping regular files and
folders only (a hard link comes back as a copy of a file of the same stream); symbolic
links, devices and FIFOs are left out, and so is any name that is absolute or climbs out
with ``..``. The fresh folder then replaces ``state/``. Nothing in it was ever a link, and
each file is made with ``O_EXCL | O_NOFOLLOW``, so no write can land outside it.

``/state`` is capped like ``agent.execution.files``: 5,000 files and folders and 512 MiB.
Past either, the copy stops there; what came before is kept, and the trial says so
(``StateCopy.cut``, ``state`` in ``checks.json``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ancha.errors import RunFailed
from ancha.runner.agents.container_engine import Engine
from ancha.runner.agents.container_images import ENGINE_TIMEOUT_S, STATE
from ancha.runner.agents.workspace_files import MAX_BYTES, MAX_FILES

CHUNK = 1024 * 1024
SHOWN = 20
"""How many of the entries left out ``agent.log`` names."""
KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a character device",
         tarfile.BLKTYPE: "a block device", tarfile.FIFOTYPE: "a FIFO"}


@dataclass
class StateCopy:
    """What one copy out of ``/state`` kept and left out."""

    files: int = 0
    """Files and folders kept."""
    bytes: int = 0
    left_out: list[str] = field(default_factory=list)
    """``NAME (a symbolic link)`` for the first ``SHOWN`` entries left out (not a regular file or a folder)."""
    left_out_count: int = 0
    cut: str | None = None
    """Why the copy stopped before the end (``more than 512 MiB``), or None when it is whole."""

    def leave_out(self, entry: str) -> None:
        self.left_out_count += 1
        if len(self.left_out) < SHOWN:
            self.left_out.append(entry)

    def record(self) -> dict[str, Any] | None:
        """``state`` in ``checks.json``: None when nothing was cut."""
        if self.cut is None:
            return None
        return {"cut": self.cut, "kept_files": self.files, "kept_bytes": self.bytes, "max_files": MAX_FILES,
                "max_bytes": MAX_BYTES}

    def notes(self) -> list[str]:
        """Lines for ``agent.log``."""
        lines = []
        if self.left_out:
            more = self.left_out_count - len(self.left_out)
            lines.append(f"ancha: {STATE}: left out what is not a regular file or a folder: "
                         f"{', '.join(sorted(self.left_out))}" + (f", and {more:,} more" if more > 0 else ""))
        if self.cut is not None:
            lines.append(f"ancha: {STATE}: {self.cut}: only the first {self.files:,} files and folders "
                         f"({self.bytes:,} bytes) were copied to the trial's state/ folder (the limit is "
                         f"{MAX_FILES:,} files and {MAX_BYTES // 1024 // 1024} MiB, as for agent.execution.files)")
        return lines


def write_state_archive(folder: Path, out: IO[bytes]) -> None:
    """The regular files and folders under ``folder`` as a tar stream, open to any user inside
    (the agent's user owns nothing of the engine's copy). Links and other kinds are skipped,
    and nothing is opened through one."""
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        if not folder.is_dir() or folder.is_symlink():
            return
        for here, dirs, files in os.walk(folder):  # os.walk never enters a linked folder
            base = Path(here)
            for name in sorted(dirs):
                path = base / name
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    info = tarfile.TarInfo(path.relative_to(folder).as_posix())
                    info.type, info.mode = tarfile.DIRTYPE, 0o777
                    tar.addfile(info)
            dirs[:] = sorted(d for d in dirs if stat.S_ISDIR(os.lstat(base / d).st_mode))
            for name in sorted(files):
                path = base / name
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue  # a link, or gone
                with os.fdopen(fd, "rb") as source:
                    found = os.fstat(source.fileno())
                    if not stat.S_ISREG(found.st_mode):
                        continue
                    info = tarfile.TarInfo(path.relative_to(folder).as_posix())
                    info.size = found.st_size
                    info.mtime = int(found.st_mtime)
                    info.mode = 0o777 if found.st_mode & 0o111 else 0o666
                    tar.addfile(info, source)


def extract_state(stream: IO[bytes], dest: Path) -> StateCopy:
    """Unpack a tar stream of ``/state`` into ``dest`` (a fresh, empty folder): regular files and
    folders only, within the caps. See the module's docstring."""
    copy = StateCopy()
    made: dict[str, Path] = {}
    """Each regular file made so far, by its name in the stream: a hard link's only target."""
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            name = _relative(member.name)
            if name is None:
                if member.name.strip("/") not in ("", "."):
                    copy.leave_out(f"{member.name} (a name outside {STATE})")
                continue
            if not (member.isreg() or member.isdir() or (member.islnk() and _relative(member.linkname) in made)):
                copy.leave_out(f"{name} ({KINDS.get(member.type, 'not a file')})")
                if copy.left_out_count > MAX_FILES:
                    copy.cut = f"more than {MAX_FILES:,} entries that are not files or folders"
                    break
                continue
            size = made[_relative(member.linkname) or ""].stat().st_size if member.islnk() else member.size
            if copy.files + 1 > MAX_FILES:
                copy.cut = f"more than {MAX_FILES:,} files and folders"
                break
            if copy.bytes + size > MAX_BYTES:
                copy.cut = f"more than {MAX_BYTES // 1024 // 1024} MiB"
                break
            path = dest / name
            if member.isdir():
                if not _make_folder(dest, name):
                    copy.leave_out(f"{name} (a folder where a file is)")
                    continue
            else:
                if not _make_folder(dest, os.path.dirname(name)):
                    copy.leave_out(f"{name} (a file under a file)")
                    continue
                with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                    os.unlink(path)  # a name given twice: the later wins
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o755 if member.mode & 0o111 else 0o644)
                except OSError:
                    copy.leave_out(f"{name} (a file where a folder is)")
                    continue
                with os.fdopen(fd, "wb") as out:
                    if member.islnk():
                        with made[_relative(member.linkname) or ""].open("rb") as same:
                            shutil.copyfileobj(same, out, CHUNK)
                    else:
                        body = tar.extractfile(member)
                        assert body is not None
                        shutil.copyfileobj(body, out, CHUNK)
                made[name] = path
            copy.files += 1
            copy.bytes += size
    return copy


def _relative(name: str) -> str | None:
    """A stream's name as a path relative to ``/state`` (the engines write ``./a``, ``a`` or
    ``/a``), or None for the folder itself and for any name that would leave it."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _make_folder(dest: Path, name: str) -> bool:
    """``dest/name`` as folders, made one level at a time, never through anything but a folder made here."""
    here = dest
    for part in Path(name).parts:
        here = here / part
        try:
            os.mkdir(here, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return False
    return True


async def copy_in(engine: Engine, container: str, folder: Path, environ: Mapping[str, str]) -> None:
    """The trial's ``state/`` into the container's ``/state``, through the engine (before it starts)."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    await asyncio.to_thread(_engine_stdin, engine, ["cp", "-", f"{container}:{STATE}"],
                            lambda out: write_state_archive(folder, out), environ)


async def copy_files_in(engine: Engine, container: str, destination: str, files: Mapping[str, bytes],
                        environ: Mapping[str, str]) -> None:
    """A few small files (``name -> bytes``, mode 0644) into ``destination`` of the container."""
    def write(out: IO[bytes]) -> None:
        with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                with tempfile.SpooledTemporaryFile() as body:
                    body.write(data)
                    body.seek(0)
                    tar.addfile(info, body)

    await asyncio.to_thread(_engine_stdin, engine, ["cp", "-", f"{container}:{destination}"], write, environ)


async def copy_out(engine: Engine, container: str, volume: str, state_dir: Path,
                   environ: Mapping[str, str]) -> StateCopy:
    """The container's ``/state`` (stopped; ``volume`` is its volume) in place of the trial's
    ``state/``: see the module."""
    args = ["volume", "export", volume] if engine.name == "podman" else ["cp", f"{container}:{STATE}/.", "-"]
    return await asyncio.to_thread(_copy_out, engine, args, state_dir, environ)


def _copy_out(engine: Engine, args: list[str], state_dir: Path, environ: Mapping[str, str]) -> StateCopy:
    fresh = Path(tempfile.mkdtemp(prefix=".state-", dir=state_dir.parent))
    try:
        process = subprocess.Popen(engine.command(*args), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(environ))
        timer = threading.Timer(ENGINE_TIMEOUT_S, process.kill)
        timer.start()
        try:
            assert process.stdout is not None and process.stderr is not None
            try:
                copy = extract_state(process.stdout, fresh)
            except tarfile.TarError as exc:
                process.kill()
                said = process.stderr.read().decode(errors="replace").strip().splitlines()
                raise RunFailed(f"`{engine.name} {args[0]}` gave no archive of {STATE}: "
                                f"{said[-1] if said else exc}") from exc
            if copy.cut is not None:
                process.kill()  # the rest is not wanted
            process.stdout.close()
            err = process.stderr.read()
            code = process.wait()
        finally:
            timer.cancel()
        if copy.cut is None and code != 0:
            said = err.decode(errors="replace").strip().splitlines()
            raise RunFailed(f"`{engine.name} {args[0]}` failed: {said[-1] if said else f'exit {code}'}")
        old = state_dir.with_name(fresh.name + "-old")
        if state_dir.exists():
            os.rename(state_dir, old)
        os.rename(fresh, state_dir)
        shutil.rmtree(old, ignore_errors=True)
        return copy
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def _engine_stdin(engine: Engine, args: list[str], write: Any, environ: Mapping[str, str]) -> None:
    """One engine command fed a stream that ``write`` writes; RunFailed with its last line of error."""
    process = subprocess.Popen(engine.command(*args), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=dict(environ))
    timer = threading.Timer(ENGINE_TIMEOUT_S, process.kill)
    timer.start()
    try:
        assert process.stdin is not None and process.stderr is not None
        try:
            write(process.stdin)
            process.stdin.close()
        except BrokenPipeError:
            pass  # the engine stopped reading: its error says why
        err = process.stderr.read()
        code = process.wait()
    finally:
        timer.cancel()
    if code != 0:
        said = err.decode(errors="replace").strip().splitlines()
        raise RunFailed(f"`{engine.name} {args[0]}` failed: {said[-1] if said else f'exit {code}'}")
