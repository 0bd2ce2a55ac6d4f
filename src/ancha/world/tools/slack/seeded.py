"""Seeded messages held as columns: a 200,000-line ``messages_file`` without a model each.

A seeded message is its channel, author, text and time, and now and then a ref, a thread,
reactions or files. ``SeededMessages`` keeps the common fields in one array or list each
and the rare ones in dicts by position, so a long history costs its text and a few bytes
a message, not a pydantic model (about 1 KB) and a JSON dict beside it. Indexing still
gives a ``SlackMessageFile``, built when asked for.

In the scene (``Scene.world["slack"]["messages"]``) the same object stands for the list:
pydantic serializes it as that list, so a scene sent to a remote server, or dumped, is the
same JSON as before, and validating that JSON packs it back into columns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, overload

from pydantic import TypeAdapter
from pydantic_core import SchemaSerializer, core_schema

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

    from ancha.world.tools.slack.scene_file import SlackMessageFile

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_MICROSECOND = timedelta(microseconds=1)
NO_TIME = -(2**63)
"""``at`` of a message written without one (the replica spaces those out)."""


def micros(at: datetime) -> int:
    """``at`` in microseconds since the epoch (naive means UTC); negative before it."""
    return ((at if at.tzinfo else at.replace(tzinfo=UTC)) - EPOCH) // ONE_MICROSECOND


class SeededMessages(Sequence["SlackMessageFile"]):
    """Resolved seeded messages (refs bare, times absolute), in seed order, as columns."""

    __slots__ = ("names", "_index", "channel", "author", "text", "at", "ref", "thread_of", "reactions", "files")

    def __init__(self) -> None:
        self.names: list[str] = []
        """Every channel and user ref the messages name, once each."""
        self._index: dict[str, int] = {}
        self.channel = array("I")
        """Index into ``names`` of each message's channel ref."""
        self.author = array("I")
        """Index into ``names`` of each message's ``from``."""
        self.text: list[str] = []
        self.at = array("q")
        """Microseconds since the epoch, or ``NO_TIME``."""
        self.ref: dict[int, str] = {}
        self.thread_of: dict[int, str] = {}
        """Position -> message ref of the thread's parent."""
        self.reactions: dict[int, dict[str, list[str]]] = {}
        self.files: dict[int, list[dict[str, Any]]] = {}

    def add(self, channel: str, author: str, text: str, at: datetime | None, *, ref: str | None = None,
            thread_of: str | None = None, reactions: dict[str, list[str]] | None = None,
            files: list[dict[str, Any]] | None = None) -> None:
        position = len(self.text)
        self.channel.append(self._name(channel))
        self.author.append(self._name(author))
        self.text.append(text)
        self.at.append(NO_TIME if at is None else micros(at))
        if ref is not None:
            self.ref[position] = ref
        if thread_of is not None:
            self.thread_of[position] = thread_of
        if reactions:
            self.reactions[position] = reactions
        if files:
            self.files[position] = files

    def add_plain(self, channel: str, author: str, text: str, at: int) -> None:
        """A message with only a channel, an author, a text and ``at`` (microseconds since
        the epoch, or ``NO_TIME``): most lines of a long history."""
        self.channel.append(self._name(channel))
        self.author.append(self._name(author))
        self.text.append(text)
        self.at.append(at)

    def _name(self, name: str) -> int:
        index = self._index.get(name)
        if index is None:
            index = self._index[name] = len(self.names)
            self.names.append(name)
        return index

    def channel_of(self, position: int) -> str:
        return self.names[self.channel[position]]

    def author_of(self, position: int) -> str:
        return self.names[self.author[position]]

    def time_of(self, position: int) -> datetime | None:
        at = self.at[position]
        return None if at == NO_TIME else EPOCH + timedelta(microseconds=at)

    def __len__(self) -> int:
        return len(self.text)

    @overload
    def __getitem__(self, position: int) -> SlackMessageFile: ...

    @overload
    def __getitem__(self, position: slice) -> list[SlackMessageFile]: ...

    def __getitem__(self, position: int | slice) -> SlackMessageFile | list[SlackMessageFile]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError("seeded message index out of range")
        from ancha.world.tools.slack.scene_file import SlackMessageFile

        return SlackMessageFile.model_construct(
            ref=self.ref.get(position), channel=self.channel_of(position), from_=self.author_of(position),
            text=self.text[position], at=self.time_of(position), thread_of=self.thread_of.get(position),
            reactions=self.reactions.get(position, {}), files=self.files.get(position, []))

    def __iter__(self) -> Iterator[SlackMessageFile]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        """Equal to the same messages, packed or as the list they serialize as (a scene read
        back from JSON holds the list until the Slack tool reads it)."""
        if isinstance(other, list):
            try:
                other = SeededMessages.coerce(other)
            except ValueError:
                return False
        if not isinstance(other, SeededMessages):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other) if self.names != other.names else all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__ if name != "_index")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SeededMessages({len(self):,} messages)"

    # --- as a pydantic field: validated from the list, serialized as the list -----------

    @classmethod
    def coerce(cls, value: Any) -> SeededMessages:
        """A ``SeededMessages`` as it is; a list of messages (dicts or models) validated and packed."""
        if isinstance(value, SeededMessages):
            return value
        packed = cls()
        for message in _messages_adapter().validate_python(value):
            packed.add(message.channel, message.from_, message.text, _time(message.at), ref=message.ref,
                       thread_of=message.thread_of, reactions=message.reactions or None,
                       files=message.files or None)
        return packed

    def dump(self, info: core_schema.SerializationInfo) -> list[Any]:
        """The messages as the list of ``SlackMessageFile`` would serialize."""
        return _messages_adapter().dump_python(list(self), mode="json" if info.mode == "json" else "python", by_alias=bool(info.by_alias),
                                               exclude_none=info.exclude_none)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(cls.coerce, serialization=_SERIALIZATION)


_SERIALIZATION = core_schema.plain_serializer_function_ser_schema(
    lambda value, info: value.dump(info), info_arg=True)

SeededMessages.__pydantic_serializer__ = SchemaSerializer(  # type: ignore[attr-defined]
    core_schema.any_schema(serialization=_SERIALIZATION))
"""Where the object stands for the list in an ``Any`` field (``Scene.world``), pydantic
finds how to serialize it here."""

_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _time(at: datetime | str | None) -> datetime | None:
    """A resolved message's time, absolute: JSON gives it as ISO text (the model takes text,
    since a file may write an offset such as ``-3d``, which resolved data never holds)."""
    if not isinstance(at, str):
        return at
    try:
        return datetime.fromisoformat(at)  # the form pydantic writes, parsed in C
    except ValueError:
        return _DATETIME.validate_python(at)  # pydantic's other forms; an offset is refused


_ADAPTER: list[TypeAdapter[list[SlackMessageFile]]] = []


def _messages_adapter() -> TypeAdapter[list[SlackMessageFile]]:
    if not _ADAPTER:
        from ancha.world.tools.slack.scene_file import SlackMessageFile

        _ADAPTER.append(TypeAdapter(list[SlackMessageFile]))
    return _ADAPTER[0]
