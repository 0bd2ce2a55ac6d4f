"""What a command agent's process is given: the base set, pass_env, Ancha's variables
and agent.env (which wins)."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import ssl
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import certifi

from ancha.runner.agents.real_hostnames import ca_pems, hostnames_of
from ancha.server.keys import KEY_VAR
from ancha.world.registry import registry

BASE_VARIABLES = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "TZ",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH",
)
EVENT_FILE = "ANCHA_EVENT_FILE"
EVENT_JSON = "ANCHA_EVENT_JSON"
EVENT_VARIABLE_MAX = 32 * 1024
"""Bytes of event JSON that still go in ``ANCHA_EVENT_JSON``: a quarter of what Linux takes in
one variable (MAX_ARG_STRLEN, 128 KiB), and what a container engine's env file holds in a line."""
WITHHELD = frozenset({KEY_VAR})
"""What no agent's environment holds: the server's key opens the control API (grading)."""
POINTER = 8
"""The kernel counts a pointer for each variable, besides its ``NAME=value`` and NUL."""


def template_values(context: Mapping[str, Any]) -> dict[str, str]:
    """Every template name of ancha.yaml, from a ``POST /envs`` context."""
    values = {
        "task": str(context["task"]),
        "trial": str(context["trial"]),
        "env.id": str(context["env_id"]),
        "events.url": str(context["events"]["url"]),
        "events.token": str(context["events"]["token"]),
        "done.url": str(context["done_url"]),
        "trial.token": str(context["trial_token"]),
        "context.url": str(context["context_url"]),
        "server.url": str(context.get("server_url", "")),
    }
    for tool, creds in context["tools"].items():
        for key, value in creds.items():
            values[f"{tool}.{key}"] = str(value)
    return values


def ancha_variables(context: Mapping[str, Any], state_dir: str) -> dict[str, str]:
    """The ANCHA_* variables listed in world.md under "What the agent is given"."""
    env = {
        "ANCHA_TASK": str(context["task"]),
        "ANCHA_TRIAL": str(context["trial"]),
        "ANCHA_ENV_ID": str(context["env_id"]),
        "ANCHA_CONTEXT_URL": str(context["context_url"]),
        "ANCHA_EVENTS_URL": str(context["events"]["url"]),
        "ANCHA_EVENTS_TOKEN": str(context["events"]["token"]),
        "ANCHA_DONE_URL": str(context["done_url"]),
        "ANCHA_TRIAL_TOKEN": str(context["trial_token"]),
        "ANCHA_STATE_DIR": state_dir,
        "ANCHA_SERVER_URL": str(context.get("server_url", "")),
    }
    now = (context.get("clock") or {}).get("now")
    if now:  # the world's time when the trial began (ISO 8601), for agents that want it explicitly
        env["ANCHA_CLOCK_NOW"] = str(now)
    specs = registry().tools
    for tool, creds in context["tools"].items():
        env[f"ANCHA_{tool.upper()}_URL"] = str(creds["url"])
        spec = specs.get(tool)
        for key in spec.variables if spec is not None else ("token",):
            if key in creds:
                env[f"ANCHA_{tool.upper()}_{key.upper()}"] = str(creds[key])
        if spec is not None and hostnames_of(context) is None:  # (with real hostnames the SDK needs no switch)
            env.update(spec.agent_env)
    return env


def event_variables(event_json: str, file: Path, env: Mapping[str, str]) -> dict[str, str]:
    """How a per-event agent gets its event: always in a file (``ANCHA_EVENT_FILE``), and also in
    ``ANCHA_EVENT_JSON`` when that is at most ``EVENT_VARIABLE_MAX`` bytes and keeps the whole
    environment within half of what the kernel takes for a program's arguments and variables
    (the rest is the command line's). A larger event has no ``ANCHA_EVENT_JSON`` at all: an
    agent that reads only the variable fails loudly instead of reading a cut event."""
    variables = {EVENT_FILE: str(file)}
    value = f"{EVENT_JSON}={event_json}".encode()
    if len(event_json.encode()) <= EVENT_VARIABLE_MAX and \
            _block_size({**env, **variables}) + len(value) + 1 + POINTER <= _arg_max() // 2:
        variables[EVENT_JSON] = event_json
    return variables


