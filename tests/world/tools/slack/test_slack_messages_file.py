"""A ``messages_file`` line reads the same on the fast path as through the field walker:
the fast path takes a line only when the walker would find nothing wrong with it, and
gives the same fields; every other line goes to the walker, which reports its problems."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ancha.config.validation import INVALID, Walker
from ancha.world.tools.slack.scene import _well_formed
from ancha.world.tools.slack.scene_models import SlackMessageFile

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
