"""Container agents (``agent.execution.mode: container``): each agent process in a local container.

Once per run (``ContainerExecution.prepare``): the engine (``container_engine``), the image
(local only, rebuilt first with ``preparation: project`` when its build inputs changed) and
the project files the agent gets (``workspace_files``). Per trial (``ContainerTrial``): a
network namespace in which only Ancha's endpoints answer (``container_network``), the
trial's URLs as the agent reaches them, and its variables. Per agent process
(``ContainerAgent``): ``create`` (never pulling), the files copied in, ``start --attach``
with the output in ``agent.log``, then ``/state`` copied out to the trial's ``state/``
folder and the container removed.

The container runs as a non-root user with a read-only root, no capabilities, no new
privileges, no host folder and no engine socket; ``/state`` is an engine volume removed
with it. Values of ``agent.execution.env`` go to the engine by name only (``-e NAME``),
so they appear in no command line, log or run folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import io
import os
import secrets
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ancha.config.model import AnchaConfig, ExecutionConfig
from ancha.errors import RunFailed
from ancha.runner.agents.command import CHUNK, DRAIN_DEADLINE_S, LogSink
from ancha.runner.agents.container_engine import Engine, find_engine
from ancha.runner.agents.container_network import (
    Enclosure,
    Endpoint,
    NetworkUnavailable,
    add_hosts,
    isolation_problem,
    plan_endpoints,
    rewrite_url,
)
from ancha.runner.agents.environment import ancha_variables, template_values
from ancha.runner.agents.workspace_files import ancha_paths, select_files

WORKSPACE = "/workspace"
STATE = "/state"
NODE_MODULES = "/opt/ancha/node_modules"
CA_FILE = "/etc/ancha/ca.pem"
DEFAULT_USER = "65534:65534"
"""``nobody``, when the image names no non-root user of its own."""
BUILD_LABEL = "ancha.build-hash"
BUILD_FILES = ("Containerfile", "Dockerfile")
STOP_GRACE_S = 2
ENGINE_TIMEOUT_S = 120.0
ENGINE_OWN_VARIABLES = frozenset({"PATH", "HOME", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                  "CONTAINER_HOST", "CONTAINERS_CONF", "DOCKER_HOST", "DOCKER_CONFIG",
                                  "LD_LIBRARY_PATH", "LD_PRELOAD"})
"""Variables the engine's own CLI reads: these go to the container as NAME=VALUE, the rest by name."""


class ContainerRefused(RunFailed):
    """A container run that cannot be carried out here (exit 3), with what to do."""


def container_refusal(config: AnchaConfig) -> RunFailed | None:
    """What a container agent cannot do in this version, or None."""
    agent = config.agent
    if agent is None or agent.execution.mode != "container":
        return None
    if agent.kind == "endpoint":
        return ContainerRefused(
            "error[AGENT_UNSUPPORTED]: agent.execution mode container runs command agents (agent.command); "
            "endpoint agents (agent.url) are not supported in containers yet\nhint: run the endpoint agent as a "
            "local process (remove agent.execution), or make it a command agent that reads the event feed")
    return None


