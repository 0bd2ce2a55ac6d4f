"""Checkpoints: a world as it stands, to bytes and back (``ancha fork``, ``POST /envs/{id}/checkpoint``).

A checkpoint holds everything one trial's world is: every tool's state, the people's
memory and pending replies, the rules, faults and predicates, the clock, the scheduler's
due items (closures and all, through cloudpickle), the feed, the records and the trace
with its bodies. What the world shares with the other trials of its scene and never
changes (the scene itself, parsed seeds, a seeded message history, a repository's seeded
objects: ``ToolSpec.shared``) is named, not copied: a restore builds a fresh world from the
same scene, trial and seed and lends it those. So a checkpoint of a world seeded with
200,000 messages holds what the trial changed (and, for a channel it touched, the
channel's index of message keys: 4.5 MB), not the 200,000 messages.

The file is a JSON header line, then a pickle that names the shared objects, then the
pickle of the world. A checkpoint is code as much as data: ``restore`` takes one only
from this server's own making or from a trial folder the caller trusts, and refuses one
made by another version of Ancha or Python (the world is then rebuilt by replaying the
trace instead).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import pickle
import struct
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cloudpickle

from ancha.scene.model import Scene
from ancha.world.signing import unsigned

if TYPE_CHECKING:
    from ancha.world.environment import Environment

MAGIC = b"ancha-checkpoint"
FORMAT = 2
_LOCKS = (type(threading.Lock()), type(threading.RLock()))


class CheckpointError(ValueError):
    """The bytes are no checkpoint this build can restore (the message says why and what to do)."""


@dataclass(frozen=True, slots=True)
class CheckpointHeader:
    format: int
    ancha: str
    python: str
    env_id: str
    scene: str
    source_hash: str
    trial: int
    seed: int | None
    at: float
    """The simulated instant the world stood at."""
    seq: int
    """How many calls its trace held."""
    status: str

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()


def shared_objects(env: Environment) -> dict[str, object]:
    """What ``env`` shares with every trial of its scene, by a name that is the same in each."""
    scene = env.scene
    found: dict[str, object] = {"scene": scene, "registry": env.registry}
    for tool, parsed in scene._seeds.items():  # noqa: SLF001 (the scene's own cache of parsed seeds)
        found[f"seed:{tool}"] = parsed
    for tool, raw in scene.world.items():
        found[f"world:{tool}"] = raw
    for key, person in scene.people.items():
        found[f"person:{key}"] = person
    specs = env.registry.tools
    for name, replica in env.tools.items():
        share = specs[name].shared
        if share is not None:
            for key, value in share(replica).items():
                found[f"{name}:{key}"] = value
    return found


class _Pickler(cloudpickle.Pickler):
    """Pickles a world, writing each shared object as a reference to it.

    The shared objects are the first entries of the pickler's memo, so a reference to one is
    a memo lookup made in C. (Naming them through ``persistent_id`` cost a Python call for
    every object the world holds: 12 million of them for a 200,000-message history.)"""

    def __init__(self, file: io.BytesIO, shared: list[object]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.memo = {id(obj): (index, obj) for index, obj in enumerate(shared)}

    def reducer_override(self, obj: Any) -> Any:  # noqa: D102
        if isinstance(obj, _LOCKS):
            return type(obj), ()
        return super().reducer_override(obj)


def _prologue(names: Iterable[str]) -> bytes:
    """A pickle that puts the shared objects, by name, into the unpickler's first memo entries
    (in the order the pickler's memo has them), before the world's pickle is read by the same
    unpickler. (Assigning ``Unpickler.memo`` does not do: CPython 3.11 then loses the entries
    or their count.)"""
    ops = [b"\x80\x04"]
    for name in names:
        encoded = name.encode()
        ops.append(b"X" + struct.pack("<I", len(encoded)) + encoded + b"Q\x940")  # BINUNICODE BINPERSID MEMOIZE POP
    ops.append(b"N.")
    return b"".join(ops)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, shared: Mapping[str, object]) -> None:
        super().__init__(file)
        self._shared = shared

    def persistent_load(self, pid: Any) -> object:  # noqa: D102
        try:
            return self._shared[pid]
        except KeyError:
            raise CheckpointError(f"the checkpoint names {pid!r}, which a world built from this scene does not "
                                  "have: was it made from another version of the scene?") from None


def _distinct(shared: Mapping[str, object]) -> dict[str, object]:
    """``shared`` with each object once, under its first name (a memo holds an object once)."""
    seen: set[int] = set()
    kept: dict[str, object] = {}
    for name, obj in shared.items():
        if id(obj) not in seen:
            seen.add(id(obj))
            kept[name] = obj
    return kept


def checkpoint(env: Environment) -> bytes:
    """The world as it stands, as bytes: a header line, then a pickle naming the shared objects
    and the pickle of the world."""
    header = CheckpointHeader(FORMAT, build(), _python(), env.id, env.scene.name, env.scene.source_hash,
                              env.trial, env.seed, env.clock.peek(), len(env.trace), env.status)
    shared = _distinct(shared_objects(env))
    out = io.BytesIO()
    out.write(MAGIC + b" " + header.to_json() + b"\n")
    out.write(_prologue(shared))
    _Pickler(out, list(shared.values())).dump(env)
    return out.getvalue()


def read_header(data: bytes) -> CheckpointHeader:
    """The header of a checkpoint (signed or not); ``CheckpointError`` when ``data`` is none."""
    first, newline, _ = unsigned(data[:4096]).partition(b"\n")
    if not newline or not first.startswith(MAGIC + b" "):
        raise CheckpointError("not an Ancha checkpoint (it must start with 'ancha-checkpoint {...}')")
    try:
        fields = json.loads(first[len(MAGIC) + 1:])
        return CheckpointHeader(**fields)
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"the checkpoint's header is unreadable: {exc}") from exc


def restore(data: bytes, scene: Scene, env_id: str, agent: dict[str, Any] | None = None, *,
            patched: Scene | None = None) -> Environment:
    """A live world from ``checkpoint`` bytes: the world of ``scene`` (the one it was made from,
    whose shared parts it borrows) under a new id, with ``agent``'s settings; ``patched``: the
    scene from here on (``ancha fork --set``), which the people and faults then follow."""
    from ancha.world.environment import Environment

    data = unsigned(data)
    header = read_header(data)
    if header.format != FORMAT or header.ancha != build() or header.python != _python():
        raise CheckpointError(f"the checkpoint was made by Ancha {header.ancha} on Python {header.python} "
                              f"(format {header.format}); this is Ancha {build()} on Python {_python()}: "
                              "rebuild the world by replaying its trace (ancha fork rebuilds it when it must)")
    if header.source_hash != scene.source_hash:
        raise CheckpointError(f"the checkpoint is of scene {header.scene} as hashed {header.source_hash[:12]}, "
                              f"not of this scene ({scene.source_hash[:12]})")
    if len(env_id) != len(header.env_id):
        raise CheckpointError(f"a restored world's id must be as long as {header.env_id!r}")
    fresh = Environment(header.env_id, scene, header.trial, agent, seed=header.seed)
    try:
        shared = shared_objects(fresh)
    finally:
        fresh.close()
    if patched is not None:
        shared["scene"] = patched
    body = data[data.index(b"\n") + 1:]
    if env_id != header.env_id:  # the world wrote its id into its URLs: it is the new world's now (same length)
        body = body.replace(header.env_id.encode(), env_id.encode())
    unpickler = _Unpickler(io.BytesIO(body), shared)
    unpickler.load()  # the shared objects, into the memo
    env = unpickler.load()
    if not isinstance(env, Environment):
        raise CheckpointError("the checkpoint holds no world")
    env.restored(env_id, agent)
    if patched is not None:
        env.rescene(patched)
    return env


@functools.cache
def build() -> str:
    """Ancha's version and a fingerprint of the code a world is made of (``ancha.world``,
    ``ancha.scene``): a checkpoint restores only into the very code that made it."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in ("world", "scene"):
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return f"{version('ancha')}+{digest.hexdigest()[:12]}"


def _python() -> str:
    return ".".join(str(part) for part in sys.version_info[:3])


def timed(env: Environment) -> tuple[bytes, float]:
    """``checkpoint(env)`` and the seconds it took (benchmarks, the fork command's report)."""
    started = time.perf_counter()
    data = checkpoint(env)
    return data, time.perf_counter() - started


def chunks(data: bytes, size: int = 1 << 20) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]
