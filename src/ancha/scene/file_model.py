"""The scene file as written: refs as ``$name`` strings, durations and offsets as text.

These models drive validation (``ancha.config.validation.Walker``) and
``ancha schema scene``; the loader then resolves refs and times into ``Scene``.
Keys of sections built later are refused with "not supported yet", never ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Annotated, Any, ClassVar, Literal  # noqa: F401

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, WithJsonSchema, create_model

from ancha.config.validation import DurationText, Expect, FileModel
from ancha.scene.model import SCENE_NAME_PATTERN
from ancha.scene.sections import BodyKind, Catalog, Planned

RefName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]+$"),
                    Expect("a ref name of letters, digits and _")]
Ref = Annotated[str, Field(description="$name or $kind.name")]
Time = Annotated[datetime | str, Expect("an ISO time such as 2026-01-05T09:00:00Z or an offset such as -3d")]
Patterns = Annotated[str | list[str], Expect('a pattern such as "POST /api/chat.postMessage", or a list of them')]


SceneNameText = Annotated[str, StringConstraints(pattern=SCENE_NAME_PATTERN),
                         Expect("a name of letters, digits, '.', '_' and '-' (not a path), such as refund-request")]
Person = Annotated[str, Expect("a person such as laura, $laura or $person.laura")]
FactName = Annotated[str, Expect("a fact such as laura.workspace")]
Offset = Annotated[str, Expect("a duration from clock.start such as 30m or -1h")]
TextPatterns = Annotated[list[str], Expect("a list of patterns (substrings, or /regex/)")]


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ClockFile(_File):
    start: Annotated[datetime | str, Expect("an ISO time such as 2026-01-05T09:00:00Z")] = Field(
        default="2026-01-05T09:00:00Z", description="an ISO time from 1970 to 2200")
    # The same ranges as the server's (world/settings.py): what a file accepts, a server runs.
    limit: Annotated[str, DurationText(above=0, at_most=366 * 86400)] = Field(
        default="1h", description="simulated time a trial may take: more than 0s, at most 366d")
    speed: Annotated[float, Field(gt=0, le=100_000)] = Field(
        default=1.0, description="simulated seconds per real second while the agent works: above 0, at most 100000")


class TraceFile(_File):
    called: Patterns | None = None
    not_called: Patterns | None = None
    status: Literal["any"] | None = None


class MessageSelectorFile(_File):
    """Which messages written during the trial count; at least one field."""

    to: Person | None = Field(default=None, description="a person the message reaches")
    in_: Ref | None = Field(default=None, alias="in", description="a place ref: a channel, an issue or a pull request")
    in_thread_of: Ref | None = Field(default=None, description="a message ref: replies in its thread")
    from_: Annotated[str, Expect("a user ref such as $bot, or a person")] | None = Field(
        default=None, alias="from")
    text_contains: Annotated[str | list[str], Expect("a string or a list of strings")] | None = None
    fact: FactName | None = Field(default=None, description="the message told its recipient this fact")


class MessageCheckFile(MessageSelectorFile):
    count_gte: Annotated[int, Field(gt=0)] = 1


# --- people ---------------------------------------------------------------------------


class AwayFile(_File):
    from_: Offset = Field(alias="from")
    to: Offset


class FactFile(_File):
    text: str
    asked_by: TextPatterns = Field(default_factory=list)
    match: TextPatterns | None = Field(default=None, description="default: [text]")


class DecisionFile(_File):
    asked_by: TextPatterns = Field(default_factory=list)
    options: list[str]
    chooses: str
    needs: list[FactName] = Field(default_factory=list)
    text: str = Field(default="Let's go with {option}.", description="{option} is replaced by the choice")
    pending: str = "I can't decide that yet."


class PersonFile(_File):
    name: str | None = Field(default=None, description="display name; default: the person's key")
    accounts: dict[str, Ref] = Field(default_factory=dict, description="tool -> the person's user ref there")
    listens: list[Ref] = Field(default_factory=list)
    replies_after: Annotated[str, Expect('a duration such as 2m, or a range such as "1m..5m"')] = "1m"
    away: list[AwayFile] = Field(default_factory=list)
    facts: dict[str, FactFile] = Field(default_factory=dict)
    decisions: dict[str, DecisionFile] = Field(default_factory=dict)
    otherwise: str | None = None
    voice: Literal["scene", "model"] = "scene"


# --- world rules -------------------------------------------------------------------------




# --- the parts each tool extends, built from the catalog ----------------------------------


def _optional(annotation: Any, key: str, description: str = "") -> tuple[Any, Any]:
    return annotation | None, Field(default=None, alias=key, description=description or None)


def _sibling(name: str, owners: list[BodyKind]) -> tuple[Any, Any]:
    """A field written beside a kind's key (``is``, ``contains``), shared by every kind that
    has it. Its value is checked by the kind it is written beside (``Resolver.body``), so a
    problem always names that kind; the schema shows each kind's form."""
    forms: list[dict[str, Any]] = []
    for kind in owners:
        schema = TypeAdapter(kind.siblings[name]).json_schema()
        if schema not in forms:
            forms.append(schema)
    annotation = Annotated[Any, WithJsonSchema(forms[0] if len(forms) == 1 else {"anyOf": forms})]
    beside = ", ".join(kind.key for kind in owners)
    return annotation | None, Field(default=None, description=f"with {beside}")


def _kinds(kinds: dict[str, BodyKind]) -> dict[str, tuple[Any, Any]]:
    fields = {k.attribute: _optional(k.file_model, k.key, k.description) for k in kinds.values()}
    owners: dict[str, list[BodyKind]] = {}
    for kind in kinds.values():
        for name in kind.siblings:
            owners.setdefault(name, []).append(kind)
    for name, kinds_of_name in owners.items():
        fields.setdefault(name, _sibling(name, kinds_of_name))
    return fields


