"""Request bodies. Fields users fill with structures (nodes, checks, gate) are typed `Any`
here on purpose: the domain validators report every problem with the reference's wording."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from agentos import storable


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        """Refuse NaN, infinities, lone surrogates and NUL anywhere in the body (see agentos.storable)."""
        reason = storable.problem(data)
        if reason:
            raise PydanticCustomError("unstorable", reason)
        return data


VersionNumber = Annotated[int, Field(ge=1, strict=True)]
"""A workflow version by number: 1, 2, ..."""


class WorkflowCreate(_Body):
    name: Any = None
    nodes: Any = None
    checks: Any = None
    gate: Any = None
    environments: Any = None


class WorkflowPatch(_Body):
    """Only the fields present change; `gate: null` removes the gate."""

    name: Any = None
    nodes: Any = None
    checks: Any = None
    gate: Any = None
    environments: Any = None


class ChecksPut(_Body):
    checks: Any = None


class GatePut(_Body):
    min_pass_rate: Any = None
    ancha: Any = None
    scorers: Any = None


class RunCreate(_Body):
    input: dict[str, Any] = {}
    wait: bool = True
    environment: str | None = Field(default=None, min_length=1, max_length=100)
    """Run the version released to this environment (default: production, when the workflow
    declares environments)."""
    version: VersionNumber | None = None
    """Run this version (not with `environment`)."""


class EvaluationCreate(_Body):
    name: Any = None
    dataset: Any = None
    results: Any = None
    wait: bool = True
    version: VersionNumber | None = None
    """The version evaluated (default: the current one)."""
    scorers: Any = None
    """Scorers of each item's final state (``agentos.scorers``), dataset evaluations only."""


class DatasetCreate(_Body):
    name: Any = None
    items: Any = None
    """[{input, item?, expected?}...], as an evaluation's inline dataset."""


class DatasetItemsAdd(_Body):
    items: Any = None


class RunToDataset(_Body):
    """Copy a run's input into a dataset; `expected` (any JSON, null too) only when present."""

    dataset: Any = None
    expected: Any = None
    item: Any = None


class ReleaseCreate(_Body):
    environment: str = "production"
    commit: str | None = Field(default=None, min_length=4, max_length=64)
    """The commit being released: a gate with ``ancha`` reads the runs uploaded for it."""
    version: VersionNumber | None = None
    """The version released (default: the current one); the gate reads its evaluations."""


class RollbackCreate(_Body):
    environment: str = "production"


class PricePut(_Body):
    input_per_mtok: float
    output_per_mtok: float


class RunSource(_Body):
    """Where an uploaded Ancha run came from (``ancha push`` fills it from the CI's variables)."""

    commit: str | None = Field(default=None, max_length=64)
    branch: str | None = Field(default=None, max_length=255)
    ci_provider: str | None = Field(default=None, max_length=20)
    ci_url: str | None = Field(default=None, max_length=2000)
    agent_version: str | None = Field(default=None, max_length=200)


class AnchaRunPut(_Body):
    summary: Any = None
    files: Any = None
    source: RunSource = RunSource()


class KeyCreate(_Body):
    role: str = "viewer"
    name: str | None = Field(default=None, max_length=200)


class AnchaServerPut(_Body):
    url: str = Field(max_length=2000)
    key: str | None = Field(default=None, max_length=500)


class ConsoleTaskCreate(_Body):
    """A console task: the checks are a JSON list, validated by Ancha's task rules."""

    name: str = Field(default="", max_length=10_000)
    scene: str = Field(default="", max_length=10_000)
    task: str = Field(default="", max_length=100_000)
    checks: Any = None


class ConsoleTaskGrade(_Body):
    env_id: str | None = Field(default=None, max_length=100)
    """Which of the task's worlds; default: the newest."""