@dataclass
class ContainerExecution:
    """What every container trial of a run shares."""

    engine: Engine
    image: str
    user: str
    root: Path
    files: list[Path]
    execution: ExecutionConfig
    endpoints: list[Endpoint] = field(default_factory=list)
    """Endpoints besides the server's that agents may reach, such as the model gateway."""
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    @classmethod
    def prepare(cls, config: AnchaConfig, scene_paths: Iterable[str], *, environ: Mapping[str, str] | None = None,
                endpoints: Iterable[str | Endpoint] = ()) -> ContainerExecution:
        """Engine, image and files, checked before any trial starts: a problem stops the run
        (exit 3; exit 2 for ``files``), and nothing ever falls back to a host process."""
        environ = os.environ if environ is None else environ
        agent = config.agent
        assert agent is not None
        refusal = container_refusal(config)
        if refusal is not None:
            raise refusal
        engine = find_engine(environ)
        if engine.name != "podman":
            raise ContainerRefused(
                f"error[CONTAINER_ENGINE]: {engine.name} {engine.version} answers, but this version of ancha "
                "isolates container agents' network with podman only\nhint: install podman (it needs no daemon), "
                "or set ANCHA_CONTAINER_ENGINE=podman when both are installed")
        problem = isolation_problem()
        if problem is not None:
            raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: {problem}\nhint: run ancha as root on Linux "
                                     "(as in CI), or use mode: host; the agent is never run with an open network")
        execution = agent.execution
        image = execution.image or ""
        if execution.preparation == "project":
            build_image(engine, image, config.root, environ)
        user = image_user(engine, image, environ)
        scene_paths = list(scene_paths)
        excluded = ancha_paths(config.root, config.source, scene_paths, config.scenes)
        files = select_files(config.root, execution.files, excluded)
        parsed = [e if isinstance(e, Endpoint) else Endpoint.parse(e) for e in endpoints]
        return cls(engine, image, user, config.root.resolve(), files, execution, parsed, environ)

    def trial(self, context: Mapping[str, Any], state_dir: Path) -> ContainerTrial:
        """A trial's containers: the endpoints they may reach (every URL of the trial's context,
        and ``endpoints``) and where each answers inside."""
        wanted = [e for url in _urls(context) if (e := Endpoint.of_url(url)) is not None]
        plan = plan_endpoints([*wanted, *self.endpoints])
        return ContainerTrial(self, plan, _rewritten(context, plan), state_dir)


@dataclass
class ContainerTrial:
    """One trial's containers: its network, its URLs as the agent reaches them, its ``/state``."""

    execution: ContainerExecution
    plan: dict[Endpoint, Endpoint]
    """Each endpoint the agent may reach -> where it answers inside (``container_network``)."""
    context: dict[str, Any]
    """The trial's context with every URL rewritten for the inside."""
    state_dir: Path

    def template_values(self) -> dict[str, str]:
        return template_values(self.context)

    def environment(self) -> dict[str, str]:
        """The agent's variables inside, before ``agent.env`` (which wins): Ancha's, ``HOME``, the
        trusted CA and the shell's values of ``execution.env``. No other variable of the host's."""
        env = ancha_variables(self.context, STATE)
        env["HOME"] = "/tmp"
        if (self.context.get("tls") or {}).get("ca_pem"):
            env.update({"SSL_CERT_FILE": CA_FILE, "REQUESTS_CA_BUNDLE": CA_FILE, "NODE_EXTRA_CA_CERTS": CA_FILE})
        for name in self.execution.execution.env:
            if name in self.execution.environ:
                env[name] = self.execution.environ[name]
        return env

    def agent(self, command: str, cwd: Path, env: dict[str, str], log: LogSink) -> ContainerAgent:
        """An agent process in a container (``cwd`` is /workspace inside): ``CommandAgent``'s stand-in."""
        return ContainerAgent(self, command, env, log)