def _block_size(env: Mapping[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) + 2 + POINTER for k, v in env.items())


def _arg_max() -> int:
    try:
        return max(int(os.sysconf("SC_ARG_MAX")), 128 * 1024)
    except (ValueError, OSError):
        return 128 * 1024


def trust_variables(context: Mapping[str, Any], bundle: Path | None, shell: Mapping[str, str]) -> dict[str, str]:
    """What makes the agent trust the server's TLS listener (tools whose SDK needs https):
    a CA bundle of the roots it would trust anyway (its ``SSL_CERT_FILE``, else the
    platform's, else certifi's) plus the server's CA, named where each runtime looks.
    ``bundle``: where to write it; None for this process's one per server (``shared_bundle``)."""
    ca_pem = "".join(ca_pems(context))  # the TLS listener's, and the vendor hostnames' (agent.hostnames: real)
    if not ca_pem:
        return {}
    bundle = bundle or shared_bundle(ca_pem)
    source = next((c for c in (shell.get("SSL_CERT_FILE"), ssl.get_default_verify_paths().openssl_cafile,
                               certifi.where()) if c and os.path.isfile(c)), None)
    ca_only = bundle.with_name("ancha-ca.pem")
    # Node trusts its own roots plus NODE_EXTRA_CA_CERTS: the server's CA is added to the
    # shell's extra ones (a company proxy's CA), never put in their place.
    node_extra = shell.get("NODE_EXTRA_CA_CERTS")
    node_extra = node_extra if node_extra and os.path.isfile(node_extra) and Path(node_extra) != ca_only else None
    if _written.get(bundle) != (source, ca_pem, node_extra) or not bundle.is_file() or not ca_only.is_file():
        roots = _roots(source) if source else ""
        bundle.write_text(roots.rstrip("\n") + "\n" + ca_pem, encoding="utf-8")
        extra = _roots(node_extra) if node_extra else ""
        ca_only.write_text((extra.rstrip("\n") + "\n" if extra else "") + ca_pem, encoding="utf-8")
        _written[bundle] = (source, ca_pem, node_extra)
    return {"SSL_CERT_FILE": str(bundle), "REQUESTS_CA_BUNDLE": str(bundle), "NODE_EXTRA_CA_CERTS": str(ca_only)}


_written: dict[Path, tuple[str | None, str, str | None]] = {}
"""Each bundle this process wrote, and what from: a trial whose bundle would be the same writes nothing."""


def shared_bundle(ca_pem: str) -> Path:
    """Where the trials of this process that trust the same server find their CA bundle:
    one file per server authority in a folder of this process's (removed when it exits),
    not 220 KB of the same roots in every trial's folder (and in every archive from Ray)."""
    folder = _trust_folder() / hashlib.sha256(ca_pem.encode()).hexdigest()[:16]
    folder.mkdir(exist_ok=True)
    return folder / "ca-bundle.pem"


@cache
def _trust_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="ancha-trust-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@cache
def _roots(path: str) -> str:
    """A root bundle's text, read once per run (every trial's bundle starts with it)."""
    return Path(path).read_text(encoding="utf-8", errors="replace")


def base_environment(pass_env: list[str], inherit_env: bool, shell: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an agent inherits from the user's shell: never the server's key
    (``ANCHA_SERVER_KEY``), not even with ``--inherit-env`` or when ``pass_env`` names it."""
    shell = os.environ if shell is None else shell
    if inherit_env:
        return {k: v for k, v in shell.items() if k not in WITHHELD}
    names = (set(BASE_VARIABLES) | set(pass_env)) - WITHHELD
    return {k: v for k, v in shell.items() if k in names or k.startswith("LC_")}


def without_withheld(env: dict[str, str]) -> dict[str, str]:
    """``env`` without what no agent is ever given (``WITHHELD``), whoever put it there."""
    for name in WITHHELD & env.keys():
        del env[name]
    return env
