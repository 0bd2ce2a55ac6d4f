"""Checks of the config against the scenes it runs, before any trial starts."""

from __future__ import annotations

from ancha.config.errors import ConfigInvalid
from ancha.config.model import AnchaConfig
from ancha.config.templates import find_placeholders
from ancha.errors import Problem
from ancha.scene.model import Scene
from ancha.world.registry import registry


def check_templates_against_scenes(config: AnchaConfig, scenes: list[Scene]) -> None:
    """A template naming a tool (``{{<tool>.token}}``) needs that tool in every scene it
    runs with: otherwise the agent would get an empty value, so say so before running."""
    if config.agent is None:
        return
    problems: list[Problem] = []
    for name, value in config.agent.env.items():
        for placeholder in find_placeholders(value):
            tool = placeholder.split(".", 1)[0]
            if tool not in registry().tools:
                continue
            lacking = [s.name for s in scenes if tool not in s.tools]
            if lacking:
                problems.append(Problem(
                    path=f"agent.env.{name}",
                    message=f"{{{{{placeholder}}}}} needs a {tool} world, which scene "
                            f"{', '.join(lacking)} {'does' if len(lacking) == 1 else 'do'} not have",
                    hint=f"add world.{tool} to {_them(lacking)}, or run {_them(lacking)} with a config "
                         f"that does not use {{{{{placeholder}}}}}",
                ))
    if problems:
        raise ConfigInvalid(problems, config.source)


def _them(scenes: list[str]) -> str:
    return "that scene" if len(scenes) == 1 else "those scenes"
