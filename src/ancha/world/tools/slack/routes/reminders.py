"""reminders.*: a person's reminders. They take a user token, as in Slack (a bot's token gets
``not_allowed_token_type``), and are the caller's own: Slack no longer lets one set
reminders for others (``cannot_add_others``)."""

from __future__ import annotations

import re
from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.reminders import Reminder
from ancha.world.tools.slack.seed import new_id

DAY_S = 86400
MAX_AHEAD_S = 5 * 365 * DAY_S
_IN = re.compile(r"in\s+(\d+|an?)\s+(second|sec|minute|min|hour|hr|day|week)s?", re.IGNORECASE)
_UNIT_S = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "day": DAY_S, "week": 7 * DAY_S}


def reminders_add(call: Call) -> dict[str, Any]:
    _person(call)
    p = call.params
    text = p.required("text")
    when = _time(call, p.required("time").strip())
    user_id = (p.get_str("user") or call.caller.user_id).strip()
    user = call.state.users.get(user_id)
    if user is None:
        raise errors.UserNotFound()
    if user.id == "USLACKBOT":
        raise errors.CannotAddSlackbot()
    if user.is_bot:
        raise errors.CannotAddBot()
    if user.id != call.caller.user_id:
        raise errors.CannotAddOthers()
    reminder = Reminder(new_id(call.replica.world, "Rm"), call.caller.user_id, user.id, text, when)
    call.state.reminders.add(reminder)
    return {"ok": True, "reminder": reminder.to_dict()}


def reminders_list(call: Call) -> dict[str, Any]:
    _person(call)
    return {"ok": True, "reminders": [r.to_dict() for r in call.state.reminders.of(call.caller.user_id)]}


def reminders_info(call: Call) -> dict[str, Any]:
    return {"ok": True, "reminder": _reminder(call).to_dict()}


def reminders_delete(call: Call) -> dict[str, Any]:
    reminder = _reminder(call)
    del call.state.reminders.by_id[reminder.id]
    return {"ok": True}


def reminders_complete(call: Call) -> dict[str, Any]:
    reminder = _reminder(call)
    if reminder.user != call.caller.user_id:
        raise errors.CannotCompleteOthers()
    if not reminder.complete_ts:
        reminder.complete_ts = int(call.replica.world.clock.peek())
    return {"ok": True}


def _person(call: Call) -> None:
    if call.caller.is_bot:
        raise errors.NotAllowedTokenType()


def _reminder(call: Call) -> Reminder:
    _person(call)
    reminder = call.state.reminders.by_id.get((call.params.get_str("reminder") or "").strip())
    if reminder is None or call.caller.user_id not in (reminder.user, reminder.creator):
        raise errors.NotFound()
    return reminder


def _time(call: Call, value: str) -> int:
    """A Unix time, seconds from now (within a day), or ``in N minutes`` (hours, days...)."""
    now = int(call.replica.world.clock.peek())
    if value.isdigit():
        number = int(value)
        when = now + number if number <= DAY_S else number
    else:
        found = _IN.fullmatch(value)
        if found is None:
            raise errors.CannotParse()
        count = 1 if found.group(1).lower() in ("a", "an") else int(found.group(1))
        when = now + count * _UNIT_S[found.group(2).lower()]
    if when < now or when > now + MAX_AHEAD_S:
        raise errors.CannotParse()
    return when


ROUTES: dict[str, Handler] = {
    "reminders.add": reminders_add,
    "reminders.list": reminders_list,
    "reminders.info": reminders_info,
    "reminders.delete": reminders_delete,
    "reminders.complete": reminders_complete,
}

PARTIAL: dict[str, str] = {
    "reminders.add": "reminders never fire (no Slackbot message at their time); no recurring reminders; "
                     "natural-language times only as 'in N minutes/hours/days/weeks'",
    "reminders.list": "reminders never fire, so none is ever due or past",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
