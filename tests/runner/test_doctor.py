"""`ancha doctor` as a user runs it, in a project `ancha init` wrote.

The exit codes (0, 2 for config and scene problems, 3 for what is not ready) are pinned
on a real CLI process; the other tests run the same command in-process (``invoke``: click's
runner, the working directory and the environment as the process would have them), since
each new process pays a second or so of imports before the doctor starts. Every project
starts as a copy of the one a real ``ancha init`` wrote."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from ancha.cli.main import cli
from ancha.server.embedded import EmbeddedServer, free_port
from ancha.server.keys import save_key

ANCHA = [sys.executable, "-m", "ancha.cli"]
PYTHON_DIR = str(Path(sys.executable).parent)

BROKEN_SCENE = """
name: broken
task: Say hello.
checks:
  - id: posted
    trace: { bogus: 1 }
"""

JUDGED_SCENE = """
name: judged
task: Say hello.
world:
  slack:
    channels: [{ name: general }]
checks:
  - id: polite
    judge: The agent greeted the team politely.
"""

FAKE_ENGINE = """#!/bin/sh
# `podman version --format ...`: the engine answers
if [ "$1" = "version" ]; then echo 9.9.9; exit 0; fi
# `podman image inspect --format {{.Id}} IMAGE`: only my-agent:local is here
if [ "$1 $2" = "image inspect" ] && [ "$5" = "my-agent:local" ]; then echo sha256:0123456789abcdef; exit 0; fi
echo "Error: No such image: $5" >&2
exit 1
"""


@dataclass(frozen=True)
class Ran:
    """What one ``ancha`` command printed and its exit code (as ``subprocess.CompletedProcess``)."""

    returncode: int
    stdout: str
    stderr: str


def ancha(*args: str, cwd: Path, env: dict[str, str] | None = None,
          without: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``ancha ARGS`` as a new process."""
    base = {k: v for k, v in os.environ.items() if k not in without}
    base["PATH"] = f"{PYTHON_DIR}:{base.get('PATH', '')}"
    return subprocess.run([*ANCHA, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**base, **(env or {})})


