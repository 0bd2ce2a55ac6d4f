"""What a runner killed mid-trial (``kill -9``) leaves behind is removed by ``ancha doctor --clean``
and by the next run of any kind, and a live run's never is.

The container tests run on Docker and on podman with a real container (see
``test_container_state``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ancha.runner.agents.containment import cgroup_tree, remove_stale_cgroups

sys.path.insert(0, str(Path(__file__).parent))
from container_image import ENGINES, agent_image, usable_engine  # noqa: E402
from test_container_state import ANCHA, EXAMPLES, NOTHING, leftovers  # noqa: E402


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn; in CI one that does not answer fails the tests instead of skipping them."""
    return usable_engine(request.param)


@pytest.fixture(scope="module")
def image(engine: str) -> str:
    return agent_image(engine)


SLEEPER = "import os, time\nopen(os.environ['ANCHA_STATE_DIR'] + '/started', 'w').write('x')\ntime.sleep(300)\n"


def killed_run(root: Path, engine: str, image: str) -> int:
    """``ancha run`` with a container agent, killed with SIGKILL while its agent runs; its process ID."""
    shutil.copytree(EXAMPLES / "scenes" / "export-question", root / "scenes" / "export-question")
    (root / "agent.py").write_text(SLEEPER)
    (root / "ancha.yaml").write_text(
        f"agent:\n  command: python3 agent.py\n  execution: {{ mode: container, image: {image} }}\n"
        "scenes: [scenes/export-question/scene.yaml]\ntrials: 1\n")
    process = subprocess.Popen([*ANCHA, "run", "--no-progress"], cwd=root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine})
    deadline = time.monotonic() + 180

    def running() -> list[str]:
        return subprocess.run([engine, "ps", "--filter", f"label=ancha.runner-pid={process.pid}", "--format",
                               "{{.Names}}"], capture_output=True, text=True).stdout.split()

    while not running():  # mid-trial: the agent's container runs
        assert process.poll() is None and time.monotonic() < deadline, "the agent's container never ran"
        time.sleep(0.2)
    # Looked at while the runner is stopped, not yet killed: a run starting elsewhere meanwhile
    # (another test's) cleans a dead runner's leftovers, never a live one's.
    process.send_signal(signal.SIGSTOP)
    try:
        left = leftovers(engine, process.pid)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert left["containers"] and len(left["volumes"]) == 2 and left["markers"]
    if engine == "podman":
        assert left["namespaces"]
    return process.pid


def test_leftovers_of_a_killed_run__are_removed_by_doctor_clean(tmp_path: Path, engine: str, image: str) -> None:
    pid = killed_run(tmp_path, engine, image)
    cleaned = subprocess.run([*ANCHA, "doctor", "--clean"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine})
    assert leftovers(engine, pid) == NOTHING, cleaned.stdout + cleaned.stderr
    # each is named (podman's `rm --volumes` may take the volumes with the container), unless another run
    # that started meanwhile (on a shared machine) removed them first
    removed = [line for line in cleaned.stdout.splitlines() if line.startswith("removed  ")]
    assert all("ancha-" in line for line in removed)
    assert (f"clean    {len(removed)} leftovers of runs that are gone removed" in cleaned.stdout if removed
            else "clean    nothing left behind by runs that are gone" in cleaned.stdout)


def test_leftovers_of_a_killed_run__are_removed_by_the_next_run_of_any_kind(tmp_path: Path, engine: str,
                                                                          image: str) -> None:
    pid = killed_run(tmp_path / "killed", engine, image)
    host = tmp_path / "host"
    shutil.copytree(EXAMPLES / "scenes" / "export-question", host / "scenes" / "export-question")
    (host / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} -c pass\n"
                                     "scenes: [scenes/export-question/scene.yaml]\ntrials: 1\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=host, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # an agent that does nothing fails its checks
    assert leftovers(engine, pid) == NOTHING


def test_remove_stale_cgroups__ends_a_gone_runners_agents_and_keeps_a_live_ones() -> None:
    probe = cgroup_tree()
    if probe is None:
        pytest.skip("no cgroup v2 of this process's own can be made here")
    parent = probe.path.parent
    probe.path.rmdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale, live = parent / f"ancha-agent-{gone.pid}-0badc0de", parent / f"ancha-agent-{os.getpid()}-0badc0de"
    stale.mkdir()
    live.mkdir()
    orphan = subprocess.Popen(["sleep", "300"])
    try:
        (stale / "cgroup.procs").write_text(str(orphan.pid))
        removed = remove_stale_cgroups()
        assert stale in removed and not stale.exists()
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert live.is_dir() and live not in removed
    finally:
        orphan.kill()
        live.rmdir()
        if stale.exists():
            stale.rmdir()
