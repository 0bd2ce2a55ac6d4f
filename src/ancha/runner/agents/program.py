"""Where the shell would find a command agent's program, told before any trial starts.

A command agent runs as ``/bin/sh -c COMMAND`` in ``agent.cwd`` with the agent's PATH
(``command.py``); a program the shell cannot find or execute ends every trial at once
with exit 127 or 126. This finds the program the same way, without starting it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_BUILTINS = frozenset({
    ".", ":", "[", "alias", "break", "cd", "command", "continue", "echo", "eval", "exit", "export", "false",
    "printf", "pwd", "read", "set", "shift", "source", "test", "times", "trap", "true", "type", "ulimit",
    "umask", "unset", "wait", "if", "for", "while", "until", "case", "{", "(", "!",
})
"""Words the shell runs itself: nothing to find on PATH."""


@dataclass(frozen=True, slots=True)
class AgentProgram:
    """The program of an agent command: ``found`` is its path when it resolves to an
    executable file; ``problem`` and ``fix`` say why not; ``note`` why it was not looked up."""

    word: str
    found: Path | None = None
    problem: str | None = None
    fix: str | None = None
    note: str | None = None


def find_agent_program(command: str, cwd: Path, path_variable: str | None) -> AgentProgram:
    """Resolve the first program ``command`` runs: a word with a ``/`` from ``cwd`` (as the
    shell does), any other word on ``path_variable`` (the PATH the agent is given)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return AgentProgram(command, problem=f"the shell cannot split it into words: {exc}",
                            fix="fix the quoting in agent.command")
    words = _after_assignments(words)
    if words[:1] == ["exec"]:  # `exec node agent.mjs`: the program is the next word
        words = words[1:]
    if not words:
        return AgentProgram(command, problem="it names no program",
                            fix="set agent.command to the command that starts your agent, e.g. `python agent.py`")
    word = words[0]
    if word in _SHELL_BUILTINS:
        return AgentProgram(word, note="a shell builtin")
    if any(c in word for c in "$`*?"):
        return AgentProgram(word, note="expanded by the shell, so not looked up")
    if word.startswith("~"):
        word = os.path.expanduser(word)
    if "/" in word:
        program = _at_path(word, cwd)
        return (_missing_script(word, words[1:], cwd) or program) if program.found else program
    found = shutil.which(word, path=path_variable or "")
    if found is None:
        return AgentProgram(word, problem=f"{word} is not on the agent's PATH",
                            fix=f"install {word}, or change agent.command (or pass --agent) to a program on PATH "
                                "or a path to one")
    missing = _missing_script(word, words[1:], cwd)
    if missing is not None:
        return missing
    return AgentProgram(word, found=Path(found))


def _missing_script(interpreter: str, arguments: list[str], cwd: Path) -> AgentProgram | None:
    """``python agent.py`` with no ``agent.py`` in ``cwd``: the interpreter is found, yet every trial
    would end at once with its "can't open file". None when the script is there, or none is named."""
    if not _INTERPRETER.match(os.path.basename(interpreter)):
        return None
    remaining = iter(arguments)
    for argument in remaining:
        if argument in _NO_SCRIPT:  # python -m module, node -e code: nothing to look for
            return None
        if argument in _TAKES_VALUE:
            next(remaining, None)
            continue
        if argument.startswith("-") or argument in _SUBCOMMANDS:
            continue
        if any(c in argument for c in "$`*?~"):
            return None
        path = Path(argument) if os.path.isabs(argument) else cwd / argument
        if path.exists():
            return None
        return AgentProgram(interpreter, problem=f"{interpreter} would run {argument}, and there is no such file: "
                                                 f"{path}",
                            fix=f"create it, or fix agent.command; a relative path starts from agent.cwd ({cwd})")
    return None


_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|bun|deno|ruby|perl|php|bash|sh|dash|zsh|"
                          r"tsx|ts-node)$")
"""Programs whose first plain argument is the script they run."""
_NO_SCRIPT = frozenset({"-m", "-c", "-e", "--eval", "-p", "--print", "-"})
"""Arguments after which no script file follows (a module, inline code, stdin)."""
_SUBCOMMANDS = frozenset({"run"})
"""``deno run agent.ts``, ``bun run agent.ts``: the script comes after."""
_TAKES_VALUE = frozenset({"-X", "-W", "-Q", "-r", "--require", "--import", "--loader"})
"""Options whose value is the next argument, not a script."""


def _after_assignments(words: list[str]) -> list[str]:
    """``NAME=value prog ...``: the shell sets the variables and runs ``prog``."""
    for i, w in enumerate(words):
        if not _ASSIGNMENT.match(w):
            return words[i:]
    return []


def _at_path(word: str, cwd: Path) -> AgentProgram:
    path = Path(word) if os.path.isabs(word) else cwd / word
    if not path.exists():
        return AgentProgram(word, problem=f"no such file: {path}",
                            fix=f"fix agent.command; a relative path starts from agent.cwd ({cwd})")
    if path.is_dir():
        return AgentProgram(word, problem=f"{path} is a directory", fix="name the program inside it in agent.command")
    if not os.access(path, os.X_OK):
        return AgentProgram(word, problem=f"{path} is not executable",
                            fix=f"chmod +x {shlex.quote(str(path))}, or start it through its interpreter "
                                f"(e.g. `python {word}`)")
    return AgentProgram(word, found=path)
