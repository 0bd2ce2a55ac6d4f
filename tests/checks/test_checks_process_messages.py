"""message and never checks: message selectors on the engine's message records, counts,
and the closest miss a failed message check names."""

from __future__ import annotations

from test_checks_process_world import World

IN_HER_THREAD = {"to": "laura", "in_thread_of": "slack_laura_question", "from_user": "slack_bot"}


def test_message__passes_on_the_agents_reply_in_her_thread():
    w = World()
    reply = w.post("agent", "slack_support", "Exports moved to Reports", thread_of="slack_laura_question",
                   reached=["laura"])
    result = w.one({"message": IN_HER_THREAD})
    assert result.passed
    assert result.evidence == [reply.data["seq"]]
    assert result.expected == ("a message to laura in the thread of $slack_laura_question from $slack_bot "
                               "written during the trial")
    assert result.actual == f"1 matching message: #{reply.data['seq']} 'Exports moved to Reports'"


def test_message__closest_miss_names_the_wrong_thread():
    w = World()
    wrong = w.post("agent", "slack_support", "Exports moved to Reports", thread_of="slack_other_question",
                   reached=["laura", "ben"])
    w.post("ben", "slack_support", "thanks", thread_of="slack_laura_question", reached=["laura"])
    result = w.one({"message": IN_HER_THREAD})
    assert not result.passed
    other_ts = w.slack.message_ref("slack_other_question")[1]
    assert result.actual == (f"laura was sent 1 message by the bot, but it was in the thread of "
                             f"$slack_other_question (ts {other_ts}) instead of in the thread of "
                             f"$slack_laura_question")
    assert result.evidence == [wrong.data["seq"]]


def test_message__closest_miss_names_the_missing_text():
    w = World()
    reply = w.post("agent", "slack_support", "Try again later", thread_of="slack_laura_question",
                   reached=["laura"])
    result = w.one({"message": {**IN_HER_THREAD, "text_contains": ["Workaround", "beta"]}})
    assert not result.passed
    assert result.actual == ("laura was sent 1 message in the thread of $slack_laura_question by the bot, "
                             "but it did not contain 'Workaround' or 'beta' (it said 'Try again later')")
    assert result.evidence == [reply.data["seq"]]


def test_message__closest_miss_names_who_it_reached_and_who_wrote_it():
    w = World()
    w.post("agent", "slack_eng", "exports are broken", reached=["ben", "mike"])
    result = w.one({"message": {"to": "laura", "from_user": "slack_bot"}})
    assert result.actual == "1 message was written by the bot, but it did not reach laura (reached ben, mike)"
    w.post("ben", "slack_support", "looking", thread_of="slack_laura_question", reached=["laura"])
    result = w.one({"message": {"to": "laura", "from_user": "slack_bot"}})
    assert result.actual == "1 message was written by the bot, but it did not reach laura (reached ben, mike)", \
        "on a tie, the message by the right author is the closer miss"
    w = World()
    w.post("ben", "slack_support", "looking", thread_of="slack_laura_question", reached=["laura"])
    w.post("mike", "slack_support", "on it", reached=["laura"])
    result = w.one({"message": {"to": "laura", "from_user": "slack_bot"}})
    assert result.actual == "laura was sent 2 messages, but they were written by ben, mike instead of $slack_bot"
    result = w.one({"message": {"to": "laura", "from_person": "ben", "in": "slack_eng"}})
    assert result.actual == "laura was sent 1 message by ben, but it was in #support instead of $slack_eng"


def test_message__fact_is_what_the_engine_recorded_the_message_told_its_recipient():
    w = World()
    w.post("agent", "slack_eng", "Laura is on acme-prod", reached=["ben"], facts={"ben": ["laura.workspace"]})
    assert w.one({"message": {"fact": "laura.workspace"}}).passed
    assert w.one({"message": {"to": "ben", "fact": "laura.workspace"}}).passed
    result = w.one({"message": {"to": "mike", "fact": "laura.workspace"}})
    assert result.actual == ("1 message was written, but it did not reach mike (reached ben) and it did not "
                             "tell mike laura.workspace (it told ben laura.workspace)")


def test_message__count_gte_counts_matching_messages():
    w = World()
    first = w.post("agent", "slack_support", "update 1", reached=["laura"])
    result = w.one({"message": {"to": "laura", "count_gte": 2}})
    assert not result.passed
    assert result.actual == f"only 1 matching message, 2 needed: #{first.data['seq']} 'update 1'"
    second = w.post("agent", "slack_support", "update 2", reached=["laura"])
    result = w.one({"message": {"to": "laura", "count_gte": 2}})
    assert result.passed and result.evidence == [first.data["seq"], second.data["seq"]]


def test_message__an_unknown_ref_makes_the_check_ungradable_not_an_error():
    w = World()
    result = w.one({"message": {"in_thread_of": "no_such_message"}})
    assert not result.passed and "the world has no ref $no_such_message" in result.actual


def test_never__passes_until_a_message_matches_then_cites_it():
    w = World()
    w.post("agent", "slack_support", "We are looking into it", thread_of="slack_laura_question",
           reached=["laura"])
    check = {"never": {"to": "laura", "text_contains": ["drops rows"]}}
    result = w.one(check)
    assert result.passed and result.actual == "none of the 1 message written matched"
    leak = w.post("agent", "slack_support", "The writer DROPS ROWS", reached=["laura", "ben", "mike"])
    result = w.one(check)
    assert not result.passed
    assert result.evidence == [leak.data["seq"]]
    assert result.explanation == ("Failed: expected no message to laura containing 'drops rows' during the trial; "
                                  f"actually 1 message matched: #{leak.data['seq']} 'The writer DROPS ROWS'.")


def test_never__from_the_bot_also_matches_the_agent_on_any_tool():
    w = World()
    w.env.record("message", tool="github", channel="acme/orders#13", ts="1", thread_ts=None, user="octo-bot",
                 actor="agent", author_person=None, text="password: hunter2", reached=[], facts={}, seq=None)
    result = w.one({"never": {"from_user": "slack_bot", "text_contains": ["password"]}})
    assert not result.passed
