"""The hosted console's copies of uploaded runs: what a page reads is copied whole, a run
uploaded again under its id is copied afresh, and the copies stay within their bound."""

from __future__ import annotations

from pathlib import Path

from agentos.api.console.materialize import RunCopies
from agentos.blobs import open_blob_store
from agentos.models import AnchaRun

FILES = {"summary.json": b"{}", "s/1/checks.json": b"{\"verdict\": \"passed\"}", "s/1/trace.jsonl": b"line\n",
         "s/1/state/memo.txt": b"kept", "_scenes/s/scene.yaml": b"name: s\n"}


def _upload(store: object, run_pk: str, run_id: str, files: dict[str, bytes]) -> AnchaRun:
    run = AnchaRun(id=run_pk, workspace_id="ws1", run_id=run_id,
                   manifest=[{"path": p, "size": len(d), "sha256": "0" * 64} for p, d in files.items()])
    for path, data in files.items():
        store.put(f"ws1/{run_pk}/{path}", data)  # type: ignore[attr-defined]
    return run


def test_the_run_page_gets_the_verdicts_and_a_trial_page_the_whole_trial(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path / 'blobs'}")
    copies = RunCopies(tmp_path / "copies", store)
    run = _upload(store, "pk1", "run-1", FILES)
    folder = copies.ensure_run(run)
    assert (folder / "summary.json").read_bytes() == b"{}" and (folder / "s/1/checks.json").exists()
    assert not (folder / "s/1/trace.jsonl").exists(), "a trial's other files wait until it is opened"
    copies.ensure_trial(run, "s", "1")
    assert (folder / "s/1/state/memo.txt").read_bytes() == b"kept"
    assert not (folder / "_scenes").exists(), "scene sources are not part of the run folder"


def test_a_run_uploaded_again_under_its_id_replaces_the_old_copy(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path / 'blobs'}")
    copies = RunCopies(tmp_path / "copies", store)
    copies.ensure_trial(_upload(store, "pk1", "run-1", FILES), "s", "1")
    again = _upload(store, "pk2", "run-1", FILES | {"s/1/trace.jsonl": b"new\n"})
    copies.ensure_trial(again, "s", "1")
    assert (copies.run_dir(again) / "s/1/trace.jsonl").read_bytes() == b"new\n"


def test_the_least_recently_opened_copies_go_first(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path / 'blobs'}")
    copies = RunCopies(tmp_path / "copies", store, kept=2)
    runs = [_upload(store, f"pk{i}", f"run-{i}", FILES) for i in range(3)]
    copies.ensure_run(runs[0])
    copies.ensure_run(runs[1])
    copies.ensure_run(runs[0])  # opened again: now the most recent
    copies.ensure_run(runs[2])
    assert copies.run_dir(runs[0]).exists() and copies.run_dir(runs[2]).exists()
    assert not copies.run_dir(runs[1]).exists()
    copies.ensure_trial(runs[1], "s", "1")
    assert (copies.run_dir(runs[1]) / "s/1/trace.jsonl").exists(), "an evicted run is copied again when opened"
