from __future__ import annotations

from pathlib import Path

from scene_files import PEOPLE, PEOPLE_WORLD, SLACK, messages, problems_of, scene_of, slack_only, slack_seed

from ancha.scene import Scene
from ancha.scene.model import AwayWindow, Decision, Fact


def _person(body: str) -> str:
    """SLACK plus one person ``p`` whose indented fields are ``body``."""
    return SLACK + "people:\n  p:\n" + "".join(f"    {line}\n" for line in body.splitlines())


def test_people__resolved_from_the_scenes_md_example(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, PEOPLE)
    assert list(scene.people) == ["laura", "ben", "mike"]
    laura = scene.people["laura"]
    assert (laura.name, laura.accounts, laura.listens) == ("Laura Diaz", {"slack": "slack_laura"}, ["slack_support"])
    assert laura.replies_after == (120.0, 120.0)
    assert laura.away == [AwayWindow.model_validate({"from": 1800.0, "to": 7200.0})]
    assert laura.facts["workspace"] == Fact(text="We're on the acme-prod workspace.",
                                            asked_by=["workspace", "which account"], match=["acme-prod"])
    assert laura.otherwise is None and laura.voice == "scene"
    assert scene.people["mike"].decisions["severity"] == Decision(
        asked_by=["severity", "priority"], options=["p1", "p2", "p3"], chooses="p1", needs=["ben.root_cause"],
        text="Let's treat it as {option}.", pending="I can't call it until I know the root cause.")


def test_fact_match__defaults_to_its_text(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, PEOPLE)
    assert scene.people["laura"].facts["beta_on"].match == ["The new-exports beta is on for us."]


def test_person__defaults(tmp_path: Path) -> None:
    person = scene_of(tmp_path, SLACK + "people:\n  p: {}\n").people["p"]
    assert (person.name, person.accounts, person.listens, person.away) == ("p", {}, [], [])
    assert person.replies_after == (60.0, 60.0)
    assert (person.otherwise, person.voice) == (None, "scene")


def test_decision__default_text_and_pending(tmp_path: Path) -> None:
    person = scene_of(tmp_path, _person("decisions:\n  go: { options: [yes, no], chooses: yes }")).people["p"]
    decision = person.decisions["go"]
    assert (decision.text, decision.pending, decision.needs) == ("Let's go with {option}.",
                                                                 "I can't decide that yet.", [])


def test_slack_user__names_the_person_owning_it(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, PEOPLE)
    assert [u.ref for u in slack_seed(scene).users] == ["slack_laura", "slack_ben", "slack_mike"]
    assert scene.accounts("slack") == {"slack_laura": "laura", "slack_ben": "ben", "slack_mike": "mike"}


def test_replies_after__range_drawn_per_reply(tmp_path: Path) -> None:
    assert scene_of(tmp_path, PEOPLE).people["ben"].replies_after == (60.0, 300.0)
    person = scene_of(tmp_path, _person("replies_after: 30s..1m30s")).people["p"]
    assert person.replies_after == (30.0, 90.0)


def test_replies_after__bad_range_and_backwards_range(tmp_path: Path) -> None:
    assert messages(problems_of(tmp_path, _person("replies_after: 5m..1m"))) == [
        "people.p.replies_after: the range 5m..1m ends before it starts"]
    (problem,) = problems_of(tmp_path, _person("replies_after: soon"))
    assert problem.message == "expected a duration such as 2m, or a range such as 1m..5m, got 'soon'"
    assert problem.hint is not None and "1m..5m" in problem.hint


def test_away__signed_offsets_from_clock_start(tmp_path: Path) -> None:
    person = scene_of(tmp_path, _person("away: [{ from: -1h, to: 10m }, { from: 2h, to: 1d }]")).people["p"]
    assert [(w.from_, w.to) for w in person.away] == [(-3600.0, 600.0), (7200.0, 86400.0)]


def test_away__must_end_after_it_starts(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("away: [{ from: 2h, to: 30m }, { from: 1h, to: 1h }, { from: x, to: 1h }]"))
    assert messages(found) == [
        "people.p.away[0]: away ends (30m) before it starts (2h)",
        "people.p.away[1]: away ends (1h) before it starts (1h)",
        "people.p.away[2].from: expected a duration from clock.start such as 30m or -1h, got 'x'",
    ]


def test_accounts__slack_must_be_a_user_and_tools_not_in_the_build_later(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("accounts: { slack: $slack_support, pagerduty: $pd_p }"), slack_only())
    assert messages(found) == ["people.p.accounts.slack: $slack_support is a channel, not a user",
                               "people.p.accounts.pagerduty: not supported yet"]
    assert found[1].hint is not None and "later version" in found[1].hint


def test_accounts__a_user_belongs_to_one_person(tmp_path: Path) -> None:
    text = SLACK + "people:\n  a: { accounts: { slack: $slack_ben } }\n  b: { accounts: { slack: $slack_ben } }\n"
    (problem,) = problems_of(tmp_path, text)
    assert (problem.path, problem.message) == ("people.b.accounts.slack", "$slack_ben already belongs to a")
    assert problem.hint == "a user belongs to one person only"


