"""What ancha.yaml may name of the tools: their ``{{<tool>.<name>}}`` credentials and the values
of their ``agent.<tool>_transport`` fields.

Config sits below the world and never imports a tool: the layers above build a
``ConfigCatalog`` from the tool registry (``ancha.world.registry.config_catalog()``) and
pass it to ``load_config``, as they pass the scene loader its ``Catalog``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import create_model

from ancha.config.model import AgentConfig, AnchaConfig

TRANSPORT_SUFFIX = "_transport"


@dataclass(frozen=True)
class ConfigCatalog:
    """Every tool of this build, as ancha.yaml sees them."""

    templates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool -> the credentials usable as ``{{<tool>.<name>}}`` (``url``, ``token``, ...)."""
    transports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool -> the values its ``agent.<tool>_transport`` field takes, for a tool the file has
    such a field for."""

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(self.templates)

    # One catalog per build, compared by identity (its dicts are not hashable): the models
    # built from it are cached on it.
    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


@cache
def config_model(catalog: ConfigCatalog) -> type[AnchaConfig]:
    """The ancha.yaml model of this build: ``AnchaConfig`` whose ``agent.<tool>_transport`` fields
    take exactly the values ``catalog`` gives (what the file is validated against and what
    ``ancha schema ancha`` prints). The loaded config is a plain ``AnchaConfig``."""
    fields: dict[str, Any] = {}
    for name, info in AgentConfig.model_fields.items():
        values = catalog.transports.get(name.removesuffix(TRANSPORT_SUFFIX)) \
            if name.endswith(TRANSPORT_SUFFIX) else None
        if values:
            fields[name] = (Literal[values], info)  # type: ignore[valid-type]
    agent = create_model("AgentConfig", __base__=AgentConfig, __doc__=AgentConfig.__doc__, **fields)
    optional_agent: Any = agent | None
    return create_model("AnchaConfig", __base__=AnchaConfig, __doc__=AnchaConfig.__doc__,
                        agent=(optional_agent, AnchaConfig.model_fields["agent"]))
