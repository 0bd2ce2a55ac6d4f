"""The replica's state: PagerDuty's records with their wire shapes (``records.py``) and one
account holding them with the indexes its reads need (``account.py``)."""

from __future__ import annotations

from ancha.world.tools.pagerduty.models.account import SORT_KEYS, Filter, PagerDutyState
from ancha.world.tools.pagerduty.models.records import (
    COLORS,
    WEB,
    Alert,
    EscalationPolicy,
    Incident,
    Layer,
    LogEntry,
    Note,
    Priority,
    Rule,
    Schedule,
    Service,
    User,
    iso,
    reference,
)

__all__ = [
    "COLORS", "SORT_KEYS", "WEB", "Alert", "EscalationPolicy", "Filter", "Incident", "Layer", "LogEntry", "Note",
    "PagerDutyState", "Priority", "Rule", "Schedule", "Service", "User", "iso", "reference",
]
