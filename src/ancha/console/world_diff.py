"""A trial's world from seed to end, as the console shows it: the diff itself lives a layer
down (``ancha.checks.world_diff``), where the collateral-change check reads it too."""

from __future__ import annotations

from ancha.checks.world_diff import (
    IDENTITY_KEYS,
    MAX_CHANGES,
    VALUE_CHARS,
    WORLD_URL,
    WORLD_URL_MARK,
    Change,
    SeedUnavailable,
    diff_worlds,
    read_world,
    seed_world,
)

__all__ = ["IDENTITY_KEYS", "MAX_CHANGES", "VALUE_CHARS", "WORLD_URL", "WORLD_URL_MARK", "Change",
           "SeedUnavailable", "diff_worlds", "read_world", "seed_world"]
