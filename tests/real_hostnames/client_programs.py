"""The real-hostname client programs (``clients/``), each with what it needs to run and the
checks of ``scene/scene.yaml`` it makes pass.

Every program is a command agent: it reads its credentials from the ANCHA_* variables
(never an ANCHA_*_URL), sets no base URL, prints what it did, and exits non-zero on any
failure. A run of one program against the scene passes that program's checks; the other
programs' checks fail.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENTS = HERE / "clients"
SCENE = HERE / "scene" / "scene.yaml"


@dataclass(frozen=True, slots=True)
class ClientProgram:
    name: str
    """The program's file name in ``clients/``."""
    runtime: str
    """``python``, ``node`` or ``sh``: what runs it."""
    credentials: tuple[str, ...]
    """The ANCHA_* variables it reads."""
    checks: tuple[str, ...]
    """The scene's check ids it makes pass."""
    needs_node_packages: bool = False
    """Whether it needs ``node_clients.node_packages()``: NODE_PATH for Octokit, and
    ANCHA_TEST_MCP_GITHUB (the MCP server's ``dist/index.js``) for the MCP client."""
    slack_transport: str | None = None
    """``agent.slack_transport`` it needs in ancha.yaml (None: any)."""
    exclusive: bool = True
    """False when another program's calls pass its checks too (curl's read of the repository)."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def path(self) -> Path:
        return CLIENTS / self.name

    def argv(self, python: str = sys.executable, node: str = "node") -> list[str]:
        """The agent's command line, with ``python`` (in a container: ``python3``) and ``node``."""
        runner = {"python": [python], "node": [node], "sh": ["sh"]}[self.runtime]
        return [*runner, str(self.path)]


PROGRAMS: dict[str, ClientProgram] = {program.name: program for program in (
    ClientProgram("slack_web.py", "python", ("ANCHA_SLACK_TOKEN",), ("slack_web_posted", "slack_web_read_back")),
    ClientProgram("slack_bolt_socket.py", "python", ("ANCHA_SLACK_TOKEN", "ANCHA_SLACK_APP_TOKEN"),
                  ("slack_bolt_connected", "slack_bolt_answered"), slack_transport="socket",
                  notes=("waits (up to 300 s of wall time) for Ana's message the scene's world rule posts at 10m;"
                         " the trial may end by idleness just after the reply, before the app has closed",)),
    ClientProgram("github_pygithub.py", "python", ("ANCHA_GITHUB_TOKEN",), ("github_pygithub_commented",)),
    ClientProgram("github_githubkit.py", "python", ("ANCHA_GITHUB_TOKEN",),
                  ("github_githubkit_commented", "github_githubkit_graphql")),
    ClientProgram("github_git.py", "python", ("ANCHA_GITHUB_TOKEN",), ("github_git_pushed",),
                  notes=("needs git (and git-remote-https) on PATH",)),
    ClientProgram("curl_github.sh", "sh", ("ANCHA_GITHUB_TOKEN",), ("curl_github_read",), exclusive=False),
    ClientProgram("octokit.mjs", "node", ("ANCHA_GITHUB_TOKEN",), ("octokit_commented",), needs_node_packages=True),
    ClientProgram("mcp_github.py", "python", ("ANCHA_GITHUB_TOKEN",), ("mcp_github_commented",),
                  needs_node_packages=True),
    ClientProgram("datadog_client.py", "python", ("ANCHA_DATADOG_API_KEY", "ANCHA_DATADOG_APP_KEY"),
                  ("datadog_listed_monitors", "datadog_posted_event")),
    ClientProgram("pagerduty_client.py", "python",
                  ("ANCHA_PAGERDUTY_TOKEN", "ANCHA_PAGERDUTY_FROM_EMAIL", "ANCHA_PAGERDUTY_ROUTING_KEY"),
                  ("pagerduty_resolved", "pagerduty_sent_event")),
    ClientProgram("okta_client.py", "python", ("ANCHA_OKTA_TOKEN",), ("okta_suspended", "okta_left_dana_alone"),
                  notes=("calls https://acme.okta.com: the scene's Okta org must be acme",)),
)}


def node_variables(node_packages: Path) -> dict[str, str]:
    """The variables a program with ``needs_node_packages`` gets, for ``node_clients.node_packages()``
    on this machine (the client image sets the same ones for its own copy)."""
    modules = node_packages / "node_modules"
    return {"NODE_PATH": str(modules),
            "ANCHA_TEST_MCP_GITHUB": str(modules / "@modelcontextprotocol" / "server-github" / "dist" / "index.js")}
