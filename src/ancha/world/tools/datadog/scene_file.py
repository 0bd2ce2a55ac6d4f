"""``world.datadog``: its models, and how the section as written in a scene file resolves.

One set of models serves both: the file walker checks a scene file against them, and
``build_world`` rewrites the written data (refs bare, times as epoch seconds, defaults
filled) and validates the same classes from it. The resolved ``DatadogFile`` is parsed once
per scene (``Scene.seed``) and shared by its trials, which never change it: the seeded
logs' search index is built once on it (``log_index``) for the same reason. A field whose
written and resolved values differ says so with a marker of ``ancha.scene.field_forms``.

Refs: ``monitors[].ref`` (kind ``monitor``), ``dashboards[].ref`` (``dashboard``),
``events[].ref`` (``event``), ``logs[].ref`` (``log``, also in ``logs_file``). Seed times
are ISO or offsets from clock.start and come out as epoch seconds; ``logs_file`` is a
JSONL file beside the scene (one log object per line, the fields of ``logs[]``), read into
``logs`` and into the scene's content hash. It is checked line by line without the
generic walker so that 100,000 lines load in well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.field_forms import Resolved, written
from ancha.scene.file_model import Ref, RefName, Time
from ancha.scene.folder import SceneFileRefused, json_lines
from ancha.scene.refs import Declared
from ancha.scene.sections import SectionContext
from ancha.scene.sources import Source, parse_time
from ancha.world.tools.datadog.logs import SeededLogs

TOOL = "datadog"
LOG_STATUSES = ("emergency", "alert", "critical", "error", "warn", "warning", "notice", "info", "debug", "ok")
LOG_FIELDS = ("ref", "service", "status", "message", "at", "host", "attributes", "tags")
MONITOR_TYPES = ("metric alert", "query alert", "service check", "event alert", "log alert", "composite",
                 "process alert", "trace-analytics alert", "slo alert", "event-v2 alert", "rum alert")
_REF = re.compile(r"^[A-Za-z0-9_]+$")
TIME_HINT = "write an ISO time, or -3d for three days before clock.start"

Seconds = Annotated[float | None, written(Time | None)]
"""A seed time: written as ``Time`` (ISO, or an offset from clock.start), resolved to epoch seconds;
a problem with one reads as one with a ``Time``."""


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MonitorFile(_File):
    ref: RefName | None = None
    name: str
    type: Literal[MONITOR_TYPES] = "query alert"  # type: ignore[valid-type]
    query: Annotated[str, Expect("a monitor query such as avg(last_5m):avg:orders.latency.p99{*} > 2000")]
    message: str = ""
    tags: list[str] = Field(default_factory=list)
    priority: Annotated[int, Field(ge=1, le=5)] | None = None
    state: Literal["OK", "Warn", "Alert", "No Data"] = "OK"


class DowntimeFile(_File):
    monitor: Ref | None = Field(default=None, description="the one monitor it silences")
    """Resolved: the bare monitor ref; None when ``monitor_tags`` decides."""
    monitor_tags: list[str] | None = Field(default=None, description='monitors with all these tags; ["*"]: all')
    """Resolved: always a list (empty with ``monitor``)."""
    scope: str = "*"
    message: str = ""
    start: Seconds = None
    end: Seconds = None


class DashboardFile(_File):
    ref: RefName | None = None
    title: str
    description: str | None = None
    layout_type: Literal["ordered", "free"] = "ordered"
    widgets: list[dict[str, Any]] = Field(default_factory=list)


class EventFile(_File):
    ref: RefName | None = None
    title: str
    text: str = ""
    tags: list[str] = Field(default_factory=list)
    at: Seconds = None
    alert_type: Literal["error", "warning", "info", "success", "user_update", "recommendation", "snapshot"] = "info"
    priority: Literal["normal", "low"] = "normal"
    host: str | None = None
    source_type_name: str | None = None


class LogFile(_File):
    ref: RefName | None = None
    service: str
    status: Literal[LOG_STATUSES] = "info"  # type: ignore[valid-type]
    message: str
    at: Time | None = None
    host: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)


Point = Annotated[list[Any], Expect("[at, value], e.g. [-10m, 120]")]


class MetricFile(_File):
    points: Annotated[list[Point] | None, Resolved(list[tuple[float, float]] | None)] = None
    """Resolved: ``(at, value)`` in epoch seconds, sorted by time (empty with ``baseline``)."""
    baseline: float | None = None
    noise: Annotated[float, Field(ge=0)] = 0.0


class DatadogFile(_File):
    monitors: list[MonitorFile] = Field(default_factory=list)
    downtimes: list[DowntimeFile] = Field(default_factory=list)
    dashboards: list[DashboardFile] = Field(default_factory=list)
    events: list[EventFile] = Field(default_factory=list)
    logs: Annotated[list[LogFile], Resolved(list[dict[str, Any]])] = Field(default_factory=list)
    """Resolved: ``logs`` and then those of ``logs_file``, each a plain dict ``{service, status,
    message, at (epoch s), attributes, tags, host?, ref?}`` (checked when the scene was loaded),
    so that 100,000 lines parse fast."""
    logs_file: str | None = Field(default=None, description="a JSONL file beside the scene, one log per line")
    """Resolved: None (its lines are in ``logs``)."""
    metrics: dict[str, MetricFile] = Field(default_factory=dict)

    _log_index: SeededLogs | None = PrivateAttr(default=None)

    @classmethod
    def parse(cls, seed: DatadogFile | dict[str, Any] | None) -> DatadogFile:
        """The resolved seed (JSON, or already parsed)."""
        if isinstance(seed, DatadogFile):
            return seed
        return cls.model_validate(seed or {})

    def log_index(self) -> SeededLogs:
        """The seeded logs' search index, built once and shared."""
        if self._log_index is None:
            # Resolved, ``logs`` holds plain dicts (see the field), not LogFile models.
            self._log_index = SeededLogs(cast("list[dict[str, Any]]", self.logs))
        return self._log_index


