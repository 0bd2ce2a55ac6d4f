"""``{{name}}`` placeholders in agent.env values and endpoint URLs.

Config loading checks names against every tool of the build (a scene decides which tools
exist, and the config serves many scenes), as its ``ConfigCatalog`` gives them; a trial
renders with its actual values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal

from ancha.config.catalog import ConfigCatalog

_GENERAL = ("task", "trial", "env.id")
_TRIAL = ("events.url", "events.token", "done.url", "trial.token", "context.url", "server.url")
_AGENT = ("agent.port",)
_URL_ONLY = ("service",)

Where = Literal["env", "url", "ready_url", "setup_url"]


def available_names(catalog: ConfigCatalog, where: str = "env", tools: Iterable[str] | None = None) -> list[str]:
    """Placeholder names usable in ``where``: ``env`` (agent.env values), ``url`` (agent.url, the
    only place ``service`` is known), ``ready_url`` or ``setup_url``; ``tools``: only these of
    the catalog's tools (default: all of them)."""
    names = list(_GENERAL)
    for tool in catalog.tools if tools is None else tools:
        names.extend(f"{tool}.{credential}" for credential in catalog.templates.get(tool, ()))
    names.extend(_TRIAL)
    names.extend(_AGENT)
    if where == "url":
        names.extend(_URL_ONLY)
    return names


_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class TemplateError(KeyError):
    """A placeholder names nothing available here."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = list(available)
        super().__init__(name)

    def __str__(self) -> str:
        return f"unknown template {{{{{self.name}}}}}; available: {', '.join(self.available)}"


def find_placeholders(text: str) -> list[str]:
    """Names of the ``{{name}}`` placeholders in ``text``, in order, spaces trimmed."""
    return _PLACEHOLDER.findall(text)


def render(text: str, values: Mapping[str, str]) -> str:
    """Replace every placeholder with its value; an unknown name raises ``TemplateError``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise TemplateError(name, sorted(values))
        return str(values[name])

    return _PLACEHOLDER.sub(value, text)
