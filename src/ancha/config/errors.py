"""The config's user error, and the report layout config and scene errors share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ancha.errors import AnchaUserError, Problem


def render_report(code: str, problems: Sequence[str], hints: Sequence[str], fixes: Sequence[str]) -> str:
    """``error[CODE]: first`` with the rest indented, then ``hint: first`` with the rest indented."""
    first, *rest = problems or ["invalid"]
    lines = [f"error[{code}]: {first}", *(f"  {p}" for p in rest)]
    tail = [*hints, *fixes]
    if tail:
        lines.append(f"hint: {tail[0]}")
        lines.extend(f"  {t}" for t in tail[1:])
    return "\n".join(lines)


def _located(problem: Problem, text: str) -> str:
    return f"{problem.path}: {text}" if problem.path else text


def sort_problems(problems: Sequence[Problem]) -> list[Problem]:
    """File order: by line, problems without a line last, otherwise as found."""
    return sorted(problems, key=lambda p: (p.line is None, p.line or 0))


class ConfigInvalid(AnchaUserError):
    """ancha.yaml (or a command-line override) is wrong; ``problems`` holds every problem found."""

    exit_code = 2

    def __init__(self, problems: Sequence[Problem], file: Path | None = None) -> None:
        self.problems = list(problems)
        self.file = file
        super().__init__(self.render())

    def render(self) -> str:
        problems = [self._at_line(p) or _located(p, p.message) for p in self.problems]
        hints = [_located(p, p.hint) for p in self.problems if p.hint]
        from_file = self.file is not None and any(not p.path.startswith("-") for p in self.problems)
        fix = f"fix the config file: {self.file}" if from_file else "fix the command-line options"
        return render_report("CONFIG_INVALID", problems, hints, [fix])

    def _at_line(self, problem: Problem) -> str | None:
        """``file:line: message`` for a problem of the file as a whole (YAML syntax), as scene
        files give it; problems of a field keep the reference's ``path: message``."""
        if problem.path or problem.line is None or self.file is None:
            return None
        try:
            shown = self.file.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            shown = self.file
        return f"{shown}:{problem.line}: {problem.message}"