@dataclass(frozen=True)
class FileParts:
    """The parts of a build's file model that a check kind's file model may hold: they
    depend on the tools' ``Catalog`` (``scene_file_model`` builds them)."""

    state: Any
    """``StateFile``: one state-check kind of a tool."""
    predicate: Any
    """``PredicateFile``: a milestone or condition."""
    within: Any
    """``WithinFile``: ``{ event, of, limit }``."""


def _checks(parts: FileParts) -> dict[str, tuple[Any, Any]]:
    """One optional field per check kind, as its form writes it."""
    # Imported here: the forms name this module's file models (TraceFile, MessageCheckFile...).
    from ancha.scene.check_kinds import CHECK_FORMS

    return {form.key: (form.file_model(parts) | None, Field(default=None, description=form.description or None))
            for form in CHECK_FORMS}


def _model(name: str, fields: dict[str, Any], unsupported: Any = None, doc: str | None = None) -> type[_File]:
    model = create_model(name, __base__=_File, __doc__=doc, **fields)
    if unsupported is not None:
        model.unsupported_fields = unsupported
    return model


@cache
def scene_file_model(catalog: Catalog) -> type[FileModel]:
    """The ``SceneFile`` model of this build: the generic sections plus every tool's."""
    planned = catalog.planned_tools
    world = _model("WorldFile", {tool: (section.file_model | None, None) for tool, section in catalog.worlds.items()},
                   Planned(planned, "the {name} world"), "One section per tool: its seed.")
    state = _model("StateFile", _kinds(catalog.states), Planned(planned, "the {name} state check"),
                   "A condition on the final world; exactly one kind.")
    predicate = _model("PredicateFile", {
        "called": (Annotated[str, Expect('a pattern such as "POST /api/chat.postMessage"')] | None, None),
        "message": (MessageSelectorFile | None, None),
        "decided": (list[str] | None, None),
        "knows": (list[str] | None, None),
        "told": (list[str] | None, None),
        "revealed": (list[FactName] | None, None),
        **_kinds(catalog.states),
        **_kinds(catalog.predicates),
        "all": (list["PredicateFile"] | None, None),  # type: ignore[name-defined]  # noqa: F821
        "any": (list["PredicateFile"] | None, None),  # type: ignore[name-defined]  # noqa: F821
        "not_": ("PredicateFile | None", Field(default=None, alias="not")),
    }, Planned(planned, "the {name} predicate"),
        "A condition on the world, timestamped the first time it holds; exactly one field.")
    predicate.model_rebuild(_types_namespace={"PredicateFile": predicate})
    within = _model("WithinFile", {
        "event": (predicate, ...),
        "of": (Annotated[Literal["start"] | predicate, Expect("start, or a milestone such as { called: ... }")],
               "start"),
        "limit": (Annotated[str, DurationText()], ...),
    })
    check = _model("CheckFile", {"id": (str, ...), **_checks(FileParts(state, predicate, within))})
    action = _model("ActionFile", _kinds(catalog.actions), Planned(planned, "the {name} action"),
                    "One action; exactly one kind.")
    event = _model("EventFile", {
        "at": (Offset | None, None),
        "after": (predicate | None, None),
        "delay": (Annotated[str | None, DurationText()], Field(default=None, description="with after; default 0s")),
        "unless": (predicate | None, None),
        "do": (list[action], ...),  # type: ignore[valid-type]
    })
    effect = _model("EffectFile", _kinds(catalog.effects), Planned(planned, "the {name} effect"),
                    "One effect of a fault; exactly one kind.")
    starts = _model("StartsFile", {"after": (predicate, ...)})
    fault = _model("FaultFile", {
        "ref": (RefName, ...),
        "starts": (Annotated[Offset | starts, Expect(  # type: ignore[valid-type]
            "a duration from clock.start such as 0s or 10m, or { after: <predicate> }")],
                   Field(default="0s", description="when the fault starts; default 0s")),
        "effects": (list[effect], ...),  # type: ignore[valid-type]
        "resolved_when": (predicate, Field(..., description="the predicate that ends the fault")),
    }, doc="A living-world fault: effects hold from starts until resolved_when first holds.")
    rules = _model("WorldRulesFile", {
        "events": (list[event], Field(default_factory=list)),  # type: ignore[valid-type]
        "faults": (list[fault], Field(default_factory=list)),  # type: ignore[valid-type]
    })
    return _model("SceneFile", {
        "name": (SceneNameText | None, Field(default=None, description=(
            "the scene's name, 1 to 100 letters, digits, '.', '_' or '-' starting with a letter or digit "
            "(it names the scene's folder in the run folder); default: the scene's folder name"))),
        "description": (str, ""),
        "task": (str, Field(default="", description=(
            "what the agent is told (ANCHA_TASK, {{task}}): at most 64 KiB of UTF-8"))),
        "clock": (ClockFile, Field(default_factory=ClockFile)),
        "world": (world, Field(default_factory=world)),
        "people": (dict[str, PersonFile], Field(default_factory=dict)),
        "world_rules": (rules, Field(default_factory=rules)),
        "checks": (list[check], Field(default_factory=list)),  # type: ignore[valid-type]
        "pass_": (list[str] | None, Field(default=None, alias="pass")),
        "expect_unchanged": (list[str], Field(default_factory=list, description=(
            "what the agent must not change (Ancha's own, not in the reference): refs such as $slack_general "
            "or tool sections such as okta or github.repos; any agent change there fails the required check "
            "expect_unchanged"))),
    }, doc="One scene.yaml.")
