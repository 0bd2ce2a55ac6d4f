"""Three-way merges of trees, as GitHub decides whether a pull request is mergeable.

``merge_trees(base, ours, theirs)`` takes, per path, the side that changed (both sides
making the same change is no conflict), recurses into directories both sides changed,
and merges a text file both sides edited line by line (diff3: edits to separate parts
of the file merge, overlapping or adjacent edits conflict). Every path that cannot be
merged is reported as a conflict.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree

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
        elif (merged := _merge_file(get, add, was, mine, other)) is not None:
            chosen = merged
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


def _merge_file(get: Get, add: Add, was: Entry | None, mine: Entry | None, other: Entry | None) -> Entry | None:
    """Both sides edited one text file: their line-level merge, or None (a conflict)."""
    if was is None or mine is None or other is None or was.kind != "blob" or mine.kind != "blob" \
            or other.kind != "blob" or len({was.mode, mine.mode, other.mode}) > 2:
        return None
    texts = [get(e.sha) for e in (was, mine, other)]
    if not all(isinstance(t, Blob) and b"\0" not in t.data[:8000] for t in texts):
        return None
    base, ours, theirs = (t.data.splitlines(keepends=True) for t in texts if isinstance(t, Blob))
    merged = merge_lines(base, ours, theirs)
    if merged is None:
        return None
    blob = Blob.from_string(b"".join(merged))
    add(blob)
    mode = mine.mode if other.mode == was.mode else other.mode
    return Entry(mode, blob.id)


def merge_lines(base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]) -> list[bytes] | None:
    """diff3 of three versions' lines; None when both sides changed the same region differently."""
    out: list[bytes] = []
    iz = ia = ib = 0
    for zmatch, zend, amatch, aend, bmatch, bend in _sync_regions(base, ours, theirs):
        if amatch > ia or bmatch > ib:
            a, b, z = ours[ia:amatch], theirs[ib:bmatch], base[iz:zmatch]
            if a == b or z == b:
                out.extend(a)
            elif z == a:
                out.extend(b)
            else:
                return None
        out.extend(base[zmatch:zend])
        iz, ia, ib = zend, aend, bend
    return out


def _sync_regions(base: Sequence[bytes], a: Sequence[bytes], b: Sequence[bytes],
                  ) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches of ``base`` both sides kept unchanged, with where they sit in each side."""
    amatches = difflib.SequenceMatcher(None, base, a, autojunk=False).get_matching_blocks()
    bmatches = difflib.SequenceMatcher(None, base, b, autojunk=False).get_matching_blocks()
    regions: list[tuple[int, int, int, int, int, int]] = []
    ia = ib = 0
    while ia < len(amatches) and ib < len(bmatches):
        abase, amatch, alen = amatches[ia]
        bbase, bmatch, blen = bmatches[ib]
        start, end = max(abase, bbase), min(abase + alen, bbase + blen)
        if start < end:
            asub, bsub = amatch + start - abase, bmatch + start - bbase
            regions.append((start, end, asub, asub + end - start, bsub, bsub + end - start))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    regions.append((len(base), len(base), len(a), len(a), len(b), len(b)))
    return regions
