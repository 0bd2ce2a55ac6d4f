"""The console's stable URLs, for pages and for commands that point at them (``ancha explain``)."""

from __future__ import annotations

import os
from urllib.parse import quote, urlencode

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


def trial_ref(run_id: str, scene: str, trial: int | str) -> str:
    """A trial as the compare page's ``?a=``/``?b=`` name it: ``RUN/SCENE/TRIAL``."""
    return f"{run_id}/{scene}/{trial}"


def compare_path(a: str, b: str | None = None) -> str:
    """Two trials (``trial_ref``) side by side; without ``b``, the trials ``a`` can be compared with."""
    return f"{PREFIX}/compare?" + urlencode({"a": a} if b is None else {"a": a, "b": b}, safe="/")


def scene_compare_path(scene: str) -> str:
    """The scene's newest failed trial beside a passed one (the compare page picks them)."""
    return f"{PREFIX}/compare?" + urlencode({"scene": scene})
