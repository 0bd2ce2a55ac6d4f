"""A container agent's images: the user's (``image``, built first with ``preparation: project``)
and, per project, the same image with the agent's files in it (``workspace_image``).

Copying the files into every container would cost each trial an engine round trip over
the whole workspace; they are instead committed once into a workspace image, tagged by
the content hash of the base image and the files, so a run whose files did not change
reuses it. An older workspace image of the same project is removed when a new one is made.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from ancha.errors import RunFailed
from ancha.runner.agents.container_engine import Engine
from ancha.runner.agents.workspace_files import select_files

WORKSPACE = "/workspace"
STATE = "/state"
TRUST = "/etc/ancha"
NODE_MODULES = "/opt/ancha/node_modules"
DEFAULT_USER = "65534:65534"
"""``nobody``, when the image names no non-root user of its own."""
BUILD_LABEL = "ancha.build-hash"
WORKSPACE_LABEL = "ancha.workspace-of"
WORKSPACE_REPOSITORY = "localhost/ancha-workspace"
BUILD_FILES = ("Containerfile", "Dockerfile")
ENGINE_TIMEOUT_S = 120.0


class ContainerRefused(RunFailed):
    """A container run that cannot be carried out here (exit 3), with what to do."""


def _inspect(engine: Engine, image: str, template: str, environ: Mapping[str, str]) -> str | None:
    """``image inspect --format template``, or None when the image is not in the engine."""
    try:
        answer = subprocess.run(engine.command("image", "inspect", "--format", template, image), capture_output=True,
                                text=True, timeout=ENGINE_TIMEOUT_S, stdin=subprocess.DEVNULL, env=dict(environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ContainerRefused(f"error[CONTAINER_ENGINE]: `{engine.name} image inspect {image}` did not finish: "
                               f"{exc}\nhint: check that the engine runs (`{engine.name} info`)") from exc
    if answer.returncode != 0:
        return None
    return answer.stdout.strip()


def image_user(engine: Engine, image: str, environ: Mapping[str, str]) -> str:
    """The user the agent runs as: the image's own when it names a non-root one, else nobody.
    A missing image stops the run (exit 3): images are never pulled during a trial."""
    user = _inspect(engine, image, "{{.Config.User}}", environ)
    if user is None:
        raise ContainerRefused(
            f"error[CONTAINER_IMAGE]: the image {image} is not in the local {engine.name}\n"
            f"hint: build it (`{engine.name} build -t {image} .`) or pull it (`{engine.name} pull {image}`) before "
            "the run, or set agent.execution.preparation: project to build it from the project's Containerfile; "
            "trials never pull images")
    name = user.split(":", 1)[0]
    return user if name and name not in ("root", "0") else DEFAULT_USER


def build_inputs_hash(root: Path) -> tuple[Path, str]:
    """The project's Containerfile (or Dockerfile) and the content hash of what a build reads:
    that file and the project files an agent could be given (``select_files`` of the project)."""
    recipe = next((root / name for name in BUILD_FILES if (root / name).is_file()), None)
    if recipe is None:
        raise ContainerRefused(
            f"error[CONTAINER_IMAGE]: preparation: project needs a Containerfile or Dockerfile in {root}\n"
            "hint: add one that installs the agent's runtime and dependencies, or set preparation: image "
            "to use the image as it is")
    digest = hashlib.sha256(recipe.read_bytes())
    for path in select_files(root, ["."], [recipe]):
        digest.update(b"\0" + path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return recipe, digest.hexdigest()[:32]


def build_image(engine: Engine, image: str, root: Path, environ: Mapping[str, str]) -> bool:
    """``preparation: project``: build ``image`` from the project when the hash of its build
    inputs differs from the one the image is labelled with. True when it was built."""
    recipe, digest = build_inputs_hash(root)
    if _inspect(engine, image, "{{index .Config.Labels \"" + BUILD_LABEL + "\"}}", environ) == digest:
        return False
    command = engine.command("build", "--tag", image, "--label", f"{BUILD_LABEL}={digest}", "--file", str(recipe),
                             str(root))
    try:
        answer = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=dict(environ))
    except OSError as exc:
        raise ContainerRefused(f"error[CONTAINER_IMAGE]: `{engine.name} build` could not start: {exc}\n"
                               f"hint: check that the engine runs (`{engine.name} info`)") from exc
    if answer.returncode != 0:
        tail = "\n  ".join((answer.stderr or answer.stdout).strip().splitlines()[-5:])
        raise ContainerRefused(f"error[CONTAINER_IMAGE]: building {image} from {recipe.name} failed:\n  {tail}\n"
                               f"hint: fix {recipe.name} (try `{engine.name} build -f {recipe.name} .`)")
    return True


def workspace_image(engine: Engine, image: str, root: Path, files: list[Path], environ: Mapping[str, str]) -> str:
    """``image`` plus the agent's files at /workspace (read-only modes), the link to
    /opt/ancha/node_modules, and the mount points ``/state`` (open to the agent's user) and
    /etc/ancha: made once per content, reused while nothing changed."""
    base_id = _inspect(engine, image, "{{.Id}}", environ) or ""
    project = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    digest = hashlib.sha256(base_id.encode())
    for path in files:
        digest.update(b"\0" + path.relative_to(root).as_posix().encode() + b"\0" + str(_mode(path)).encode() + b"\0")
        digest.update(path.read_bytes())
    tag = f"{WORKSPACE_REPOSITORY}:{project}-{digest.hexdigest()[:16]}"
    if _inspect(engine, tag, "{{.Id}}", environ) is not None:
        return tag
    name = f"ancha-workspace-{os.urandom(6).hex()}"
    try:
        _run(engine, ["create", *engine.run_flags, "--pull=never", "--name", name, image, "/bin/sh"], environ)
        with tempfile.TemporaryFile() as archive:
            _write_workspace(archive, root, files)
            archive.seek(0)
            _run(engine, ["cp", "-", f"{name}:/"], environ, stdin=archive)
        quiet = ["--quiet"] if engine.name == "podman" else []  # docker's commit prints only the ID anyway
        _run(engine, ["commit", *quiet, "--change", f"LABEL {WORKSPACE_LABEL}={project}", name, tag], environ)
    finally:
        subprocess.run(engine.command("rm", "--force", name), capture_output=True, env=dict(environ))
    older = subprocess.run(engine.command("images", "--filter", f"label={WORKSPACE_LABEL}={project}", "--format",
                                          "{{.Repository}}:{{.Tag}}"), capture_output=True, text=True,
                           env=dict(environ)).stdout.split()
    for other in (o for o in older if o != tag and o.startswith(WORKSPACE_REPOSITORY)):
        subprocess.run(engine.command("rmi", other), capture_output=True, env=dict(environ))  # in use: kept
    return tag


def _mode(path: Path) -> int:
    return 0o555 if os.access(path, os.X_OK) else 0o444


def _write_workspace(out: BinaryIO, root: Path, files: list[Path]) -> None:
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add_dir(tar, WORKSPACE, 0o555)
        made: set[str] = set()
        for path in files:
            relative = path.relative_to(root)
            for depth in range(1, len(relative.parts)):
                folder = "/".join(relative.parts[:depth])
                if folder not in made:
                    made.add(folder)
                    _add_dir(tar, f"{WORKSPACE}/{folder}", 0o555)
            info = tar.gettarinfo(str(path), arcname=f"{WORKSPACE.lstrip('/')}/{relative.as_posix()}")
            info.type, info.uid, info.gid, info.uname, info.gname = tarfile.REGTYPE, 0, 0, "", ""
            info.mode = _mode(path)
            with path.open("rb") as source:
                tar.addfile(info, source)
        if "node_modules" not in made:
            link = tarfile.TarInfo(f"{WORKSPACE.lstrip('/')}/node_modules")
            link.type, link.linkname, link.mode = tarfile.SYMTYPE, NODE_MODULES, 0o777
            tar.addfile(link)
        _add_dir(tar, STATE, 0o777)  # a volume there starts as a copy: open to any user
        _add_dir(tar, TRUST, 0o755)


def _add_dir(tar: tarfile.TarFile, path: str, mode: int) -> None:
    info = tarfile.TarInfo(path.lstrip("/"))
    info.type, info.mode = tarfile.DIRTYPE, mode
    tar.addfile(info)


def _run(engine: Engine, args: list[str], environ: Mapping[str, str], stdin: BinaryIO | None = None) -> str:
    try:
        answer = subprocess.run(engine.command(*args), capture_output=True, text=False, stdin=stdin,
                                timeout=ENGINE_TIMEOUT_S, env=dict(environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ContainerRefused(f"error[CONTAINER_ENGINE]: `{engine.name} {args[0]}` did not finish: {exc}\n"
                               f"hint: check that the engine runs (`{engine.name} info`)") from exc
    if answer.returncode != 0:
        said = answer.stderr.decode(errors="replace").strip().splitlines()
        raise ContainerRefused(f"error[CONTAINER_ENGINE]: `{engine.name} {args[0]}` failed while preparing the "
                               f"agent's files: {said[-1] if said else answer.returncode}\n"
                               f"hint: check that the engine runs (`{engine.name} info`)")
    return answer.stdout.decode(errors="replace")
