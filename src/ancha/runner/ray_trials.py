"""Trials as Ray tasks (``ancha run --ray``, or ``ray:`` in ancha.yaml).

The driver (``ancha run``) ships the project's files once as the job's ``working_dir``
(``ray_files.py``), then submits one task per trial. On its worker a task runs the trial
exactly as a local run does: the world in an Ancha server in the worker process (one per
process, started on its first trial and kept for the next), the agent as a process of
that node, the same ``TrialRunner`` grading it. The task sends the trial's folder back
as one compressed archive; the driver unpacks it into the run folder, so the run folder,
the progress bar and the summary are those of a local run.

A task is never retried by Ray (``max_retries=0``): a worker or node that dies makes its
trial invalid, with the reason, and ``--retry-invalid`` decides whether it runs again.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import socket
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ancha.checks.judge import BASE_URL_VAR, KEY_VAR
from ancha.config.model import AnchaConfig
from ancha.errors import AnchaUserError, RunFailed
from ancha.results.run_folder import RunFolder, TrialFolder
from ancha.runner.ray_files import check_scenes_inside, project_files, stage
from ancha.runner.trial import TrialOutcome
from ancha.scene.model import Scene

RAY_HINT = "pip install 'ancha[ray]'"
JUDGE_VARIABLES = (KEY_VAR, BASE_URL_VAR)
"""Read by judge checks, which a trial grades on its worker: shipped from the driver's shell."""


def import_ray() -> ModuleType:
    """Ray, or a ``RunFailed`` (exit 3) telling how to install it: it is an optional extra."""
    try:
        import ray
    except ImportError as exc:
        raise RunFailed("error[RAY_MISSING]: ancha run --ray (or ray: in ancha.yaml) needs Ray, which is not "
                        f"installed here\nhint: {RAY_HINT}, or remove --ray and ray: to run the trials on "
                        "this machine") from exc
    return ray


@dataclass(frozen=True)
class RunPlan:
    """What every trial task of a run gets (put in Ray's object store once per run)."""

    config: AnchaConfig
    inherit_env: bool
    environ: dict[str, str]
    """``agent.pass_env`` and judge variables from the driver's shell: a worker's shell is not the user's."""
    scene_files: tuple[str, ...] = ()
    """Every scene file of the run, relative to the project folder (a container agent never sees them)."""
    seed: int | None = None
    """The run's seed (``summary.json``): every trial's world is drawn from it."""


