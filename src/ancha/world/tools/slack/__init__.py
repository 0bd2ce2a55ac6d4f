"""A replica of Slack's Web API: the agent's official slack_sdk talks to it unchanged.

Layout (after moto): ``spec.py`` the ToolSpec, ``replica.py`` the Tool (dispatch, tokens,
writes that publish domain events), ``router.py`` which handler serves a method,
``routes/`` thin handlers per method family, ``models.py`` the state with its indexes,
``scene_file.py`` the ``world.slack`` section, ``seed.py`` building the state from it,
``check_bodies.py`` and ``action_bodies.py`` the bodies of ``slack.*`` checks and world-rule
actions, ``checks.py`` grading them, ``actions.py`` performing them, ``call.py`` Slack's
visibility rules, ``params.py`` argument decoding, ``errors.py`` one class per Slack error,
``events.py`` domain events and Events API payloads, ``coverage.py`` the generator of
``coverage_ledger.py``.

What checks and other parts of the world read (stable names)::

    replica.state.channels                 # {channel id: Channel} (name, is_private, members, ...)
    replica.state.users                    # {user id: User} (name, real_name, email, person, ref)
    replica.state.messages_in(cid, include_replies=True) -> list[Message]   # ts order
    replica.state.message(cid, ts) -> Message | None                        # deleted ones are gone
    replica.message_ref("question") -> (channel id, ts)   # a message ref's id is "C.../<ts>"
    replica.issue_user_token(user_id, actor) -> "xoxp-..."  # for people ("person:laura") and "world"
    replica.bot                             # the agent's bot User (id, bot_id, app_id)

``Message`` has ``ts``, ``channel``, ``user``, ``text``, ``thread_ts`` (None for a
top-level message), ``seeded``, ``actor``, ``reactions`` ({name: [user ids]}),
``subtype`` and ``to_dict()`` (Slack's wire shape). Change a stored message only
through the replica (or call ``Message.touch()`` after changing it in place): its
wire JSON is cached for history pages.
"""
