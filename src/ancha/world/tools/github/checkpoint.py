"""What a checkpoint of a GitHub world names instead of copying, and how git objects travel.

Every repository's seeded history (``git_seed.SeededRepo``: its objects, refs and commit
refs) is shared by all trials of the scene and never changes: a checkpoint names it by
repository. The trial's own git objects are kept as their raw bytes (dulwich caches a
running hash in each object, which cannot be pickled).
"""

from __future__ import annotations

import copyreg
from collections.abc import Mapping

from dulwich.objects import Blob, Commit, ShaFile, Tag, Tree

from ancha.world.tools.github.replica import GitHubReplica


def shared(replica: GitHubReplica) -> Mapping[str, object]:
    found: dict[str, object] = {}
    for key, repo in replica.state.repos.items():
        git = repo.git
        if git is not None:
            found[f"repo:{key}"] = git.seeded
            found[f"objects:{key}"] = git.seeded.objects
    return found


def _raw(obj: ShaFile) -> tuple[object, tuple[object, ...]]:
    return ShaFile.from_raw_string, (obj.type_num, obj.as_raw_string(), obj.id)


for _kind in (Blob, Commit, Tag, Tree):
    copyreg.pickle(_kind, _raw)  # type: ignore[arg-type]
