"""A small agent image for the container tests, made without a registry.

Its root file system is assembled from this machine's own Python (the interpreter, its
standard library, the shared libraries ``ldd`` lists) plus the SDKs the bundled example
agents use (and what they require, with their extensions' libraries), ``/bin/sh`` and a
passwd file, then loaded with ``docker import`` or ``podman import`` (never pulled). The tag is the
content hash of those inputs, so a machine builds it once per engine and later runs find it
in that engine's store.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPOSITORY = "localhost/ancha-test-agent"
SKIPPED_STDLIB = frozenset({"site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3",
                            "unittest", "pydoc_data"})
PASSWD = "root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/tmp:/bin/sh\nnobody:x:65534:65534::/tmp:/bin/sh\n"
GROUP = "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n"
AGENT_DISTRIBUTIONS = ("slack_sdk", "PyGithub", "httpx", "pagerduty", "datadog-api-client", "okta")
"""What the bundled example agents (examples/agents) import."""


def _python() -> tuple[Path, Path, Path | None]:
    """The real interpreter (not the venv's copy), its standard library and libpython."""
    base = Path(sys.base_prefix)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    interpreter = base / "bin" / f"python{version}"
    stdlib = Path(sysconfig.get_paths(vars={"installed_base": str(base), "base": str(base)})["stdlib"])
    libpython = base / "lib" / f"libpython{version}.so.1.0"
    return interpreter, stdlib, libpython if libpython.exists() else None


def _libraries(binaries: list[Path]) -> list[Path]:
    found: set[str] = set()
    for binary in binaries:
        answer = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
        for line in answer.stdout.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > parts.index("=>") + 1 and parts[parts.index("=>") + 1].startswith("/"):
                found.add(parts[parts.index("=>") + 1])
            elif parts and parts[0].startswith("/"):
                found.add(parts[0])
    return sorted(Path(p) for p in found)


def _members() -> list[tuple[str, Path]]:
    """(path in the image, path here) for every file of the image."""
    interpreter, stdlib, libpython = _python()
    sh = Path(shutil.which("dash") or "/bin/sh").resolve()
    version = stdlib.name
    dynload = sorted(p for p in (stdlib / "lib-dynload").glob("*.so") if "tkinter" not in p.name)
    members = [("usr/local/bin/python3", interpreter.resolve()), ("bin/sh", sh)]
    if libpython is not None:
        members.append((f"usr/local/lib/{libpython.name}", libpython.resolve()))
    for library in _libraries([interpreter, sh, *dynload]):
        if "libpython" not in library.name:
            members.append((str(library).lstrip("/"), library.resolve()))
    for path in sorted(stdlib.rglob("*")):
        relative = path.relative_to(stdlib)
        if relative.parts[0] in SKIPPED_STDLIB or not _wanted(path) or "tkinter" in path.name:
            continue
        members.append((f"usr/local/lib/{version}/{relative.as_posix()}", path))
    extensions: list[Path] = []
    for relative, path in _agent_packages():
        if _wanted(path):
            members.append((f"usr/local/lib/{version}/site-packages/{relative}", path))
            if path.suffix == ".so":
                extensions.append(path)
    known = {inside for inside, _ in members}
    for library in _libraries(extensions):
        if str(library).lstrip("/") not in known and "libpython" not in library.name:
            known.add(str(library).lstrip("/"))
            members.append((str(library).lstrip("/"), library.resolve()))
    return members


def _agent_packages() -> list[tuple[str, Path]]:
    """(path under site-packages, path here) of the bundled agents' SDKs and what they require."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(AGENT_DISTRIBUTIONS)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        distribution = importlib.metadata.distribution(name)
        seen[key] = distribution
        for requirement in distribution.requires or []:
            parsed = Requirement(requirement)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                todo.append(parsed.name)
    found: list[tuple[str, Path]] = []
    for distribution in seen.values():
        for file in distribution.files or []:
            if not file.parts or file.parts[0] == "..":
                continue  # scripts and data outside site-packages
            found.append((file.as_posix(), Path(str(distribution.locate_file(file)))))
    return sorted(found)


def _wanted(path: Path) -> bool:
    """Files, with only this interpreter's plain bytecode: a read-only root cannot cache it."""
    if not path.is_file():
        return False
    if path.parent.name == "__pycache__":
        return path.name.endswith(f".{sys.implementation.cache_tag}.pyc")
    return True


def _tag(members: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256(PASSWD.encode())
    for inside, here in members:
        stat = here.stat()
        digest.update(f"{inside}\0{here}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return f"{REPOSITORY}:{digest.hexdigest()[:16]}"


ENGINES = ("docker", "podman")


def usable_engine(engine: str) -> str:
    """``engine`` when the container tests can run on it here; else the test is skipped, or in
    CI (``CI=true``, where .ci/run installs and starts both engines) it fails."""
    problem = engine_ready(engine)
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs the container tests on {engine}: {problem}")
        pytest.skip(problem)
    return engine


def engine_ready(engine: str) -> str | None:
    """Why the container tests cannot run on ``engine`` here, or None."""
    if shutil.which(engine) is None:
        return f"{engine} is not installed (.ci/run installs it)"
    answer = subprocess.run([engine, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True)
    if answer.returncode != 0 or not answer.stdout.strip():
        said = (answer.stderr.strip() or f"exit {answer.returncode}").splitlines()[-1]
        return f"{engine}'s engine does not answer ({said}); .ci/run starts it"
    if os.geteuid() != 0:
        return "these tests run the engines as root (rootless podman has a test of its own)"
    return None


def agent_image(engine: str = "podman", *, command: tuple[str, ...] | None = None) -> str:
    """The test image's tag, imported into ``engine`` the first time (``command``: how to run
    that engine's CLI, for another user's podman)."""
    cli = list(command or (engine,))
    members = _members()
    tag = _tag(members)
    if subprocess.run([*cli, "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True).returncode == 0:
        return tag
    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            folders = {"bin", "etc", "tmp", "usr", "workspace", "state", "opt"}
            for inside, _ in members:
                parts = inside.split("/")[:-1]
                folders.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
            for folder in sorted(folders):
                info = tarfile.TarInfo(folder)
                info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
                tar.addfile(info)
            for inside, here in members:
                info = tar.gettarinfo(str(here), arcname=inside)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with here.open("rb") as source:
                    tar.addfile(info, source)
            for name, text in (("etc/passwd", PASSWD), ("etc/group", GROUP)):
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        archive.seek(0)
        subprocess.run([*cli, "import", "--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin",
                        "--change", "ENV LD_LIBRARY_PATH=/usr/local/lib", "--change", "ENV PYTHONDONTWRITEBYTECODE=1",
                        "-", tag], stdin=archive, check=True, capture_output=True)
    return tag
