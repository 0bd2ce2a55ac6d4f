"""ancha.yaml as validated data (reference/ancha-yaml.txt is the contract for every field).

The same models describe the file (``ancha schema ancha``) and the loaded config:
durations are written as strings (``10s``) and held as float seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ByteSize,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ancha.config.validation import DURATION_EXPECTED, DurationText, Expect, FileModel
from ancha.durations import parse_duration


def _seconds(value: Any) -> Any:
    return parse_duration(value) if isinstance(value, str) else value


Duration = Annotated[
    float,
    BeforeValidator(_seconds),
    DurationText(),
    WithJsonSchema({"type": "string", "pattern": r"^(\d+(\.\d+)?(d|h|m|s|ms))+$",
                    "description": DURATION_EXPECTED}),
]
PositiveInt = Annotated[int, Field(gt=0)]
MAX_TRIALS = 10_000
MAX_PARALLEL = 256
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
                    Expect("a variable name such as OPENAI_API_KEY")]
EnvNames = Annotated[list[EnvName], Expect("a list of variable names")]
LogLimit = Annotated[
    ByteSize,
    Field(ge=4096, le=1024**3),
    Expect("a size from 4KiB to 1GiB, such as 16MiB"),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": r"^\d+(\.\d+)?\s*([KMG]i?B|B)?$"},
                              {"type": "integer", "minimum": 4096, "maximum": 1024**3}],
                    "description": "a size from 4KiB to 1GiB, such as 16MiB"}),
]
HttpUrl = Annotated[str, StringConstraints(pattern=r"^https?://\S+$"), Expect("an http(s) URL")]
ModelHost = Annotated[
    str, StringConstraints(max_length=253, pattern=r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"),
    Expect("a domain such as openrouter.ai (lowercase, no scheme, port or path)"),
]


class _Section(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ExecutionConfig(_Section):
    """Where the agent process runs: a local process (host) or a local container."""

    mode: Literal["host", "container"] = "host"
    image: str | None = None
    preparation: Literal["project", "image"] | None = None
    files: list[str] = Field(default_factory=lambda: ["."])
    env: EnvNames = Field(default_factory=list)
    model_hosts: list[ModelHost] = Field(default_factory=list, alias="modelHosts")
    cpus: Annotated[float, Field(ge=0.1, le=32)] = 1.0
    memory_mb: Annotated[int, Field(ge=128, le=65536)] = Field(default=512, alias="memoryMb")
    pids: Annotated[int, Field(ge=16, le=4096)] = 128


class AgentConfig(_Section):
    """How to start the agent: a command (``command``) or an HTTP endpoint (``url``)."""

    command: str | None = None
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: EnvNames = Field(default_factory=list)
    input: Literal["command", "per_event"] = "command"
    slack_transport: str = "feed"
    """How Slack's events reach the agent; the values this build has come from the tool
    (``ConfigCatalog.transports``, checked by ``config_model``)."""
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    url: str | None = None
    start: str | None = None
    ready_url: str | None = None
    setup_url: str | None = None
    idle: Annotated[Duration, DurationText(above=0, at_most=366 * 86400)] = Field(
        default=10.0, json_schema_extra={"default": "10s"}, description="more than 0s, at most 366d")
    startup_timeout: Annotated[Duration, DurationText(above=0, at_most=3600)] = Field(
        default=30.0, json_schema_extra={"default": "30s"}, description="more than 0s, at most 1h")
    log_limit: LogLimit = Field(default=ByteSize(16 * 1024 * 1024), json_schema_extra={"default": "16MiB"})
    """Most bytes of agent.log kept per trial: its head and its tail, with the cut counted."""
    budget_usd: Annotated[float, Field(gt=0, le=1_000_000), Expect("a positive number of US dollars, such as 0.5")] \
        | None = Field(default=None, description="US dollars, more than 0")
    """Most a trial's model calls (through the model gateway) may cost; past it the trial ends ``over_budget``."""
    clock: Literal["world", "wall"] = "world"
    """``world``: the agent's processes run under libfaketime, so their clock reads the world's
    time; ``wall``: they read the machine's clock. Ours, not the reference's: it comes after the
    reference's fields, so the fields the reference lists keep their order."""
    hostnames: Literal["ancha", "real"] = "ancha"
    """``ancha``: the agent reaches each tool at the base URL Ancha gives it (``ANCHA_<TOOL>_URL``);
    ``real``: at the vendor's own hostnames over HTTPS (``api.github.com``, ``slack.com``, ...),
    with no base URL set, through Ancha's proxy and TLS interception. Ours, like ``clock``."""
    version: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    """The agent's version (a tag, a model name, a prompt revision), kept in ``summary.json``
    and recorded with an uploaded run (``ancha push``). Ours, like ``clock``."""

    @property
    def kind(self) -> Literal["command", "endpoint"] | None:
        """``endpoint`` when ``url`` is set, ``command`` when ``command`` is, else None."""
        if self.url is not None:
            return "endpoint"
        return "command" if self.command is not None else None