class RayTrials:
    """The ``TrialExecutor`` on a Ray cluster. ``open`` connects (or starts a local Ray)."""

    def __init__(self, ray: ModuleType, run_dir: Path, plan: Any, scene_files: dict[str, str], label: str,
                 trials_at_once: int, staged: Path, cpus: float) -> None:
        self._ray = ray
        self._run_dir = run_dir
        self._plan = plan
        self._scene_files = scene_files
        self._staged = staged
        self._task = ray.remote(remote_trial).options(num_cpus=cpus, max_retries=0, retry_exceptions=False,
                                                      name="ancha-trial")
        self.server_label = label
        self.trials_at_once = trials_at_once

    @classmethod
    async def open(cls, config: AnchaConfig, run_dir: Path, scenes: list[Scene], *, inherit_env: bool,
                   seed: int | None = None) -> RayTrials:
        assert config.ray is not None
        ray = import_ray()
        scene_files = dict(zip((s.name for s in scenes), check_scenes_inside(config.root, (s.path for s in scenes)),
                               strict=True))
        staged = stage(config.root, project_files(config.root))
        address = config.ray.address
        try:
            _init(ray, address, staged)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        cpus = config.ray.cpus_per_trial
        at_once = config.trials_at_once
        if not config.parallel_given:  # as many as the cluster holds, not the local default
            at_once = max(1, int(float(ray.cluster_resources().get("CPU", 1)) // cpus))
        agent = config.agent
        names = [*(agent.pass_env if agent else ()), *JUDGE_VARIABLES]
        plan = RunPlan(config, inherit_env, {n: os.environ[n] for n in names if n in os.environ},
                       tuple(scene_files.values()), seed)
        return cls(ray, run_dir, ray.put(plan), scene_files, f"ray:{address or 'local'}", at_once, staged, cpus)

    async def run(self, scene: Scene, trial: int) -> TrialOutcome:
        ref = self._task.remote(self._plan, scene.name, self._scene_files[scene.name], scene.source_hash or "",
                                trial)
        try:
            outcome, archive = await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)  # interrupted: stop the trial (and its agent) on its worker
            raise
        except self._ray.exceptions.RayError as exc:
            return self._lost(scene, trial, exc)
        finally:
            del ref
        await asyncio.to_thread(unpack, archive, RunFolder(self._run_dir).trial(scene.name, trial).path)
        result: TrialOutcome = outcome
        return result

    def _lost(self, scene: Scene, trial: int, exc: BaseException) -> TrialOutcome:
        """A trial whose worker died, or whose files could not be set up there: invalid, with why."""
        errors = self._ray.exceptions
        never_started = isinstance(exc, errors.RuntimeEnvSetupError)
        if never_started:
            what = "the project files could not be set up on its Ray worker"
        elif isinstance(exc, errors.RayTaskError):
            what = "the trial failed on its Ray worker"
        else:
            what = "the Ray worker running the trial died"
        detail = " ".join(str(exc).split())
        reason = f"{what}: {type(exc).__name__}: {detail[:500]}"
        folder = RunFolder(self._run_dir).trial(scene.name, trial).create()
        folder.log(f"ancha: {reason}")
        folder.write_checks(scene.name, trial, "invalid", None, reason, [])
        return TrialOutcome(scene.name, trial, "invalid", reason, never_started=never_started)

    async def close(self) -> None:
        try:
            await asyncio.to_thread(self._ray.shutdown)
        finally:
            shutil.rmtree(self._staged, ignore_errors=True)


def _init(ray: ModuleType, address: str | None, staged: Path) -> None:
    """Connect to the cluster at ``address`` (None: start, or join, a local Ray), quietly."""
    options: dict[str, Any] = {"runtime_env": {"working_dir": str(staged)}, "log_to_driver": False,
                               "logging_level": logging.ERROR, "namespace": "ancha"}
    address = _checked(address)
    if address == "local":  # a Ray of this run's own
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a Ray started for this run reports nothing
        options["include_dashboard"] = False
    _quiet_worker_deaths()
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RunFailed(f"error[RAY_UNREACHABLE]: no Ray cluster could be joined at {address or 'a local Ray'}: "
                        f"{' '.join(str(exc).split())[:400]}\nhint: start one with `ray start --head` and pass "
                        "the address it prints (--ray HOST:PORT), or --ray alone for a local Ray") from exc


CLUSTER_FILE = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
"""Where ``ray start`` notes the address of the cluster it started on this machine."""
CONNECT_TIMEOUT_S = 5.0


def _checked(address: str | None) -> str | None:
    """The address to give ``ray.init``, once its head answers. Ray itself retries an address
    that does not answer for minutes, printing as it goes: a head that does not take a TCP
    connection within seconds stops the run instead. A bare ``--ray`` joins the cluster
    ``ray start`` noted here only while it answers, and otherwise starts a Ray of its own."""
    if address is None:
        if os.environ.get("RAY_ADDRESS"):
            return address if _answers(os.environ["RAY_ADDRESS"]) else _unreachable(os.environ["RAY_ADDRESS"])
        noted = _noted_cluster()  # join it while it answers; one that is gone Ray would wait for
        return noted if noted is not None and _answers(noted) else "local"
    if address == "auto":
        noted = os.environ.get("RAY_ADDRESS") or _noted_cluster()
        if noted is None:
            raise RunFailed("error[RAY_UNREACHABLE]: --ray auto found no Ray cluster on this machine (no "
                            "RAY_ADDRESS, nothing started with `ray start`)\nhint: start one with "
                            "`ray start --head`, pass its address (--ray HOST:PORT), or --ray alone for a local Ray")
        return address if _answers(noted) else _unreachable(noted)
    if address == "local":
        return address
    return address if _answers(address) else _unreachable(address)


def _noted_cluster() -> str | None:
    try:
        return CLUSTER_FILE.read_text().strip() or None
    except OSError:
        return None


def _answers(address: str) -> bool:
    hostport = address.removeprefix("ray://").rsplit("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return True  # not HOST:PORT: let Ray say what it makes of it
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def _unreachable(address: str) -> str:
    raise RunFailed(f"error[RAY_UNREACHABLE]: no Ray cluster answers at {address} (nothing took a connection "
                    f"within {CONNECT_TIMEOUT_S:g}s)\nhint: check the address `ray start --head` printed and that "
                    "this machine reaches it, or run --ray alone for a local Ray")


def _quiet_worker_deaths() -> None:
    """Ray's driver prints the raylet's error messages (a worker that died...) to stdout, where
    they would cut through the progress bar and the summary. The trial that worker ran says it
    already (its reason in checks.json and agent.log): drop those lines. Ray has no option for
    this, so its printer is wrapped; a Ray without that printer prints as it likes."""
    from ray._private import worker

    printer = getattr(worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "ancha_quiet", False):
        return

    def quiet(data: dict[str, Any], ignore_prefix: bool) -> None:
        if data.get("pid") != "raylet":
            printer(data, ignore_prefix)

    quiet.ancha_quiet = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = quiet


# --- on the worker ------------------------------------------------------------------------

_server: Any = None
_scenes: dict[tuple[str, str], Scene] = {}


def remote_trial(plan: RunPlan, scene_name: str, scene_file: str, source_hash: str,
                 trial: int) -> tuple[TrialOutcome, bytes]:
    """The task: run one trial in this worker, return its outcome and its folder (``pack``).
    The current folder is the job's ``working_dir``: the project's shipped files."""
    return asyncio.run(_remote_trial(plan, scene_name, scene_file, source_hash, trial))


async def _remote_trial(plan: RunPlan, scene_name: str, scene_file: str, source_hash: str,
                        trial: int) -> tuple[TrialOutcome, bytes]:
    from ancha.runner.control import ControlClient
    from ancha.runner.run import run_trial
    from ancha.runner.trial import TrialRunner

    root = Path.cwd()
    config = plan.config.model_copy()
    config.root = root
    os.environ.update(plan.environ)  # this worker process serves this run's job only
    run_dir = Path(tempfile.mkdtemp(prefix="ancha-trial-"))
    try:
        try:
            scene = _scene(root / scene_file, source_hash)
        except (RunFailed, OSError) as exc:
            return _not_loaded(run_dir, scene_name, trial, str(exc))
        try:
            options = _runner_options(config, [str(root / f) for f in plan.scene_files])
        except AnchaUserError as exc:  # no container engine or image on this node: never a host process instead
            return _not_loaded(run_dir, scene_name, trial, exc.render())
        server = _world_server()
        control = ControlClient(server.url, server.key, share=server.share, transport=server.transport())
        try:
            runner = TrialRunner(control, config, run_dir, inherit_env=plan.inherit_env, seed=plan.seed, **options)
            outcome = await run_trial(runner, scene, trial)
        finally:
            await control.close()
        return outcome, pack(RunFolder(run_dir).trial(scene.name, trial).path)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _world_server() -> Any:
    """This worker process's Ancha server, started on its first trial and kept for the next."""
    global _server
    if _server is None:
        from ancha.server.embedded import EmbeddedServer
        from ancha.server.keys import new_key

        _server = EmbeddedServer(key=new_key()).start()  # the worker's own key: no agent reaches control
    return _server


_options: dict[str, Any] | None = None


def _runner_options(config: AnchaConfig, scene_paths: list[str]) -> dict[str, Any]:
    """How this node runs agents, as a local run does (``run.py``): a container agent in a
    container of this node's engine, its model calls through a model gateway of this process.
    Prepared on the worker's first trial and kept; a node that cannot raises ``RunFailed``."""
    global _options
    if _options is None:
        agent = config.agent
        options: dict[str, Any] = {}
        if agent is not None and agent.execution.mode == "container":
            from ancha.runner.agents.container import ContainerExecution

            options["containers"] = ContainerExecution.prepare(config, scene_paths)
        if agent is not None and agent.execution.model_hosts:
            from ancha.runner.gateway import ModelGateway

            options["gateway"] = ModelGateway(agent.execution.model_hosts).start()
        _options = options
    return _options


def _scene(path: Path, source_hash: str) -> Scene:
    """The scene from the shipped files, loaded once per worker process; it must be the one the
    driver loaded (the same hash), or the trial would grade against other checks."""
    from ancha.scene.loading import load_scene
    from ancha.world.registry import catalog

    key = (str(path), source_hash)
    if key not in _scenes:
        try:
            scene = load_scene(path, catalog())
        except AnchaUserError as exc:
            raise RunFailed(f"the scene could not be loaded on the Ray worker: {exc.render()}") from exc
        if scene.source_hash != source_hash:
            raise RunFailed("the scene the Ray worker received differs from the one ancha run loaded (a file "
                            "it reads was left out of the shipped files, or changed during the run)")
        _scenes[key] = scene
    return _scenes[key]


def _not_loaded(run_dir: Path, scene: str, trial: int, reason: str) -> tuple[TrialOutcome, bytes]:
    folder = RunFolder(run_dir).trial(scene, trial).create()
    folder.log(f"ancha: {reason}")
    folder.write_checks(scene, trial, "invalid", None, reason, [])
    return TrialOutcome(scene, trial, "invalid", reason, never_started=True), pack(folder.path)


# --- the trial folder in transit ----------------------------------------------------------

def pack(folder: Path) -> bytes:
    """A trial folder as one gzip'd tar (fast compression: traces are text and shrink ~10x)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(archive: bytes, folder: Path) -> None:
    """Write a ``pack``ed trial folder at ``folder``; nothing in it may land outside (tar's data filter)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")
    TrialFolder(folder).clear_live()
