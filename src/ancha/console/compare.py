"""Two trials side by side: which checks came out differently, and where their calls part ways.

A passed and a failed trial of one scene, or one trial across two runs. The checks are
compared as ``ancha diff`` compares them (``check_outcomes``), trial against trial. The calls
are aligned as a text diff aligns lines, on a key that is the same for "the same call" in
both trials: who made it, to which tool, the method and the path with its ids blanked (two
trials of a scene have different ids; two runs of one trial may too). The first row where
the two sequences differ, in a call or in how it was answered, is where they diverge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Any

from ancha.console.trial_data import Call
from ancha.results.run_diff import check_outcomes
from ancha.results.runs_folder import is_folder_name

ALIGN_MAX = 5000
"""Calls per trial that are aligned; past that, the rest of the longer trace is left out
(matching is quadratic in the worst case, and a page of 10,000 rows reads no better)."""
WORLD_ACTOR = "world"
WORLD_PATH_PREFIX = "/ancha/"
"""The world's own calls (faults moving metrics, log streams, a tool's own incidents) are
not the trial's behaviour: they are left out of the alignment."""

_NUMBER = re.compile(r"^\d+$")
_ID = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{6,}$")


class BadTrialRef(ValueError):
    """A ``?a=``/``?b=`` that cannot name a trial; the message says what the shape is."""


@dataclass(frozen=True, slots=True)
class TrialRef:
    """``RUN/SCENE/TRIAL``, one trial of one run, as the compare page's parameters name it."""

    run_id: str
    scene: str
    trial: str

    @classmethod
    def parse(cls, text: str, name: str) -> TrialRef:
        parts = text.split("/")
        if len(parts) != 3 or not all(is_folder_name(part) for part in parts):
            raise BadTrialRef(f"?{name}={text!r} does not name a trial: write it as RUN/SCENE/TRIAL, such as "
                              f"?{name}=latest/beta-exports/1 (a run id or `latest`, the scene, the trial number)")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.run_id}/{self.scene}/{self.trial}"


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One check in both trials: its result in each (None: not graded there) and whether they differ."""

    id: str
    a: dict[str, Any] | None
    b: dict[str, Any] | None
    a_passed: bool | None
    b_passed: bool | None

    @property
    def differs(self) -> bool:
        return self.a_passed != self.b_passed


def compare_checks(a: dict[str, Any], b: dict[str, Any]) -> list[CheckRow]:
    """The checks of two ``checks.json``, those that came out differently first, each group
    in A's order, then B's checks that A does not have."""
    results = {side: {str(r.get("id")): r for r in checks.get("results") or [] if isinstance(r, dict)}
               for side, checks in (("a", a), ("b", b))}
    passed = {"a": dict(check_outcomes(a)), "b": dict(check_outcomes(b))}
    ids = list(results["a"]) + [i for i in results["b"] if i not in results["a"]]
    rows = [CheckRow(i, results["a"].get(i), results["b"].get(i), passed["a"].get(i), passed["b"].get(i))
            for i in ids]
    return [r for r in rows if r.differs] + [r for r in rows if not r.differs]


def normalized_path(path: str) -> str:
    """``path`` without its query and with the ids in it blanked: ``/issues/12`` and
    ``/issues/7`` are the same call, and so are ``/users/00u0001S6nw`` and ``/users/00u00015oF``.
    Short parts with digits (``v2``) and names with dots (``orders.latency.p99``) are kept."""
    parts = path.split("?", 1)[0].split("/")
    return "/".join("{n}" if _NUMBER.match(p) else "{id}" if _ID.match(p) else p for p in parts)


def call_key(call: Call) -> tuple[str, str, str, str]:
    return (call.actor, call.tool, call.method, normalized_path(call.path))


@dataclass(frozen=True, slots=True)
class CallRow:
    """A row of the aligned calls. ``kind``: ``same`` (the same call, answered alike),
    ``answered`` (the same call, another status), ``changed`` (different calls at this
    point), ``only_a`` or ``only_b`` (a call the other trial has nothing for)."""

    a: Call | None
    b: Call | None
    kind: str

    @property
    def diverges(self) -> bool:
        return self.kind != "same"


@dataclass(frozen=True, slots=True)
class Alignment:
    rows: list[CallRow]
    first_divergence: int | None
    """The index in ``rows`` of the first row that is not ``same``; None when the calls match."""
    left_out: tuple[int, int]
    """Calls of A and of B past ``ALIGN_MAX``, not aligned."""

    @property
    def diverging(self) -> int:
        return sum(1 for row in self.rows if row.diverges)


def agent_facing(calls: list[Call]) -> list[Call]:
    """The calls that are the trial's behaviour, the agent's and the people's: the world's own left out."""
    return [c for c in calls if c.actor != WORLD_ACTOR and not c.path.startswith(WORLD_PATH_PREFIX)]


def align_calls(a: list[Call], b: list[Call], limit: int = ALIGN_MAX) -> Alignment:
    """``a`` and ``b`` aligned on ``call_key`` (difflib's longest matching blocks)."""
    a_cut, b_cut = a[:limit], b[:limit]
    matcher = SequenceMatcher(None, [call_key(c) for c in a_cut], [call_key(c) for c in b_cut], autojunk=False)
    rows: list[CallRow] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            rows += [CallRow(x, y, "same" if x.status == y.status else "answered")
                     for x, y in zip(a_cut[a0:a1], b_cut[b0:b1], strict=True)]
        elif tag == "replace":
            rows += [CallRow(x, y, "changed" if x and y else "only_a" if x else "only_b")
                     for x, y in zip_longest(a_cut[a0:a1], b_cut[b0:b1])]
        else:
            rows += [CallRow(x, None, "only_a") for x in a_cut[a0:a1]]
            rows += [CallRow(None, y, "only_b") for y in b_cut[b0:b1]]
    first = next((i for i, row in enumerate(rows) if row.diverges), None)
    return Alignment(rows, first, (len(a) - len(a_cut), len(b) - len(b_cut)))
