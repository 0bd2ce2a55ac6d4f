"""The tool registry: every replicated tool of this build, each one folder that declares itself.

A tool lives entirely in ``ancha/world/tools/<tool>/`` and exports one ``ToolSpec`` (in its
``spec.py``) holding everything the rest of Ancha needs to know about it: its scene
section, its replica, its credentials, how people are reached there, what the agent
hears from it, its world-rule actions, its state checks and predicates, and what the
judge sees of it. The core (environment, people, rules, predicates, checks, runner)
asks this registry and never names a tool. Adding a tool is one line in ``_specs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ancha.config.catalog import ConfigCatalog
from ancha.scene.sections import Catalog
from ancha.world.kernel.spec import ActionKind, EffectKind, PredicateKind, StateKind, ToolSpec

__all__ = ["Registry", "catalog", "config_catalog", "registry"]


def _specs() -> list[ToolSpec[Any]]:
    from ancha.world.tools.datadog.spec import TOOL as datadog
    from ancha.world.tools.github.spec import TOOL as github
    from ancha.world.tools.okta.spec import TOOL as okta
    from ancha.world.tools.pagerduty.spec import TOOL as pagerduty
    from ancha.world.tools.slack.spec import TOOL as slack

    return [slack, github, datadog, pagerduty, okta]


@dataclass(frozen=True)
class Registry:
    """Every tool of this build, and every kind they define, by name and key."""

    tools: dict[str, ToolSpec[Any]]
    states: dict[str, StateKind[Any]]
    predicates: dict[str, PredicateKind[Any]]
    actions: dict[str, ActionKind[Any]]
    effects: dict[str, EffectKind[Any]]
    catalog: Catalog
    """The tools as scene files see them: what ``load_scene`` validates against."""
    config: ConfigCatalog
    """The tools as ancha.yaml sees them: what ``load_config`` validates against."""

    def tool(self, name: str) -> ToolSpec[Any]:
        spec = self.tools.get(name)
        if spec is None:
            raise LookupError(f"this build has no tool {name!r}; tools: {', '.join(self.tools)}")
        return spec

    @property
    def vendor_files(self) -> list[tuple[str, str]]:
        """Every vendor data file the package ships, as (tool, name)."""
        return [(name, file) for name, spec in self.tools.items() for file in spec.vendor_files]


@cache
def registry() -> Registry:
    """The registry of this build (built once)."""
    from ancha.world.fault_resolved import FAULT_RESOLVED

    tools = {spec.name: spec for spec in _specs()}
    states = {FAULT_RESOLVED.body.key: FAULT_RESOLVED, **{k.body.key: k for spec in tools.values() for k in spec.checks}}
    predicates = {k.body.key: k for spec in tools.values() for k in spec.predicates}
    actions = {k.body.key: k for spec in tools.values() for k in spec.actions}
    effects = {k.body.key: k for spec in tools.values() for k in spec.effects}
    return Registry(tools, states, predicates, actions, effects, Catalog(
        worlds={name: spec.world for name, spec in tools.items()},
        states={key: kind.body for key, kind in states.items()},
        predicates={key: kind.body for key, kind in predicates.items()},
        actions={key: kind.body for key, kind in actions.items()},
        effects={key: kind.body for key, kind in effects.items()},
    ), ConfigCatalog(
        templates={name: spec.templates for name, spec in tools.items()},
        transports={name: _transports(spec) for name, spec in tools.items()},
    ))


def _transports(spec: ToolSpec[Any]) -> tuple[str, ...]:
    """The values of ``agent.<tool>_transport``: the tool's transports, and ``http`` when the vendor
    POSTs its events to a URL (an endpoint agent's), sorted."""
    return tuple(sorted({*spec.transports, *(("http",) if spec.webhook is not None else ())}))


def catalog() -> Catalog:
    """The tools as scene files see them (``registry().catalog``)."""
    return registry().catalog


def config_catalog() -> ConfigCatalog:
    """The tools as ancha.yaml sees them (``registry().config``)."""
    return registry().config