# --- resolving -------------------------------------------------------------------------


class _Resolution:
    def __init__(self, ctx: SectionContext) -> None:
        self.ctx = ctx
        self.ok = True
        self.start = ctx.start.timestamp()

    def declare(self, name: object, kind: str, path: str, source: Source | None = None) -> None:
        source = source or self.ctx.source
        if isinstance(name, str):
            self.ctx.refs.declare(name, Declared(kind, source.line_of(path), 0, tool=TOOL), source.reporter(path))

    def time(self, value: Any, path: str, source: Source | None = None) -> float | None:
        if value is None:
            return None
        try:
            return parse_time(value, self.ctx.start).timestamp()
        except (ValueError, OverflowError) as exc:
            (source or self.ctx.source).add(path, str(exc), TIME_HINT)
            self.ok = False
            return None


def build_world(clean: dict[str, Any], ctx: SectionContext) -> DatadogFile | None:
    """``world.datadog``: declare every ref, read ``logs_file``, resolve monitor refs and times."""
    run = _Resolution(ctx)
    base = ctx.path
    for field, kind in (("monitors", "monitor"), ("dashboards", "dashboard"), ("events", "event"), ("logs", "log")):
        for i, item in enumerate(clean.get(field) or []):
            if item is not None:
                run.declare(item.get("ref"), kind, f"{base}.{field}[{i}].ref")
    logs = [_log(item, run, f"{base}.logs[{i}]", ctx.source) for i, item in enumerate(clean.get("logs") or [])
            if item is not None]
    if clean.get("logs_file"):
        logs += read_logs_file(clean["logs_file"], ctx, run)
    world: dict[str, Any] = {
        "monitors": [m for m in clean.get("monitors") or [] if m is not None],
        "dashboards": [d for d in clean.get("dashboards") or [] if d is not None],
        "events": [{**e, "at": run.time(e.get("at"), f"{base}.events[{i}].at")}
                   for i, e in enumerate(clean.get("events") or []) if e is not None],
        "logs": [log for log in logs if log is not None],
        "downtimes": [d for d in (_downtime(d, run, f"{base}.downtimes[{i}]")
                                  for i, d in enumerate(clean.get("downtimes") or []) if d is not None) if d],
        "metrics": {name: m for name, m in ((name, _metric(m, run, join(f"{base}.metrics", name)))
                                             for name, m in (clean.get("metrics") or {}).items() if m is not None)
                    if m is not None},
    }
    if not run.ok:
        return None
    try:
        return DatadogFile.model_validate(world)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = join(base, ".".join(str(p) for p in error["loc"]))
        ctx.source.add(where, error["msg"].removeprefix("Value error, "), "see the datadog seed in scenes.md")
        return None


def _log(item: dict[str, Any], run: _Resolution, path: str, source: Source) -> dict[str, Any] | None:
    at = run.time(item.get("at"), join(path, "at"), source) if item.get("at") is not None else run.start
    if at is None:
        return None
    log = {"service": item["service"], "status": item.get("status") or "info", "message": item["message"],
           "at": at, "attributes": item.get("attributes") or {}, "tags": item.get("tags") or []}
    if item.get("host"):
        log["host"] = item["host"]
    if item.get("ref"):
        log["ref"] = item["ref"]
    return log


def _downtime(item: dict[str, Any], run: _Resolution, path: str) -> dict[str, Any] | None:
    monitor = None
    if item.get("monitor") is not None:
        monitor = run.ctx.refs.resolve(item["monitor"], "monitor", run.ctx.source.reporter(join(path, "monitor")),
                                       tool=TOOL)
        run.ok = run.ok and monitor is not None
    tags = item.get("monitor_tags")
    if (item.get("monitor") is None) == (tags is None):
        run.ctx.source.add(path, "a downtime targets either one monitor or monitor_tags",
                           'write monitor: $my_monitor, or monitor_tags: ["*"] for every monitor')
        run.ok = False
        return None
    start, end = run.time(item.get("start"), join(path, "start")), run.time(item.get("end"), join(path, "end"))
    if start is not None and end is not None and end <= start:
        run.ctx.source.add(join(path, "end"), "ends before it starts", "end must be later than start")
        run.ok = False
    return {"monitor": monitor, "monitor_tags": tags or [], "scope": item.get("scope") or "*",
            "message": item.get("message") or "", "start": start, "end": end}


