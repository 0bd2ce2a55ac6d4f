"""Git trees as the replica reads and writes them: nested trees from flat paths.

Every function takes the object store's lookup (``get``: sha -> object) and, when it
writes, an ``add`` callback; neither ever mutates an object it read, because objects
may belong to the store shared by every trial (``git_seed``). Paths are ``/``-separated
and relative to the repository root (``src/app.py``); the root is ``""``.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from dulwich.objects import Blob, ObjectID, ShaFile, Tree

FILE_MODE = 0o100644
EXEC_MODE = 0o100755
LINK_MODE = 0o120000
DIR_MODE = 0o040000
SUBMODULE_MODE = 0o160000

Get = Callable[[bytes], ShaFile]
Add = Callable[[ShaFile], None]


@dataclass(frozen=True, slots=True)
class Entry:
    """One tree entry: its mode and the sha of the object it names (hex, ascii)."""

    mode: int
    sha: bytes

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def kind(self) -> str:
        """GitHub's name for it: ``blob``, ``tree`` or ``commit`` (a submodule)."""
        if self.is_dir:
            return "tree"
        return "commit" if self.mode == SUBMODULE_MODE else "blob"


Change = bytes | Entry | None
"""A file's new content, an entry to place as is (git data trees), or None to delete."""


class InvalidPath(ValueError):
    """A path git cannot hold (empty part, ``.``, ``..``, ``.git``) or that runs
    through a file as if it were a directory."""


def split_path(path: str) -> list[str]:
    """The parts of a repository path; raises ``InvalidPath`` for one git refuses."""
    parts = path.strip("/").split("/") if path.strip("/") else []
    for part in parts:
        if part in ("", ".", "..") or part.lower() == ".git" or "\0" in part:
            raise InvalidPath(f"invalid path {path!r}")
    return parts


def entries_of(tree: Tree) -> dict[bytes, Entry]:
    return {item.path: Entry(item.mode, item.sha) for item in tree.iteritems()}


def tree_from(entries: Mapping[bytes, Entry]) -> Tree:
    tree = Tree()
    for name, entry in entries.items():
        tree.add(name, entry.mode, ObjectID(entry.sha))
    return tree


def lookup(get: Get, tree_sha: bytes, path: str) -> Entry | None:
    """The entry at ``path`` below a root tree (a tree entry for ``""``), or None."""
    try:
        parts = split_path(path)
    except InvalidPath:
        return None
    entry = Entry(DIR_MODE, tree_sha)
    for part in parts:
        if not entry.is_dir:
            return None
        tree = get(entry.sha)
        if not isinstance(tree, Tree):
            return None
        try:
            mode, sha = tree[part.encode()]
        except KeyError:
            return None
        entry = Entry(mode, sha)
    return entry


def iter_files(get: Get, tree_sha: bytes, prefix: str = "") -> Iterator[tuple[str, Entry]]:
    """Every non-tree entry below a tree, depth first in git's order, with its full path."""
    tree = get(tree_sha)
    if not isinstance(tree, Tree):
        return
    for item in tree.iteritems():
        path = prefix + item.path.decode("utf-8", "surrogateescape")
        entry = Entry(item.mode, item.sha)
        if entry.is_dir:
            yield from iter_files(get, item.sha, path + "/")
        else:
            yield path, entry


def iter_entries(get: Get, tree_sha: bytes, prefix: str = "", recursive: bool = False,
                 ) -> Iterator[tuple[str, Entry]]:
    """The entries of a tree (trees included), and those of its subtrees if ``recursive``."""
    tree = get(tree_sha)
    if not isinstance(tree, Tree):
        return
    for item in tree.iteritems():
        path = prefix + item.path.decode("utf-8", "surrogateescape")
        entry = Entry(item.mode, item.sha)
        yield path, entry
        if recursive and entry.is_dir:
            yield from iter_entries(get, item.sha, path + "/", recursive=True)


