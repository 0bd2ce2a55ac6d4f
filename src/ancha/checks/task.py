"""Task files: checks written as a JSON list, for playgrounds and hosted console tasks.

They hold the same check objects as a scene's ``checks:``, validated the same way (refs
resolved against the scene), with the rules of the checks reference's "Where each kind
works": only kinds whose form works in task files (state and trace checks), and at most
20 of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ancha.checks.evaluate import check_specs, describe_problems
from ancha.config.errors import render_report
from ancha.errors import AnchaUserError, Problem
from ancha.scene.check_kinds import CHECK_FORMS
from ancha.scene.model import CheckSpec, Scene
from ancha.world.environment import Environment

MAX_TASK_CHECKS = 20
TASK_EXAMPLE = '[{"id": "posted", "trace": {"called": "POST /api/chat.postMessage"}}]'


class TaskInvalid(AnchaUserError):
    """A task file is wrong; ``problems`` holds every problem found (exit 2, as for scenes)."""

    exit_code = 2

    def __init__(self, problems: list[Problem], file: Path) -> None:
        self.problems = problems
        self.file = file
        super().__init__(self.render())

    def render(self) -> str:
        lines = [_where(p) + p.message for p in self.problems]
        hints = [f"{p.path}: {p.hint}" if p.path else p.hint for p in self.problems if p.hint]
        return render_report("TASK_INVALID", lines, hints, [f"fix the task file: {self.file.resolve()}"])


def _where(problem: Problem) -> str:
    parts = [f"{problem.file}:{problem.line}" if problem.line else problem.file or "", problem.path]
    return "".join(f"{part}: " for part in parts if part)


def task_rule_problems(raw: Any, file: str = "", lines: list[int] | None = None) -> list[Problem]:
    """What the task rules refuse in ``raw``: anything but a list, a check of a kind that does
    not work in task files (judge, process), a check past the 20th. ``lines``: each check's line in ``file``."""

    def line(i: int) -> int | None:
        return lines[i] if lines is not None and i < len(lines) else None

    if not isinstance(raw, list):
        return [Problem("", "a task is a JSON list of check objects", f"for example {TASK_EXAMPLE}",
                        1 if lines is not None else None, file or None)]
    problems: list[Problem] = []
    for i, check in enumerate(raw):
        if not isinstance(check, dict):
            continue  # the check validation says what is wrong with it
        for form in (f for f in CHECK_FORMS if f.key in check and not f.works_in_tasks):
            problems.append(Problem(f"checks[{i}].{form.key}", *form.refused_in_tasks(), line(i), file or None))
    if len(raw) > MAX_TASK_CHECKS:
        problems.append(Problem(f"checks[{MAX_TASK_CHECKS}]",
                                f"a playground task holds at most {MAX_TASK_CHECKS} checks, this one has {len(raw)}",
                                "keep the 20 that matter, or put the checks in a scene file",
                                line(MAX_TASK_CHECKS), file or None))
    return problems


def task_checks(raw: Any, env: Environment, file: str = "",
                lines: list[int] | None = None) -> tuple[list[CheckSpec], list[Problem]]:
    """The checks of a task's JSON list ``raw``, validated against ``env``'s world, and every problem."""
    problems = task_rule_problems(raw, file, lines)
    if not isinstance(raw, list):
        return [], problems
    refused = {p.path.rpartition(".")[0] for p in problems}
    kept = [None if f"checks[{i}]" in refused else check for i, check in enumerate(raw)]

    def line_of(path: str) -> int | None:
        if lines is None or not path.startswith("checks["):
            return None
        index = int(path[len("checks["):path.index("]")])
        return lines[index] if index < len(lines) else None

    specs, found = check_specs([c for c in kept if c is not None], env, file, line_of)
    if any(c is None for c in kept):  # paths name the checks as written: renumber around the refused ones
        written = [i for i, c in enumerate(kept) if c is not None]
        for problem in found:
            problem.path = _renumber(problem.path, written)
            problem.line = line_of(problem.path)
    return specs, sorted(problems + found, key=lambda p: _index(p.path))


def parse_task(raw: Any, env: Environment) -> list[CheckSpec]:
    """A task's checks (a JSON list, as ``POST /envs/{id}/checks`` takes it); ``ValueError``
    naming every problem."""
    specs, problems = task_checks(raw, env)
    if problems:
        raise ValueError(describe_problems(problems))
    return specs


def read_task(path: Path) -> tuple[Any, list[int]]:
    """The JSON of a task file and the line each top-level check starts on; ``TaskInvalid``
    (with the line and column) when it is not JSON."""
    display = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskInvalid([Problem("", f"cannot read the task file: {exc}", None, None, display)], path) from exc
    raw, problems = parse_task_text(text, display)
    if problems:
        raise TaskInvalid(problems, path)
    return raw, _item_lines(text) if isinstance(raw, list) else []


def parse_task_text(text: str, file: str | None = None) -> tuple[Any, list[Problem]]:
    """The JSON of a task's text (a file's, or one typed in the hosted console), or the problem
    that it is not JSON, with its line and column."""
    try:
        return json.loads(text), []
    except json.JSONDecodeError as exc:
        return None, [Problem("", f"not valid JSON (column {exc.colno}): {exc.msg}",
                              f"a task is a JSON list of check objects, for example {TASK_EXAMPLE}",
                              exc.lineno, file)]


def load_task(path: Path, scene: Scene) -> list[CheckSpec]:
    """A playground task file's checks, validated against ``scene`` (its refs and people)
    exactly as a scene's own checks are; ``TaskInvalid`` naming every problem."""
    raw, lines = read_task(path)
    specs, problems = scene_task_checks(raw, scene, str(path), lines)
    if problems:
        raise TaskInvalid(problems, path)
    return specs


def scene_task_checks(raw: Any, scene: Scene, file: str = "",
                      lines: list[int] | None = None) -> tuple[list[CheckSpec], list[Problem]]:
    """The checks of a task's JSON list ``raw`` validated against ``scene`` (its refs and
    people) exactly as a scene's own checks are, and every problem (a playground task file's,
    a hosted console task's)."""
    world = Environment("task-file", scene, 1, people=False)  # built to resolve refs, never started
    try:
        return task_checks(raw, world, file, lines)
    finally:
        world.close()


def _item_lines(text: str) -> list[int]:
    """The line each element of the top-level JSON list in ``text`` starts on."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    at = text.index("[") + 1
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] == "]":
            return lines
        lines.append(text.count("\n", 0, at) + 1)
        _value, at = decoder.raw_decode(text, at)


def _index(path: str) -> int:
    if not path.startswith("checks["):
        return -1
    return int(path[len("checks["):path.index("]")])


def _renumber(path: str, written: list[int]) -> str:
    index = _index(path)
    if index < 0 or index >= len(written):
        return path
    return f"checks[{written[index]}]" + path[path.index("]") + 1:]