class ServerConfig(_Section):
    url: HttpUrl | None = None


class JudgeConfig(_Section):
    model: str | None = None


RayAddress = Annotated[
    str, StringConstraints(pattern=r"^(auto|local|ray://\S+|[A-Za-z0-9.\-]+:\d{1,5})$"),
    Expect("auto, local, HOST:PORT or ray://HOST:PORT"),
]


class RayConfig(_Section):
    """Spread trials over a Ray cluster: each trial a Ray task hosting its world on a worker."""

    address: RayAddress | None = None
    """The cluster (``HOST:PORT``, ``ray://HOST:PORT``, ``auto``); None starts or joins a local Ray."""
    cpus_per_trial: Annotated[float, Field(ge=0.01, le=64)] = Field(default=1.0, description="0.01 to 64")
    """CPUs Ray reserves for each trial's task (its world and its agent)."""


class AnchaConfig(_Section):
    """The loaded ancha.yaml with overrides applied. Relative paths are relative to ``root``."""

    agent: AgentConfig | None = None
    scenes: list[str] = Field(default_factory=lambda: ["scenes/**/scene.yaml"])
    trials: Annotated[PositiveInt, Field(le=MAX_TRIALS)] = Field(default=5, description="1 to 10000")
    parallel: Annotated[PositiveInt, Field(le=MAX_PARALLEL)] | None = Field(default=None, description="1 to 256")
    """Trials at once. The file may omit it; after validation it is 2 for command agents, 1 for endpoints."""
    min_pass_rate: Annotated[float, Field(ge=0, le=1)] = 1.0
    server: ServerConfig = Field(default_factory=ServerConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    ray: RayConfig | None = None
    """Set (``ray:`` in the file, or ``--ray``): trials run as tasks on a Ray cluster."""

    root: SkipJsonSchema[Path] = Field(default_factory=Path.cwd, exclude=True)
    """The directory the CLI runs from: scenes globs and agent.cwd are relative to it."""
    source: SkipJsonSchema[Path | None] = Field(default=None, exclude=True)
    """The config file read, or None when the defaults apply."""
    inherit_env: SkipJsonSchema[bool] = Field(default=False, exclude=True)
    parallel_given: SkipJsonSchema[bool] = Field(default=False, exclude=True)
    """Whether ``parallel`` came from the file or ``--parallel`` rather than its default
    (on Ray the default is what the cluster holds, not 2)."""
    """--inherit-env: the agent gets the whole shell environment, not only the base set."""
    strict_coverage: SkipJsonSchema[bool] = Field(default=False, exclude=True)
    """--strict-coverage: a trial whose agent called an operation the replica does not
    implement (a coverage gap) is invalid, not passed or failed."""

    @model_validator(mode="after")
    def _default_parallel(self) -> AnchaConfig:
        if self.parallel is None:
            endpoint = self.agent is not None and self.agent.kind == "endpoint"
            self.parallel = 1 if endpoint else 2
        return self

    @property
    def trials_at_once(self) -> int:
        """``parallel`` as an int (never None once validated)."""
        return self.parallel or 1
