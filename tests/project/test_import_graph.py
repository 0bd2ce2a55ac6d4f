"""The world's layers hold with type-checking imports counted too (import-linter's contracts in
pyproject.toml leave those out): a tool imports only the kernel, the scene and config layers,
and nothing of the world core ever imports back up into it through a circle."""

from __future__ import annotations

from functools import cache

import grimp
import pytest

WORLD = "ancha.world"
KERNEL = "ancha.world.kernel"
TOOLS = "ancha.world.tools"
BELOW_THE_WORLD = ("ancha.scene", "ancha.config", "ancha.durations", "ancha.errors")


@cache
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("ancha", include_external_packages=False, exclude_type_checking_imports=False,
                             cache_dir=None)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _tool_folder(module: str) -> str | None:
    parts = module.split(".")
    return ".".join(parts[:4]) if _within(module, TOOLS) and len(parts) > 3 else None


def _ancha_imports(importer: str) -> set[str]:
    return {m for m in _graph().find_modules_directly_imported_by(importer) if _within(m, "ancha")}


def _tool_modules() -> list[str]:
    return sorted(m for m in _graph().modules if _tool_folder(m) is not None)


def test_tool_modules__import_only_the_kernel_the_scene_config_and_their_own_folder() -> None:
    wrong = []
    for module in _tool_modules():
        own = _tool_folder(module)
        assert own is not None
        for imported in _ancha_imports(module):
            if _within(imported, own) or _within(imported, KERNEL) or imported == TOOLS:
                continue
            if any(_within(imported, allowed) for allowed in BELOW_THE_WORLD):
                continue
            wrong.append(f"{module} -> {imported}")
    assert wrong == []


def test_the_kernel__imports_nothing_of_the_world_above_it() -> None:
    wrong = [f"{module} -> {imported}"
             for module in sorted(m for m in _graph().modules if _within(m, KERNEL))
             for imported in _ancha_imports(module)
             if _within(imported, WORLD) and not _within(imported, KERNEL)]
    assert wrong == []


def test_the_layers_below_the_world__never_import_it() -> None:
    wrong = [f"{module} -> {imported}"
             for module in sorted(m for m in _graph().modules if any(_within(m, low) for low in BELOW_THE_WORLD))
             for imported in _ancha_imports(module)
             if _within(imported, WORLD)]
    assert wrong == []


@pytest.mark.parametrize("package", ["ancha.world.tools.slack", "ancha.world.tools.github", "ancha.world.tools.datadog",
                                     "ancha.world.tools.pagerduty", "ancha.world.tools.okta"])
def test_no_circle_runs_through_a_tool_and_the_world_core(package: str) -> None:
    """A chain of imports from a tool never leads back up to the environment, the registry or people."""
    graph = _graph()
    core = ["ancha.world.environment", "ancha.world.registry", "ancha.world.people", "ancha.world.rules",
            "ancha.world.predicates"]
    reached = graph.find_upstream_modules(package, as_package=True)  # what it imports, directly or not
    assert sorted(set(core) & reached) == []
