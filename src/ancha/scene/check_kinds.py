"""Check kinds as the scene file sees them: one ``CheckForm`` per kind of the checks reference.

A form is everything about a kind that needs no world: its key, its file model, how its
body resolves, where it works (scene files, hosted console tasks, playground task files)
and its rows of the reference's tables. ``ancha.checks.kinds`` builds each ``CheckKind``
from its form, adding how it grades and which bus events can change it.

The forms live here, in the scene layer, rather than being handed in like the tools'
``Catalog``: every caller of ``load_scene`` (runner, console, CLI, doctor, tests) validates a
scene's checks, and the layers that pass a ``Catalog`` in (the world registry) sit below
``ancha.checks`` and cannot know the graders. Check kinds are also not a per-build set the
way tools are. So the scene layer reads ``CHECK_FORMS``; ``ancha.checks.kinds`` refuses to
load when a form has no ``CheckKind`` (or a kind no form), so a kind is never half there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ancha.config.validation import join
from ancha.scene import file_model as files
from ancha.scene.file_model import FileParts
from ancha.scene.model import COMMON_CHECK_FIELDS, CheckSpec, Predicate, TraceCheck, Within
from ancha.scene.predicates import CALL_PATTERN_HINT, Resolver, call_pattern_problem

Place = Literal["scene", "console", "playground"]
"""Where checks are written: scene files (``ancha run``, ``ancha check``), hosted console
tasks, playground task files."""

PLACES: dict[Place, str] = {
    "scene": "Scene files (`ancha run`, `ancha check`)",
    "console": "Hosted console tasks",
    "playground": "Playground task files",
}
"""Each place as the reference's "Where each kind works" table heads it."""

TASK_PLACES: frozenset[Place] = frozenset({"console", "playground"})
"""Task files (a JSON list of checks): playground task files and hosted console tasks."""

Resolve = Callable[[Any, str, Resolver], Any]
"""``(body, path, resolver)``: the walked body resolved (refs bare), problems reported
through ``resolver``; None when it is invalid."""


@dataclass(frozen=True)
class CheckFamily:
    """Kinds the reference describes together: one row of its "Common fields" and "Where
    each kind works" tables, and the words task-file problems use."""

    name: str
    row: str
    """The kinds' cell in the tables: ``` `state` ```, ``Process checks``."""
    checks: str
    """The kinds in a sentence: ``judge checks``, ``process checks``."""
    value_type: str
    """The "Type" cell of "Common fields"."""
    meaning: str
    """The "Meaning" cell of "Common fields"."""


@dataclass(frozen=True)
class CheckForm:
    """One check kind as written in scene and task files.

    ``file_model(parts)`` is the annotation of the kind's key in a check's file model;
    ``resolve`` turns the walked body into what ``CheckSpec.<key>`` holds. ``works_in``:
    where checks of this kind may be written.
    """

    key: str
    family: CheckFamily
    file_model: Callable[[FileParts], Any]
    resolve: Resolve
    works_in: frozenset[Place]
    description: str = ""
    """The field's description in the file model (``ancha schema scene``)."""
    value: str = ""
    """The "Value" cell of the reference's table of the kind's family (process checks)."""
    passes_when: str = ""
    """The "Passes when" cell of that table."""
    milestones: Callable[[Any], list[Predicate]] = field(default=lambda body: [])
    """The predicates a resolved body times (``before``, ``within``): the world watches them
    from the start of the trial, since a first-held time cannot always be rebuilt later."""

    @property
    def works_in_tasks(self) -> bool:
        return self.works_in >= TASK_PLACES

    def refused_in_tasks(self) -> tuple[str, str]:
        """(problem, hint) for a check of this kind in a task file."""
        what = self.family.checks
        said = what if self.key == self.family.name else f"{self.key} is a {what[:-1]}; {what}"
        return (f"{said} do not work in task files (playground task files, hosted console tasks)",
                f"{what} work in scene files only (ancha run, ancha check); a task holds {task_kinds()} checks")


# --- how bodies resolve ----------------------------------------------------------------------


def _trace(data: dict[str, Any], path: str, resolver: Resolver) -> TraceCheck | None:
    scene = resolver.source
    ok = True
    lists: dict[str, list[str]] = {}
    for name in ("called", "not_called"):
        value = data.get(name)
        if value is None:
            continue
        patterns = [value] if isinstance(value, str) else list(value)
        if not patterns:
            scene.add(join(path, name), "needs at least one pattern", CALL_PATTERN_HINT)
            ok = False
        for j, pattern in enumerate(patterns):
            problem = call_pattern_problem(pattern)
            if problem is not None:
                scene.add(join(path, name) if isinstance(value, str) else join(join(path, name), j), *problem)
                ok = False
        lists[name] = patterns
    if "called" not in lists and "not_called" not in lists:
        scene.add(path, "needs called or not_called", 'for example called: "POST /api/chat.postMessage"')
        return None
    if data.get("status") is not None and "called" not in lists:
        scene.add(join(path, "status"), "only applies with called", "remove status, or add called")
        ok = False
    if not ok:
        return None
    return TraceCheck(called=lists.get("called", []), not_called=lists.get("not_called", []),
                      status=data.get("status"))


def _judge(rubric: str, path: str, resolver: Resolver) -> str | None:
    if not rubric.strip():
        resolver.add(path, "needs a rubric", "write what a good result looks like")
        return None
    return rubric