class ContainerAgent:
    """One agent process in its own container; the same surface as ``CommandAgent``."""

    def __init__(self, trial: ContainerTrial, command: str, env: dict[str, str], log: LogSink) -> None:
        self.trial = trial
        self.command = command
        self.env = env
        self.log = log
        self.name = f"ancha-{secrets.token_hex(6)}"
        self.process: asyncio.subprocess.Process | None = None
        self.created = False
        self.enclosure: Enclosure | None = None
        self._copying: asyncio.Future[None] | None = None

    @property
    def engine(self) -> Engine:
        return self.trial.execution.engine

    def create_arguments(self, network: str) -> list[str]:
        """``create`` with the isolation and limits; variable values are not in it (see the module)."""
        execution = self.trial.execution
        limits = execution.execution
        args = ["create", *self.engine.run_flags, "--pull=never", "--name", self.name, "--user", execution.user,
                "--read-only", "--cap-drop=ALL", "--security-opt", "no-new-privileges",
                "--network", network,
                "--mount", f"type=volume,destination={STATE}", "--workdir", WORKSPACE,
                "--cpus", f"{limits.cpus:g}", "--memory", f"{limits.memory_mb}m", "--pids-limit", str(limits.pids)]
        for host, address in add_hosts(self.trial.plan):
            args += ["--add-host", f"{host}:{address}"]
        for name, value in sorted(self.env.items()):
            args += ["-e", f"{name}={value}" if name in ENGINE_OWN_VARIABLES else name]
        return [*args, execution.image, "/bin/sh", "-c", self.command]

    def _engine_environment(self) -> dict[str, str]:
        own = {k: v for k, v in self.trial.execution.environ.items() if k in ENGINE_OWN_VARIABLES}
        return {**{k: v for k, v in self.env.items() if k not in ENGINE_OWN_VARIABLES}, **own}

    async def start(self) -> None:
        from ancha.runner.agents.command import AgentNotStarted

        try:
            self.enclosure = await Enclosure.open(self.trial.plan)
            await _engine(self.engine, self.create_arguments(f"ns:{self.enclosure.path}"),
                          environ=self._engine_environment())
            self.created = True
            with tempfile.TemporaryFile() as files:
                await asyncio.to_thread(self._write_files, files)
                files.seek(0)
                await _engine(self.engine, ["cp", "-", f"{self.name}:/"], stdin=files)
        except RunFailed as exc:
            raise AgentNotStarted(str(exc)) from exc
        read_end, write_end = os.pipe()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.engine.command("start", "--attach", self.name), stdin=asyncio.subprocess.DEVNULL,
                stdout=write_end, stderr=asyncio.subprocess.STDOUT, env=dict(self.trial.execution.environ),
                start_new_session=True)
        except OSError as exc:
            os.close(read_end)
            raise AgentNotStarted(f"the container could not be started: {exc}") from exc
        finally:
            os.close(write_end)
        reader = asyncio.StreamReader(limit=CHUNK)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_end, "rb", buffering=0))
        self._copying = asyncio.ensure_future(self._copy(reader, transport))

    async def _copy(self, output: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        try:
            while chunk := await output.read(CHUNK):
                self.log.write(chunk)
        finally:
            transport.close()

    def _write_files(self, out: BinaryIO) -> None:
        """The tar copied to ``/``: the project files at /workspace (read-only), the
        node_modules link, the trial's ``state/`` so far (per-event agents keep it), the CA."""
        trial = self.trial
        with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            _add_dir(tar, WORKSPACE, 0o555)
            made: set[str] = set()
            for path in trial.execution.files:
                relative = path.relative_to(trial.execution.root)
                for depth in range(1, len(relative.parts)):
                    folder = "/".join(relative.parts[:depth])
                    if folder not in made:
                        made.add(folder)
                        _add_dir(tar, f"{WORKSPACE}/{folder}", 0o555)
                info = tar.gettarinfo(str(path), arcname=f"{WORKSPACE.lstrip('/')}/{relative.as_posix()}")
                info.type, info.uid, info.gid, info.uname, info.gname = tarfile.REGTYPE, 0, 0, "", ""
                info.mode = 0o555 if os.access(path, os.X_OK) else 0o444
                with path.open("rb") as source:
                    tar.addfile(info, source)
            if "node_modules" not in made:
                link = tarfile.TarInfo(f"{WORKSPACE.lstrip('/')}/node_modules")
                link.type, link.linkname, link.mode = tarfile.SYMTYPE, NODE_MODULES, 0o777
                tar.addfile(link)
            _add_dir(tar, STATE, 0o777)
            if trial.state_dir.is_dir():
                for path in sorted(trial.state_dir.rglob("*")):
                    arcname = f"{STATE.lstrip('/')}/{path.relative_to(trial.state_dir).as_posix()}"
                    if path.is_dir() and not path.is_symlink():
                        _add_dir(tar, "/" + arcname, 0o777)
                    elif path.is_file() and not path.is_symlink():
                        info = tar.gettarinfo(str(path), arcname=arcname)
                        info.mode = 0o666
                        with path.open("rb") as source:
                            tar.addfile(info, source)
            ca_pem = (trial.context.get("tls") or {}).get("ca_pem")
            if ca_pem:
                _add_dir(tar, str(Path(CA_FILE).parent), 0o555)
                data = str(ca_pem).encode()
                info = tarfile.TarInfo(CA_FILE.lstrip("/"))
                info.size, info.mode = len(data), 0o444
                tar.addfile(info, io.BytesIO(data))

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def stop(self) -> None:
        """Stop the container (politely first), copy ``/state`` out, remove it with its volume."""
        if not self.created:
            if self.enclosure is not None:
                await self.enclosure.close()
            return
        engine = self.engine
        try:
            if self.process is not None and self.process.returncode is None:
                with contextlib.suppress(RunFailed):
                    await _engine(engine, ["stop", "--time", str(STOP_GRACE_S), self.name])
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.process.wait(), ENGINE_TIMEOUT_S)
            if self._copying is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._copying, DRAIN_DEADLINE_S)
            state = self.trial.state_dir
            state.mkdir(parents=True, exist_ok=True)
            try:
                await _engine(engine, ["cp", f"{self.name}:{STATE}/.", str(state)])
            except RunFailed as exc:
                self.log.write(f"ancha: {STATE} could not be copied out of the container: {exc}\n".encode())
        finally:
            with contextlib.suppress(RunFailed):
                await _engine(engine, ["rm", "--force", "--volumes", self.name])
            if self.process is not None and self.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
            if self.enclosure is not None:
                await self.enclosure.close()


