"""A trial's verdict as its page opens on it: why it failed, in one line (the first failed
required check, with what it expected and found), its checks failed first, and what each
check is about (its tools and its people) for the page's filters.

Check results carry no kind. What a check is about is read from its scene file's check
(``state: {datadog.monitor: ...}`` names datadog, ``decided: [mike, ...]`` names mike), when
the file still has the hash the run recorded, else from the result's own text, and from the
calls its evidence points at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ancha.console.trial_data import Call, TrialData
from ancha.results.run_folder import failed_checks
from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene
from ancha.scene.model import Scene
from ancha.world.registry import catalog

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
PERSON_ACTOR = "person:"
WORLD_ACTOR = "world"


@dataclass(frozen=True, slots=True)
class CheckAbout:
    """The tools and people a check names: what the page's filters match it by."""

    tools: tuple[str, ...] = ()
    people: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    reason: dict[str, Any] | None
    """The first failed required check (the first failing one when none is required)."""
    failing: list[dict[str, Any]]
    """Every result that is not ``passed``, in scene order: the page lists them first."""
    passed: list[dict[str, Any]]
    about: dict[str, CheckAbout]
    """By check id."""
    tools: list[str]
    """Every tool a check or a call names, for the tool filter."""
    people: list[str]
    """Every person a check or a call names, for the person filter."""
    world_calls: int
    """Calls the world made itself (``is_world_call``): the calls table hides them until asked."""

    def of(self, check_id: Any) -> CheckAbout:
        return self.about.get(str(check_id), CheckAbout())


def read_verdict(trial: TrialData, scene: Scene | None, tools: Iterable[str]) -> Verdict:
    """``trial``'s verdict; ``scene``: its scene file when it still matches the run (see
    ``matching_scene``); ``tools``: the registered tools' names."""
    results = [r for r in trial.checks.get("results") or [] if isinstance(r, dict)]
    failing_ids = {str(r.get("id")) for r in failed_checks(trial.checks)}
    failing = [r for r in results if r.get("status") != "passed"]
    blamed = [r for r in results if str(r.get("id")) in failing_ids]
    reason = next((r for r in blamed if r.get("required")), blamed[0] if blamed else None)
    names = sorted(set(tools), key=len, reverse=True)  # the longest first: "github_app" before "github"
    people = _people(scene, trial)
    specs = {spec.id: spec.model_dump(mode="json", exclude_none=True) for spec in scene.checks} if scene else {}
    about = {str(r.get("id")): _about(r, specs.get(str(r.get("id"))), trial, names, people) for r in results}
    call_tools = {c.tool for c in trial.calls if c.tool}
    call_people = {c.actor.removeprefix(PERSON_ACTOR) for c in trial.calls if c.actor.startswith(PERSON_ACTOR)}
    return Verdict(reason, failing, [r for r in results if r.get("status") == "passed"], about,
                   sorted(call_tools.union(*(a.tools for a in about.values()))),
                   sorted(call_people.union(*(a.people for a in about.values()))),
                   sum(1 for c in trial.calls if is_world_call(c)))


def matching_scene(summary: dict[str, Any] | None, scene_name: str) -> Scene | None:
    """The scene file ``summary.json`` names for ``scene_name``, when it still loads and has
    the hash the run recorded (else None: the page then reads checks from their results)."""
    entry = next((s for s in (summary or {}).get("scenes") or []
                  if isinstance(s, dict) and s.get("scene") == scene_name), None)
    if entry is None or not entry.get("path"):
        return None
    try:
        scene = load_scene(Path(str(entry["path"])), catalog())
    except (OSError, SceneInvalid, ValueError):
        return None
    recorded = str(entry.get("source_hash") or "")
    return scene if not recorded or scene.source_hash == recorded else None


def is_world_call(call: Call) -> bool:
    """A call the world made itself (faults moving metrics, a tool's own webhooks and
    incidents), not the agent's or a person's."""
    return call.actor == WORLD_ACTOR


def _people(scene: Scene | None, trial: TrialData) -> dict[str, str]:
    """Word -> person: each person's key, and their accounts' refs (``slack_laura``)."""
    if scene is not None:
        words = {key: key for key in scene.people}
        for key, person in scene.people.items():
            words.update({ref: key for ref in person.accounts.values()})
        return words
    seen = {str(r["person"]) for r in trial.records if isinstance(r.get("person"), str)}
    seen |= {c.actor.removeprefix(PERSON_ACTOR) for c in trial.calls if c.actor.startswith(PERSON_ACTOR)}
    return {name: name for name in seen}


def _about(result: dict[str, Any], spec: dict[str, Any] | None, trial: TrialData, tools: list[str],
           people: dict[str, str]) -> CheckAbout:
    texts = list(_strings(spec)) if spec is not None else [str(result.get("expected") or ""),
                                                            str(result.get("actual") or "")]
    named_tools: set[str] = set()
    named_people: set[str] = set()
    for word in (w for text in texts for w in _WORD.findall(text)):
        tool = next((t for t in tools if word == t or word.startswith(t + "_")), None)
        if tool:
            named_tools.add(tool)
        if word in people:
            named_people.add(people[word])
    for seq in result.get("evidence") or []:
        call = trial.call(seq) if isinstance(seq, int) else None
        if call is None:
            continue
        if call.tool:
            named_tools.add(call.tool)
        if call.actor.startswith(PERSON_ACTOR):
            named_people.add(call.actor.removeprefix(PERSON_ACTOR))
    return CheckAbout(tuple(sorted(named_tools)), tuple(sorted(named_people)))


def _strings(value: Any) -> Iterator[str]:
    """Every key and string in a check's body (``id`` and ``line`` left out)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("id", "line"):
                continue
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value
