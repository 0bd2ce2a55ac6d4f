"""What the console's tests share: running ``ancha`` as a user does, and a real ``ancha ui``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from ancha.server.embedded import free_port

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHROMIUM = "/usr/bin/chromium"

HASTY_AGENT = '''"""Labels the report before anyone decided its priority, then stops."""
import os
from slack_sdk import WebClient
client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
support = next(c for c in client.conversations_list()["channels"] if c["name"] == "support")
question = client.conversations_history(channel=support["id"])["messages"][-1]
client.reactions_add(channel=support["id"], timestamp=question["ts"], name="rotating_light")
print("labelled without asking anyone")
'''


def tool_env() -> dict[str, str]:
    """This interpreter's folder first on PATH, so ``python agents/...`` finds the SDKs."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def ancha(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "ancha.cli", *args], cwd=cwd, env=tool_env(),
                          capture_output=True, text=True, timeout=300)
    if check and done.returncode not in (0, 1):
        raise AssertionError(f"ancha {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


@dataclass
class ExampleRuns:
    project: Path
    runs: Path
    passing: str
    """A run of every bundled example, one trial each."""
    failing: str
    """beta-exports (the people example) with an agent that skips the people: checks fail."""


def newest_run(runs: Path, known: set[str]) -> str:
    fresh = sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name not in known and p.name != "latest")
    assert fresh, f"no new run in {runs}"
    return fresh[-1]


@dataclass
class ConsoleServer:
    url: str
    """``http://127.0.0.1:PORT/ui``."""
    process: subprocess.Popen[str]


def start_console(runs: Path, extra_env: dict[str, str] | None = None) -> ConsoleServer:
    port = free_port("127.0.0.1")
    process = subprocess.Popen([sys.executable, "-m", "ancha.cli", "ui", "--no-open", "--port", str(port),
                                "--runs-dir", str(runs)], env={**tool_env(), **(extra_env or {})},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/ui"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"ancha ui exited {process.returncode}: {process.stdout.read() if process.stdout else ''}")
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return ConsoleServer(url, process)
        except httpx.HTTPError:
            time.sleep(0.05)  # polling for the port to open, under a deadline
    process.kill()
    raise AssertionError("ancha ui did not answer within 30 s")


def stop_console(console: ConsoleServer) -> None:
    console.process.terminate()
    try:
        console.process.wait(10)
    except subprocess.TimeoutExpired:
        console.process.kill()


