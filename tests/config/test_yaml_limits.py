"""A YAML file cannot explode: aliases are bounded and nesting is capped, for scene.yaml and
ancha.yaml alike, with an error that says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.scene.scene_files import problems_of, scene_of

from ancha.config import ConfigInvalid, ConfigOverrides, load_config
from ancha.config.yaml_source import read_yaml
from ancha.world.registry import config_catalog


def laughs(levels: int, indent: str = "") -> str:
    """Anchors that each repeat the one before ten times: 10**levels values once expanded."""
    lines = [f"{indent}l0: &l0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_scene__alias_bomb_is_refused_with_a_hint(tmp_path: Path) -> None:
    text = f"name: bomb\nworld:\n  slack: &seed\n{laughs(6, '    ')}checks: [{{ id: a, trace: {{ called: *l5 }} }}]\n"
    problems = problems_of(tmp_path, text)
    assert [p.message for p in problems] == ["aliases expand to more than 10,000 values"]
    assert problems[0].line is not None and "fewer aliases" in (problems[0].hint or "")


def test_scene__a_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, f"name: bomb\nanchors:\n{laughs(9, '  ')}")
    assert [p.message for p in problems] == ["aliases expand to more than 10,000 values"]


def test_config__alias_bomb_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: run\n  env:\n{laughs(9, '    ')}")
    with pytest.raises(ConfigInvalid) as info:
        load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert "aliases expand to more than 10,000 values" in str(info.value)
    assert info.value.exit_code == 2


def test_scene__a_few_aliases_still_work(tmp_path: Path) -> None:
    text = ("name: aliased\nworld:\n  slack:\n    users: [&laura { ref: slack_laura, name: laura }]\n"
            "    channels:\n      - { ref: slack_a, name: a, members: &members [$slack_laura, $slack_bot] }\n"
            "      - { ref: slack_b, name: b, members: *members }\n")
    scene = scene_of(tmp_path, text)
    assert [c["members"] for c in scene.world["slack"]["channels"]] == [["slack_laura", "slack_bot"]] * 2


def test_alias_of_itself__is_a_problem_not_a_loop() -> None:
    data, problems = read_yaml("a: &a [1, *a]\n")
    assert data is None and [p.message for p in problems] == ["an alias refers to the value it is part of"]


def test_deep_nesting__is_a_problem_not_a_recursion_error(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, "name: deep\ndescription: " + "[" * 5000 + "]" * 5000 + "\n")
    assert [p.message for p in problems] == ["nested more than 100 deep"]


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF", "\\ud83d\\ude00", "\\U0000D800"])
def test_scene__a_surrogate_escape_is_refused_with_its_line(tmp_path: Path, escape: str) -> None:
    text = ("name: broken\nworld:\n  slack:\n    users: [{ ref: slack_laura, name: laura }]\n"
            "    channels: [{ ref: slack_general, name: general }]\n    messages:\n"
            f'      - {{ channel: $slack_general, from: $slack_laura, text: "half an emoji {escape}" }}\n')
    problems = problems_of(tmp_path, text)
    assert [p.message for p in problems] == ["not Unicode text: a surrogate escape (U+D800 to U+DFFF)"]
    assert problems[0].line == 7 and "\\U0001F600" in (problems[0].hint or "")


def test_yaml__surrogate_escapes_outside_double_quotes_are_plain_text() -> None:
    value, problems = read_yaml("a: C:\\ud800\nb: 'x\\ud800'\nc: \"\\U0001F600 \\u00e9\"\n")
    assert problems == [] and value == {"a": "C:\\ud800", "b": "x\\ud800", "c": "\U0001f600 \u00e9"}
