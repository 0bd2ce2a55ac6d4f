"""A small agent image for the container tests, made without a registry.

Its root file system is assembled from this machine's own Python (the interpreter, its
standard library, the shared libraries ``ldd`` lists) plus the SDKs the bundled example
agents use (and what they require, with their extensions' libraries), ``/bin/sh`` and a
passwd file, then loaded with ``docker import`` or ``podman import`` (never pulled). The tag is the
content hash of those inputs, so a machine builds it once per engine and later runs find it
in that engine's store.

``client_image`` builds a richer image beside it for the real-hostname tests
(tests/real_hostnames): the same plus the third-party clients those run (slack_bolt,
githubkit, mcp, git with its HTTPS helper, curl, node and the npm packages of
``node_clients``), and ``/etc/ssl/certs`` for the trust store the runner mounts.
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
CLIENT_REPOSITORY = "localhost/ancha-test-clients"
CLIENT_DISTRIBUTIONS = (*AGENT_DISTRIBUTIONS, "slack_bolt", "githubkit", "mcp")
"""What the real-hostname clients (tests/real_hostnames/clients) import."""
NODE_PACKAGES = "opt/ancha-node-clients"
"""Where ``client_image`` puts the npm folder (its ``node_modules`` is the image's NODE_PATH)."""
CLIENT_PROGRAMS = ("git", "curl", "node")
"""Programs of this machine copied into ``client_image`` (with ``/usr/lib/git-core``, where git
finds ``git-remote-https``)."""
GIT_CORE = Path("/usr/lib/git-core")
GIT_TEMPLATES = Path("/usr/share/git-core/templates")


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


def _members(distributions: tuple[str, ...] = AGENT_DISTRIBUTIONS) -> list[tuple[str, Path]]:
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
    for in_site_packages, path in _agent_packages(distributions):
        if _wanted(path):
            members.append((f"usr/local/lib/{version}/site-packages/{in_site_packages}", path))
            if path.suffix == ".so":
                extensions.append(path)
    known = {inside for inside, _ in members}
    for library in _libraries(extensions):
        if str(library).lstrip("/") not in known and "libpython" not in library.name:
            known.add(str(library).lstrip("/"))
            members.append((str(library).lstrip("/"), library.resolve()))
    return members


def _agent_packages(distributions: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(path under site-packages, path here) of ``distributions`` and what they require."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    # (distribution, extra): a requirement's extras count too (githubkit needs hishel[async]'s anysqlite).
    todo: list[tuple[str, str]] = [(name, "") for name in distributions]
    done: set[tuple[str, str]] = set()
    while todo:
        name, extra = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if (key, extra) in done:
            continue
        done.add((key, extra))
        distribution = seen.get(key) or importlib.metadata.distribution(name)
        seen[key] = distribution
        for requirement in distribution.requires or []:
            parsed = Requirement(requirement)
            if parsed.marker is None or parsed.marker.evaluate({"extra": extra}):
                todo.extend((parsed.name, wanted) for wanted in ("", *parsed.extras))
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
    if not _present(cli, tag):
        _import(cli, tag, members)
    return tag


def client_image(engine: str, node_packages: Path, *, command: tuple[str, ...] | None = None) -> str:
    """The real-hostname clients' image tag (``localhost/ancha-test-clients:<hash>``), imported
    into ``engine`` the first time: ``agent_image``'s files plus ``CLIENT_DISTRIBUTIONS``, git
    (``/usr/lib/git-core`` with ``git-remote-https``), curl and node with their libraries, the npm
    folder ``node_packages`` (``node_clients.node_packages()``) at ``/opt/ancha-node-clients``
    (NODE_PATH names its ``node_modules``; ANCHA_TEST_MCP_GITHUB names GitHub's MCP server), and
    an empty ``/etc/ssl/certs`` where the runner mounts the trust store."""
    cli = list(command or (engine,))
    members = _client_members(node_packages)
    tag = _tag(members).replace(REPOSITORY, CLIENT_REPOSITORY, 1)
    if not _present(cli, tag):
        node_modules = f"/{NODE_PACKAGES}/node_modules"
        _import(cli, tag, members, folders=("etc/ssl/certs", "usr/lib/ssl"),
                links=(("usr/lib/ssl/certs", "/etc/ssl/certs"),
                       ("usr/lib/ssl/cert.pem", "/etc/ssl/certs/ca-certificates.crt")),
                env=(f"NODE_PATH={node_modules}",
                     f"ANCHA_TEST_MCP_GITHUB={node_modules}/@modelcontextprotocol/server-github/dist/index.js"))
    return tag


def _client_members(node_packages: Path) -> list[tuple[str, Path]]:
    members = _members(CLIENT_DISTRIBUTIONS)
    programs: list[Path] = []
    for name in CLIENT_PROGRAMS:
        found = shutil.which(name)
        if found is None:
            raise RuntimeError(f"{name} is not installed here: the client image copies this machine's {name}")
        programs.append(Path(found))
        members.append((f"usr/bin/{name}", Path(found).resolve()))
    # Symbolic links stay links (most of git-core are links to git), so the paths here are not resolved.
    for root, inside in ((GIT_CORE, "usr/lib/git-core"), (GIT_TEMPLATES, "usr/share/git-core/templates")):
        for path in sorted(root.rglob("*")):
            if path.is_symlink() or path.is_file():
                members.append((f"{inside}/{path.relative_to(root).as_posix()}", path))
                if not path.is_symlink() and os.access(path, os.X_OK):
                    programs.append(path)
    for path in sorted(node_packages.rglob("*")):
        if path.is_symlink() or path.is_file():
            members.append((f"{NODE_PACKAGES}/{path.relative_to(node_packages).as_posix()}", path))
    known = {inside for inside, _ in members}
    for library in _libraries(programs):
        if str(library).lstrip("/") not in known and "libpython" not in library.name:
            known.add(str(library).lstrip("/"))
            members.append((str(library).lstrip("/"), library.resolve()))
    return members


def _present(cli: list[str], tag: str) -> bool:
    return subprocess.run([*cli, "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True).returncode == 0


def _import(cli: list[str], tag: str, members: list[tuple[str, Path]], *, folders: tuple[str, ...] = (),
            links: tuple[tuple[str, str], ...] = (), env: tuple[str, ...] = ()) -> None:
    """Write ``members`` (and ``folders``, symbolic ``links``: (path, target)) into one archive
    and import it as ``tag``, with ``env`` besides the image's usual variables."""
    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            made = {"bin", "etc", "tmp", "usr", "workspace", "state", "opt", *folders}
            for inside in (*(inside for inside, _ in members), *(link for link, _ in links), *folders):
                parts = inside.split("/")[:-1]
                made.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
            for folder in sorted(made):
                info = tarfile.TarInfo(folder)
                info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
                tar.addfile(info)
            for inside, here in members:
                info = tar.gettarinfo(str(here), arcname=inside)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    with here.open("rb") as source:
                        tar.addfile(info, source)
                else:  # a symbolic link, or a hard link to a file already in the archive
                    tar.addfile(info)
            for link, target in links:
                info = tarfile.TarInfo(link)
                info.type, info.linkname = tarfile.SYMTYPE, target
                tar.addfile(info)
            for name, text in (("etc/passwd", PASSWD), ("etc/group", GROUP)):
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        archive.seek(0)
        changes = [arg for variable in ("PATH=/usr/local/bin:/usr/bin:/bin", "LD_LIBRARY_PATH=/usr/local/lib",
                                        "PYTHONDONTWRITEBYTECODE=1", *env) for arg in ("--change", f"ENV {variable}")]
        subprocess.run([*cli, "import", *changes, "-", tag], stdin=archive, check=True, capture_output=True)