def _within_milestones(within: Within) -> list[Predicate]:
    return [within.event, *([within.of] if within.of is not None else [])]


def _record(kind: str) -> Resolve:
    return lambda value, path, resolver: resolver.record(kind, value, path)


# --- the kinds ---------------------------------------------------------------------------------

EVERYWHERE: frozenset[Place] = frozenset(PLACES)
SCENE_ONLY: frozenset[Place] = frozenset({"scene"})

STATE_CHECKS = CheckFamily("state", "`state`", "state checks", "object", "A condition on the final world state.")
TRACE_CHECKS = CheckFamily("trace", "`trace`", "trace checks", "object", "A condition on the agent's API calls.")
JUDGE_CHECKS = CheckFamily("judge", "`judge`", "judge checks", "string", "A rubric for a model to grade.")
PROCESS_CHECKS = CheckFamily(
    "process", "Process checks", "process checks", "varies",
    "A condition on what happened between the agent and the people in the world. "
    "See [Process checks](#process-checks).")
FAMILIES = (STATE_CHECKS, TRACE_CHECKS, JUDGE_CHECKS, PROCESS_CHECKS)
"""In the order the reference's tables list them."""

_KNOWS = "[person, person.fact, ...]"

CHECK_FORMS: tuple[CheckForm, ...] = (
    CheckForm("trace", TRACE_CHECKS, lambda parts: files.TraceFile, _trace, EVERYWHERE),
    CheckForm("state", STATE_CHECKS, lambda parts: parts.state,
              lambda value, path, resolver: resolver.state(value, path, resolver.catalog.states, "state"),
              EVERYWHERE),
    CheckForm("judge", JUDGE_CHECKS, lambda parts: str, _judge, SCENE_ONLY),
    CheckForm("revealed", PROCESS_CHECKS, lambda parts: list[files.FactName], _record("revealed"), SCENE_ONLY,
              value="`[<person>.<fact>, ...]`",
              passes_when="The owner of each fact shared it with the agent because the agent asked for it."),
    CheckForm("knows", PROCESS_CHECKS, lambda parts: list[str], _record("knows"), SCENE_ONLY, _KNOWS,
              value="`[<person>, <fact>, ...]`",
              passes_when="The person knows every listed fact, learned from the agent or from another person."),
    CheckForm("told", PROCESS_CHECKS, lambda parts: list[str], _record("told"), SCENE_ONLY, _KNOWS,
              value="`[<person>, <fact>, ...]`",
              passes_when="The same as `knows`, for checks that read better that way."),
    CheckForm("decided", PROCESS_CHECKS, lambda parts: list[str], _record("decided"), SCENE_ONLY,
              "[person, decision] or [person, decision, option]",
              value="`[<person>, <decision>]` or `[<person>, <decision>, <option>]`",
              passes_when="The person recorded that decision, with that option when one is given."),
    CheckForm("message", PROCESS_CHECKS, lambda parts: files.MessageCheckFile,
              lambda value, path, resolver: resolver.selector(value, path, count=True), SCENE_ONLY,
              value="A message selector plus `count_gte` (default `1`)",
              passes_when="At least `count_gte` messages match."),
    CheckForm("never", PROCESS_CHECKS, lambda parts: files.MessageSelectorFile,
              lambda value, path, resolver: resolver.selector(value, path), SCENE_ONLY,
              value="A message selector", passes_when="No message ever matched."),
    CheckForm("before", PROCESS_CHECKS, lambda parts: list[parts.predicate],  # type: ignore[name-defined]
              lambda value, path, resolver: resolver.predicates(value, path, 2), SCENE_ONLY,
              value="A list of at least two milestones",
              passes_when="Every milestone happened, each one strictly earlier than the next in simulated time.",
              milestones=list),
    CheckForm("within", PROCESS_CHECKS, lambda parts: parts.within,
              lambda value, path, resolver: resolver.within(value, path), SCENE_ONLY,
              value="`{ event, of, limit }`",
              passes_when="`event` happened no later than `limit` after `of` (`start` by default, or another "
                          "milestone).",
              milestones=_within_milestones),
)
"""Every check kind, in the order problems list them (``kinds: trace, state, judge, ...``)."""

FORMS: dict[str, CheckForm] = {form.key: form for form in CHECK_FORMS}
CHECK_KEYS: tuple[str, ...] = tuple(FORMS)


def form(key: str) -> CheckForm:
    """The form of the check kind ``key`` (``LookupError`` when there is none)."""
    found = FORMS.get(key)
    if found is None:
        raise LookupError(f"no check kind {key}; kinds: {', '.join(CHECK_KEYS)}")
    return found


def task_kinds() -> str:
    """The kinds a task file holds, in words: ``state and trace``."""
    names = [f.name for f in FAMILIES if all(k.works_in_tasks for k in CHECK_FORMS if k.family is f)]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _check_spec_has_every_kind() -> None:
    # CheckSpec is the resolved wire shape, typed for its many readers: one field per form.
    fields = [name for name in CheckSpec.model_fields if name not in COMMON_CHECK_FIELDS]
    if fields != list(CHECK_KEYS):
        raise TypeError(f"CheckSpec's kinds {fields} are not the check kinds {list(CHECK_KEYS)}")


_check_spec_has_every_kind()