def _metric(item: dict[str, Any], run: _Resolution, path: str) -> dict[str, Any] | None:
    points = item.get("points")
    if (points is None) == (item.get("baseline") is None):
        run.ctx.source.add(path, "a metric has either points or a baseline",
                           "write points: [[-10m, 120], [0s, 2300]], or baseline: 120 with noise: 5")
        run.ok = False
        return None
    resolved: list[tuple[float, float]] = []
    for j, point in enumerate(points or []):
        where = join(join(path, "points"), j)
        if len(point) != 2 or isinstance(point[1], bool) or not isinstance(point[1], (int, float)):
            run.ctx.source.add(where, f"expected [at, value], got {point!r}", "for example [-10m, 120]")
            run.ok = False
            continue
        at = run.time(point[0], join(where, 0))
        if at is not None:
            resolved.append((at, float(point[1])))
    return {"points": sorted(resolved), "baseline": item.get("baseline"), "noise": item.get("noise") or 0.0}


# --- logs_file -------------------------------------------------------------------------------


def read_logs_file(name: str, ctx: SectionContext, run: _Resolution) -> list[dict[str, Any] | None]:
    """The logs of a JSONL file beside the scene, each line checked on its own (problems name
    the file and line); its bytes go into the scene's content hash."""
    data = ctx.read_file(name, f"{ctx.path}.logs_file")
    if data is None:
        run.ok = False
        return []
    ctx.digest.update(data)
    display = str(Path(ctx.display_dir) / name) if ctx.display_dir else name
    ctx.files.setdefault(display, ctx.scene_dir / name)
    logs: list[dict[str, Any] | None] = []
    start = run.start
    parse = _fast_time(ctx.start)
    for number, record in json_lines(data):
        source = Source(display, _fixed_line(number), ctx.source.problems)
        if isinstance(record, SceneFileRefused):
            source.add("", record.message, record.hint)
            run.ok = False
            continue
        problem = _check_log(record)
        if problem is not None:
            source.add(problem[0], problem[1], problem[2])
            run.ok = False
            continue
        at = start
        if record.get("at") is not None:
            found = parse(record["at"])
            if found is None:
                source.add("at", f"expected an ISO time or an offset such as -3d, got {record['at']!r}", TIME_HINT)
                run.ok = False
                continue
            at = found
        if record.get("ref") is not None:
            run.declare(record["ref"], "log", "ref", source)
        log = {"service": record["service"], "status": record.get("status") or "info", "message": record["message"],
               "at": at, "attributes": record.get("attributes") or {}, "tags": record.get("tags") or []}
        if record.get("host"):
            log["host"] = record["host"]
        if record.get("ref"):
            log["ref"] = record["ref"]
        logs.append(log)
    return logs


def _check_log(record: Any) -> tuple[str, str, str] | None:
    """(path, message, hint) of the first problem of one ``logs_file`` line, or None."""
    if not isinstance(record, dict):
        return "", "expected a JSON object", "one log per line: {\"service\": ..., \"message\": ...}"
    for key in record:
        if key not in LOG_FIELDS:
            return key, "unknown field", f"known fields: {', '.join(LOG_FIELDS)}"
    for key in ("service", "message"):
        if not isinstance(record.get(key), str):
            return key, "missing required field" if key not in record else "expected a string", \
                "for example {\"service\": \"orders\", \"message\": \"upstream timeout\"}"
    status = record.get("status", "info")
    if status not in LOG_STATUSES:
        return "status", f"expected one of {', '.join(LOG_STATUSES)}, got {status!r}", "for example error"
    if record.get("host") is not None and not isinstance(record["host"], str):
        return "host", "expected a string", "for example web-1"
    if not isinstance(record.get("attributes", {}), dict):
        return "attributes", "expected an object", 'for example {"http": {"status_code": 502}}'
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return "tags", "expected a list of strings", 'for example ["env:prod"]'
    ref = record.get("ref")
    if ref is not None and (not isinstance(ref, str) or not _REF.match(ref)):
        return "ref", "expected a ref name of letters, digits and _", "for example orders_timeout"
    return None


def _fast_time(start: datetime) -> Callable[[Any], float | None]:
    """Seed times of a long file: ISO strings by ``fromisoformat`` first (the common case)."""
    def parse(value: Any) -> float | None:
        if isinstance(value, str) and len(value) >= 10 and value[4:5] == "-":
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                return None
            if parsed.tzinfo is None:
                from datetime import UTC
                parsed = parsed.replace(tzinfo=UTC)
            return parsed.timestamp()
        try:
            return parse_time(value, start).timestamp()
        except (ValueError, OverflowError):
            return None
    return parse


def _fixed_line(number: int) -> Callable[[str], int | None]:
    return lambda _path: number
