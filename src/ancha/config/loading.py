"""Finding, reading and validating ancha.yaml, then applying command-line overrides."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ancha.config.catalog import ConfigCatalog, config_model
from ancha.config.errors import ConfigInvalid, sort_problems
from ancha.config.model import MAX_PARALLEL, MAX_TRIALS, AgentConfig, AnchaConfig, RayAddress, RayConfig
from ancha.config.rules import config_problems
from ancha.config.validation import INVALID, Walker
from ancha.config.yaml_source import read_yaml, show
from ancha.errors import Problem

CONFIG_NAME = "ancha.yaml"


@dataclass(slots=True)
class ConfigOverrides:
    """What the command line sets over the file (``--agent``, ``-n``, ``--parallel``, ...)."""

    agent_command: str | None = None
    trials: int | None = None
    parallel: int | None = None
    min_pass_rate: float | None = None
    pass_env: list[str] = field(default_factory=list)
    inherit_env: bool = False
    strict_coverage: bool = False
    ray: str | None = None
    """``--ray [ADDRESS]``: the cluster's address, or ``""`` for a bare ``--ray`` (``ray.address``
    of the file if it has one, else a local Ray)."""


def load_config(path: Path | None, cwd: Path, overrides: ConfigOverrides | None = None, *,
                catalog: ConfigCatalog) -> AnchaConfig:
    """Read ``path`` (``--config``) or ``cwd/ancha.yaml``; without either, the defaults apply.
    ``catalog``: the tools of this build (``ancha.world.registry.config_catalog()``): the
    templates the file may name and the values of its ``agent.<tool>_transport`` fields.

    Every problem of the file and of the overrides is raised at once as ``ConfigInvalid``.
    """
    overrides = overrides or ConfigOverrides()
    cwd = cwd.resolve()
    file: Path | None = None
    if path is not None:
        file = (cwd / path).resolve()
        if not file.is_file():
            raise ConfigInvalid([Problem("--config", f"no such file: {file}",
                                         "pass the path of an existing ancha.yaml")])
    elif (cwd / CONFIG_NAME).is_file():
        file = cwd / CONFIG_NAME
    model = config_model(catalog)
    walker = Walker(model, str(file) if file else None)
    data: dict[str, Any] = {}
    if file is not None:
        data, tree = _read(file, walker, model)
        _keep_valid_items(data, tree)
    try:
        config = AnchaConfig.model_validate(data)
    except ValidationError:  # the walker has reported why; build from defaults to keep checking
        config = AnchaConfig()
    config.root = cwd
    config.source = file
    problems = [*walker.problems, *_apply(config, overrides, parallel_in_file="parallel" in data)]
    problems += config_problems(config, walker.line_of, walker.file, catalog)
    if problems:
        raise ConfigInvalid(sort_problems(problems), file)
    return config


def _read(file: Path, walker: Walker, model: type[AnchaConfig]) -> tuple[dict[str, Any], Any]:
    """The file's valid fields, and the tree as written."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        walker.problem("", f"cannot read the file: {exc}", "check the file's permissions and encoding")
        return {}, None
    tree, problems = read_yaml(text, walker.file)
    walker.problems.extend(problems)
    if tree is None:
        return {}, None
    clean = walker.section(tree, model, "", 1)
    return (clean if clean is not INVALID else {}), tree


def _keep_valid_items(data: dict[str, Any], tree: Any) -> None:
    """Put back the valid items of ``agent.env`` and ``agent.execution.env`` when another item
    was invalid (the walker drops the whole mapping or list, and has reported that item): the
    rules then check them too (templates, reserved names), so every problem is reported at once
    rather than after the first is fixed. The file is refused anyway."""
    agent, written = data.get("agent"), tree.get("agent") if isinstance(tree, dict) else None
    if not isinstance(agent, dict) or not isinstance(written, dict):
        return
    env = written.get("env")
    if "env" not in agent and isinstance(env, dict):
        agent["env"] = {str(k): str(v) for k, v in env.items() if isinstance(k, str) and isinstance(v, str)}
    execution, written_execution = agent.get("execution"), written.get("execution")
    if isinstance(execution, dict) and isinstance(written_execution, dict) and "env" not in execution:
        names = written_execution.get("env")
        if isinstance(names, list):
            execution["env"] = [str(n) for n in names if isinstance(n, str)]


def _apply(config: AnchaConfig, overrides: ConfigOverrides, parallel_in_file: bool) -> list[Problem]:
    problems: list[Problem] = []
    if overrides.agent_command is not None:
        config.agent = config.agent or AgentConfig()
        config.agent.command = overrides.agent_command
    for option, attr, value, high in (("-n", "trials", overrides.trials, MAX_TRIALS),
                                      ("--parallel", "parallel", overrides.parallel, MAX_PARALLEL)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(Problem(option, f"expected a positive integer, got {show(value)}"))
        elif value > high:
            problems.append(Problem(option, f"expected an integer from 1 to {high}, got {show(value)}"))
        else:
            setattr(config, attr, value)
    rate = overrides.min_pass_rate
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or math.isnan(rate) or not 0 <= rate <= 1:
            problems.append(Problem("--min-pass-rate", f"expected a number from 0 to 1, got {show(rate)}"))
        else:
            config.min_pass_rate = float(rate)
    if overrides.pass_env:
        config.agent = config.agent or AgentConfig()
        config.agent.pass_env = [*config.agent.pass_env,
                                 *(n for n in overrides.pass_env if n not in config.agent.pass_env)]
    if overrides.ray is not None:
        problems += _apply_ray(config, overrides.ray)
    config.parallel_given = overrides.parallel is not None or parallel_in_file
    if overrides.parallel is None and not parallel_in_file:
        endpoint = config.agent is not None and config.agent.kind == "endpoint"
        config.parallel = 1 if endpoint else 2
    config.inherit_env = overrides.inherit_env
    config.strict_coverage = overrides.strict_coverage
    return problems


def _apply_ray(config: AnchaConfig, address: str) -> list[Problem]:
    config.ray = config.ray or RayConfig()
    if not address:
        return []
    try:
        config.ray.address = TypeAdapter(RayAddress).validate_python(address)
    except ValidationError:
        return [Problem("--ray", f"expected auto, local, HOST:PORT or ray://HOST:PORT, got {show(address)}",
                        "pass the address `ray start --head` printed, such as 10.0.0.5:6379, or --ray alone "
                        "for a local Ray")]
    return []
