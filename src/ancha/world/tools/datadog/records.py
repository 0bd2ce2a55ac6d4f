"""Events and dashboards: what the v1 and v2 APIs answer for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ancha.world.tools.datadog.log_query import LogLine
from ancha.world.tools.datadog.wire import iso_micro, iso_millis_z

APP_URL = "https://app.datadoghq.com"
_V1_NULLABLE = ("priority", "handle", "related_event_id")
DASHBOARD_AUTHOR = ("ops@acme.test", "Acme Ops")
"""A dashboard's ``author_handle`` and ``author_name`` (the org's user)."""


@dataclass(slots=True)
class Event:
    id: int
    title: str
    text: str
    at: float
    tags: list[str] = field(default_factory=list)
    alert_type: str = "info"
    priority: str | None = "normal"
    host: str | None = None
    source_type_name: str | None = None
    aggregation_key: str | None = None
    device_name: str | None = None
    monitor_id: int | None = None
    ref: str | None = None
    seeded: bool = False
    actor: str = "seed"
    handle: str | None = None
    """Who posted it (the org user's handle for the API's callers; None for integrations)."""
    related_event_id: int | None = None
    _line: LogLine | None = None

    def v1(self, base: str = "") -> dict[str, Any]:
        """The v1 shape; ``url`` is the event's own address on the replica (``base``: its base URL)."""
        out = {
            "id": self.id, "id_str": str(self.id), "title": self.title, "text": self.text,
            "date_happened": int(self.at), "alert_type": self.alert_type, "priority": self.priority,
            "host": self.host, "device_name": self.device_name, "tags": list(self.tags),
            "source_type_name": self.source_type_name or ("Monitor Alert" if self.monitor_id else "My Apps"),
            "url": f"{base}/api/v1/events/{self.id}", "payload": "{}",
            "handle": self.handle, "related_event_id": self.related_event_id,
        }
        return {k: v for k, v in out.items() if v is not None or k in _V1_NULLABLE}

    def v2(self) -> dict[str, Any]:
        inner: dict[str, Any] = {
            "aggregation_key": self.aggregation_key, "date_happened": int(self.at), "evt": {
                "id": str(self.id), "id_str": str(self.id), "source_id": 0,
                "type": "monitor_alert" if self.monitor_id else "api"},
            "hostname": self.host, "priority": self.priority, "source_type_name": self.source_type_name,
            "status": self.alert_type if self.alert_type in ("error", "warning", "info", "success") else "info",
            "timestamp": int(self.at * 1000), "title": self.title, "service": self.source_type_name,
        }
        if self.monitor_id is not None:
            inner["monitor_id"] = self.monitor_id
        inner = {k: v for k, v in inner.items() if v is not None}
        return {"id": str(self.id), "type": "event",
                "attributes": {"attributes": inner, "message": self.text, "tags": list(self.tags),
                               "timestamp": iso_millis_z(self.at)}}

    def line(self) -> LogLine:
        """The event as the search syntax reads it (message: title and text; source as service)."""
        if self._line is None:
            attributes: dict[str, Any] = {"title": self.title, "alert_type": self.alert_type,
                                          "priority": self.priority, "source": self.source_type_name}
            service = next((t.partition(":")[2] for t in self.tags if t.startswith("service:")),
                           self.source_type_name or "")
            self._line = LogLine(self.at, self.id, service, self.alert_type, self.host,
                                 f"{self.title}\n{self.text}", attributes, list(self.tags))
        return self._line


@dataclass(slots=True)
class Dashboard:
    id: str
    title: str
    created: float
    description: str | None = None
    layout_type: str = "ordered"
    widgets: list[dict[str, Any]] = field(default_factory=list)
    ref: str | None = None
    modified: float | None = None
    deleted: float | None = None
    """When it was deleted (it leaves lists and answers 404 until restored)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The optional fields it was written with (tags, template_variables, notify_list, reflow_type, ...)."""

    def __post_init__(self) -> None:
        widgets = []
        for i, widget in enumerate(self.widgets):
            item = dict(widget)
            item.setdefault("id", 1000 + i)
            if "definition" not in item:
                item = {"id": item.pop("id"), "definition": item}
            widgets.append(item)
        self.widgets = widgets

    @property
    def url(self) -> str:
        slug = "-".join("".join(c if c.isalnum() else " " for c in self.title.lower()).split())
        return f"/dashboard/{self.id}/{slug}"

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description, "layout_type": self.layout_type,
                "url": self.url, "is_read_only": False, "created_at": iso_micro(self.created),
                "modified_at": iso_micro(self.modified or self.created), "author_handle": DASHBOARD_AUTHOR[0],
                "deleted_at": iso_micro(self.deleted) if self.deleted is not None else None}

    def to_dict(self) -> dict[str, Any]:
        out = self.summary()
        out.pop("deleted_at")
        return {**out, "author_name": DASHBOARD_AUTHOR[1], "widgets": [dict(w) for w in self.widgets],
                "notify_list": None, "template_variables": None, "restricted_roles": [],
                "reflow_type": "auto" if self.layout_type == "ordered" else None, **self.extra}
