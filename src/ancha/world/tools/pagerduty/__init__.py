"""A replica of PagerDuty's REST API v2 and Events API v2: the official ``pagerduty``
client (``RestApiV2Client``, ``EventsApiV2Client``) talks to it unchanged.

Layout: ``spec.py`` the ToolSpec, ``replica.py`` the Tool (authentication, ``From``,
routing, 501/404), ``models/`` the account with its indexes (``account.py``) and its
records with their wire shapes (``records.py``), ``lifecycle.py`` every incident change
(escalation on the simulated clock), ``scene_file.py`` the ``world.pagerduty`` section and
how it resolves, ``seed.py`` building the account from it, ``router.py`` and ``routes/``
thin handlers, ``events_api.py`` the Events API v2, ``events.py`` domain events and v3
webhooks, ``delivery.py`` the feed, ``reach.py`` people (paging and notes),
``check_bodies.py`` and ``checks.py`` ``pagerduty.incident``, ``action_bodies.py`` and
``actions.py`` world rules and the ``pagerduty.trigger`` fault effect, ``coverage.py`` the
generator of ``coverage_ledger.py``.

What checks and other parts of the world read (stable names)::

    replica.state.incidents        # {id: Incident} (number, title, status, urgency, service, policy,
                                   #  assignees, notes, log_entries, alerts, first_acknowledged_at,
                                   #  first_resolved_at, fault, seeded, ref)
    replica.state.created          # every Incident, oldest first
    replica.state.users / services / policies / schedules
    replica.desk                   # IncidentDesk: trigger, acknowledge, resolve, reassign, escalate, ...
    replica.issue_token(user, actor) -> "u+..."     # for people ("person:laura") and "world"
    replica.world_token            # the world's own token (writes need no From)
    replica.agent                  # the agent's User (email = {{pagerduty.from_email}})
"""
