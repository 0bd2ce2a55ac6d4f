"""What a tool adds to the scene file, as the scene layer sees it.

A tool is one folder under ``ancha/world/tools`` and declares itself there. The scene
layer sits below the world, so it never imports a tool: the parts of a tool that the
scene file needs (its ``world.<tool>`` section, its state-check bodies, its predicates,
its world-rule actions) reach the loader in a ``Catalog``, which the layers above build
from the tool registry (``ancha.world.registry.catalog()``) and pass in.

Every resolved body is kept as plain JSON (refs bare, times absolute): scenes cross a
process boundary to the server, and a body's JSON is its identity (equal predicates
are watched once). The tool parses it back into its own model where it acts on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ancha.config.validation import FileModel
from ancha.scene.folder import SceneFileRefused, SceneFolder
from ancha.scene.refs import RefTable
from ancha.scene.sources import Source

if TYPE_CHECKING:
    from ancha.scene.predicates import Resolver

_LATER = "{} is built in a later version of Ancha; remove it to run this scene now"


@dataclass(slots=True)
class SectionContext:
    """What building one ``world.<tool>`` section needs."""

    tool: str
    source: Source
    refs: RefTable
    start: datetime
    """``clock.start``: seed times are offsets from it."""
    scene_dir: Path
    display_dir: str
    """The scene's folder as problems show it (files the section reads are named from it)."""
    files: dict[str, Path]
    """Files problems may point into (display name -> path); a section adds what it reads."""
    digest: Any = field(default_factory=hashlib.sha256)
    """The scene's content hash: a section feeds it the bytes of every file it reads."""

    @property
    def path(self) -> str:
        return f"world.{self.tool}"

    def read_file(self, name: str, path: str) -> bytes | None:
        """The bytes of the file ``name`` that the field at ``path`` names, read safely
        (inside the scene's folder, a regular file, capped); None, with the problem
        reported at ``path``, when it is refused."""
        try:
            return SceneFolder(self.scene_dir).read(name)
        except SceneFileRefused as exc:
            self.source.add(path, exc.message, exc.hint)
            return None

    def read_tree(self, name: str, path: str, limit: int) -> dict[str, tuple[bytes, int]] | None:
        """Every file under the folder ``name`` that the field at ``path`` names (see
        ``SceneFolder.read_tree``); None, with the problem reported, when it is refused."""
        try:
            return SceneFolder(self.scene_dir).read_tree(name, limit)
        except SceneFileRefused as exc:
            self.source.add(path, exc.message, exc.hint)
            return None


@dataclass(frozen=True, slots=True)
class WorldSection:
    """A tool's ``world.<tool>`` seed: the file model, and how it becomes the resolved seed.

    ``build`` declares the section's refs in ``ctx.refs`` (with ``tool`` set), resolves
    them, reports problems to ``ctx.source`` and answers the resolved seed (or None when
    it is invalid). ``accounts_kind`` is the ref kind ``people.<p>.accounts.<tool>`` names.
    """

    tool: str
    file_model: type[FileModel]
    build: Callable[[dict[str, Any], SectionContext], BaseModel | None]
    accounts_kind: str = "user"
    as_json: Callable[[BaseModel], dict[str, Any]] | None = None
    """The resolved seed as ``Scene.world`` keeps it; ``body_json`` when None. A tool whose
    seed can be long (a seeded message history) may keep that part as an object that serializes
    as its JSON, instead of a second copy of it."""

    def seed_json(self, seed: BaseModel) -> dict[str, Any]:
        return self.as_json(seed) if self.as_json is not None else body_json(seed)


@dataclass(frozen=True)
class BodyKind:
    """A keyed body a tool defines: a state check (``<tool>.<kind>``), a predicate (a bare
    name) or a world-rule action (``<tool>.<action>``).

    ``resolve(body, path, resolver)`` turns the walked body (attribute names as keys)
    into its resolved model, reporting problems through ``resolver``; None when invalid.
    """

    key: str
    tool: str
    file_model: Any
    """The body's file model (or any annotation the walker understands, such as a list)."""
    resolve: Callable[[Any, str, Resolver], BaseModel | None]
    description: str = ""
    siblings: dict[str, Any] = field(default_factory=dict)
    """Fields written beside the kind's key rather than inside its body, as the reference
    writes ``{ <tool>.file_at: [repo, rev, path], contains: "..." }``: name -> annotation.
    ``resolve`` then gets ``{"value": <the key's value>, <sibling>: ...}``."""

    @property
    def attribute(self) -> str:
        """The attribute name of the key in file models (``<tool>.<kind>`` -> ``<tool>_<kind>``)."""
        return self.key.replace(".", "_")


class Planned(Mapping[str, str]):
    """Keys refused as "built in a later version": those of tools the reference names that
    this build does not have yet (``world.<tool>``, ``<tool>.<kind>``)."""

    def __init__(self, tools: Iterable[str], what: str, extra: Mapping[str, str] | None = None) -> None:
        self.tools = frozenset(tools)
        self.what = what
        self.extra = dict(extra or {})

    def _tool(self, key: object) -> str | None:
        if not isinstance(key, str):
            return None
        tool = key.split(".", 1)[0]
        return tool if tool in self.tools else None

    def __contains__(self, key: object) -> bool:
        return key in self.extra or self._tool(key) is not None

    def __getitem__(self, key: str) -> str:
        if key in self.extra:
            return self.extra[key]
        if self._tool(key) is None:
            raise KeyError(key)
        return _LATER.format(self.what.format(name=key))

    def __iter__(self) -> Iterator[str]:
        return iter(self.extra)

    def __len__(self) -> int:
        return len(self.extra)


@dataclass(frozen=True)
class Catalog:
    """Every tool this build has, as the scene file sees them."""

    worlds: dict[str, WorldSection] = field(default_factory=dict)
    states: dict[str, BodyKind] = field(default_factory=dict)
    predicates: dict[str, BodyKind] = field(default_factory=dict)
    """Tool predicates that are not state checks (``issue_labeled``, ``pull_merged``)."""
    actions: dict[str, BodyKind] = field(default_factory=dict)
    effects: dict[str, BodyKind] = field(default_factory=dict)
    """What a fault's ``effects`` can be (``<tool>.<effect>``)."""
    planned_tools: tuple[str, ...] = ()
    """Tools the reference names that this build does not have yet (their sections are refused
    as built in a later version)."""

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(self.worlds)

    def body_kind(self, key: str) -> BodyKind | None:
        """The state-check or predicate kind ``key`` names, if this build has it."""
        return self.states.get(key) or self.predicates.get(key)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def body_json(model: BaseModel) -> dict[str, Any]:
    """A resolved body as the scene keeps it: JSON, by alias, without unset optionals."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
