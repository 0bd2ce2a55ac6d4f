"""Three-way merges of trees, as GitHub decides whether a pull request is mergeable.

``merge_trees(base, ours, theirs)`` takes, per path, the side that changed (both sides
making the same change is no conflict), recurses into directories both sides changed,
and reports every path both sides changed differently as a conflict. There is no
line-level merge: two different edits to one file conflict.
"""

from __future__ import annotations

from collections.abc import Callable

from dulwich.objects import Commit, ObjectID, ShaFile, Tree

from ancha.world.tools.github.git_seed import Identity
from ancha.world.tools.github.git_trees import Entry, tree_from

Get = Callable[[bytes], ShaFile]
Add = Callable[[ShaFile], None]


class MergeConflict(Exception):
    """Both sides changed these paths differently."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__("merge conflict in " + ", ".join(paths))
        self.paths = paths


def merge_trees(get: Get, add: Add, base: bytes | None, ours: bytes, theirs: bytes) -> bytes:
    """The merged root tree; raises ``MergeConflict`` naming every conflicting path.

    Nothing is stored when the merge conflicts."""
    if ours == theirs or base == theirs:
        return ours
    if base == ours:
        return theirs
    written: list[ShaFile] = []
    conflicts: list[str] = []
    merged = _merge(get, written.append, base, ours, theirs, "", conflicts)
    if conflicts:
        raise MergeConflict(conflicts)
    for obj in written:
        add(obj)
    if merged is None:
        empty = Tree()
        add(empty)
        return empty.id
    return merged


def _entries(get: Get, sha: bytes | None) -> dict[bytes, Entry]:
    if sha is None:
        return {}
    tree = get(sha)
    if not isinstance(tree, Tree):
        return {}
    return {item.path: Entry(item.mode, item.sha) for item in tree.iteritems()}


def _merge(get: Get, add: Add, base: bytes | None, ours: bytes | None, theirs: bytes | None, prefix: str,
           conflicts: list[str]) -> bytes | None:
    b, o, t = _entries(get, base), _entries(get, ours), _entries(get, theirs)
    result: dict[bytes, Entry] = {}
    for name in sorted(b.keys() | o.keys() | t.keys()):
        was, mine, other = b.get(name), o.get(name), t.get(name)
        if mine == other or was == other:
            chosen = mine
        elif was == mine:
            chosen = other
        elif mine is not None and other is not None and mine.is_dir and other.is_dir:
            below = was.sha if was is not None and was.is_dir else None
            sub = _merge(get, add, below, mine.sha, other.sha, prefix + name.decode("utf-8", "replace") + "/",
                         conflicts)
            chosen = Entry(mine.mode, sub) if sub is not None else None
        else:
            conflicts.append(prefix + name.decode("utf-8", "replace"))
            continue
        if chosen is not None:
            result[name] = chosen
    if not result:
        return None
    tree = tree_from(result)
    add(tree)
    return tree.id


def replay_commits(get: Get, add: Add, onto: bytes, commits: list[Commit], committer: Identity,
                   at: float) -> bytes:
    """Rebase: each commit's change (against its first parent) re-applied on ``onto`` in
    order, keeping its author and message; the new tip. Raises ``MergeConflict``."""
    current = get(onto)
    assert isinstance(current, Commit)
    for commit in commits:
        parent = get(commit.parents[0])
        assert isinstance(parent, Commit)
        tree = merge_trees(get, add, parent.tree, current.tree, commit.tree)
        rebased = Commit()
        rebased.tree, rebased.parents = ObjectID(tree), [current.id]
        rebased.author, rebased.author_time = commit.author, commit.author_time
        rebased.author_timezone, rebased.message = commit.author_timezone, commit.message
        rebased.committer = f"{committer.name} <{committer.email}>".encode()
        rebased.commit_time, rebased.commit_timezone = int(at), 0
        add(rebased)
        current = rebased
    return current.id
