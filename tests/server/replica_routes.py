"""Every route each replica serves, read from the tool's own coverage registry, and the
seeded worlds the tools' own tests use, for driving the replicas in-process."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.tools.datadog.coverage import served as datadog_served
from ancha.world.tools.github.coverage import served as github_served
from ancha.world.tools.okta.coverage import served as okta_served
from ancha.world.tools.pagerduty.coverage import served as pagerduty_served
from ancha.world.tools.slack.coverage import served_methods as slack_methods

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


def _scene(tool: str) -> dict[str, Any]:
    if tool == "pagerduty":
        support = _load(TOOL_TESTS / "pagerduty" / "pagerduty_support.py", "_routes_pagerduty_support")
        return {"clock": {"start": support.START}, "world": {"pagerduty": copy.deepcopy(support.SEED)}}
    conftest = _load(TOOL_TESTS / tool / "conftest.py", f"_routes_{tool}_conftest")
    if tool == "slack":
        return copy.deepcopy(conftest.SCENE)
    return {"world": {tool: copy.deepcopy(conftest.SEED)}}


def seeded_env(tool: str) -> Environment:
    """An environment holding ``tool`` seeded as the tool's own tests seed it."""
    return Environment(f"env-routes-{tool}", Scene.model_validate({"name": f"routes-{tool}", **_scene(tool)}), 1)
