"""Container agents (``agent.execution.mode: container``): each agent process in a local container.

Once per run (``ContainerExecution.prepare``): the engine (``container_engine``), the image
(local only, rebuilt first with ``preparation: project`` when its build inputs changed) and
the project files the agent gets (``workspace_files``), committed into a workspace image
(``container_images``). Per trial (``ContainerTrial``): the endpoints the agent may
reach, the trial's URLs as it reaches them, and its variables. Per agent process
(``ContainerAgent``): a network namespace in which only those endpoints answer
(``container_network``: made before the container on podman, the container's own on
Docker), ``create`` (never pulling), the trial's ``state/`` and the server's CA copied
into the container's volumes through the engine, ``start --attach`` with the output in
``agent.log``, then ``/state`` copied back to the trial's ``state/`` folder as an archive
of regular files and folders (``container_state``: no link is ever followed on the host)
and the container removed with its volumes.

The container runs as a non-root user with a read-only root, no capabilities, no new
privileges, no host folder, no engine socket and no way to make a namespace
(``container_seccomp``); ``/state`` is an engine volume removed with it. Containers and
volumes are marked with their runner, so what a killed runner left is removed later
(``container_leftovers``). The agent's variables (the trial's tokens, ``agent.execution.env``) reach the
engine in an env file only this user can read, deleted once the container is made, so they
appear in no command line, process environment, log or run folder. A value an env file
cannot hold (one with a line break, or longer than the engines read in a line) goes by
name (``-e NAME``) from the engine CLI's environment instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import secrets
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ancha.config.model import AnchaConfig, ExecutionConfig
from ancha.errors import RunFailed
from ancha.runner.agents.command import CHUNK, DRAIN_DEADLINE_S, LogSink
from ancha.runner.agents.container_engine import Engine, no_engine_answers, probe_engines
from ancha.runner.agents.container_images import (
    ENGINE_TIMEOUT_S,
    STATE,
    TRUST,
    WORKSPACE,
    ContainerRefused,
    build_image,
    image_user,
    workspace_image,
)
from ancha.runner.agents.container_leftovers import (
    RUNNER_LABEL,
    clean_engine,
    clean_host,
    mark_container_run,
    owner_labels,
    volume_name,
)
from ancha.runner.agents.container_network import (
    Enclosure,
    Endpoint,
    NetworkUnavailable,
    add_hosts,
    choose_engine,
    network_hint,
    plan_endpoints,
    rewrite_url,
)
from ancha.runner.agents.container_seccomp import seccomp_profile
from ancha.runner.agents.container_state import copy_files_in, copy_in, copy_out
from ancha.runner.agents.environment import EVENT_FILE, ancha_variables, template_values
from ancha.runner.agents.real_hostnames import ca_pems, hostnames_of, proxy_variables
from ancha.runner.agents.workspace_files import ancha_paths, select_files
from ancha.runner.agents.world_clock import CLOCK_IN_CONTAINER, IN_CONTAINER, clock_variables

CA_FILE = f"{TRUST}/ca.pem"
TRUST_STORE = "/etc/ssl/certs"
STORE_FILE = "ca-certificates.crt"
"""With real hostnames the container's trust store is Ancha's CAs alone (it reaches no other host):
``/etc/ssl/certs/ca-certificates.crt``, the bundle of Debian, Ubuntu and Alpine, which their
OpenSSL, curl, git and Python read by default."""
HTTPS_PORT = 443
EVENT_INSIDE = f"{TRUST}/event.json"
"""A per-event agent's ``ANCHA_EVENT_FILE`` inside: a copy of the host's, in the container's own volume."""
__all__ = ["RUNNER_LABEL", "ContainerAgent", "ContainerExecution", "ContainerTrial", "container_refusal"]
STOP_GRACE_S = 2
ENGINE_OWN_VARIABLES = frozenset({"PATH", "HOME", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                  "CONTAINER_HOST", "CONTAINERS_CONF", "DOCKER_HOST", "DOCKER_CONFIG",
                                  "LD_LIBRARY_PATH", "LD_PRELOAD"})