def invoke(*args: str, cwd: Path, env: dict[str, str] | None = None, without: tuple[str, ...] = ()) -> Ran:
    """``ancha ARGS`` in this process, with the working directory and environment ``ancha`` would get."""
    variables: dict[str, str | None] = {name: None for name in without}
    variables["PATH"] = f"{PYTHON_DIR}:{os.environ.get('PATH', '')}"
    variables.update(env or {})
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(cli, list(args), env=variables, prog_name="ancha", catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project a real ``ancha init`` writes."""
    root = tmp_path_factory.mktemp("starter")
    created = ancha("init", cwd=root)
    assert created.returncode == 0, created.stderr
    return root


@pytest.fixture
def initialised(starter: Path, tmp_path: Path) -> Path:
    """A project of this test's own, as ``ancha init`` wrote it."""
    shutil.copytree(starter, tmp_path, dirs_exist_ok=True)
    return tmp_path


def set_config(root: Path, text: str) -> None:
    (root / "ancha.yaml").write_text(textwrap.dedent(text))


def add_scene(root: Path, name: str, text: str) -> None:
    (root / "scenes" / name).mkdir(parents=True)
    (root / "scenes" / name / "scene.yaml").write_text(text)


def lines(result: Ran | subprocess.CompletedProcess[str]) -> dict[str, list[str]]:
    """Each check's lines, by check name: ``{"agent": ["FAIL  agent  ..."]}``."""
    found: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        status, name = line.split()[:2]
        assert status in ("ok", "FAIL", "skip", "warn"), line
        found.setdefault(name, []).append(line)
    return found


def only(result: Ran | subprocess.CompletedProcess[str], name: str) -> tuple[str, str]:
    """The status and the text (detail — fix) of the one line of check ``name``."""
    [line] = lines(result)[name]
    status, _, text = line.split(maxsplit=2)
    return status, text


@pytest.fixture(scope="module")
def fresh(starter: Path) -> subprocess.CompletedProcess[str]:
    """A real ``ancha doctor`` process in the project ``ancha init`` wrote (it writes nothing)."""
    return ancha("doctor", cwd=starter)


def test_doctor__fresh_init_project_is_ready(fresh: subprocess.CompletedProcess[str]) -> None:
    result = fresh
    assert result.returncode == 0, result.stdout + result.stderr
    checks = lines(result)
    assert list(checks) == ["config", "scenes", "server", "data", "agent", "container", "clock", "judge"]
    for name in ("config", "scenes", "server", "data", "agent"):
        assert only(result, name)[0] == "ok", result.stdout
    assert only(result, "config")[1] == "ancha.yaml: 1 scene, 1 trial each"
    assert only(result, "agent")[1].startswith("python3 agent.py: python3 is ")
    assert only(result, "data")[1].startswith("9 vendor data files intact; GitHub's GraphQL schema builds (")
    assert only(result, "container")[0] == "skip"
    assert only(result, "judge") == ("skip", "no judge checks")
    assert result.stderr == ""


def test_doctor__columns_are_aligned(fresh: subprocess.CompletedProcess[str]) -> None:
    result = fresh
    details_start = {len(re.match(r"\S+ +\S+ +", line).group()) for line in result.stdout.splitlines()}  # type: ignore[union-attr]
    assert len(details_start) == 1, result.stdout


def test_doctor__broken_scene_exits_2_with_the_problems_run_prints(initialised: Path) -> None:
    root = initialised
    add_scene(root, "broken", BROKEN_SCENE)
    ran = ancha("run", "--no-progress", cwd=root)
    result = ancha("doctor", cwd=root)
    assert ran.returncode == 2 and result.returncode == 2, result.stdout + result.stderr
    assert ran.stderr.strip() and ran.stderr in result.stderr
    status, scene = only(result, "scene")
    assert status == "FAIL"
    assert scene.startswith("scenes/broken/scene.yaml:6: checks[0].trace.bogus: unknown field (and 1 more problem) "
                            "— known fields of checks[0].trace")
    assert only(result, "config")[0] == "ok"


def test_doctor__bad_config_exits_2_with_the_problems_run_prints(initialised: Path) -> None:
    root = initialised
    set_config(root, "agent: { command: python3 agent.py }\ntrials: 0\n")
    ran = invoke("run", "--no-progress", cwd=root)
    result = invoke("doctor", cwd=root)
    assert ran.returncode == 2 and result.returncode == 2
    assert ran.stderr.strip() and ran.stderr in result.stderr
    assert list(lines(result)) == ["config"]
    assert only(result, "config")[0] == "FAIL"
    assert only(result, "config")[1].startswith("ancha.yaml: trials: expected a positive integer, got 0 — ")


def test_doctor__options_are_validated_as_run_validates_them(initialised: Path) -> None:
    root = initialised
    ran = invoke("run", "--no-progress", "--parallel", "0", cwd=root)
    result = invoke("doctor", "--parallel", "0", cwd=root)
    assert ran.returncode == 2 and result.returncode == 2
    assert ran.stderr in result.stderr
    assert only(result, "config") == ("FAIL", "options: --parallel: expected a positive integer, got 0 — "
                                              "fix the command-line options")


def test_doctor__no_agent_exits_2_as_run_does(initialised: Path) -> None:
    root = initialised
    set_config(root, "scenes: [scenes/**/scene.yaml]\n")
    ran = invoke("run", "--no-progress", cwd=root)
    result = invoke("doctor", cwd=root)
    assert ran.returncode == 2 and result.returncode == 2
    assert ran.stderr in result.stderr
    assert only(result, "agent")[0] == "FAIL"
    assert only(result, "agent")[1].startswith("agent: no agent to run — ")


def test_doctor__missing_agent_program_fails_with_a_fix(initialised: Path) -> None:
    root = initialised
    result = ancha("doctor", "--agent", "no-such-agent-program --verbose", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    status, agent = only(result, "agent")
    assert status == "FAIL"
    assert agent.startswith("no-such-agent-program --verbose: no-such-agent-program is not on the agent's PATH — "
                            "install no-such-agent-program, or change agent.command")
    assert only(result, "server")[0] == "ok"


def test_doctor__agent_script_is_resolved_from_agent_cwd(initialised: Path) -> None:
    root = initialised
    (root / "bot").mkdir()
    script = root / "bot" / "start.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    set_config(root, "agent:\n  command: ./start.sh\n  cwd: bot\n")
    not_executable = invoke("doctor", cwd=root)
    assert not_executable.returncode == 3
    assert only(not_executable, "agent") == ("FAIL", f"./start.sh: {script} is not executable — chmod +x {script}, "
                                                     "or start it through its interpreter (e.g. `python ./start.sh`)")
    script.chmod(0o755)
    ready = invoke("doctor", cwd=root)
    assert ready.returncode == 0, ready.stdout
    assert only(ready, "agent") == ("ok", f"./start.sh: ./start.sh is {script}")


def test_doctor__unreachable_server_url_fails_with_a_fix(initialised: Path) -> None:
    root = initialised
    url = f"http://127.0.0.1:{free_port()}"
    set_config(root, f"agent: {{ command: python3 agent.py }}\nserver: {{ url: \"{url}\" }}\n")
    result = invoke("doctor", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    status, server = only(result, "server")
    assert status == "FAIL" and server.startswith(f"no Ancha server answers at {url}: ")
    assert server.endswith("— start one with `ancha serve`, or remove server.url to use the embedded one")


def test_doctor__server_url_is_checked_with_the_control_key(initialised: Path, tmp_path: Path) -> None:
    root = initialised
    with EmbeddedServer(key="doctor-key") as server:
        set_config(root, f"agent: {{ command: python3 agent.py }}\nserver: {{ url: \"{server.url}\" }}\n")
        state = {"XDG_STATE_HOME": str(tmp_path / "xdg-state")}
        keyed = invoke("doctor", cwd=root, env={"ANCHA_SERVER_KEY": "doctor-key", **state})
        keyless = invoke("doctor", cwd=root, env=state, without=("ANCHA_SERVER_KEY",))
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_STATE_HOME", state["XDG_STATE_HOME"])
            save_key(server.url, "doctor-key")  # as `ancha serve` keeps its key
        kept = invoke("doctor", cwd=root, env=state, without=("ANCHA_SERVER_KEY",))
    assert keyed.returncode == 0, keyed.stdout
    assert only(keyed, "server") == ("ok", f"{server.url} answered GET /envs with ANCHA_SERVER_KEY")
    assert keyless.returncode == 3
    assert only(keyless, "server") == ("FAIL", f"{server.url} answered 401 to GET /envs — is it an Ancha server? "
                                               "If it needs a key, set ANCHA_SERVER_KEY to the one `ancha serve` "
                                               "printed (on its machine, the CLI finds it by itself)")
    assert kept.returncode == 0, kept.stdout
    assert only(kept, "server") == ("ok", f"{server.url} answered GET /envs with its kept key")


def test_doctor__judge_checks_without_a_key_fail(initialised: Path) -> None:
    root = initialised
    add_scene(root, "judged", JUDGED_SCENE)
    result = invoke("doctor", cwd=root, without=("OPENROUTER_API_KEY",))
    assert result.returncode == 3, result.stdout + result.stderr
    assert only(result, "judge") == ("FAIL", "OPENROUTER_API_KEY is not set, so the 1 judge check in judged would be "
                                             "skipped, and a skipped check never passes — export "
                                             "OPENROUTER_API_KEY=<your OpenRouter key> in the shell you run ancha from")


def test_doctor__judge_checks_with_a_key_pass(initialised: Path) -> None:
    root = initialised
    add_scene(root, "judged", JUDGED_SCENE)
    result = invoke("doctor", cwd=root, env={"OPENROUTER_API_KEY": "sk-or-test"})
    assert result.returncode == 0, result.stdout
    assert only(result, "judge") == ("ok", "OPENROUTER_API_KEY is set; 1 judge check in judged, "
                                           "model openai/gpt-4o-mini")


def container_project(root: Path, image: str, engine: bool, hosts: str = "[]") -> dict[str, str]:
    """``root``'s config for a container agent, and the environment with only its ``bin``
    folder on PATH."""
    set_config(root, f"""\
        agent:
          command: python3 agent.py
          execution: {{ mode: container, image: "{image}", modelHosts: {hosts} }}
        """)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    ip = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
    if ip:
        (bin_dir / "ip").symlink_to(ip)
    if engine:
        (bin_dir / "podman").write_text(FAKE_ENGINE)
        (bin_dir / "podman").chmod(0o755)
    return {"PATH": str(bin_dir)}  # this PATH only: no engine but the fake one


def test_doctor__container_mode_finds_engine_image_network_and_model_hosts(initialised: Path) -> None:
    root = initialised
    env = container_project(root, "my-agent:local", engine=True, hosts="[openrouter.ai]")
    result = invoke("doctor", cwd=root, env=env)
    assert only(result, "engine") == ("ok", f"podman 9.9.9 is {root / 'bin' / 'podman'} "
                                            "(ulimits nofile=1024:1024 nproc=4096:4096)")
    assert only(result, "image") == ("ok", "my-agent:local is in the local podman (sha256:0123456789ab)")
    assert only(result, "modelHosts") == ("ok", "openrouter.ai: over HTTPS through Ancha's model gateway, "
                                                 "nothing else")
    assert only(result, "agent") == ("ok", "python3 agent.py: runs in the image my-agent:local")
    assert only(result, "files")[0] == "ok" and only(result, "files")[1].endswith("at /workspace, read-only")
    if os.geteuid() == 0:
        assert only(result, "network") == ("ok", "a network namespace per container: only Ancha's server and "
                                                 "the model gateway answer")
    assert "container" not in lines(result)  # run has nothing to refuse


def test_doctor__container_image_missing_says_how_to_build_it(initialised: Path) -> None:
    root = initialised
    env = container_project(root, "other:latest", engine=True)
    result = invoke("doctor", cwd=root, env=env)
    assert result.returncode == 3
    assert only(result, "image") == ("FAIL", "other:latest is not in the local podman — build it "
                                     "(`podman build -t other:latest .`) or pull it (`podman pull other:latest`); "
                                     "trials never pull images")
    assert only(result, "modelHosts") == ("skip", "none: the agent reaches no model provider")


def test_doctor__container_mode_without_an_engine_fails_with_a_fix(initialised: Path) -> None:
    root = initialised
    env = container_project(root, "my-agent:local", engine=False)
    result = invoke("doctor", cwd=root, env=env)
    assert result.returncode == 3
    assert only(result, "engine") == ("FAIL", "no container engine answers (docker: docker is not on PATH; podman: "
                                      "podman is not on PATH) — install Docker (or Podman) and put its CLI on "
                                      "PATH; trials never fall back to a host process")
    assert only(result, "image")[0] == "skip"


def test_execution__reports_the_engine_each_cli_and_the_network(initialised: Path) -> None:
    root = initialised
    env = container_project(root, "my-agent:local", engine=True)
    (root / "bin" / "docker").write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    (root / "bin" / "docker").chmod(0o755)
    result = invoke("execution", cwd=root, env=env)
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["ok", "engine", "podman", "9.9.9"]
    assert f"      docker: {root / 'bin' / 'docker'}: its engine does not answer: Cannot connect to the " \
           "Docker daemon" in lines
    assert f"      podman: {root / 'bin' / 'podman'}: answers (podman 9.9.9)" in lines
    assert result.returncode == 0  # as root, or rootless podman
    missing = invoke("execution", cwd=root, env={"PATH": str(root / "nowhere")})
    assert missing.returncode == 3 and missing.stdout.startswith("FAIL  engine   no container engine answers")


def test_doctor__endpoint_agent_checks_the_program_that_starts_it(initialised: Path) -> None:
    root = initialised
    set_config(root, """\
        agent:
          url: "http://127.0.0.1:{{agent.port}}/events/{{service}}"
          start: python3 server.py
          ready_url: "http://127.0.0.1:{{agent.port}}/ready"
        """)
    (root / "server.py").write_text("print('serving')\n")
    result = invoke("doctor", cwd=root)
    status, detail = only(result, "agent")
    assert status == "ok" and detail.startswith("python3 server.py: python3 is ")
    assert "not supported yet" not in result.stdout + result.stderr
