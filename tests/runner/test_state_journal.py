"""The agent's state folder journalled over a trial and restored as it was at a sequence number
(``ancha fork --at SEQ``): versions only on change, contents stored once, modes and links kept,
nothing written outside the folder restored into."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from ancha.runner.agents import state_journal
from ancha.runner.agents.state_journal import StateJournal, restore_state


def write(root: Path, relative: str, text: str) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(text)


def contents(root: Path) -> dict[str, str]:
    """Every file and link under ``root``: a file by its text, a link as ``-> target``."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink():
                found[path.relative_to(root).as_posix()] = f"-> {os.readlink(path)}"
            elif path.is_file():
                found[path.relative_to(root).as_posix()] = path.read_text()
    return found


def versions(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (journal / "index.jsonl").read_text().splitlines()]


def objects(journal: Path) -> list[str]:
    return sorted(path.name for path in (journal / "objects").iterdir())


@pytest.fixture
def folders(tmp_path: Path) -> Iterator[tuple[Path, Path, StateJournal]]:
    state, journal_dir = tmp_path / "state", tmp_path / "journal"
    state.mkdir()
    journal = StateJournal(state, journal_dir)
    yield state, journal_dir, journal
    journal.close()


def test_observe__records_a_version_only_when_the_folder_changed(folders: tuple[Path, Path, StateJournal]) -> None:
    state, journal_dir, journal = folders
    write(state, "memory.json", '{"seen": 1}')
    assert journal.observe(3, "2024-05-01T09:00:00Z") is True
    assert journal.observe(4, "2024-05-01T09:00:01Z") is False
    (state / "memory.json").touch()
    (state / "notes").mkdir()
    assert journal.observe(5, "2024-05-01T09:00:02Z") is False  # touched, and an empty folder
    write(state, "memory.json", '{"seen": 2}')  # the same size
    assert journal.observe(5, "2024-05-01T09:00:03Z") is True  # a seq may repeat
    (state / "memory.json").unlink()
    assert journal.observe(6, "2024-05-01T09:00:04Z") is True
    assert [(v["seq"], v["at"], v["files"]) for v in versions(journal_dir)] == [
        (3, "2024-05-01T09:00:00Z", {"memory.json": hashlib.sha256(b'{"seen": 1}').hexdigest()}),
        (5, "2024-05-01T09:00:03Z", {"memory.json": hashlib.sha256(b'{"seen": 2}').hexdigest()}),
        (6, "2024-05-01T09:00:04Z", {}),
    ]


