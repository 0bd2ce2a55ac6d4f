"""The scene's user error: every problem of every scene loaded, raised once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ancha.config.errors import render_report
from ancha.errors import AnchaUserError, Problem


def _where(problem: Problem) -> str:
    parts = []
    if problem.file:
        parts.append(f"{problem.file}:{problem.line}" if problem.line else problem.file)
    if problem.path:
        parts.append(problem.path)
    return ": ".join(parts)


def _line(problem: Problem, text: str) -> str:
    where = _where(problem)
    return f"{where}: {text}" if where else text


class SceneInvalid(AnchaUserError):
    """One or more scene files are wrong; ``problems`` holds all of them, in file order."""

    exit_code = 2

    def __init__(self, problems: Sequence[Problem], files: dict[str, Path] | None = None) -> None:
        self.problems = list(problems)
        self.files = files or {}
        """Displayed file name -> absolute path, for the 'fix the scene file' lines."""
        super().__init__(self.render())

    def render(self) -> str:
        lines = [_line(p, p.message) for p in self.problems]
        hints = [f"{p.path}: {p.hint}" if p.path else p.hint for p in self.problems if p.hint]
        seen: list[str] = []
        for p in self.problems:
            if p.file and p.file not in seen:
                seen.append(p.file)
        fixes = [f"fix the scene file: {self.files.get(name, Path(name).resolve())}" for name in seen]
        return render_report("SCENE_INVALID", lines, hints, fixes or ["fix the scenes globs"])