def build_tree(files: Mapping[str, bytes], add: Add, modes: Mapping[str, int] | None = None) -> bytes:
    """Write blobs and nested trees for a flat ``{path: content}`` map; the root tree's sha."""
    nested: dict[str, object] = {}
    for path, content in files.items():
        parts = split_path(path)
        if not parts:
            raise InvalidPath("a file needs a name")
        node = nested
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InvalidPath(f"{path!r} runs through the file {part!r}")
            node = child
        if isinstance(node.get(parts[-1]), dict):
            raise InvalidPath(f"{path!r} is a directory")
        blob = Blob.from_string(content)
        add(blob)
        node[parts[-1]] = Entry((modes or {}).get(path, FILE_MODE), blob.id)
    return _write_nested(nested, add)


def _write_nested(node: dict[str, object], add: Add) -> bytes:
    tree = Tree()
    for name, child in node.items():
        if isinstance(child, dict):
            tree.add(name.encode(), DIR_MODE, ObjectID(_write_nested(child, add)))
        else:
            assert isinstance(child, Entry)
            tree.add(name.encode(), child.mode, ObjectID(child.sha))
    add(tree)
    return tree.id


def apply_changes(get: Get, add: Add, tree_sha: bytes | None, changes: Mapping[str, Change]) -> bytes:
    """A new root tree: ``tree_sha`` (None: empty) with ``changes`` applied.

    Bytes write a blob (keeping an existing file's mode), an ``Entry`` is placed as is,
    None deletes (a missing path is ignored). Directories left empty disappear, as git
    stores none. Only the trees on changed paths are written; the rest are shared."""
    grouped: dict[str, dict[str, Change]] = {}
    for path, change in changes.items():
        parts = split_path(path)
        if not parts:
            raise InvalidPath("a file needs a name")
        grouped.setdefault(parts[0], {})["/".join(parts[1:])] = change
    return _apply(get, add, tree_sha, grouped, "") or _empty_tree(add)


def _apply(get: Get, add: Add, tree_sha: bytes | None, grouped: dict[str, dict[str, Change]],
           where: str) -> bytes | None:
    entries: dict[bytes, Entry] = {}
    if tree_sha is not None:
        tree = get(tree_sha)
        if isinstance(tree, Tree):
            entries = entries_of(tree)
    for name, below in grouped.items():
        key = name.encode()
        current = entries.get(key)
        here = below.pop("", _MISSING) if "" in below else _MISSING
        if here is not _MISSING:
            if below:
                raise InvalidPath(f"{where + name!r} is both a file and a directory")
            if here is None:
                entries.pop(key, None)
                continue
            if current is not None and current.is_dir and not isinstance(here, Entry):
                raise InvalidPath(f"{where + name!r} is a directory")
            if isinstance(here, Entry):
                entries[key] = here
            else:
                assert isinstance(here, bytes)
                blob = Blob.from_string(here)
                add(blob)
                regular = current is not None and current.mode in (FILE_MODE, EXEC_MODE)
                entries[key] = Entry(current.mode if regular and current is not None else FILE_MODE, blob.id)
            continue
        if current is not None and not current.is_dir:
            if all(change is None for change in below.values()):
                continue  # deleting below a file: nothing there to delete
            raise InvalidPath(f"{where + name!r} is a file, not a directory")
        subgroups: dict[str, dict[str, Change]] = {}
        for rest, change in below.items():
            head, _, tail = rest.partition("/")
            subgroups.setdefault(head, {})[tail] = change
        sub = _apply(get, add, current.sha if current is not None else None, subgroups, where + name + "/")
        if sub is None:
            entries.pop(key, None)
        else:
            entries[key] = Entry(DIR_MODE, sub)
    if not entries:
        return None
    tree = tree_from(entries)
    add(tree)
    return tree.id


_MISSING = object()


def _empty_tree(add: Add) -> bytes:
    tree = Tree()
    add(tree)
    return tree.id
