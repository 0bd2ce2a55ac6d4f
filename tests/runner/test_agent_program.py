"""Finding a command agent's program as the shell would, without starting it."""

from __future__ import annotations

import sys
from pathlib import Path

from ancha.runner.agents.program import find_agent_program

PATH = str(Path(sys.executable).parent)
PYTHON = Path(sys.executable).name


def test_find_agent_program__resolves_a_name_on_the_agents_path(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("print('hi')\n")
    program = find_agent_program(f"{PYTHON} agent.py --fast", tmp_path, PATH)
    assert program.found == Path(PATH) / PYTHON and program.problem is None


def test_find_agent_program__skips_variable_assignments_and_exec(tmp_path: Path) -> None:
    program = find_agent_program(f"LOG_LEVEL=debug MODE='a b' exec {PYTHON} -m agent", tmp_path, PATH)
    assert program.word == PYTHON and program.found is not None


def test_find_agent_program__a_name_missing_from_path_has_a_fix(tmp_path: Path) -> None:
    program = find_agent_program("nodejs-nowhere agent.mjs", tmp_path, str(tmp_path))
    assert program.found is None
    assert program.problem == "nodejs-nowhere is not on the agent's PATH"
    assert program.fix is not None and program.fix.startswith("install nodejs-nowhere")


def test_find_agent_program__a_relative_path_starts_from_the_agents_cwd(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    assert find_agent_program("./run.sh", tmp_path, "").found == tmp_path / "run.sh"
    missing = find_agent_program("./gone.sh", tmp_path, "")
    assert missing.problem == f"no such file: {tmp_path / 'gone.sh'}"


def test_find_agent_program__shell_builtins_and_expansions_are_not_looked_up(tmp_path: Path) -> None:
    assert find_agent_program("cd bot && ./start.sh", tmp_path, "").note == "a shell builtin"
    assert find_agent_program("$AGENT_BIN --serve", tmp_path, "").note == "expanded by the shell, so not looked up"


def test_find_agent_program__unbalanced_quotes_are_a_problem(tmp_path: Path) -> None:
    program = find_agent_program("python 'agent.py", tmp_path, PATH)
    assert program.problem is not None and program.problem.startswith("the shell cannot split it into words")
    assert program.fix == "fix the quoting in agent.command"


def test_find_agent_program__an_interpreters_missing_script_is_a_problem(tmp_path: Path) -> None:
    missing = find_agent_program(f"{PYTHON} -u agent.py", tmp_path, PATH)
    assert missing.found is None
    assert missing.problem == f"{PYTHON} would run agent.py, and there is no such file: {tmp_path / 'agent.py'}"
    assert missing.fix is not None and "agent.cwd" in missing.fix


def test_find_agent_program__modules_inline_code_and_option_values_are_no_script(tmp_path: Path) -> None:
    for command in (f"{PYTHON} -m agent", f"{PYTHON} -c 'print(1)'", f"{PYTHON} -X dev -m agent",
                    f"{PYTHON} $AGENT"):
        assert find_agent_program(command, tmp_path, PATH).problem is None, command
    (tmp_path / "agent.py").write_text("")
    assert find_agent_program(f"{PYTHON} -X dev -W ignore agent.py", tmp_path, PATH).problem is None
