from __future__ import annotations

from pathlib import Path

from scene_files import SLACK, messages, problems_of, scene_of, slack_seed


def _message(line: str) -> str:
    return SLACK + f"      - {line}\n"


def test_unknown_ref__hint_lists_refs_of_kind(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, _message("{ channel: $slack_nope, from: $slack_ben }"))
    assert (problem.path, problem.message) == ("world.slack.messages[1].channel", "unknown ref $slack_nope")
    assert problem.hint == "refs of kind channel: $slack_support, $slack_general"
    assert problem.line == 11


def test_wrong_kind__error(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, _message("{ channel: $slack_general, from: $slack_support }"))
    assert (problem.path, problem.message) == ("world.slack.messages[1].from", "$slack_support is a channel, not a user")
    assert problem.hint == "refs of kind user: $slack_bot, $slack_laura, $slack_ben"


def test_kind_dot_name_form__checked_and_stored_bare(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _message("{ channel: $channel.slack_general, from: $user.slack_ben }"))
    assert "slack" in scene.world
    message = slack_seed(scene).messages[1]
    assert (message.channel, message.from_) == ("slack_general", "slack_ben")


def test_kind_dot_name_form__wrong_kind(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _message("{ channel: $user.slack_general, from: $slack_ben }"))
    assert messages(found) == ["world.slack.messages[1].channel: "
                               "$user.slack_general is written as a user, but a channel ref is needed here"]


def test_ref_without_dollar__error_with_example(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _message("{ channel: general, from: $slack_ben }"))
    assert messages(found) == ["world.slack.messages[1].channel: "
                               "expected a ref such as $name or $channel.name, got 'general'"]


def test_duplicate_ref__error(tmp_path: Path) -> None:
    found = problems_of(tmp_path, SLACK.replace("{ ref: slack_ben,", "{ ref: slack_laura,"))
    assert messages(found)[0] == "world.slack.users[1].ref: duplicate ref slack_laura"
    assert found[0].hint == "slack_laura is already declared at line 4; refs are unique in a scene"


def test_bad_ref_name__error(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "world:\n  slack:\n    users: [{ ref: bad-name, name: x }]\n")
    assert messages(found) == ["world.slack.users[0].ref: expected a ref name of letters, digits and _, got 'bad-name'"]


def test_thread_of__same_channel_required(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _message("{ channel: $slack_general, from: $slack_ben, thread_of: $slack_question }"))
    assert messages(found) == ["world.slack.messages[1].thread_of: "
                               "$slack_question is in channel $slack_support, not $slack_general"]


def test_members_and_reactions__user_refs(tmp_path: Path) -> None:
    text = SLACK.replace("[$slack_laura, $slack_bot]", "[$slack_laura, $slack_general]") + \
        "      - { channel: $slack_support, from: $slack_ben, reactions: {eyes: [$slack_laura, $slack_question]} }\n"
    found = problems_of(tmp_path, text)
    assert messages(found) == [
        "world.slack.channels[0].members[1]: $slack_general is a channel, not a user",
        "world.slack.messages[1].reactions.eyes[1]: $slack_question is a message, not a user",
    ]


def test_custom_bot_ref__is_a_user(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, "world:\n  slack:\n    bot: { ref: me, name: helper }\n"
                     "    channels: [{ ref: c, name: c, members: [$me] }]\n")
    assert "slack" in scene.world and slack_seed(scene).channels[0].members == ["me"]


def test_check_refs__kinds_checked(tmp_path: Path) -> None:
    text = SLACK + "checks:\n  - id: a\n    state:\n      slack.message: { channel: $slack_ben, in_thread_of: $nope }\n"
    found = problems_of(tmp_path, text)
    assert messages(found) == [
        "checks[0].state.slack.message.channel: $slack_ben is a user, not a channel",
        "checks[0].state.slack.message.in_thread_of: unknown ref $nope",
    ]
    assert found[1].hint == "refs of kind message: $slack_question"
