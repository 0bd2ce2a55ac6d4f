from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scene_files import SLACK, messages, problems_of, scene_of, slack_only, slack_seed, write_scene

from ancha.scene import Scene, SceneInvalid, load_scene, load_scenes
from ancha.world.registry import catalog

CHECKS = """\
checks:
  - id: answered
    state:
      slack.message: { channel: $slack_support, from: $slack_bot, in_thread_of: $slack_question }
  - id: posted
    trace: { called: "* /api/chat.postMessage" }
  - id: helpful
    judge: The reply is helpful.
"""


def test_minimal_scene__defaults(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, "task: Say hi.\n")
    assert scene.name == "demo"
    assert scene.description == ""
    assert scene.clock.start == datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert (scene.clock.limit, scene.clock.speed) == (3600.0, 1.0)
    assert "slack" not in scene.world
    assert scene.checks == [] and scene.pass_ == []
    assert scene.path == str((tmp_path / "demo" / "scene.yaml").resolve())


def test_empty_slack__default_bot_and_team(tmp_path: Path) -> None:
    slack = slack_seed(scene_of(tmp_path, "world:\n  slack: {}\n"))
    assert slack is not None
    assert (slack.bot.ref, slack.team.name) == ("slack_bot", "Acme")


def test_full_scene__resolved(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, "name: export\nclock: {start: 2026-03-02T09:00:00Z, limit: 2h, speed: 2}\n"
                     + SLACK + CHECKS + "pass: [answered, posted]\n")
    assert scene.name == "export"
    assert (scene.clock.limit, scene.clock.speed) == (7200.0, 2.0)
    slack = slack_seed(scene)
    assert slack is not None
    assert slack.channels[0].members == ["slack_laura", "slack_bot"]
    question = slack.messages[0]
    assert (question.channel, question.from_) == ("slack_support", "slack_laura")
    assert question.at == datetime(2026, 2, 27, 9, 0, tzinfo=UTC)
    assert [c.kind for c in scene.checks] == ["state", "trace", "judge"]
    state = scene.checks[0].state
    assert state is not None and "slack.message" in state
    assert (state["slack.message"]["from"], state["slack.message"]["in_thread_of"]) == ("slack_bot", "slack_question")
    assert scene.checks[1].trace is not None and scene.checks[1].trace.called == ["* /api/chat.postMessage"]
    assert scene.checks[0].line == 14
    assert scene.pass_ == ["answered", "posted"]


def test_pass_defaults_to_every_check(tmp_path: Path) -> None:
    assert scene_of(tmp_path, SLACK + CHECKS).pass_ == ["answered", "posted", "helpful"]


def test_times__iso_and_signed_offsets_stored_utc(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, SLACK + (
        "      - { channel: $slack_general, from: $slack_ben, at: '2026-01-05T10:00:00+02:00' }\n"
        "      - { channel: $slack_general, from: $slack_ben, at: -2h30m }\n"
        "      - { channel: $slack_general, from: $slack_ben, at: 10m }\n"))
    assert "slack" in scene.world
    assert [m.at for m in slack_seed(scene).messages[1:]] == [
        datetime(2026, 1, 5, 8, 0, tzinfo=UTC), datetime(2026, 1, 5, 6, 30, tzinfo=UTC),
        datetime(2026, 1, 5, 9, 10, tzinfo=UTC)]


def test_json_round_trip__equal_scene(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "history.jsonl").write_text('{"channel": "$slack_general", "from": "$slack_ben"}\n')
    scene = scene_of(tmp_path, SLACK
                     + "      - { channel: $slack_general, from: $slack_ben, reactions: {eyes: [$slack_laura]} }\n"
                     + "    messages_file: history.jsonl\n" + CHECKS)
    again = Scene.model_validate(scene.model_dump(mode="json", by_alias=True))
    assert again == scene


