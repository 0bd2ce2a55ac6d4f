"""git_store: seeded histories shared across trials, real commits, refs, merges."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ancha.world.tools.github.git_seed import Identity, SeedError, clear_cache
from ancha.world.tools.github.git_store import (
    InvalidPath,
    MergeConflict,
    NotFastForward,
    RefConflict,
    RefUpdate,
    UnknownRevision,
    build_repo_git,
)
from ancha.world.tools.github.scene_file import RepoFile

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
ME = Identity("Agent", "agent@example.com")


def seed(**extra: object) -> RepoFile:
    return RepoFile.model_validate({
        "name": "acme/orders",
        "files": {"README.md": "# Orders\n", "src/app.py": "print('hello')\n", "src/lib/util.py": "X = 1\n"},
        "commits": [
            {"ref": "docs", "message": "Docs", "at": "2025-02-01T10:00:00Z", "files": {"docs/guide.md": "guide\n"}},
            {"ref": "fix", "branch": "feature", "message": "Fix the app", "author": "gh_laura",
             "files": {"src/app.py": "print('fixed')\n", "README.md": None}},
        ],
        "branches": {"release": {"from": "fix"}, "hotfix": {"from": "release"}},
        **extra,
    })


def test_same_seed__same_shas_and_one_shared_store() -> None:
    clear_cache()
    first = build_repo_git(seed(), START)
    second = build_repo_git(seed(), START)
    assert first.seeded is second.seeded
    assert first.store.shared is second.store.shared
    assert first.branches() == second.branches()
    assert first.store is not second.store


def test_seed_content_time_or_identity__changes_the_shas() -> None:
    base = build_repo_git(seed(), START)
    other_text = build_repo_git(seed(files={"README.md": "other\n"}), START)
    later = build_repo_git(seed(), datetime(2025, 3, 2, tzinfo=UTC))
    named = build_repo_git(seed(), START, {"gh_laura": Identity("Laura Chen", "laura@acme.test")})
    main = base.branch_sha("main")
    assert other_text.branch_sha("main") != main
    assert later.commits["fix"] != base.commits["fix"]  # the last undated commit moves with clock.start
    assert named.commits["fix"] != base.commits["fix"]
    info = named.commit_info(named.commits["fix"])
    assert info is not None and (info.author.name, info.author.email) == ("Laura Chen", "laura@acme.test")


def test_seeded_history__branches_commits_and_times() -> None:
    repo = build_repo_git(seed(), START)
    assert [name for name, _ in repo.branches()] == ["feature", "hotfix", "main", "release"]
    assert repo.branch_sha("release") == repo.branch_sha("hotfix") == repo.commits["fix"]
    assert repo.default_branch == "main" and repo.resolve("HEAD") == repo.branch_sha("main")
    feature = repo.resolve("feature")
    assert feature is not None
    assert repo.read_file(feature, "README.md") is None
    assert repo.read_file(feature, "src/app.py") == b"print('fixed')\n"
    docs = repo.commit_info(repo.commits["docs"])
    assert docs is not None and docs.author.iso == "2025-02-01T10:00:00Z"
    initial = repo.commit_info(docs.parents[0])
    assert initial is not None and initial.message == "Initial commit" and initial.author.time < START.timestamp()


def test_trial_writes__stay_in_the_trial() -> None:
    one = build_repo_git(seed(), START)
    two = build_repo_git(seed(), START)
    sha = one.write_files("main", {"new.txt": b"new\n"}, "Add new", ME, START.timestamp())
    assert one.branch_sha("main") == sha
    assert two.branch_sha("main") != sha
    assert two.object(sha) is None
    assert sha.encode() not in one.store.shared


def test_resolve__names_shas_and_prefixes() -> None:
    repo = build_repo_git(seed(), START)
    fix = repo.commits["fix"]
    assert repo.resolve("refs/heads/feature") == fix
    assert repo.resolve("heads/feature") == fix
    assert repo.resolve(fix) == fix
    assert repo.resolve(fix[:7]) == fix
    assert repo.resolve("$fix") == fix
    assert repo.resolve("nope") is None
    assert repo.resolve("0" * 40) is None
    assert repo.resolve("main~1") is None


def test_list_dir_and_entries() -> None:
    repo = build_repo_git(seed(), START)
    main = repo.branch_sha("main")
    assert main is not None
    root = repo.list_dir(main, "")
    assert root is not None
    assert [(e.name, e.type) for e in root] == [("README.md", "file"), ("docs", "dir"), ("src", "dir")]
    src = repo.list_dir(main, "src/")
    assert src is not None and [e.path for e in src] == ["src/app.py", "src/lib"]
    assert repo.list_dir(main, "README.md") is None
    assert repo.list_dir(main, "../etc") is None


def test_write_files__expected_parent_and_paths() -> None:
    repo = build_repo_git(seed(), START)
    main = repo.branch_sha("main")
    with pytest.raises(RefConflict):
        repo.write_files("main", {"a": b"a"}, "m", ME, 0, expected_parent=repo.commits["fix"])
    with pytest.raises(UnknownRevision):
        repo.write_files("nope", {"a": b"a"}, "m", ME, 0)
    with pytest.raises(InvalidPath):
        repo.write_files("main", {"README.md/x": b"a"}, "m", ME, 0)
    with pytest.raises(InvalidPath):
        repo.write_files("main", {"../x": b"a"}, "m", ME, 0)
    assert repo.branch_sha("main") == main
    sha = repo.write_files("main", {"src/lib/util.py": None}, "Drop util", ME, 0, expected_parent=main)
    assert repo.list_dir(sha, "src/lib") is None  # an emptied directory disappears


def test_refs__old_value_checks_and_update_hook() -> None:
    repo = build_repo_git(seed(), START)
    seen: list[RefUpdate] = []
    repo.on_ref_update = seen.extend
    main, fix = repo.branch_sha("main"), repo.commits["fix"]
    assert main is not None
    repo.create_ref("refs/heads/topic", fix, actor="person:laura")
    with pytest.raises(RefConflict):
        repo.create_ref("refs/heads/topic", main)
    with pytest.raises(RefConflict):
        repo.set_ref("refs/heads/topic", main, expected=main)
    with pytest.raises(NotFastForward):
        repo.set_ref("refs/heads/topic", main, force=False)
    repo.set_ref("refs/heads/topic", main, force=True)
    repo.delete_ref("refs/heads/topic")
    with pytest.raises(UnknownRevision):
        repo.delete_ref("refs/heads/topic")
    with pytest.raises(RefConflict):
        repo.delete_ref("refs/heads/main")
    assert seen == [RefUpdate("refs/heads/topic", None, fix, "person:laura"),
                    RefUpdate("refs/heads/topic", fix, main, "agent"),
                    RefUpdate("refs/heads/topic", main, None, "agent")]


def test_log__path_author_and_time_filters() -> None:
    repo = build_repo_git(seed(), START)
    assert [c.message for c in repo.log("feature")] == ["Fix the app", "Docs", "Initial commit"]
    assert [c.message for c in repo.log("feature", path="src/app.py")] == ["Fix the app", "Initial commit"]
    assert [c.message for c in repo.log("feature", author="GH_LAURA")] == ["Fix the app"]
    since = datetime(2025, 2, 1, 9, 30, tzinfo=UTC).timestamp()  # the undated initial commit: 09:00
    until = datetime(2025, 2, 15, tzinfo=UTC).timestamp()
    assert [c.message for c in repo.log("main", since=since, until=until)] == ["Docs"]
    with pytest.raises(UnknownRevision):
        repo.log("nope")


def test_compare__status_counts_and_patches() -> None:
    repo = build_repo_git(seed(), START)
    ahead = repo.compare("main", "feature")
    assert (ahead.status, ahead.ahead_by, ahead.behind_by) == ("ahead", 1, 0)
    assert [(f.filename, f.status, f.additions, f.deletions) for f in ahead.files] == [
        ("README.md", "removed", 0, 1), ("src/app.py", "modified", 1, 1)]
    assert ahead.files[1].patch == "@@ -1 +1 @@\n-print('hello')\n+print('fixed')"
    assert repo.compare("feature", "main").status == "behind"
    assert repo.compare("main", "main").status == "identical"
    repo.write_files("main", {"x.txt": b"x"}, "x", ME, START.timestamp())
    diverged = repo.compare("main", "feature")
    assert (diverged.status, diverged.ahead_by, diverged.behind_by) == ("diverged", 1, 1)
    assert diverged.merge_base == repo.commits["docs"]


def test_merge__three_way_and_conflicts() -> None:
    repo = build_repo_git(seed(), START)
    repo.write_files("main", {"src/lib/util.py": b"X = 2\n"}, "Bump", ME, START.timestamp())
    assert repo.mergeable("main", "feature")
    merged = repo.merge("main", "feature", "merge", "Merge feature", ME, START.timestamp() + 1)
    info = repo.commit_info(merged)
    assert info is not None and len(info.parents) == 2
    assert repo.read_file(merged, "src/app.py") == b"print('fixed')\n"
    assert repo.read_file(merged, "src/lib/util.py") == b"X = 2\n"
    assert repo.read_file(merged, "README.md") is None

    repo.write_files("release", {"src/lib/util.py": b"X = 3\n"}, "Other bump", ME, START.timestamp())
    assert not repo.mergeable("main", "release")
    with pytest.raises(MergeConflict) as conflict:
        repo.merge("main", "release", "squash", "Squash", ME, START.timestamp() + 2)
    assert conflict.value.paths == ["src/lib/util.py"]
    assert repo.branch_sha("main") == merged


def test_merge__squash_and_rebase() -> None:
    repo = build_repo_git(seed(), START)
    repo.write_files("feature", {"b.txt": b"b\n"}, "Second", ME, START.timestamp())
    repo.write_files("main", {"m.txt": b"m\n"}, "Main moves", ME, START.timestamp())
    squash = build_repo_git(seed(), START)
    squash.write_files("feature", {"b.txt": b"b\n"}, "Second", ME, START.timestamp())
    squashed = squash.merge("main", "feature", "squash", "Squashed (#1)", ME, START.timestamp() + 5)
    info = squash.commit_info(squashed)
    assert info is not None and len(info.parents) == 1 and info.message == "Squashed (#1)"
    rebased = repo.merge("main", "feature", "rebase", "", Identity("GitHub", "noreply@github.com"),
                         START.timestamp() + 5)
    messages = [c.message for c in repo.log(rebased)][:3]
    assert messages == ["Second", "Fix the app", "Main moves"]
    top = repo.commit_info(rebased)
    assert top is not None and top.committer.name == "GitHub" and top.author.name == "Agent"
    assert repo.read_file(rebased, "m.txt") == b"m\n" and repo.read_file(rebased, "b.txt") == b"b\n"


def test_bad_branch_source__seed_error() -> None:
    with pytest.raises(SeedError):
        build_repo_git(seed(branches={"x": {"from": "nowhere"}}), START)


def test_merge__edits_to_separate_lines_of_one_file_merge() -> None:
    repo = build_repo_git(seed(files={"notes.txt": "one\ntwo\nthree\nfour\nfive\nsix\n"}), START)
    repo.write_files("feature", {"notes.txt": b"ONE\ntwo\nthree\nfour\nfive\nsix\n"}, "Top", ME, 0)
    repo.write_files("main", {"notes.txt": b"one\ntwo\nthree\nfour\nfive\nSIX\n"}, "Bottom", ME, 0)
    assert repo.mergeable("main", "feature")
    merged = repo.merge("main", "feature", "merge", "Merge", ME, 1)
    assert repo.read_file(merged, "notes.txt") == b"ONE\ntwo\nthree\nfour\nfive\nSIX\n"
    repo.write_files("feature", {"notes.txt": b"ONE\ntwo\nthree\nfour\nfive\nsix!\n"}, "Clash", ME, 2)
    assert not repo.mergeable("main", "feature")


def test_merge_lines__diff3() -> None:
    from ancha.world.tools.github.git_merge import merge_lines

    base = [b"a\n", b"b\n", b"c\n"]
    assert merge_lines(base, [b"A\n", b"b\n", b"c\n"], [b"a\n", b"b\n", b"C\n"]) == [b"A\n", b"b\n", b"C\n"]
    assert merge_lines(base, [b"a\n", b"B\n", b"c\n"], [b"a\n", b"B\n", b"c\n"]) == [b"a\n", b"B\n", b"c\n"]
    assert merge_lines(base, [b"a\n", b"X\n", b"c\n"], [b"a\n", b"Y\n", b"c\n"]) is None
    assert merge_lines(base, base, [b"a\n", b"c\n"]) == [b"a\n", b"c\n"]
