"""Rules across fields of ancha.yaml, checked on the config after overrides are applied."""

from __future__ import annotations

from collections.abc import Callable

from ancha.config.catalog import ConfigCatalog
from ancha.config.model import AnchaConfig
from ancha.config.templates import available_names, find_placeholders
from ancha.errors import Problem

RESERVED_ENV = ("PATH", "HOME")

LineOf = Callable[[str], "int | None"]


def config_problems(config: AnchaConfig, line_of: LineOf, file: str | None, catalog: ConfigCatalog) -> list[Problem]:
    """Every cross-field problem of ``config``; ``line_of(path)`` finds a path's line in the file;
    ``catalog``: the tools whose templates the file may name."""
    out: list[Problem] = []

    def add(path: str, message: str, hint: str | None = None) -> None:
        out.append(Problem(path, message, hint, line_of(path), file))

    if config.ray is not None and config.server.url is not None:
        add("ray", "conflicts with server.url",
            "on Ray each trial hosts its world on its worker; remove server.url, or ray to use that server")
    agent = config.agent
    if agent is None:
        return out
    endpoint = agent.url is not None
    if endpoint and agent.command is not None:
        add("agent.url", "conflicts with agent.command",
            "an agent is a command (agent.command) or an HTTP endpoint (agent.url), not both")
    if agent.start is not None and agent.ready_url is None:
        add("agent.ready_url", "required with agent.start",
            "Ancha polls ready_url until the server you start answers 2xx")
    if agent.setup_url is not None and agent.start is not None:
        add("agent.setup_url", "conflicts with agent.start",
            "setup_url is for a server you run yourself; remove it or remove agent.start")
    if endpoint and (config.parallel or 1) > 1:
        hint = "each parallel trial needs its own server on {{agent.port}}; or set parallel: 1"
        if agent.start is None:
            add("parallel", "above 1 needs agent.start with an endpoint agent", hint)
        for name in ("url", "ready_url"):
            value = getattr(agent, name)
            if value is not None and "agent.port" not in find_placeholders(value):
                add(f"agent.{name}", "needs {{agent.port}} when parallel is above 1", hint)
    if endpoint and agent.slack_transport == "socket":
        add("agent.slack_transport", "socket is not available to endpoint agents", "use feed or http")
    execution = agent.execution
    if execution.mode == "container" and not execution.image:
        add("agent.execution.image", "required when mode is container",
            "name a Linux image in your local Docker, such as my-agent:local")
    if execution.mode == "container" and agent.slack_transport == "socket" and agent.hostnames != "real":
        # With real hostnames the container reaches wss-primary.slack.com through Ancha's interception.
        add("agent.slack_transport", "socket is not available to container agents",
            "container runs do not support Slack Socket Mode; use feed (or http with an endpoint agent on the host), "
            "or set agent.hostnames: real")
    for i, name in enumerate(execution.env):
        if name in RESERVED_ENV or name.startswith("ANCHA_"):
            add(f"agent.execution.env[{i}]", f"{name} is a reserved name",
                "PATH, HOME and ANCHA_* are set by Ancha inside the container; remove it")
    if agent.budget_usd is not None and not execution.model_hosts:
        add("agent.budget_usd", "needs agent.execution.modelHosts",
            "the budget counts model calls through Ancha's model gateway, which serves the domains in "
            "agent.execution.modelHosts, such as [openrouter.ai]")
    has_port = endpoint and agent.start is not None
    for key, value in agent.env.items():
        _check_templates(f"agent.env.{key}", value, "env", add, has_port, catalog)
    for name in ("url", "ready_url", "setup_url"):
        value = getattr(agent, name)
        if value is not None:
            _check_templates(f"agent.{name}", value, name, add, has_port, catalog)
    return out


PORT_TEMPLATE = "agent.port"


def _check_templates(path: str, text: str, where: str, add: Callable[[str, str, str | None], None],
                     has_port: bool, catalog: ConfigCatalog) -> None:
    """Every placeholder of ``text`` must name a template ``where`` offers; ``{{agent.port}}``
    exists only for an endpoint agent whose server Ancha starts (``has_port``)."""
    names = [n for n in available_names(catalog, where) if has_port or n != PORT_TEMPLATE]
    for name in find_placeholders(text):
        if name == PORT_TEMPLATE and not has_port:
            add(path, "{{agent.port}} applies only to an endpoint agent that Ancha starts (agent.url with "
                "agent.start)", "a command agent has no port; remove it, or run your agent as an endpoint agent")
        elif name not in names:
            add(path, f"unknown template {{{{{name}}}}}", f"available templates: {', '.join(names)}")
