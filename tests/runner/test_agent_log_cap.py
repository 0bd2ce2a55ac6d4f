"""agent.log is capped: the head and the tail of what the agent wrote, up to agent.log_limit,
with what was dropped counted in the log, in checks.json and in `ancha explain`."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from test_run_cli import ancha, latest, project

from ancha.config.loading import load_config
from ancha.results.agent_log import AgentLog
from ancha.world.registry import config_catalog

FLOODING_AGENT = textwrap.dedent("""
    import sys
    out = sys.stdout.buffer
    out.write(b"FIRST-LINE of the agent\\n")
    block = b"x" * 65535 + b"\\n"
    for _ in range(80):  # 5 MiB
        out.write(block)
    out.write(b"LAST-LINE of the agent\\n")
""")


def test_run__agent_log_keeps_head_and_tail_within_the_limit_and_says_what_was_dropped(tmp_path: Path) -> None:
    project(tmp_path, FLOODING_AGENT, trials=1)
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\n  log_limit: 64KiB\ntrials: 1\n")
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # posts nothing: failed
    folder = latest(tmp_path) / "hello" / "1"
    log = (folder / "agent.log").read_bytes()
    assert len(log) < 64 * 1024 + 1024  # the limit, plus Ancha's own notes
    assert log.startswith(b"FIRST-LINE of the agent\n")
    agent_part, _, ancha_note = log.rpartition(b"LAST-LINE of the agent\n")
    assert agent_part and ancha_note.startswith(b"ancha: the trial ended: the agent exited"), log[-300:]
    written = len(b"FIRST-LINE of the agent\n") + 80 * 65536 + len(b"LAST-LINE of the agent\n")
    dropped = written - 64 * 1024
    assert f"ancha: agent.log: {dropped:,} bytes dropped here".encode() in log
    checks = json.loads((folder / "checks.json").read_text())
    assert checks["agent_log"] == {"written": written, "dropped": dropped, "limit": 64 * 1024}
    explained = ancha("explain", cwd=tmp_path)
    assert f"agent.log: {dropped:,} of {written:,} bytes dropped" in explained.stdout, explained.stdout


def test_agent_log__under_the_limit_is_kept_whole(tmp_path: Path) -> None:
    log = AgentLog(tmp_path / "agent.log", limit=4096)
    for i in range(100):
        log.write(f"line {i}\n".encode())
    log.close()
    assert (tmp_path / "agent.log").read_text() == "".join(f"line {i}\n" for i in range(100))
    assert log.cut is None


def test_agent_log__counts_every_dropped_byte(tmp_path: Path) -> None:
    log = AgentLog(tmp_path / "agent.log", limit=4096)
    data = bytes(range(256)) * 100
    for start in range(0, len(data), 777):
        log.write(data[start:start + 777])
    log.close()
    kept = (tmp_path / "agent.log").read_bytes()
    head, _, rest = kept.partition(b"\nancha: agent.log: ")
    tail = rest.split(b"\n", 1)[1]
    assert head == data[:2048] and tail == data[-2048:]
    assert log.cut == {"written": len(data), "dropped": len(data) - 4096, "limit": 4096}


def test_config__agent_log_limit_defaults_to_16_mib(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: python agent.py\n")
    config = load_config(None, tmp_path, catalog=config_catalog())
    assert config.agent is not None and config.agent.log_limit == 16 * 1024 * 1024