"""Variables the engine's own CLI reads: never passed by name (the CLI's own value would go)."""
ENV_FILE_LINE_MAX = 32 * 1024
"""Longer values go by name: the engines read env files a line at a time, up to 64 KiB."""
WAIT_FOR_NETWORK = 'read -r go && [ "$go" = go ] && exec /bin/sh -c "$1"; exit 125'
"""Docker: the container's first step, until the runner has opened Ancha's endpoints inside."""


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
    """The user's image; containers run ``run_image``, the same with the agent's files."""
    run_image: str
    user: str
    root: Path
    files: list[Path]
    execution: ExecutionConfig
    endpoints: list[Endpoint] = field(default_factory=list)
    """Endpoints besides the server's that agents may reach, such as the model gateway."""
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    seccomp: Path | None = None
    """``--security-opt seccomp=PATH`` (``container_seccomp``), or None for the engine's own."""

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
        probes = probe_engines(environ)
        chosen, problem = choose_engine(probes, environ.get("PATH"))
        if chosen is None or chosen.engine is None:
            raise no_engine_answers(probes)
        engine = chosen.engine
        if engine.limits_problem is not None:
            raise ContainerRefused(f"error[CONTAINER_ENGINE]: {problem}\nhint: {network_hint(engine)}")
        if problem is not None:
            raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: {problem}\nhint: {network_hint(engine)}")
        clean_host()
        clean_engine(engine, environ)  # what runners killed mid-trial left
        mark_container_run(engine)
        seccomp = seccomp_profile(engine, environ)
        if seccomp is None and engine.name == "podman":
            raise ContainerRefused("error[CONTAINER_ENGINE]: the agent's seccomp profile could not be written to "
                                   f"{tempfile.gettempdir()}\nhint: check that this user can make a private folder "
                                   "there (TMPDIR); agents never run with user namespaces open")
        execution = agent.execution
        image = execution.image or ""
        if execution.preparation == "project":
            build_image(engine, image, config.root, environ)
        user = image_user(engine, image, environ)
        scene_paths = list(scene_paths)
        excluded = ancha_paths(config.root, config.source, scene_paths, config.scenes)
        root = config.root.resolve()
        files = select_files(root, execution.files, excluded)
        run_image = workspace_image(engine, image, root, files, environ)
        parsed = [e if isinstance(e, Endpoint) else Endpoint.parse(e) for e in endpoints]
        return cls(engine, image, run_image, user, root, files, execution, parsed, environ, seccomp)

    def trial(self, context: Mapping[str, Any], state_dir: Path,
              clock: tuple[Path, Path] | None = None) -> ContainerTrial:
        """A trial's containers: the endpoints they may reach (every URL of the trial's context,
        and ``endpoints``) and where each answers inside. ``clock``: the host's libfaketime and the
        world's clock file's folder, mounted read-only so that the agent's clock reads the world's."""
        wanted = [e for url in _urls(context) if (e := Endpoint.of_url(url)) is not None]
        hostnames = hostnames_of(context)
        if hostnames is not None:  # agent.hostnames: real: the proxy at its own port, the TLS port at :443
            wanted.append(Endpoint.parse(hostnames["proxy"]))
        plan = plan_endpoints([*wanted, *self.endpoints])
        if hostnames is not None:
            plan[Endpoint.parse(hostnames["tls"])] = Endpoint("127.0.0.1", HTTPS_PORT)
        return ContainerTrial(self, plan, _rewritten(context, plan), state_dir, clock=clock)


