from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from ancha.config import ConfigInvalid, ConfigOverrides, load_config
from ancha.scene import SceneInvalid, load_scene
from ancha.world.registry import catalog, config_catalog

_KEYS = ["name", "task", "clock", "start", "limit", "speed", "world", "slack", "users", "channels", "messages",
         "messages_file", "ref", "channel", "from", "at", "thread_of", "reactions", "members", "checks", "id",
         "trace", "called", "not_called", "status", "state", "slack.message", "judge", "pass", "people",
         "agent", "command", "url", "start", "ready_url", "execution", "mode", "env", "trials", "parallel",
         "min_pass_rate", "idle", "scenes", "server", "github", "count_gte", "in_thread_of", "x",
         "laura", "accounts", "listens", "replies_after", "away", "to", "facts", "text", "asked_by", "match",
         "decisions", "options", "chooses", "needs", "world_rules", "events", "after", "delay", "unless", "do",
         "slack.reaction", "revealed", "knows", "told", "decided", "message", "never", "before", "within",
         "event", "of", "all", "any", "not", "in", "fact", "text_contains"]
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
    st.sampled_from(["$slack_bot", "$user.x", "$nope", "-3d", "10s", "1m30s", "GET /x", "*", "{{slack.url}}",
                     "{{nope}}", "2026-01-05T09:00:00Z", "container", "any", "", "history.jsonl", "laura", "$laura",
                     "laura.x", "1m..5m", "5m..1m", "/(a/", "start", "p1"]),
    st.text(max_size=8),
)
_TREES: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5)),
    max_leaves=25,
)


def _dump(tree: Any) -> str:
    out = io.StringIO()
    YAML(typ="safe").dump(tree, out)
    return out.getvalue()


_FUZZ = settings(max_examples=int(os.environ.get("ANCHA_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load_scene_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s" / "scene.yaml"
        path.parent.mkdir()
        path.write_text(text)
        (path.parent / "history.jsonl").write_text('{"channel": 1}\n[]\n')
        try:
            load_scene(path, catalog())
        except SceneInvalid as exc:
            assert exc.render().startswith("error[SCENE_INVALID]: ")


@_FUZZ
@given(st.one_of(_TREES.map(_dump), st.text(max_size=60)))
def test_random_yaml__scene_loader_only_raises_scene_invalid(text: str) -> None:
    _load_scene_text(text)


@_FUZZ
@given(st.one_of(_TREES.map(_dump), st.text(max_size=60)))
def test_random_yaml__config_loader_only_raises_config_invalid(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "ancha.yaml").write_text(text)
        try:
            load_config(None, Path(tmp), ConfigOverrides(), catalog=config_catalog())
        except ConfigInvalid as exc:
            assert exc.render().startswith("error[CONFIG_INVALID]: ")


@_FUZZ
@given(st.dictionaries(st.sampled_from(["name", "task", "clock", "world", "checks", "pass"]), _TREES, max_size=5),
       st.dictionaries(st.sampled_from(["users", "channels", "messages", "bot", "team"]), _TREES, max_size=4))
def test_scene_shaped_junk__only_scene_invalid(top: dict[str, Any], slack: dict[str, Any]) -> None:
    top = {**top, "world": {"slack": slack}}
    _load_scene_text(_dump(top))


_RULES = """\
world_rules:
  events:
    - after: { not: { any: [{ knows: [ben, laura.beta_on] }, { slack.message: { channel: $slack_support } }] } }
      delay: 5m
      unless: { message: { to: laura, from: $slack_bot } }
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: hi, thread_of: $slack_laura_question }
        - slack.reaction: { channel: $slack_support, message: $slack_laura_question, from: $slack_ben, name: eyes }
"""


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        out.extend(_paths(value, (*path, key)))
    return out


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[head] = _replace(node[head], tuple(rest), value)
    return copy


@_FUZZ
@given(st.data())
def test_people_scene_with_one_part_replaced__only_scene_invalid(data: st.DataObject) -> None:
    from scene_files import PEOPLE, REFERENCE

    base = YAML(typ="safe").load(io.StringIO(PEOPLE + REFERENCE + _RULES))
    path = data.draw(st.sampled_from(_paths(base)[1:]))
    _load_scene_text(_dump(_replace(base, path, data.draw(_TREES))))
