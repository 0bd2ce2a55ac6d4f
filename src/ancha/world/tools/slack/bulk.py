"""Making a long history's objects in one go: the cycle collector paused meanwhile."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_MANY_OBJECTS = 100_000
"""Objects made while the collector is paused past which one full collection costs less than
the collector's own (a small scene makes a few thousand)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector paused while a long history becomes objects. They hold no cycles,
    yet the collector would walk all of them each time their number grew by a quarter (a
    third of the time a 200,000-line history takes). Once they are made, one full collection
    files them as old, where the collector would otherwise walk them as young ones again."""
    paused = gc.isenabled()  # else someone else paused it, and resumes it
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
            if gc.get_count()[0] > _MANY_OBJECTS:
                gc.collect()