def test_messages_file__appended_and_hashed(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    history = b'{"channel": "$slack_general", "from": "$slack_ben", "text": "old", "at": "-1d"}\n\n'
    (tmp_path / "demo" / "history.jsonl").write_bytes(history)
    path = write_scene(tmp_path, SLACK + "    messages_file: history.jsonl\n")
    scene = load_scene(path, catalog())
    assert "slack" in scene.world
    assert [m.text for m in slack_seed(scene).messages] == ["Where are exports?", "old"]
    assert scene.source_hash == hashlib.sha256(path.read_bytes() + history).hexdigest()


def test_messages_file__bad_line_reports_jsonl_line(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "history.jsonl").write_text(
        '{"channel": "$slack_general", "from": "$slack_ben"}\nnot json\n'
        '{"channel": "$slack_general", "frm": "$slack_ben"}\n{"channel": "$nope", "from": "$slack_ben"}\n')
    with pytest.raises(SceneInvalid) as info:
        load_scene(write_scene(tmp_path, SLACK + "    messages_file: history.jsonl\n"), catalog())
    found = [(Path(p.file or "").name, p.line, p.path, p.message) for p in info.value.problems]
    assert found == [
        ("history.jsonl", 2, "", "not valid JSON: Expecting value"),
        ("history.jsonl", 3, "frm", "unknown field"),
        ("history.jsonl", 3, "from", "missing required field"),
        ("history.jsonl", 4, "channel", "unknown ref $nope"),
    ]
    assert info.value.render().splitlines()[-1].endswith("demo/history.jsonl")


def test_messages_file_missing__problem(tmp_path: Path) -> None:
    found = problems_of(tmp_path, SLACK + "    messages_file: nope.jsonl\n")
    assert found[0].path == "world.slack.messages_file" and found[0].message.startswith("no such file")


def test_not_supported_yet__sections_of_tools_not_in_the_build_refused(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "world:\n  github: {}\n  datadog: {}\n  pagerduty: {}\n  okta: {}\n",
                        slack_only())
    assert messages(found) == [f"{p}: not supported yet" for p in (
        "world.github", "world.datadog", "world.pagerduty", "world.okta")]
    assert all(p.hint and "later version" in p.hint for p in found)


def test_unknown_keys__did_you_mean_and_known_fields(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "nmae: x\nclock: {sped: 2}\nslack: {}\nbogus: 1\n")
    assert [(p.path, p.hint) for p in found] == [
        ("nmae", "did you mean name?"),
        ("clock.sped", "did you mean clock.speed?"),
        ("slack", "did you mean world.slack? Put it under world:"),
        ("bogus", "known fields: name, description, task, clock, world, people, world_rules, checks, pass, expect_unchanged"),
    ]


def test_render__file_line_path_and_fix_line(tmp_path: Path) -> None:
    path = write_scene(tmp_path, "task: x\nclock:\n  limit: 10\n  bogus: 1\n")
    with pytest.raises(SceneInvalid) as info:
        load_scene(path, catalog())
    assert info.value.exit_code == 2
    assert info.value.render() == (
        f"error[SCENE_INVALID]: {path}:3: clock.limit: expected a duration such as 500ms, 10s or 1m30s, got 10\n"
        f"  {path}:4: clock.bogus: unknown field\n"
        "hint: clock.bogus: known fields of clock: start, limit, speed\n"
        f"  fix the scene file: {path.resolve()}"
    )


def test_yaml_error__reported_with_line(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "task: x\nchecks: [\n")
    assert found[0].message.startswith("not valid YAML") and found[0].line is not None


def test_load_scenes__globs_sorted_and_deduplicated(tmp_path: Path) -> None:
    write_scene(tmp_path / "scenes", "task: b\n", "b")
    write_scene(tmp_path / "scenes", "task: a\n", "a")
    scenes = load_scenes(["scenes/**/scene.yaml", "scenes/a/scene.yaml"], tmp_path, catalog())
    assert [s.name for s in scenes] == ["a", "b"]


def test_load_scenes__glob_matching_nothing_is_a_problem(tmp_path: Path) -> None:
    write_scene(tmp_path / "scenes", "task: a\n", "a")
    with pytest.raises(SceneInvalid) as info:
        load_scenes(["scenes/**/scene.yaml", "other/*.yaml"], tmp_path, catalog())
    assert messages(info.value.problems) == ["scenes[1]: no file matches other/*.yaml"]


def test_load_scenes__problems_of_all_scenes_at_once(tmp_path: Path) -> None:
    write_scene(tmp_path / "scenes", "bogus: 1\n", "a")
    write_scene(tmp_path / "scenes", "world_rules: {evnts: []}\n", "b")
    with pytest.raises(SceneInvalid) as info:
        load_scenes(["scenes/**/scene.yaml"], tmp_path, catalog())
    assert [(p.file, p.path) for p in info.value.problems] == [
        ("scenes/a/scene.yaml", "bogus"), ("scenes/b/scene.yaml", "world_rules.evnts")]
    assert info.value.render().count("fix the scene file:") == 2


def test_load_scenes__duplicate_names_refused(tmp_path: Path) -> None:
    write_scene(tmp_path / "scenes", "name: same\n", "a")
    write_scene(tmp_path / "scenes", "task: t\nname: same\n", "b")
    with pytest.raises(SceneInvalid) as info:
        load_scenes(["scenes/**/scene.yaml"], tmp_path, catalog())
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.path) == ("scenes/b/scene.yaml", 2, "name")
    assert "also used by" in problem.message


def test_missing_scene_file__problem(tmp_path: Path) -> None:
    with pytest.raises(SceneInvalid) as info:
        load_scene(tmp_path / "nope.yaml", catalog())
    assert info.value.problems[0].message == "no such file"