@dataclass
class ContainerTrial:
    """One trial's containers: its network, its URLs as the agent reaches them, its ``/state``."""

    execution: ContainerExecution
    plan: dict[Endpoint, Endpoint]
    """Each endpoint the agent may reach -> where it answers inside (``container_network``)."""
    context: dict[str, Any]
    """The trial's context with every URL rewritten for the inside."""
    state_dir: Path
    state_cut: dict[str, Any] | None = None
    """What of ``/state`` did not fit its cap (``StateCopy.record``), when it was cut."""
    clock: tuple[Path, Path] | None = None
    """The host's libfaketime and the world's clock file (``world_clock``), or None: the wall clock."""

    def template_values(self) -> dict[str, str]:
        return template_values(self.context)

    @property
    def hostnames(self) -> dict[str, Any] | None:
        """The interceptor of ``agent.hostnames: real`` (``real_hostnames.hostnames_of``), or None."""
        return hostnames_of(self.context)

    def environment(self) -> dict[str, str]:
        """The agent's variables inside, before ``agent.env`` (which wins): Ancha's, ``HOME``, the
        trusted CA and the shell's values of ``execution.env``. No other variable of the host's.
        With real hostnames, also the proxy (a client that ignores it is intercepted on :443 anyway)."""
        env = ancha_variables(self.context, STATE)
        env["HOME"] = "/tmp"
        if ca_pems(self.context):
            env.update({"SSL_CERT_FILE": CA_FILE, "REQUESTS_CA_BUNDLE": CA_FILE, "NODE_EXTRA_CA_CERTS": CA_FILE})
        hostnames = self.hostnames
        if hostnames is not None:
            proxy = self.plan[Endpoint.parse(hostnames["proxy"])]
            env.update(proxy_variables(f"http://{proxy.host}:{proxy.port}", {}))
            env.update({"CURL_CA_BUNDLE": CA_FILE, "GIT_SSL_CAINFO": CA_FILE, "NODE_USE_ENV_PROXY": "1"})
        for name in self.execution.execution.env:
            if name in self.execution.environ:
                env[name] = self.execution.environ[name]
        if self.clock is not None:
            env.update(clock_variables(IN_CONTAINER, f"{CLOCK_IN_CONTAINER}/{self.clock[1].name}"))
        return env

    def clock_mounts(self) -> list[str]:
        """``--mount`` arguments of the host's libfaketime and the world's clock folder, read-only."""
        if self.clock is None:
            return []
        library, file = self.clock
        folder = file.parent  # the folder, not the file: the world replaces the file at each jump
        return ["--mount", f"type=bind,source={library},destination={IN_CONTAINER},ro=true",
                "--mount", f"type=bind,source={folder},destination={CLOCK_IN_CONTAINER},ro=true"]

    def agent(self, command: str, cwd: Path, env: dict[str, str], log: LogSink) -> ContainerAgent:
        """An agent process in a container (``cwd`` is /workspace inside): ``CommandAgent``'s stand-in."""
        return ContainerAgent(self, command, env, log)


