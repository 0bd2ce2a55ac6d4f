"""Writing small scene folders for the scene tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from ancha.errors import Problem
from ancha.scene import Scene, SceneInvalid, load_scene
from ancha.scene.sections import Catalog
from ancha.world.registry import catalog
from ancha.world.tools.slack.scene_file import SlackFile

SLACK = """\
world:
  slack:
    users:
      - { ref: slack_laura, name: laura }
      - { ref: slack_ben, name: ben }
    channels:
      - { ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }
      - { ref: slack_general, name: general }
    messages:
      - { ref: slack_question, channel: $slack_support, from: $slack_laura, text: Where are exports?, at: -3d }
"""


def write_scene(folder: Path, text: str, name: str = "demo") -> Path:
    path = folder / name / "scene.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scene_of(folder: Path, text: str) -> Scene:
    return load_scene(write_scene(folder, text), catalog())


def problems_of(folder: Path, text: str, tools: Catalog | None = None) -> list[Problem]:
    with pytest.raises(SceneInvalid) as info:
        load_scene(write_scene(folder, text), tools or catalog())
    return info.value.problems


@cache
def slack_only() -> Catalog:
    """A build with Slack alone: every other tool the reference names is still to come."""
    full = catalog()

    def kept(kinds: dict) -> dict:
        return {k: v for k, v in kinds.items() if v.tool in ("slack", "world")}

    return Catalog(worlds={"slack": full.worlds["slack"]}, states=kept(full.states),
                   predicates=kept(full.predicates), actions=kept(full.actions), effects=kept(full.effects),
                   planned_tools=tuple(t for t in full.tools if t != "slack"))


def messages(problems: list[Problem]) -> list[str]:
    return [f"{p.path}: {p.message}" for p in problems]

PEOPLE_WORLD = """\
world:
  slack:
    users:
      - { ref: slack_laura, name: laura }
      - { ref: slack_ben, name: ben }
      - { ref: slack_mike, name: mike }
    channels:
      - { ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }
      - { ref: slack_eng, name: eng }
    messages:
      - { ref: slack_laura_question, channel: $slack_support, from: $slack_laura, text: Where are exports?, at: -1h }
"""

PEOPLE = PEOPLE_WORLD + """\
people:
  laura:
    name: Laura Diaz
    accounts: { slack: $slack_laura }
    listens: [$slack_support]
    replies_after: 2m
    away: [{ from: 30m, to: 2h }]
    facts:
      workspace:
        text: We're on the acme-prod workspace.
        asked_by: [workspace, which account]
        match: [acme-prod]
      beta_on:
        text: The new-exports beta is on for us.
        asked_by: [beta, /feature ?flags?/]
    otherwise: null
  ben:
    name: Ben Ode
    accounts: { slack: $slack_ben }
    listens: [$slack_eng]
    replies_after: 1m..5m
    facts:
      root_cause: { text: The beta hides the CSV button., asked_by: [cause, why] }
      workaround: { text: Turn the beta off in settings., asked_by: [workaround] }
  mike:
    name: Mike Chen
    accounts: { slack: $slack_mike }
    decisions:
      severity:
        asked_by: [severity, priority]
        options: [p1, p2, p3]
        chooses: p1
        needs: [ben.root_cause]
        text: Let's treat it as {option}.
        pending: I can't call it until I know the root cause.
"""

REFERENCE = """\
checks:
  - { id: asked_laura, revealed: [laura.workspace, laura.beta_on] }
  - { id: ben_got_the_details, knows: [ben, laura.beta_on] }
  - { id: laura_got_the_workaround, told: [laura, ben.workaround] }
  - { id: priority_decided, decided: [mike, severity, p1] }
  - { id: answered_in_her_thread, message: { to: laura, in_thread_of: $slack_laura_question, from: $slack_bot } }
  - { id: no_root_cause_to_customer, never: { to: laura, fact: ben.root_cause } }
  - { id: priority_before_label, before: [{ decided: [mike, severity, p1] }, { called: "POST /repos/*/issues/*/labels" }] }
  - { id: answered_fast, within: { event: { message: { to: laura, from: $slack_bot } }, of: start, limit: 30m } }
"""


def slack_seed(scene: Scene) -> SlackFile:
    """The scene's resolved ``world.slack``, as the Slack tool reads it."""
    seed = scene.seed("slack", SlackFile)
    assert seed is not None, "the scene has no world.slack"
    return seed
