"""The replica's state: PagerDuty's records with their wire shapes (``records.py``) and one
account holding them with the indexes its reads need (``account.py``)."""

from __future__ import annotations

from ancha.world.tools.pagerduty.models.account import SORT_KEYS, Filter, PagerDutyState
from ancha.world.tools.pagerduty.models.records import (
    COLORS,
    Alert,
    EscalationPolicy,
    Incident,
    Layer,
    LogEntry,
    MaintenanceWindow,
    Note,
    Override,
    Priority,
    Rule,
    Schedule,
    Service,
    Team,
    User,
    iso,
    reference,
    rendered,
)

__all__ = [
    "COLORS", "SORT_KEYS", "Alert", "EscalationPolicy", "Filter", "Incident", "Layer", "LogEntry",
    "MaintenanceWindow", "Note", "Override", "PagerDutyState", "Priority", "Rule", "Schedule", "Service", "Team", "User", "iso", "reference", "rendered",
]
