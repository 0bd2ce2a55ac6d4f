"""Walking history: log order, ancestry, merge bases, tree diffs and comparisons.

Functions take the store's lookup (``get``: hex sha -> object) and hex shas as bytes.
The log walks newest first by committer time, as ``git log`` does, lazily.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from dulwich.objects import Blob, Commit, ShaFile, Tree

from ancha.world.tools.github.git_objects import CommitInfo, commit_info
from ancha.world.tools.github.git_trees import Entry, lookup

Get = Callable[[bytes], ShaFile]


def _commit(get: Get, sha: bytes) -> Commit:
    obj = get(sha)
    if not isinstance(obj, Commit):
        raise KeyError(sha)
    return obj


def walk(get: Get, heads: Iterable[bytes], hidden: set[bytes] | frozenset[bytes] = frozenset(),
         ) -> Iterator[Commit]:
    """Commits reachable from ``heads`` and not in ``hidden``, newest first, each once."""
    seen: set[bytes] = set()
    heap: list[tuple[int, int, bytes]] = []
    counter = 0
    for sha in heads:
        if sha not in seen and sha not in hidden:
            seen.add(sha)
            heapq.heappush(heap, (-_commit(get, sha).commit_time, counter, sha))
            counter += 1
    while heap:
        _, _, sha = heapq.heappop(heap)
        commit = _commit(get, sha)
        yield commit
        for parent in commit.parents:
            if parent not in seen and parent not in hidden:
                seen.add(parent)
                counter += 1
                heapq.heappush(heap, (-_commit(get, parent).commit_time, counter, parent))


def ancestors(get: Get, sha: bytes) -> set[bytes]:
    """``sha`` and every commit it descends from."""
    found = {sha}
    todo = [sha]
    while todo:
        for parent in _commit(get, todo.pop()).parents:
            if parent not in found:
                found.add(parent)
                todo.append(parent)
    return found


def is_ancestor(get: Get, ancestor: bytes, descendant: bytes) -> bool:
    return ancestor == descendant or ancestor in ancestors(get, descendant)


def merge_base(get: Get, a: bytes, b: bytes) -> bytes | None:
    """The newest common ancestor of two commits, or None for unrelated histories."""
    of_a = ancestors(get, a)
    for commit in walk(get, [b]):
        if commit.id in of_a:
            return commit.id
    return None


def log(get: Get, head: bytes, path: str | None = None, since: float | None = None,
        until: float | None = None, author: Callable[[CommitInfo], bool] | None = None,
        ) -> Iterator[CommitInfo]:
    """``git log HEAD [-- path]`` newest first, lazily; ``since``/``until`` bound the
    committer time; a commit touches ``path`` when its entry there differs from every
    parent's (a root commit: when the path exists)."""
    for commit in walk(get, [head]):
        if since is not None and commit.commit_time < since:
            continue
        if until is not None and commit.commit_time > until:
            continue
        if path and not _touches(get, commit, path):
            continue
        info = commit_info(commit)
        if author is not None and not author(info):
            continue
        yield info


def _touches(get: Get, commit: Commit, path: str) -> bool:
    mine = lookup(get, commit.tree, path)
    if not commit.parents:
        return mine is not None
    return all(lookup(get, _commit(get, p).tree, path) != mine for p in commit.parents)


# --- diffs ---------------------------------------------------------------------------


@dataclass(slots=True)
class FileChange:
    """One file of a commit or comparison, as GitHub lists it."""

    filename: str
    status: str
    """``added``, ``removed``, ``modified`` or ``renamed``."""
    sha: str | None
    """The blob after the change (before it, for a removal)."""
    additions: int = 0
    deletions: int = 0
    patch: str | None = None
    previous_filename: str | None = None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


def changed_paths(get: Get, old: bytes | None, new: bytes | None, prefix: str = "",
                  ) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """(path, old entry, new entry) for each file that differs between two trees;
    equal subtrees are skipped without being read."""
    old_entries = _entries(get, old)
    new_entries = _entries(get, new)
    for name in sorted(old_entries.keys() | new_entries.keys()):
        before, after = old_entries.get(name), new_entries.get(name)
        if before == after:
            continue
        path = prefix + name.decode("utf-8", "surrogateescape")
        before_dir = before is not None and before.is_dir
        after_dir = after is not None and after.is_dir
        if before_dir or after_dir:
            yield from changed_paths(get, before.sha if before_dir and before else None,
                                     after.sha if after_dir and after else None, path + "/")
        if not before_dir or not after_dir:
            file_before = None if before_dir else before
            file_after = None if after_dir else after
            if file_before != file_after:
                yield path, file_before, file_after


