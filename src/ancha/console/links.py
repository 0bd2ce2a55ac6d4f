"""The console's stable URLs, for pages and for commands that point at them (``ancha explain``)."""

from __future__ import annotations

import os
from urllib.parse import quote

DEFAULT_PORT = 7700
"""Where ``ancha ui`` listens unless told otherwise."""
PREFIX = "/ui"


def console_base() -> str:
    """The console's origin: ``ANCHA_CONSOLE_URL`` when set (a console served elsewhere, such
    as ``ancha serve``), else where ``ancha ui`` listens by default."""
    return (os.environ.get("ANCHA_CONSOLE_URL") or f"http://127.0.0.1:{DEFAULT_PORT}").rstrip("/")


def run_path(run_id: str) -> str:
    return f"{PREFIX}/runs/{quote(run_id, safe='')}"


def trial_path(run_id: str, scene: str, trial: int | str) -> str:
    return f"{run_path(run_id)}/{quote(scene, safe='')}/{quote(str(trial), safe='')}"


def scene_path(scene: str) -> str:
    return f"{PREFIX}/scenes/{quote(scene, safe='')}"


def trial_url(run_id: str, scene: str, trial: int | str) -> str:
    return console_base() + trial_path(run_id, scene, trial)