def test_restore_state__gives_the_latest_version_at_or_before_seq(
        folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    write(state, "memory.json", "first")
    write(state, "notes/todo.txt", "call Dana")
    journal.observe(10, "t1")
    write(state, "memory.json", "second")
    (state / "notes" / "todo.txt").unlink()
    journal.observe(20, "t2")
    write(state, "memory.json", "third")
    journal.observe(20, "t3")

    assert restore_state(journal_dir, 9, tmp_path / "at9") is None
    assert contents(tmp_path / "at9") == {}
    assert restore_state(journal_dir, 15, tmp_path / "at15") == 10
    assert contents(tmp_path / "at15") == {"memory.json": "first", "notes/todo.txt": "call Dana"}
    assert restore_state(journal_dir, 20, tmp_path / "at20") == 20
    assert contents(tmp_path / "at20") == {"memory.json": "third"}
    assert restore_state(journal_dir, 99, tmp_path / "at99") == 20


def test_restore_state__overwrites_files_of_the_same_names_in_place(
        folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    write(state, "memory.json", "recorded")
    journal.observe(1, "t1")
    target = tmp_path / "target"
    write(target, "memory.json", "stale")
    write(target, "other.txt", "left alone")
    assert restore_state(journal_dir, 1, target) == 1
    assert contents(target) == {"memory.json": "recorded", "other.txt": "left alone"}


def test_observe__stores_unchanged_contents_once(folders: tuple[Path, Path, StateJournal],
                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(state_journal, "CHUNK", 7)  # many chunks per file: hashed and copied as a stream
    state, journal_dir, journal = folders
    big = "".join(f"line {n}\n" for n in range(1000))
    write(state, "cache/big.txt", big)
    write(state, "counter", "1")
    write(state, "copy-of-counter", "1")
    journal.observe(1, "t1")
    write(state, "counter", "2")
    journal.observe(2, "t2")
    write(state, "counter", "1")
    journal.observe(3, "t3")
    assert len(versions(journal_dir)) == 3
    assert len(objects(journal_dir)) == 3  # big, "1", "2"
    assert restore_state(journal_dir, 3, tmp_path / "at3") == 3
    assert contents(tmp_path / "at3") == {"cache/big.txt": big, "counter": "1", "copy-of-counter": "1"}


def test_restore_state__keeps_the_executable_bit(folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    write(state, "bin/tool.sh", "#!/bin/sh\necho hi\n")
    write(state, "plain.txt", "text")
    journal.observe(1, "t1")
    (state / "bin" / "tool.sh").chmod(0o755)
    assert journal.observe(2, "t2") is True  # a mode change alone is a new version
    assert restore_state(journal_dir, 1, tmp_path / "at1") == 1
    assert not os.access(tmp_path / "at1" / "bin" / "tool.sh", os.X_OK)
    assert restore_state(journal_dir, 2, tmp_path / "at2") == 2
    assert os.access(tmp_path / "at2" / "bin" / "tool.sh", os.X_OK)
    assert not os.access(tmp_path / "at2" / "plain.txt", os.X_OK)


def test_restore_state__keeps_links_as_links_never_following_them(
        folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "not state")
    write(state, "memory.json", "{}")
    os.symlink("memory.json", state / "latest")
    os.symlink(outside, state / "elsewhere")  # a linked folder: not walked into
    os.symlink("missing", state / "dangling")
    assert journal.observe(1, "t1") is True
    assert versions(journal_dir)[0]["symlinks"] == ["dangling", "elsewhere", "latest"]
    target = tmp_path / "target"
    write(target, "latest", "a file the link replaces")
    assert restore_state(journal_dir, 1, target) == 1
    assert contents(target) == {"memory.json": "{}", "latest": "-> memory.json",
                                "elsewhere": f"-> {outside}", "dangling": "-> missing"}
    assert (outside / "secret.txt").read_text() == "not state"


def test_restore_state__refuses_a_link_where_a_folder_is_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    os.symlink(outside, target / "notes")
    state, journal_dir = tmp_path / "state", tmp_path / "journal"
    write(state, "notes/todo.txt", "call Dana")
    with closing(StateJournal(state, journal_dir)) as journal:
        journal.observe(1, "t1")
    with pytest.raises(ValueError, match="through the link"):
        restore_state(journal_dir, 1, target)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("relative", ["../escaped.txt", "notes/../../escaped.txt", "/tmp/escaped.txt", ""])
def test_restore_state__refuses_a_path_outside_the_target(tmp_path: Path, relative: str) -> None:
    journal_dir = tmp_path / "journal"
    journal_dir.mkdir()
    digest = "0" * 64
    (journal_dir / "index.jsonl").write_text(
        json.dumps({"seq": 1, "at": "t1", "files": {"fine.txt": digest, relative: digest}}) + "\n")
    with pytest.raises(ValueError, match="outside the state folder|no path"):
        restore_state(journal_dir, 1, tmp_path / "target")
    assert contents(tmp_path) == {"journal/index.jsonl": (journal_dir / "index.jsonl").read_text()}


def test_restore_state__refuses_an_object_name_that_is_no_digest(tmp_path: Path) -> None:
    journal_dir = tmp_path / "journal"
    journal_dir.mkdir()
    (journal_dir / "index.jsonl").write_text(
        json.dumps({"seq": 1, "at": "t1", "files": {"stolen.txt": "../../outside/secret.txt"}}) + "\n")
    with pytest.raises(ValueError, match="no SHA-256 digest"):
        restore_state(journal_dir, 1, tmp_path / "target")


def test_restore_state__ignores_a_partial_last_line(folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    write(state, "memory.json", "whole")
    journal.observe(1, "t1")
    journal.close()
    with (journal_dir / "index.jsonl").open("ab") as index:
        index.write(b'{"seq": 2, "at": "t2", "files": {"memory.json": "ab')  # a crash mid-line
    assert restore_state(journal_dir, 2, tmp_path / "target") == 1
    assert contents(tmp_path / "target") == {"memory.json": "whole"}


def test_observe__a_journal_reopened_after_a_crash_starts_on_a_line_of_its_own(
        folders: tuple[Path, Path, StateJournal], tmp_path: Path) -> None:
    state, journal_dir, journal = folders
    write(state, "memory.json", "whole")
    journal.observe(1, "t1")
    journal.close()
    with (journal_dir / "index.jsonl").open("ab") as index:
        index.write(b'{"seq": 2, "at": "t2", "fi')
    with closing(StateJournal(state, journal_dir)) as again:
        write(state, "memory.json", "after")
        assert again.observe(3, "t3") is True
    assert [v["seq"] for v in versions(journal_dir)] == [1, 3]
    assert restore_state(journal_dir, 3, tmp_path / "target") == 3
    assert contents(tmp_path / "target") == {"memory.json": "after"}


def test_observe__an_empty_or_missing_folder_records_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "nested" / "deeper").mkdir(parents=True)
    with closing(StateJournal(empty, tmp_path / "journal-empty")) as journal:
        assert journal.observe(1, "t1") is False
    with closing(StateJournal(tmp_path / "missing", tmp_path / "journal-missing")) as journal:
        assert journal.observe(1, "t1") is False
    assert not (tmp_path / "journal-empty").exists()
    assert not (tmp_path / "journal-missing").exists()
    assert restore_state(tmp_path / "journal-missing", 1, tmp_path / "target") is None
    assert contents(tmp_path / "target") == {}


def test_observe__a_file_that_vanishes_mid_walk_is_left_out(folders: tuple[Path, Path, StateJournal],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    state, journal_dir, journal = folders
    write(state, "kept.txt", "kept")
    write(state, "gone.txt", "gone")
    walk = state_journal._walk

    def walk_while_deleting(root: Path) -> Iterator[tuple[str, Path, os.stat_result]]:
        for found in walk(root):
            (root / "gone.txt").unlink(missing_ok=True)
            yield found

    monkeypatch.setattr(state_journal, "_walk", walk_while_deleting)
    assert journal.observe(1, "t1") is True
    assert list(versions(journal_dir)[0]["files"]) == ["kept.txt"]



def test_observe__reads_only_files_whose_stat_changed(folders: tuple[Path, Path, StateJournal],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_journal, "RACY_NS", 0)  # no clock tick to allow for: a stat is trusted at once
    state, _, journal = folders
    write(state, "big.bin", "x" * 10_000)
    write(state, "counter", "1")
    journal.observe(1, "t1")
    opened: list[str] = []
    open_file = state_journal._open_file

    def open_and_note(path: Path) -> Any:
        opened.append(path.name)
        return open_file(path)

    monkeypatch.setattr(state_journal, "_open_file", open_and_note)
    assert journal.observe(2, "t2") is False
    write(state, "counter", "2")
    assert journal.observe(3, "t3") is True
    assert set(opened) == {"counter"}


def test_observe__a_rewrite_the_stat_does_not_show_is_seen_at_the_next_look(
        folders: tuple[Path, Path, StateJournal], monkeypatch: pytest.MonkeyPatch) -> None:
    state, _, journal = folders
    write(state, "memory.json", "one")
    walk = state_journal._walk
    stale = {relative: st for relative, _, st in walk(state)}
    journal.observe(1, "t1")
    write(state, "memory.json", "two")

    def walk_with_coarse_timestamps(root: Path) -> Iterator[tuple[str, Path, os.stat_result]]:
        for relative, path, _ in walk(root):  # as a file system whose clock had not ticked would say
            yield relative, path, stale[relative]

    monkeypatch.setattr(state_journal, "_walk", walk_with_coarse_timestamps)
    assert journal.observe(2, "t2") is True