def _entries(get: Get, tree_sha: bytes | None) -> dict[bytes, Entry]:
    if tree_sha is None:
        return {}
    tree = get(tree_sha)
    if not isinstance(tree, Tree):
        return {}
    return {item.path: Entry(item.mode, item.sha) for item in tree.iteritems()}


def diff_trees(get: Get, old: bytes | None, new: bytes | None) -> list[FileChange]:
    """The files that differ, with line counts and patches; exact renames paired."""
    removed: dict[bytes, list[tuple[str, Entry]]] = {}
    result: list[FileChange] = []
    for path, before, after in changed_paths(get, old, new):
        if after is None:
            assert before is not None
            removed.setdefault(before.sha, []).append((path, before))
    for path, before, after in changed_paths(get, old, new):
        if after is None:
            continue
        if before is None and removed.get(after.sha):
            previous, _ = removed[after.sha].pop(0)
            result.append(FileChange(path, "renamed", after.sha.decode(), previous_filename=previous))
            continue
        change = FileChange(path, "added" if before is None else "modified", after.sha.decode())
        _count(get, before, after, change)
        result.append(change)
    for leftovers in removed.values():
        for path, before in leftovers:
            change = FileChange(path, "removed", before.sha.decode())
            _count(get, before, None, change)
            result.append(change)
    result.sort(key=lambda c: c.filename)
    return result


def _count(get: Get, before: Entry | None, after: Entry | None, change: FileChange) -> None:
    old = _lines(get, before)
    new = _lines(get, after)
    if old is None or new is None:
        return  # binary or a submodule: GitHub gives no patch and no counts
    change.patch, change.additions, change.deletions = unified_patch(old, new)


def _lines(get: Get, entry: Entry | None) -> list[str] | None:
    if entry is None:
        return []
    blob = get(entry.sha) if entry.kind == "blob" else None
    if not isinstance(blob, Blob):
        return None
    data = blob.data
    if b"\0" in data[:8000]:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def unified_patch(old: list[str], new: list[str]) -> tuple[str, int, int]:
    """GitHub's ``patch``: git's hunks without file headers, no trailing newline."""
    out: list[str] = []
    additions = deletions = 0
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_mark(" ", line) for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend(_mark("-", line) for line in old[i1:i2])
                deletions += i2 - i1
            if tag in ("replace", "insert"):
                out.extend(_mark("+", line) for line in new[j1:j2])
                additions += j2 - j1
    return "\n".join(out), additions, deletions


def _mark(sign: str, line: str) -> str:
    if line.endswith("\n"):
        return sign + line[:-1].removesuffix("\r") + ("\r" if line.endswith("\r\n") else "")
    return sign + line + "\n\\ No newline at end of file"


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


# --- comparisons -------------------------------------------------------------------


@dataclass(slots=True)
class Comparison:
    """``base...head``: GitHub's compare, three-dot (files from the merge base)."""

    base: str
    head: str
    merge_base: str | None
    status: str
    """``identical``, ``ahead``, ``behind`` or ``diverged``."""
    ahead_by: int
    behind_by: int
    commits: list[CommitInfo] = field(default_factory=list)
    """Commits in head and not in base, oldest first."""
    files: list[FileChange] = field(default_factory=list)


def compare(get: Get, base: bytes, head: bytes) -> Comparison:
    of_base = ancestors(get, base)
    of_head = ancestors(get, head)
    ahead = list(walk(get, [head], of_base))
    behind_by = len(of_base - of_head)
    mb = merge_base(get, base, head)
    if base == head:
        status = "identical"
    elif not behind_by:
        status = "ahead"
    elif not ahead:
        status = "behind"
    else:
        status = "diverged"
    commits = [commit_info(c) for c in reversed(ahead)]
    head_tree = _commit(get, head).tree
    files = diff_trees(get, _commit(get, mb).tree if mb is not None else None, head_tree)
    return Comparison(base.decode(), head.decode(), mb.decode() if mb else None, status, len(ahead),
                      behind_by, commits, files)
