"""Ancha's reference pages name what the code has: every config field and template, every
check kind, action and effect, each tool's variables; the generated tables match their
sources; and the site builds without a single warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from doc_snippets import DOCS

from ancha.config.model import AgentConfig, AnchaConfig, ExecutionConfig
from ancha.config.templates import available_names
from ancha.world.registry import config_catalog, registry

sys.path.insert(0, str(DOCS / "hooks"))
import coverage as coverage_hook  # noqa: E402  (docs/hooks is not a package)
import seed as seed_hook  # noqa: E402

TOOLS = tuple(registry().tools)


def template_names() -> list[str]:
    return available_names(config_catalog(), "url")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def file_fields(model: type) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items() if not info.exclude
            and name not in ("root", "source", "inherit_env")]


def test_docs__the_ancha_yaml_page_names_every_field_and_template() -> None:
    text = page("ancha-yaml.md")
    missing = [f"`{f}`" for f in file_fields(AnchaConfig) if f"`{f}" not in text]
    missing += [f"`agent.{f}`" for f in file_fields(AgentConfig) if f"`agent.{f}`" not in text]
    missing += [f"`{f}`" for f in file_fields(ExecutionConfig) if f"`{f}`" not in text]
    missing += ["{{" + n + "}}" for n in template_names()
                if "{{" + n + "}}" not in text and "{{" + n.split(".", 1)[-1] not in text
                and n.split(".", 1)[0] not in ("slack", "github", "datadog", "pagerduty", "okta")]
    assert not missing, f"ancha-yaml.md does not name: {', '.join(missing)}"


def test_docs__every_tool_specific_template_is_named_on_its_tool_page() -> None:
    for name in template_names():
        tool = name.split(".", 1)[0]
        if tool in TOOLS:
            assert "{{" + name + "}}" in page(f"tools/{tool}.md"), f"tools/{tool}.md does not name {{{{{name}}}}}"


@pytest.mark.parametrize("tool", TOOLS)
def test_docs__each_tool_page_names_its_variables_checks_actions_and_effects(tool: str) -> None:
    spec = registry().tools[tool]
    text = page(f"tools/{tool}.md")
    names = [f"ANCHA_{tool.upper()}_URL", *(f"ANCHA_{tool.upper()}_{v.upper()}" for v in spec.variables),
             *spec.agent_env]
    names += [k.body.key for k in (*spec.checks, *spec.predicates, *spec.actions, *spec.effects)]
    missing = [n for n in names if f"`{n}`" not in text]
    assert not missing, f"tools/{tool}.md does not name: {', '.join(missing)}"
    assert f"<!-- coverage: {tool} -->" in text and f"<!-- seed: {tool} -->" in text


def test_docs__the_checks_and_scenes_pages_name_every_kind_action_and_effect() -> None:
    reg = registry()
    checks, scenes = page("checks.md"), page("scenes.md")
    missing = [f"checks.md: {k}" for k in reg.catalog.states if f"`{k}`" not in checks]
    missing += [f"scenes.md: {k}" for k in (*reg.catalog.predicates, *reg.catalog.actions, *reg.catalog.effects)
                if f"`{k}`" not in scenes]
    missing += [f"checks.md: {k}" for k in ("revealed", "knows", "told", "decided", "message", "never", "before",
                                             "within", "judge", "trace", "called", "not_called")
                if f"`{k}`" not in checks]
    assert not missing, "not named: " + ", ".join(missing)


@pytest.mark.parametrize("tool", TOOLS)
def test_docs__coverage_tables_are_rendered_from_each_tools_ledger(tool: str) -> None:
    ledger = coverage_hook.ledger_module(tool).LEDGER
    counts = coverage_hook.counts(ledger)
    text = coverage_hook.render(tool)
    assert f"**{counts['implemented']} implemented**" in text
    assert f"**{counts['partial']} partial**" in text
    assert f"**{counts['not_implemented']} not implemented**" in text
    assert all(f"`{key}`" in text for key in ledger), "every operation is listed"


def test_docs__the_github_graphql_table_lists_every_served_root_field() -> None:
    from ancha.world.tools.github.graphql import resolvers  # noqa: F401  (registers the resolver map)
    from ancha.world.tools.github.graphql.registry import FIELDS

    text = coverage_hook.render_graphql()
    roots = [k.split(".", 1)[1] for k in FIELDS if k.split(".", 1)[0] in ("Query", "Mutation")]
    assert roots and all(f"| `{r}` |" in text for r in roots)


@pytest.mark.parametrize("tool", TOOLS)
def test_docs__seed_tables_list_every_field_of_the_tools_section(tool: str) -> None:
    schema = seed_hook.schema(tool)
    text = seed_hook.render(tool)
    for node in [schema, *schema.get("$defs", {}).values()]:
        for key in node.get("properties", {}):
            assert f"| `{key}` |" in text, f"{tool}: field {key} is not in the generated table"


def test_docs__the_site_builds_with_no_warning(tmp_path: Path) -> None:
    # Not --quiet: with it, MkDocs hides the warnings that --strict would count (missing anchors).
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=DOCS.parent, capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert done.returncode == 0 and not warnings, "\n".join(warnings) or done.stderr