def test_listens__channel_refs(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("listens: [$slack_support, $slack_ben, $nope]"))
    assert messages(found) == ["people.p.listens[1]: $slack_ben is a user, not a channel",
                               "people.p.listens[2]: unknown ref $nope"]


def test_person__declared_as_ref_of_kind_person(tmp_path: Path) -> None:
    found = problems_of(tmp_path, SLACK + "people:\n  slack_ben: {}\n  bad-name: {}\n")
    assert messages(found) == [
        "people.slack_ben: duplicate ref slack_ben",
        "people.bad-name: expected a person name of letters, digits and _, got 'bad-name'",
    ]


def test_person__ref_in_a_channel_is_the_wrong_kind(tmp_path: Path) -> None:
    found = problems_of(tmp_path, PEOPLE.replace("listens: [$slack_eng]", "listens: [$mike]"))
    assert messages(found) == ["people.ben.listens[0]: $mike is a person, not a channel"]


def test_patterns__regex_must_compile(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person(
        "facts:\n  f: { text: T, asked_by: ['/(unclosed/', ok], match: ['', '/a)/'] }\n"
        "decisions:\n  d: { asked_by: ['/(a)\\1/'], options: [x], chooses: x }"))
    assert [(p.path, p.message.split(":")[0]) for p in found] == [
        ("people.p.facts.f.asked_by[0]", "invalid regex /(unclosed/"),
        ("people.p.facts.f.match[0]", "is empty"),
        ("people.p.facts.f.match[1]", "invalid regex /a)/"),
        ("people.p.decisions.d.asked_by[0]", "invalid regex /(a)\\1/"),
    ]
    assert "RE2" in found[3].message


def test_decision__chooses_one_of_options_and_needs_known_facts(tmp_path: Path) -> None:
    found = problems_of(tmp_path, PEOPLE.replace("chooses: p1", "chooses: p4")
                        .replace("needs: [ben.root_cause]", "needs: [ben.root_caus, lara.x, ben]"))
    assert messages(found) == [
        "people.mike.decisions.severity.chooses: p4 is not one of the options",
        "people.mike.decisions.severity.needs[0]: unknown fact ben.root_caus",
        "people.mike.decisions.severity.needs[1]: unknown person lara",
        "people.mike.decisions.severity.needs[2]: expected a fact such as laura.workspace, got 'ben'",
    ]
    assert [p.hint for p in found[:3]] == ["options: p1, p2, p3", "facts of ben: ben.root_cause, ben.workaround",
                                           "people: ben, laura, mike"]


def test_decision__options_non_empty_and_required(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("decisions:\n  a: { options: [], chooses: x }\n  b: { text: hi }"))
    assert messages(found) == ["people.p.decisions.a.options: needs at least one option",
                               "people.p.decisions.b.options: missing required field",
                               "people.p.decisions.b.chooses: missing required field"]


def test_people__unknown_field_and_voice(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("replies: 2m\nvoice: robot"))
    assert messages(found) == ["people.p.replies: unknown field",
                               "people.p.voice: expected one of scene, model, got 'robot'"]
    assert found[0].hint == "did you mean people.p.replies_after?"


def test_voice_model__refused_until_built_never_ignored(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _person("voice: model"))
    assert messages(found) == ["people.p.voice: voice: model is built in a later version of Ancha"]
    assert found[0].hint is not None and "voice: scene" in found[0].hint
    assert scene_of(tmp_path, _person("voice: scene")).people["p"].voice == "scene"


def test_slack_user_person_field__points_at_accounts(tmp_path: Path) -> None:
    found = problems_of(tmp_path, PEOPLE_WORLD.replace("{ ref: slack_mike, name: mike }",
                                                       "{ ref: slack_mike, name: mike, person: mike }"))
    assert messages(found) == ["world.slack.users[2].person: not supported yet"]
    assert found[0].hint is not None and "accounts.slack" in found[0].hint


def test_json_round_trip__scene_with_people_rules_and_process_checks(tmp_path: Path) -> None:
    text = PEOPLE + """\
world_rules:
  events:
    - at: 10m
      unless: { message: { to: laura, from: $slack_bot } }
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: Any news?, thread_of: $slack_laura_question }
    - after: { not: { any: [{ knows: [ben, laura.beta_on] }, { called: "GET /x" }] } }
      delay: 5m
      do: [{ slack.reaction: { channel: $slack_support, message: $slack_laura_question, from: $slack_ben, name: eyes } }]
checks:
  - { id: a, revealed: [laura.workspace] }
  - { id: b, message: { to: laura, from: $slack_bot, text_contains: beta, count_gte: 2 } }
  - { id: c, never: { fact: ben.root_cause, in: $slack_support } }
  - id: d
    before: [{ decided: [mike, severity] }, { slack.message: { channel: $slack_support, from: $slack_bot } }]
  - { id: e, within: { event: { told: [laura, ben.workaround] }, of: { called: "*" }, limit: 1h } }
"""
    scene = scene_of(tmp_path, text)
    dumped = scene.model_dump(mode="json", by_alias=True)
    assert Scene.model_validate(dumped) == scene
    assert dumped["people"]["laura"]["away"] == [{"from": 1800.0, "to": 7200.0}]
