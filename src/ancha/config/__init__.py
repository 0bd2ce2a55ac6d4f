"""ancha.yaml: the model, loading with every problem reported at once, and templates."""

from __future__ import annotations

from ancha.config.catalog import ConfigCatalog
from ancha.config.errors import ConfigInvalid
from ancha.config.loading import ConfigOverrides, load_config
from ancha.config.model import AgentConfig, AnchaConfig, ExecutionConfig, JudgeConfig, ServerConfig

__all__ = [
    "AgentConfig",
    "AnchaConfig",
    "ConfigCatalog",
    "ConfigInvalid",
    "ConfigOverrides",
    "ExecutionConfig",
    "JudgeConfig",
    "ServerConfig",
    "load_config",
]