def _add_dir(tar: tarfile.TarFile, path: str, mode: int) -> None:
    info = tarfile.TarInfo(path.lstrip("/"))
    info.type, info.mode = tarfile.DIRTYPE, mode
    tar.addfile(info)


async def _engine(engine: Engine, args: list[str], *, environ: Mapping[str, str] | None = None,
                  stdin: BinaryIO | None = None) -> str:
    """Run one engine command to its end; RunFailed with the engine's last line of error when it fails."""
    process = await asyncio.create_subprocess_exec(
        *engine.command(*args), stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ if environ is None else environ))
    try:
        out, err = await asyncio.wait_for(process.communicate(), ENGINE_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise RunFailed(f"`{engine.name} {args[0]}` did not finish in {ENGINE_TIMEOUT_S:g}s") from None
    if process.returncode != 0:
        said = err.decode(errors="replace").strip().splitlines()
        raise RunFailed(f"`{engine.name} {args[0]}` failed: {said[-1] if said else f'exit {process.returncode}'}")
    return out.decode(errors="replace")


def _urls(context: Any) -> Iterable[str]:
    if isinstance(context, dict):
        for value in context.values():
            yield from _urls(value)
    elif isinstance(context, list):
        for value in context:
            yield from _urls(value)
    elif isinstance(context, str) and context.startswith(("http://", "https://")):
        yield context


def _rewritten(context: Any, plan: Mapping[Endpoint, Endpoint]) -> Any:
    if isinstance(context, dict):
        return {k: _rewritten(v, plan) for k, v in context.items()}
    if isinstance(context, list):
        return [_rewritten(v, plan) for v in context]
    if isinstance(context, str) and context.startswith(("http://", "https://")):
        return rewrite_url(context, plan)
    return copy.copy(context)


# --- the image ---------------------------------------------------------------------------


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
    if _inspect(engine, image, "{{index .Labels \"" + BUILD_LABEL + "\"}}", environ) == digest:
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
