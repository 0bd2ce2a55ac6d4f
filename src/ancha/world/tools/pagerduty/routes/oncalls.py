"""``GET /oncalls``: who is on call, for every escalation policy rule, on the simulated clock.

A rule's user target is on call at every time (``start``/``end`` null); a schedule target
contributes whoever its final schedule has on call, one entry per shift overlapping the
asked range (``since``..``until``; default: now). ``earliest=true`` keeps one entry per
user, policy and level: the earliest.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.pagerduty.call import Call, paginated
from ancha.world.tools.pagerduty.errors import InvalidInput
from ancha.world.tools.pagerduty.models import Schedule, User, iso
from ancha.world.tools.pagerduty.router import route


@route("GET", "/oncalls", partial="time_zone and include[] are ignored")
def list_oncalls(call: Call) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    now = call.desk.now()
    since, until = q.time("since"), q.time("until")
    since = now if since is None else since
    until = since if until is None else until
    if until < since:
        raise InvalidInput("Invalid 'since' or 'until' Parameter Values")
    if until - since > 90 * 86400:
        raise InvalidInput("Invalid Query Date Range")
    users, policies, schedules = set(q.many("user_ids")), set(q.many("escalation_policy_ids")), \
        set(q.many("schedule_ids"))
    base = call.base
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int]] = set()
    for policy in sorted(call.state.policies.values(), key=lambda p: p.name.lower()):
        if policies and policy.id not in policies:
            continue
        for level, rule in enumerate(policy.rules, start=1):
            for target in rule.targets:
                if schedules and (not isinstance(target, Schedule) or target.id not in schedules):
                    continue
                for user, start, end in _shifts(target, since, until):
                    if users and user.id not in users:
                        continue
                    key = (user.id, policy.id, level)
                    if q.flag("earliest") and key in seen:
                        continue
                    seen.add(key)
                    found.append({
                        "escalation_policy": policy.reference(base), "escalation_level": level,
                        "schedule": target.reference(base) if isinstance(target, Schedule) else None,
                        "user": user.reference(base), "start": iso(start), "end": iso(end)})
    page = found[offset: offset + limit]
    return paginated("oncalls", page, limit, offset, len(found) if q.flag("total") else None,
                     offset + limit < len(found))


def _shifts(target: User | Schedule, since: float, until: float) -> list[tuple[User, float | None, float | None]]:
    if isinstance(target, User):
        return [(target, None, None)]
    if until <= since:
        now = target.on_call(since)
        return [] if now is None else [now]
    return list(target.entries(since, until))
