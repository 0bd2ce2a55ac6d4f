"""An uploaded run's files, copied from the blob store into a per-workspace folder laid out
as ``.ancha/runs`` is, so Ancha's own console pages read them unchanged.

A run's summary and every trial's ``checks.json`` and ``replay.json`` come first (the run
page); a trial's other files when that trial is opened. Each file is written to a temporary
name and renamed, so a page never reads half a file; a file already there is not fetched
again (an uploaded run never changes).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from agentos.blobs import BlobStore
from agentos.history.uploads import SCENE_SOURCES, SUMMARY, blob_key
from agentos.models import AnchaRun

MARKER = ".agentos-run"
"""In each copied run's folder: the id of the upload it was copied from."""
KEPT_RUNS = 200
"""Copied runs kept at once; the least recently opened goes first (it is copied again if opened)."""
RUN_LEVEL = ("checks.json", "replay.json")
"""A trial's files the run page reads."""


class RunCopies:
    """``ROOT/WORKSPACE/RUN_ID/...``, filled on demand."""

    def __init__(self, root: Path, blobs: BlobStore, kept: int = KEPT_RUNS) -> None:
        self.root = root
        self.blobs = blobs
        self.kept = kept
        self._lock = threading.Lock()
        self._whole: set[tuple[str, str]] = set()
        self._recent: OrderedDict[str, Path] = OrderedDict()
        """Copied runs by upload id, least recently opened first."""

    def workspace_dir(self, workspace_id: str) -> Path:
        return self.root / workspace_id

    def run_dir(self, run: AnchaRun) -> Path:
        return self.workspace_dir(run.workspace_id) / run.run_id

    def ensure_run(self, run: AnchaRun) -> Path:
        """The summary and each trial's verdict files."""
        wanted = [f["path"] for f in run.manifest
                  if f["path"] == SUMMARY or (f["path"].count("/") == 2 and f["path"].rsplit("/", 1)[1] in RUN_LEVEL)]
        self._copy(run, wanted)
        return self.run_dir(run)

    def ensure_trial(self, run: AnchaRun, scene: str, trial: str) -> None:
        """Everything of one trial (its state folder and journal included)."""
        if (run.id, f"{scene}/{trial}") in self._whole:
            return
        prefix = f"{scene}/{trial}/"
        self._copy(run, [f["path"] for f in run.manifest if f["path"].startswith(prefix)])
        self._whole.add((run.id, f"{scene}/{trial}"))

    def _evict(self, keep: AnchaRun) -> None:
        """Make room: drop the least recently opened copies beyond ``kept`` (under the lock)."""
        self._recent[keep.id] = self.run_dir(keep)
        self._recent.move_to_end(keep.id)
        while len(self._recent) > self.kept:
            run_pk, folder = self._recent.popitem(last=False)
            shutil.rmtree(folder, ignore_errors=True)
            self._whole = {w for w in self._whole if w[0] != run_pk}

    def _copy(self, run: AnchaRun, paths: list[str]) -> None:
        base = self.run_dir(run)
        marker = base / MARKER
        with self._lock:
            self._evict(run)
        with self._lock:  # a run deleted and uploaded again under its id: the old copy goes
            if base.exists() and (not marker.exists() or marker.read_text() != run.id):
                shutil.rmtree(base, ignore_errors=True)
                self._whole = {w for w in self._whole if w[0] != run.id}
            if not marker.exists():
                base.mkdir(parents=True, exist_ok=True)
                marker.write_text(run.id)
        for path in paths:
            if path.startswith(SCENE_SOURCES + "/"):
                continue
            target = base / path
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".part-")
            try:
                with os.fdopen(handle, "wb") as out:
                    for chunk in self.blobs.open(blob_key(run, path)):
                        out.write(chunk)
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
