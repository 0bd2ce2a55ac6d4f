"""revealed, knows/told and decided: graded from the engine's records, passing and failing,
with what was found when they fail."""

from __future__ import annotations

from test_checks_process_world import World


def test_revealed__passes_when_the_owner_revealed_each_fact_and_cites_the_answer():
    w = World()
    w.wait(30)
    w.post("agent", "slack_support", "Which workspace?", thread_of="slack_laura_question", reached=["laura"])
    w.wait(90)
    answer = w.post("laura", "slack_support", "acme-prod", thread_of="slack_laura_question", reached=["laura"])
    w.revealed("laura.workspace", answer)
    result = w.one({"revealed": ["laura.workspace"]})
    assert result.passed and result.status == "passed"
    assert result.evidence == [answer.data["seq"]]
    assert result.actual == "laura revealed laura.workspace at +2m"
    assert result.expected == "laura.workspace revealed to the agent when it asked their owner"


def test_revealed__fails_naming_the_fact_that_was_not_asked_for():
    w = World()
    w.post("agent", "slack_support", "Which workspace?", thread_of="slack_laura_question", reached=["laura"])
    answer = w.post("laura", "slack_support", "acme-prod", thread_of="slack_laura_question", reached=["laura"])
    w.revealed("laura.workspace", answer)
    result = w.one({"revealed": ["laura.workspace", "laura.beta_on"]})
    assert not result.passed and result.status == "failed"
    assert result.actual == ("laura never revealed laura.beta_on: 1 message from the agent reached laura, "
                             "none asking for it (they reveal it when asked about 'beta'); "
                             "(laura.workspace was revealed)")
    assert result.evidence == [answer.data["seq"]]


def test_revealed__a_record_for_someone_elses_fact_does_not_count():
    w = World()
    msg = w.post("ben", "slack_support", "laura is on acme-prod", reached=["laura"])
    w.env.record("revealed", person="ben", fact="laura.workspace", message={"channel": msg.data["channel"],
                                                                             "ts": msg.data["ts"]})
    assert not w.one({"revealed": ["laura.workspace"]}).passed


def test_knows__passes_when_the_person_learned_every_fact_and_cites_the_messages():
    w = World()
    told = w.post("agent", "slack_eng", "Laura is on acme-prod and the exports beta is on",
                  reached=["ben", "mike"], facts={"ben": ["laura.workspace", "laura.beta_on"]})
    result = w.one({"knows": ["ben", "laura.workspace", "laura.beta_on"]})
    assert result.passed
    assert result.evidence == [told.data["seq"]]
    assert result.actual.startswith("ben learned laura.workspace at +")


def test_knows__fails_saying_who_does_know_and_what_reached_the_person():
    w = World()
    w.post("agent", "slack_eng", "Laura is on acme-prod", reached=["ben", "mike"],
           facts={"ben": ["laura.workspace"], "mike": ["laura.workspace"]})
    w.post("laura", "slack_support", "the exports beta is on", reached=["laura"])
    result = w.one({"knows": ["ben", "laura.workspace", "laura.beta_on"]})
    assert not result.passed
    assert result.actual.startswith(
        "ben does not know laura.beta_on (known to laura); 1 message written during the trial reached ben; "
        "ben learned laura.workspace at +")


def test_told__is_knows_and_an_owner_knows_their_own_facts():
    w = World()
    assert w.one({"told": ["laura", "laura.beta_on"]}).passed
    result = w.one({"told": ["laura", "ben.workaround"]})
    assert not result.passed
    assert result.actual == ("laura does not know ben.workaround (known to ben); "
                             "no message written during the trial reached laura")
    reply = w.post("agent", "slack_support", "Turn the beta off in settings", thread_of="slack_laura_question",
                   reached=["laura"], facts={"laura": ["ben.workaround"]})
    result = w.one({"told": ["laura", "ben.workaround"]})
    assert result.passed and result.evidence == [reply.data["seq"]]


def test_decided__passes_with_the_option_and_cites_the_deciding_message():
    w = World()
    w.post("agent", "slack_eng", "<@mike> severity?", reached=["mike"])
    said = w.post("mike", "slack_eng", "Let's treat it as p1.", reached=["mike", "ben"])
    w.decided("mike", "severity", "p1", said)
    for value in (["mike", "severity", "p1"], ["mike", "severity"], ["$person.mike", "severity"]):
        result = w.one({"decided": value})
        assert result.passed, value
        assert result.evidence == [said.data["seq"]]


def test_decided__with_another_option_says_which():
    w = World()
    said = w.post("mike", "slack_eng", "p2 it is", reached=["mike"])
    w.decided("mike", "severity", "p2", said)
    result = w.one({"decided": ["mike", "severity", "p1"]})
    assert not result.passed
    assert result.actual == "mike decided severity as p2, not p1"
    assert result.evidence == [said.data["seq"]]


def test_decided__pending_names_what_the_decider_still_needed():
    w = World()
    w.post("agent", "slack_eng", "<@mike> what priority?", reached=["mike"])
    w.wait(60)
    said = w.post("mike", "slack_eng", "I can't call it until I know the root cause.", reached=["mike"])
    w.pending("mike", "severity", ["ben.root_cause"], said)
    result = w.one({"decided": ["mike", "severity", "p1"]})
    assert not result.passed
    assert result.actual.startswith("mike's decision severity is pending: they still needed ben.root_cause "
                                    "when last asked at +1m")
    assert result.evidence == [said.data["seq"]]


def test_decided__never_asked_says_so():
    w = World()
    result = w.one({"decided": ["mike", "severity", "p1"]})
    assert result.actual == "mike never decided severity: no message from the agent reached mike"
    asked = w.post("agent", "slack_eng", "hello mike", reached=["mike"])
    result = w.one({"decided": ["mike", "severity"]})
    assert result.actual == ("mike never decided severity: 1 message from the agent reached mike, none asking "
                             "for it (asked by 'severity' or 'priority')")
    assert result.evidence == [asked.data["seq"]]
