"""The resolved ``world.datadog`` seed: refs bare, times as epoch seconds.

Parsed once per scene (``Scene.seed``) and shared by its trials, which never change it:
the seeded logs' search index is built once on it (``log_index``) for the same reason.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

MonitorStateName = Literal["OK", "Warn", "Alert", "No Data"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MonitorSeed(_Model):
    ref: str | None = None
    name: str
    type: str = "query alert"
    query: str
    message: str = ""
    tags: list[str] = Field(default_factory=list)
    priority: int | None = None
    state: MonitorStateName = "OK"


class DowntimeSeed(_Model):
    monitor: str | None = None
    """Bare monitor ref (one monitor), else ``monitor_tags`` decides."""
    monitor_tags: list[str] = Field(default_factory=list)
    scope: str = "*"
    message: str = ""
    start: float | None = None
    end: float | None = None


class DashboardSeed(_Model):
    ref: str | None = None
    title: str
    description: str | None = None
    layout_type: Literal["ordered", "free"] = "ordered"
    widgets: list[dict[str, Any]] = Field(default_factory=list)


class EventSeed(_Model):
    ref: str | None = None
    title: str
    text: str = ""
    tags: list[str] = Field(default_factory=list)
    at: float | None = None
    alert_type: str = "info"
    priority: Literal["normal", "low"] = "normal"
    host: str | None = None
    source_type_name: str | None = None


class MetricSeed(_Model):
    points: list[tuple[float, float]] = Field(default_factory=list)
    baseline: float | None = None
    noise: float = 0.0


class DatadogWorld(_Model):
    monitors: list[MonitorSeed] = Field(default_factory=list)
    downtimes: list[DowntimeSeed] = Field(default_factory=list)
    dashboards: list[DashboardSeed] = Field(default_factory=list)
    events: list[EventSeed] = Field(default_factory=list)
    logs: list[dict[str, Any]] = Field(default_factory=list)
    """Each ``{ref?, service, status, message, at (epoch s), host?, attributes, tags}``; kept
    as plain dicts (validated when the scene was loaded) so 100,000 lines parse fast."""
    metrics: dict[str, MetricSeed] = Field(default_factory=dict)

    _log_index: Any = PrivateAttr(default=None)

    @classmethod
    def parse(cls, seed: DatadogWorld | dict[str, Any] | None) -> DatadogWorld:
        if isinstance(seed, DatadogWorld):
            return seed
        return cls.model_validate(seed or {})

    def log_index(self) -> Any:
        """The seeded logs' search index (``logs.SeededLogs``), built once and shared."""
        if self._log_index is None:
            from ancha.world.tools.datadog.logs import SeededLogs

            self._log_index = SeededLogs(self.logs)
        return self._log_index
