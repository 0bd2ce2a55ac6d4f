"""A ``messages_file`` line reads the same on the fast path as through the field walker:
the fast path takes a line only when the walker would find nothing wrong with it, and
gives the same fields; every other line goes to the walker, which reports its problems."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.scene.scene_files import SLACK, problems_of, scene_of, slack_seed

from ancha.config.validation import INVALID, Walker
from ancha.scene.model import Scene
from ancha.world.tools.slack.scene_file import SlackMessageFile, _well_formed

KEYS = ["ref", "channel", "from", "text", "at", "thread_of", "reactions", "files", "from_", "bogus", "Ref"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**60, max_value=2**60),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.sampled_from(["$laura", "ok_name", "bad name", "-3d", "2026-01-05T09:00:00Z"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)
RECORDS = st.one_of(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6),
                    st.fixed_dictionaries({"channel": st.just("$general"), "from": st.just("$laura")},
                                          optional={key: VALUES for key in KEYS if key not in ("channel", "from")}),
                    st.fixed_dictionaries({"channel": st.text(max_size=5), "from": st.text(max_size=5)},
                                          optional={"text": st.text(max_size=5), "at": st.text(max_size=5),
                                                    "thread_of": st.none() | st.text(max_size=5),
                                                    "ref": st.none() | st.text(max_size=5)}),
                    VALUES)


def _walked(record: Any) -> tuple[Any, list[Any]]:
    walker = Walker(SlackMessageFile, "history.jsonl")
    return walker.section(record, SlackMessageFile, "", 1), walker.problems


@settings(max_examples=400, deadline=None)
@given(RECORDS)
def test_messages_file_line__the_fast_path_takes_only_lines_the_walker_finds_nothing_wrong_with(record):
    fast = _well_formed(record)
    if fast is None:
        return
    clean, problems = _walked(record)
    assert problems == [] and clean is not INVALID
    assert fast == clean and list(fast) == list(clean)


def test_messages_file_line__common_lines_take_the_fast_path():
    lines = [{"channel": "$general", "from": "$laura", "text": "hi", "at": "-3m"},
             {"ref": "q", "channel": "$general", "from": "$laura", "text": "q", "thread_of": None,
              "reactions": {"eyes": ["$ben"]}, "files": [{"name": "a.txt", "size": 3}]}]
    for line in lines:
        assert _well_formed(line) == _walked(line)[0]
    for bad in ({"channel": "$general", "from_": "$laura"}, {"channel": "$general"},
                {"channel": "$general", "from": "$laura", "text": 5},
                {"channel": "$general", "from": "$laura", "files": [{"size": float("nan")}]}):
        assert _well_formed(bad) is None and _walked(bad)[1]


def _history(tmp_path: Path, lines: list[str]) -> str:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "history.jsonl").write_text("\n".join(lines) + "\n")
    return SLACK + "    messages_file: history.jsonl\n"


def _line(i: int, **fields: Any) -> str:
    return json.dumps({"channel": "$slack_general", "from": "$slack_ben", "text": f"m{i}", "at": f"-{i}m", **fields})


def test_messages_file__a_long_history_loads_every_message_in_order(tmp_path: Path) -> None:
    lines = [_line(i) for i in range(2500, 0, -1)]
    lines[1200] = _line(1300, ref="slack_m1300", reactions={"eyes": ["$slack_laura"]})
    lines[1201] = _line(1299, thread_of="$slack_m1300")
    seed = slack_seed(scene_of(tmp_path, _history(tmp_path, lines)))
    start = datetime(2026, 1, 5, 9, tzinfo=UTC)
    history = seed.messages[1:]  # after the scene's own message
    assert [m.text for m in history] == [f"m{i}" for i in range(2500, 0, -1)]
    assert [m.at for m in history] == [start - timedelta(minutes=i) for i in range(2500, 0, -1)]
    assert {m.channel for m in history} == {"slack_general"} and {m.from_ for m in history} == {"slack_ben"}
    assert (history[1200].ref, history[1200].reactions, history[1201].thread_of) == \
        ("slack_m1300", {"eyes": ["slack_laura"]}, "slack_m1300")


def test_messages_file__a_long_history_reports_each_bad_line_on_its_line(tmp_path: Path) -> None:
    lines = [_line(i) for i in range(2500, 0, -1)]
    lines[999] = "not json"  # the last of the first thousand lines, which are read together
    lines[1000] = _line(1, **{"from": "$slack_nobody"})
    lines[1999] = _line(1, at="-3651d")
    lines[2499] = _line(1, text=5)
    problems = problems_of(tmp_path, _history(tmp_path, lines))
    assert [(p.line, p.path) for p in problems] == [(1000, ""), (1001, "from"), (2000, "at"), (2500, "text")]
    assert [p.message for p in problems] == [
        "not valid JSON: Expecting value", "unknown ref $slack_nobody",
        "expected an ISO time such as 2026-01-05T09:00:00Z or an offset from clock.start such as -3d, "
        "got '-3651d'", "expected a string, got 5"]
    assert {Path(p.file or "").name for p in problems} == {"history.jsonl"}


def test_messages_file__the_cycle_collector_is_left_as_it_was(tmp_path: Path) -> None:
    text = _history(tmp_path, [_line(i) for i in range(3, 0, -1)])
    assert len(slack_seed(scene_of(tmp_path, text)).messages) == 4 and gc.isenabled()
    gc.disable()
    try:
        slack_seed(scene_of(tmp_path, text))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_messages_file__a_long_history_is_kept_once_and_dumps_as_the_list_it_was_written_as(tmp_path: Path) -> None:
    lines = [_line(i) for i in range(300, 0, -1)]
    lines[10] = _line(290, ref="slack_m290", reactions={"eyes": ["$slack_laura"]})
    lines[11] = _line(289, thread_of="$slack_m290")
    scene = scene_of(tmp_path, _history(tmp_path, lines))
    seed = slack_seed(scene)
    assert scene.world["slack"]["messages"] is seed.messages  # one copy, not a JSON list beside the models
    dumped = scene.model_dump(mode="json", by_alias=True)["world"]["slack"]["messages"]
    assert len(dumped) == 301 and dumped[11] == {
        "ref": "slack_m290", "channel": "slack_general", "from": "slack_ben", "text": "m290",
        "at": "2026-01-05T04:10:00Z", "thread_of": None, "reactions": {"eyes": ["slack_laura"]}, "files": []}
    assert dumped[12]["thread_of"] == "slack_m290"
    again = Scene.model_validate_json(scene.model_dump_json(by_alias=True))
    assert slack_seed(again).messages == seed.messages and again == scene


def test_messages_file__plain_lines_pack_exactly_as_the_same_messages_written_inline(tmp_path: Path) -> None:
    lines = [
        {"channel": "$slack_general", "from": "$slack_ben", "text": "first", "at": "-90m"},
        {"channel": "$slack_general", "from": "$slack_ben", "text": "no time"},
        {"channel": "$slack_general", "from": "$slack_ben", "text": "later", "at": "+3m"},
        {"channel": "$slack_general", "from": "$slack_ben", "text": "unsigned", "at": "10m"},
        {"channel": "$slack_general", "from": "$slack_ben", "text": "padded", "at": " -5m "},
        {"channel": "$slack_general", "from": "$slack_ben", "at": "-2h30m"},
        {"channel": "$slack_general", "from": "$slack_ben", "text": "iso", "at": "2026-01-05T08:00:00Z"},
        {"ref": "slack_q", "channel": "$slack_support", "from": "$slack_laura", "text": "q", "at": "-1d"},
        {"channel": "$slack_support", "from": "$slack_ben", "text": "a", "thread_of": "$slack_q"},
        {"channel": "$slack_support", "from": "$slack_laura", "text": "émoji ☃ \"quoted\"", "at": "-1d"},
    ]
    (tmp_path / "file").mkdir()
    (tmp_path / "inline").mkdir()
    from_file = slack_seed(scene_of(tmp_path / "file", _history(tmp_path / "file", [json.dumps(x) for x in lines])))
    inline = SLACK + "".join(f"      - {json.dumps(x)}\n" for x in lines)
    written = slack_seed(scene_of(tmp_path / "inline", inline))
    assert len(from_file.messages) == len(written.messages) == 11
    assert list(from_file.messages) == list(written.messages)
