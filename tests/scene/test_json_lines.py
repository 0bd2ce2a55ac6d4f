"""A JSONL file a scene names reads as if each line were parsed alone: lines that are plain
objects are parsed together (the fast path of a long history), yet a line that is not JSON,
or nests too deep, is still a problem on its own line, and never borrows from its neighbours."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ancha.scene import folder
from ancha.scene.folder import SceneFileRefused, json_lines

PIECES = [
    '{"channel": "$general", "from": "$laura", "text": "hi", "at": "-3m"}', '{"a": 1}', "{}", '{"a": "b\\"}"}',
    '{"a": null, "b": true, "c": -1.5e3}', '{"a": NaN}', '{"a": "\u2028"}', '{"a": "\\u2028"}',
    '{"a": "see [link]"}', '{"a": {"b": [1]}}', '{"reactions": {"eyes": ["$ben"]}}', "", "   ",
    # not JSON alone, though some parse once joined to their neighbours
    "not json", '{"a": 1,}', '{"a" 1}', '{"a": 1', '"b": 2}', '{"a": [1', '2]}, {"b": 2}', "[1", "2], 3",
    '{"a": "}', '{"}, {"b": 1}', '{"a": 1}, {"b": 2}', '{"a": 1}}', '{{"a": 1}', "{", "}", "}{", '{"a": "}{"}',
    "{}{}", '1, {"a": 2}', '{"a": 2}, 1', '{"a": {"b": 1}', '"c": 2}', '{"a": "\x01"}', '{"a": "\t"}', ' {"a": 1}', '{"a": 1} ', '\ufeff{"a": 1}', '{"a": ' + "1" * 5000 + "}",
    "[" * 40 + "]" * 40, '{"a": ' + "[" * 40 + "]" * 40 + "}", '{"a":' * 40 + "1" + "}" * 40, "42", '"text"', "null", "[]",
]


def _alone(data: bytes) -> list[tuple[int, Any]]:
    """What each non-blank line gives parsed on its own: what ``json_lines`` must give."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [(number, _shown(folder._json_line(raw))) for number, raw in enumerate(lines, start=1) if raw.strip()]


def _read(data: bytes) -> list[tuple[int, Any]]:
    return [(number, _shown(value)) for number, value in json_lines(data)]


def _shown(value: Any) -> Any:
    if isinstance(value, SceneFileRefused):
        return ("refused", value.message, value.hint)
    return ("value", repr(value))  # repr: NaN is not equal to itself


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(PIECES), max_size=12), newline=st.sampled_from(["\n", "\r\n", "\r", "\u2028"]),
       chunk=st.sampled_from([1, 2, 3, 1000]))
def test_json_lines__read_together_as_each_line_alone(lines: list[str], newline: str, chunk: int) -> None:
    data = newline.join(lines).encode("utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(folder, "_CHUNK", chunk)
        assert _read(data) == _alone(data)


def test_json_lines__lines_that_parse_only_joined_are_each_a_problem() -> None:
    data = (b'{"a": [1\n2]}, {"b": 2}\n{"x": "]}", "a": [1\n2]}, {"y": "[{"}\n{"a": "}\n{"}, {"b": 1}\n'
            b'{"a": {"b": 1}\n"c": 2}\n1, {"a": 2}\n{"b": 3}')
    read = _read(data)
    assert [number for number, _ in read] == list(range(1, 11))
    assert all(shown[0] == "refused" for _, shown in read[:-1]) and read[-1] == (10, ("value", "{'b': 3}"))


def test_json_lines__a_bad_line_in_a_long_file_is_a_problem_on_its_line() -> None:
    lines = [f'{{"text": "message {i}"}}' for i in range(1, 2501)]
    lines[999] = "not json"  # the last line of the first thousand, read together
    lines[1000] = '{"a": ' + "[" * 40 + "]" * 40 + "}"
    lines[1799] = ""
    data = "\n".join(lines).encode()
    read = dict(json_lines(data))
    assert len(read) == 2499 and 1800 not in read
    assert isinstance(read[1000], SceneFileRefused) and read[1000].message.startswith("not valid JSON")
    assert isinstance(read[1001], SceneFileRefused) and read[1001].message == "nested more than 32 deep"
    assert read[999] == {"text": "message 999"} and read[2500] == {"text": "message 2500"}
