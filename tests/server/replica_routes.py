"""Every route each replica serves, read from the tool's own coverage registry, and the
seeded worlds the tools' own tests use, for driving the replicas in-process."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.tools.datadog.coverage import served as datadog_served
from ancha.world.tools.github.coverage import served as github_served
from ancha.world.tools.okta.coverage import served as okta_served
from ancha.world.tools.pagerduty.coverage import served as pagerduty_served
from ancha.world.tools.slack.coverage import served_methods as slack_methods

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
TOOL_TESTS = Path(__file__).parents[1] / "world" / "tools"


def served_routes(tool: str) -> list[tuple[str, str]]:
    """``(METHOD, /template)`` for every route ``tool``'s replica serves, sorted; Slack's
    methods each as a GET and a POST (the Web API takes both)."""
    if tool == "slack":
        return sorted((verb, f"/api/{name}") for name in slack_methods() for verb in ("GET", "POST"))
    served = {"github": github_served, "datadog": datadog_served, "okta": okta_served,
              "pagerduty": pagerduty_served}[tool]()
    return sorted((operation.split(" ", 1)[0], operation.split(" ", 1)[1]) for operation in served)


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def scene_of(tool: str) -> dict[str, Any]:
    """The scene (without its name) that seeds ``tool`` as the tool's own tests seed it."""
    if tool == "pagerduty":
        support = _load(TOOL_TESTS / "pagerduty" / "pagerduty_support.py", "_routes_pagerduty_support")
        return {"clock": {"start": support.START}, "world": {"pagerduty": copy.deepcopy(support.SEED)}}
    conftest = _load(TOOL_TESTS / tool / "conftest.py", f"_routes_{tool}_conftest")
    if tool == "slack":
        return copy.deepcopy(conftest.SCENE)
    return {"world": {tool: copy.deepcopy(conftest.SEED)}}


def seeded_env(tool: str) -> Environment:
    """An environment holding ``tool`` seeded as the tool's own tests seed it."""
    return Environment(f"env-routes-{tool}", Scene.model_validate({"name": f"routes-{tool}", **scene_of(tool)}), 1)


COMMON_VALUES = ["1", "2", "main", "README.md", "bug", "v1.0", "acme", "orders", "Backend", "backend",
                 "me", "default", "ancha-agent"]
NAMED = {"owner": "acme", "repo": "orders", "org": "acme", "username": "laura", "assignee": "ben",
         "team_slug": "backend", "branch": "main", "ref": "heads/main", "path": "README.md", "name": "bug",
         "milestone_number": "1", "issue_number": "1", "pull_number": "3", "basehead": "main...fix-exports",
         "base": "main", "head": "fix-exports", "dir": "docs", "tag": "v1.0", "license": "mit"}
"""Placeholder -> a value the seeded GitHub world holds (the others take a ref of their kind, or 1)."""


def seeded_path(env: Environment, tool: str, template: str) -> str:
    """``template`` filled with ids the seeded world holds: a ref of the kind the placeholder
    (or the path segment before it) names, a known GitHub value, else ``1``."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        before = template[:match.start()].rstrip("/").rsplit("/", 1)[-1]
        kind = re.sub(r"(_id|Id|_number)$", "", name) if name != "id" else before.rstrip("s").rstrip("ie")
        ids = [ref.id for ref in env.refs.values() if ref.tool == tool and kind.startswith(ref.kind[:5])]
        return quote(NAMED.get(name) or (ids[0] if ids else "1"), safe="/" if name == "path" else "")
    return PLACEHOLDER.sub(value, template)