class ContainerAgent:
    """One agent process in its own container; the same surface as ``CommandAgent``."""

    def __init__(self, trial: ContainerTrial, command: str, env: dict[str, str], log: LogSink) -> None:
        self.trial = trial
        self.command = command
        self.event_file = env.get(EVENT_FILE)
        """The host's event file of a per-event agent, copied in at ``EVENT_INSIDE``."""
        self.env = env if self.event_file is None else {**env, EVENT_FILE: EVENT_INSIDE}
        self.log = log
        self.name = f"ancha-{secrets.token_hex(6)}"
        self.process: asyncio.subprocess.Process | None = None
        self.created = False
        self.enclosure: Enclosure | None = None
        self.volume_names = [volume_name(self.name, "state")]
        if self.ca_pem or self.event_file:
            self.volume_names.append(volume_name(self.name, "trust"))
        self.store_volume = volume_name(self.name, "certs") if trial.hostnames is not None else None
        """With real hostnames: the container's trust store (``TRUST_STORE``), holding Ancha's CAs alone."""
        if self.store_volume is not None:
            self.volume_names.append(self.store_volume)
        self._copying: asyncio.Future[None] | None = None

    @property
    def engine(self) -> Engine:
        return self.trial.execution.engine

    @property
    def ca_pem(self) -> str | None:
        """Every CA the agent trusts: the server's TLS listener's, and the vendor hostnames' ones."""
        return "".join(ca_pems(self.trial.context)) or None

    @property
    def docker(self) -> bool:
        return self.engine.name == "docker"

    def create_arguments(self, network: str, env_file: str | None = None) -> list[str]:
        """``create`` with the isolation and limits; no variable's value is in it (see the module)."""
        execution = self.trial.execution
        limits = execution.execution
        args = ["create", *self.engine.run_flags, "--pull=never", "--name", self.name,
                *(a for label in owner_labels() for a in ("--label", label)), "--user", execution.user,
                "--read-only", "--cap-drop=ALL", "--security-opt", "no-new-privileges", "--network", network,
                "--mount", f"type=volume,source={self.volume_names[0]},destination={STATE}", "--workdir", WORKSPACE,
                "--cpus", f"{limits.cpus:g}", "--memory", f"{limits.memory_mb}m", "--pids-limit", str(limits.pids)]
        if self.docker:
            args.append("--interactive")  # the runner's go-ahead comes on stdin (WAIT_FOR_NETWORK)
            # podman mounts a tmpfs at /tmp under --read-only itself; Docker needs telling (HOME is /tmp)
            args += ["--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777"]
        # Docker refuses a read-only anonymous volume: there, root owning it keeps the agent out
        if execution.seccomp is not None:
            args += ["--security-opt", f"seccomp={execution.seccomp}"]
        if len(self.volume_names) > 1:
            args += ["--mount", f"type=volume,source={self.volume_names[1]},destination={TRUST}"
                     + ("" if self.docker else ",ro=true")]
        if self.store_volume is not None:
            args += ["--mount", f"type=volume,source={self.store_volume},destination={TRUST_STORE}"
                     + ("" if self.docker else ",ro=true")]
        args += self.trial.clock_mounts()
        for host, address in add_hosts(self.trial.plan):
            args += ["--add-host", f"{host}:{address}"]
        for host in (self.trial.hostnames or {}).get("hosts", []):  # the vendors' names lead to :443 inside
            args += ["--add-host", f"{host}:127.0.0.1"]
        if env_file is not None:
            args += ["--env-file", env_file]
        for name, value in sorted(self._by_name().items()):
            args += ["-e", f"{name}={value}" if name in ENGINE_OWN_VARIABLES else name]
        command = ["/bin/sh", "-c", self.command]
        if self.docker:
            command = ["/bin/sh", "-c", WAIT_FOR_NETWORK, "ancha-agent", self.command]
        return [*args, execution.run_image, *command]

    def _in_env_file(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if _fits_env_file(v)}

    def _by_name(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if not _fits_env_file(v)}

    def _engine_environment(self) -> dict[str, str]:
        own = {k: v for k, v in self.trial.execution.environ.items() if k in ENGINE_OWN_VARIABLES}
        return {**{k: v for k, v in self._by_name().items() if k not in ENGINE_OWN_VARIABLES}, **own}

    def _write_env_file(self) -> str:
        """The variables an env file can hold, in a file only this user can read (``mkstemp``: 0600)."""
        fd, path = tempfile.mkstemp(prefix="ancha-env-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(f"{name}={value}\n" for name, value in sorted(self._in_env_file().items()))
        return path

    async def _create(self, network: str) -> None:
        env_file = await asyncio.to_thread(self._write_env_file)
        try:
            await _engine(self.engine, self.create_arguments(network, env_file), environ=self._engine_environment())
        finally:
            with contextlib.suppress(OSError):
                os.unlink(env_file)
        self.created = True

    async def start(self) -> None:
        from ancha.runner.agents.command import AgentNotStarted

        try:
            await self._prepare()
        except BaseException as exc:  # nothing of a container that never ran is left behind
            await asyncio.shield(self._remove())
            if isinstance(exc, (RunFailed, OSError)):
                raise AgentNotStarted(str(exc)) from exc
            raise
        try:
            await self._start()
        except BaseException:
            await asyncio.shield(self._remove())
            raise

    async def _prepare(self) -> None:
        """The container made, with the trial's ``state/`` and the trust files in it (not started)."""
        execution = self.trial.execution
        if self.docker:
            await self._create("none")
        else:
            self.enclosure = await (
                Enclosure.open_rootless(self.trial.plan, self.engine, execution.environ) if self.engine.rootless
                else Enclosure.open(self.trial.plan))
            await self._create(f"ns:{self.enclosure.path}")
        await copy_in(self.engine, self.name, self.trial.state_dir, execution.environ)
        trust: dict[str, bytes] = {}
        if self.ca_pem:
            trust[Path(CA_FILE).name] = self.ca_pem.encode()
        if self.event_file:  # in this container's volume only; the agent's user reads it
            with open(self.event_file, "rb") as event:
                trust[Path(EVENT_INSIDE).name] = event.read()
        if trust:
            await copy_files_in(self.engine, self.name, TRUST, trust, execution.environ)
        if self.store_volume is not None and self.ca_pem:  # where OpenSSL, curl and git look by default
            await copy_files_in(self.engine, self.name, TRUST_STORE, {STORE_FILE: self.ca_pem.encode()},
                                execution.environ)

    async def _start(self) -> None:
        from ancha.runner.agents.command import AgentNotStarted

        execution = self.trial.execution
        read_end, write_end = os.pipe()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.engine.command("start", "--attach", *(["--interactive"] if self.docker else []), self.name),
                stdin=asyncio.subprocess.PIPE if self.docker else asyncio.subprocess.DEVNULL,
                stdout=write_end, stderr=asyncio.subprocess.STDOUT, env=dict(execution.environ),
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
        if self.docker:
            try:
                await self._open_network_inside()
            except (RunFailed, OSError) as exc:
                raise AgentNotStarted(str(exc)) from exc

    async def _open_network_inside(self) -> None:
        """Docker: Ancha's endpoints inside the running container's namespace, then the go-ahead."""
        assert self.process is not None and self.process.stdin is not None
        deadline = time.monotonic() + ENGINE_TIMEOUT_S
        pid = 0
        while not pid:
            if self.process.returncode is not None or time.monotonic() > deadline:
                raise NetworkUnavailable(f"error[CONTAINER_NETWORK]: the container {self.name} did not start "
                                         f"(`{self.engine.name} start` exit {self.process.returncode})\n"
                                         f"hint: see agent.log, and check that the engine runs (`docker info`)")
            said = await _engine(self.engine, ["container", "inspect", "--format", "{{.State.Pid}}", self.name],
                                 environ=self.trial.execution.environ)
            pid = int(said.strip() or 0)
        self.enclosure = await Enclosure.enter(self.trial.plan, f"/proc/{pid}/ns/net")
        self.process.stdin.write(b"go\n")
        await self.process.stdin.drain()
        self.process.stdin.close()

    async def _copy(self, output: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        try:
            while chunk := await output.read(CHUNK):
                self.log.write(chunk)
        finally:
            transport.close()

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def stop(self) -> None:
        """Stop the container (politely first), copy ``/state`` out, remove it with its volumes."""
        try:
            if not self.created:
                return
            if self.process is not None and self.process.returncode is None:
                with contextlib.suppress(RunFailed):
                    await _engine(self.engine, ["stop", "--time", str(STOP_GRACE_S), self.name])
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.process.wait(), ENGINE_TIMEOUT_S)
            if self._copying is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._copying, DRAIN_DEADLINE_S)
            try:
                copied = await copy_out(self.engine, self.name, self.volume_names[0], self.trial.state_dir,
                                        self.trial.execution.environ)
            except (RunFailed, OSError) as exc:
                self.log.write(f"ancha: {STATE} could not be copied out of the container: {exc}\n".encode())
            else:
                for line in copied.notes():
                    self.log.write(f"{line}\n".encode())
                if copied.record() is not None:
                    self.trial.state_cut = copied.record()
        finally:
            await asyncio.shield(self._remove())

    async def _remove(self) -> None:
        """The container with its volumes, the engine's CLI attached to it and its namespace."""
        if self.created:
            with contextlib.suppress(RunFailed):
                await _engine(self.engine, ["rm", "--force", "--volumes", self.name])
            self.created = False
        with contextlib.suppress(RunFailed):  # named volumes outlive `rm --volumes`; never made: nothing to do
            await _engine(self.engine, ["volume", "rm", "--force", *self.volume_names])
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        if self.enclosure is not None:
            enclosure, self.enclosure = self.enclosure, None
            await enclosure.close()


async def _engine(engine: Engine, args: list[str], *, environ: Mapping[str, str] | None = None) -> str:
    """Run one engine command to its end; RunFailed with the engine's last line of error when it fails."""
    process = await asyncio.create_subprocess_exec(
        *engine.command(*args), stdin=asyncio.subprocess.DEVNULL,
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


def _fits_env_file(value: str) -> bool:
    """Whether an env file line holds ``value`` as it is (the engines split lines at \\n and drop a \\r)."""
    return len(value) <= ENV_FILE_LINE_MAX and not any(c in value for c in "\n\r\0")


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
