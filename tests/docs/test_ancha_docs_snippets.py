"""Every YAML and JSON example on Ancha's docs pages runs here, with the project's own loaders.

A block's title (its info string, ```yaml title="..."```) says what it is:

- ``scene.yaml``: a whole scene file; it validates.
- ``scene.yaml (excerpt)``: part of a scene. Its top-level keys replace those of the
  nearest whole ``scene.yaml`` above it on the same page (``world`` tool by tool), and
  the result validates.
- ``ancha.yaml``: a whole config; it validates.
- ``scene.yaml (refused)`` / ``ancha.yaml (refused)``: a file that is wrong on purpose;
  loading it fails, and the ``text title="Output"`` block right after it is what the
  error says.
- ``ancha.yaml (ancha run refuses)``: valid config for a mode ``ancha run`` does not run
  yet; the ``Output`` block after it is the refusal.
- ``task.json``: a playground task file; it loads (``ancha.checks.task.load_task``) against
  the nearest whole ``scene.yaml`` above it on its page. ``task.json (refused)``: one that
  is refused as the ``Output`` block after it shows.
- ``messages.jsonl`` and the like: data files, parsed line by line.
- ``patch.yaml``: a patch of ``ancha fork --patch``; it applies to the bundled beta-exports
  scene, and the changed scene validates.
- ``.github/workflows/...``: a CI workflow, not Ancha's own file; it parses, and every
  ``ancha`` command in its steps runs with options ``ancha`` has.
- JSON blocks are titled after what they show (``checks.json``, ``summary.json``, a feed
  answer...); each parses, and the ones below with a known shape have that shape.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from doc_snippets import DOCS, Block, fenced_blocks

from ancha.config.errors import ConfigInvalid
from ancha.config.loading import load_config
from ancha.config.yaml_source import read_yaml
from ancha.errors import AnchaUserError
from ancha.runner.run import refuse_unbuilt_agents
from ancha.runner.scene_patch import patched_scene
from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene, load_scenes
from ancha.world.registry import catalog, config_catalog
from ancha.world.replay import RecordedCall

PAGES = [
    "index.md", "quickstart.md", "concepts.md", "scenes.md", "ancha-yaml.md", "model-calls.md", "checks.md",
    "feed-and-control.md", "scale.md", "status.md", "containers.md", "hostnames.md", "replay.md", "teams.md",
    "tools/slack.md", "tools/github.md", "tools/datadog.md", "tools/pagerduty.md", "tools/okta.md",
]
"""The Ancha pages (docs/agentos/ has its own tests)."""

PROJECT = "/path/to/project"
"""How an example's error output writes the folder the file is in."""

_TITLE = re.compile(r'title="([^"]*)"')


def title(block: Block) -> str:
    found = _TITLE.search(block.info)
    return found.group(1) if found else ""


def ancha_blocks(*langs: str) -> list[Block]:
    blocks: list[Block] = []
    for page in PAGES:
        blocks.extend(b for b in fenced_blocks(DOCS / page) if b.lang in langs)
    return blocks


def blocks_titled(*titles: str) -> list[Block]:
    return [b for b in ancha_blocks("yaml", "json", "jsonl") if title(b) in titles]


def ids(blocks: list[Block]) -> list[str]:
    return [b.where for b in blocks]


def output_after(block: Block) -> Block:
    """The ``text title="Output"`` block that follows ``block`` on its page."""
    page = fenced_blocks(block.page)
    following = [b for b in page if b.line > block.line]
    assert following and following[0].lang == "text" and title(following[0]) == "Output", (
        f"{block.where}: a refused example is followed by the Output block that shows the error")
    return following[0]


def shown_lines(output: Block) -> list[str]:
    return [line.strip() for line in output.text.splitlines() if line.strip()]


def write_scene(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "scenes" / "example"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scene.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load_example_scene(tmp_path: Path, text: str) -> None:
    write_scene(tmp_path, text)
    load_scenes(["scenes/example/scene.yaml"], tmp_path, catalog())


def base_scene(excerpt: Block) -> Block:
    """The nearest whole scene above an excerpt on its page."""
    above = [b for b in fenced_blocks(excerpt.page) if b.line < excerpt.line and title(b) == "scene.yaml"]
    assert above, f"{excerpt.where}: an excerpt needs a whole scene.yaml above it on its page"
    return above[-1]


def merged(base: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """``part``'s top-level keys over ``base``'s; ``world`` tool by tool. Checks given
    without ``pass`` drop the base's ``pass`` (it names the base's checks)."""
    out = dict(base)
    for key, value in part.items():
        if key == "world":
            out["world"] = {**(base.get("world") or {}), **(value or {})}
        else:
            out[key] = value
    if "checks" in part and "pass" not in part:
        out.pop("pass", None)
    return out


# --- every block has a role ----------------------------------------------------------------

SCENE_TITLES = ("scene.yaml", "scene.yaml (excerpt)")
CONFIG_TITLES = ("ancha.yaml",)
REFUSED_TITLES = ("scene.yaml (refused)", "ancha.yaml (refused)", "ancha.yaml (ancha run refuses)")
TASK_TITLES = ("task.json", "task.json (refused)")
DATA_TITLES = ("history.jsonl", "logs.jsonl", "calls.jsonl", "index.jsonl")
PATCH_TITLE = "patch.yaml"
CI_TITLE_PREFIX = ".github/workflows/"
JSON_TITLES = (
    "checks.json", "summary.json", "trace.jsonl", "records.jsonl", "models.jsonl", "feed answer", "feed event",
    "context", "POST /envs", "POST /envs (400)", "POST /envs/{id}/checks", "GET /envs/{id}", "ANCHA_EVENT_JSON",
    "replay.json", "POST /envs/{id}/checkpoint", "POST /checkpoints (400)", "workflow gate",
)


def test_docs__every_yaml_and_json_block_says_what_it_is() -> None:
    known = (*SCENE_TITLES, *CONFIG_TITLES, *REFUSED_TITLES, *TASK_TITLES, *DATA_TITLES, *JSON_TITLES, PATCH_TITLE)
    unmarked = [f"{b.where} ({b.info})" for b in ancha_blocks("yaml", "json", "jsonl")
                if title(b) not in known and not title(b).startswith(CI_TITLE_PREFIX)]
    assert not unmarked, "blocks without a known title= role: " + ", ".join(unmarked)


CI_WORKFLOWS = [b for b in ancha_blocks("yaml") if title(b).startswith(CI_TITLE_PREFIX)]


@pytest.mark.parametrize("block", CI_WORKFLOWS, ids=ids(CI_WORKFLOWS))
def test_docs__ci_workflows_parse_and_their_ancha_commands_take_those_options(block: Block) -> None:
    import yaml
    from click.testing import CliRunner

    from ancha.cli.main import cli

    workflow = yaml.safe_load(block.text)
    runs = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    commands = [shlex.split(line) for run in runs for line in run.splitlines() if line.startswith("ancha ")]
    assert commands, f"{block.where}: no ancha command in the workflow"
    for command in commands:
        # --help after the options: click still parses them, so an unknown one is refused
        done = CliRunner().invoke(cli, [*command[1:], "--help"])
        assert done.exit_code == 0, f"{block.where}: {shlex.join(command)}: {done.output}"


# --- scenes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("block", blocks_titled("scene.yaml"), ids=ids(blocks_titled("scene.yaml")))
def test_docs__every_scene_example_validates(block: Block, tmp_path: Path) -> None:
    load_example_scene(tmp_path, block.text)


EXCERPTS = blocks_titled("scene.yaml (excerpt)")


@pytest.mark.parametrize("block", EXCERPTS, ids=ids(EXCERPTS))
def test_docs__every_scene_excerpt_validates_in_the_scene_above_it(block: Block, tmp_path: Path) -> None:
    base, part = read_yaml(base_scene(block).text)[0], read_yaml(block.text)[0]
    assert isinstance(part, dict), f"{block.where}: an excerpt is a mapping of top-level scene keys"
    # JSON is YAML: the merged scene goes back through the real loader as JSON text.
    load_example_scene(tmp_path, json.dumps(merged(base, part), default=lambda t: t.isoformat()))


REFUSED_SCENES = blocks_titled("scene.yaml (refused)")


@pytest.mark.parametrize("block", REFUSED_SCENES, ids=ids(REFUSED_SCENES))
def test_docs__every_refused_scene_example_is_refused_as_its_output_shows(block: Block, tmp_path: Path) -> None:
    with pytest.raises(SceneInvalid) as refused:
        load_example_scene(tmp_path, block.text)
    said = refused.value.render().replace(str(tmp_path.resolve()), PROJECT)
    for line in shown_lines(output_after(block)):
        assert line in said, f"{block.where}: the error does not say {line!r}; it says:\n{said}"


# --- task files -----------------------------------------------------------------------------


def load_example_task(tmp_path: Path, block: Block) -> Any:
    from ancha.checks.task import load_task

    scene = load_scene(write_scene(tmp_path, base_scene(block).text), catalog())
    task = tmp_path / "task.json"
    task.write_text(block.text, encoding="utf-8")
    return load_task(task, scene)


@pytest.mark.parametrize("block", blocks_titled("task.json"), ids=ids(blocks_titled("task.json")))
def test_docs__every_task_file_example_loads_against_the_scene_above_it(block: Block, tmp_path: Path) -> None:
    assert load_example_task(tmp_path, block)


REFUSED_TASKS = blocks_titled("task.json (refused)")


@pytest.mark.parametrize("block", REFUSED_TASKS, ids=ids(REFUSED_TASKS))
def test_docs__every_refused_task_file_is_refused_as_its_output_shows(block: Block, tmp_path: Path) -> None:
    from ancha.checks.task import TaskInvalid

    with pytest.raises(TaskInvalid) as refused:
        load_example_task(tmp_path, block)
    said = refused.value.render().replace(str(tmp_path / "task.json"), "task.json")
    for line in shown_lines(output_after(block)):
        assert line in said, f"{block.where}: the error does not say {line!r}; it says:\n{said}"


# --- ancha.yaml -----------------------------------------------------------------------------


def load_example_config(tmp_path: Path, text: str) -> Any:
    (tmp_path / "ancha.yaml").write_text(text, encoding="utf-8")
    return load_config(None, tmp_path, catalog=config_catalog())


@pytest.mark.parametrize("block", blocks_titled("ancha.yaml"), ids=ids(blocks_titled("ancha.yaml")))
def test_docs__every_config_example_validates(block: Block, tmp_path: Path) -> None:
    load_example_config(tmp_path, block.text)


REFUSED_CONFIGS = blocks_titled("ancha.yaml (refused)")


@pytest.mark.parametrize("block", REFUSED_CONFIGS, ids=ids(REFUSED_CONFIGS))
def test_docs__every_refused_config_example_is_refused_as_its_output_shows(block: Block, tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalid) as refused:
        load_example_config(tmp_path, block.text)
    said = refused.value.render().replace(str(tmp_path.resolve()), PROJECT)
    for line in shown_lines(output_after(block)):
        assert line in said, f"{block.where}: the error does not say {line!r}; it says:\n{said}"


RUN_REFUSES = blocks_titled("ancha.yaml (ancha run refuses)")


@pytest.mark.parametrize("block", RUN_REFUSES, ids=ids(RUN_REFUSES))
def test_docs__config_examples_that_ancha_run_refuses_validate_and_are_refused_as_shown(
        block: Block, tmp_path: Path) -> None:
    config = load_example_config(tmp_path, block.text)
    with pytest.raises(AnchaUserError) as refused:
        refuse_unbuilt_agents(config)
    said = refused.value.render()
    for line in shown_lines(output_after(block)):
        assert line in said, f"{block.where}: ancha run does not say {line!r}; it says:\n{said}"


def test_docs__the_status_page_shows_every_mode_ancha_run_refuses() -> None:
    pages = {b.page.name for b in RUN_REFUSES}
    shown = "\n".join(b.text for b in RUN_REFUSES)
    assert "status.md" in pages
    for needle in ("mode: container", "slack_transport: http"):
        assert needle in shown, f"no 'ancha.yaml (ancha run refuses)' example with {needle}"


# --- ancha fork --patch -------------------------------------------------------------------

PATCHES = [b for b in ancha_blocks("yaml") if title(b) == PATCH_TITLE]


@pytest.mark.parametrize("block", PATCHES, ids=ids(PATCHES))
def test_docs__every_fork_patch_example_applies_to_the_bundled_scene(block: Block, tmp_path: Path) -> None:
    scene = load_scene(DOCS.parent / "examples" / "scenes" / "beta-exports" / "scene.yaml", catalog())
    patch = tmp_path / "patch.yaml"
    patch.write_text(block.text, encoding="utf-8")
    changed = patched_scene(scene, [], patch)
    assert changed is not None and changed.source_hash != scene.source_hash, block.where


# --- data files and JSON --------------------------------------------------------------------


DATA = blocks_titled(*DATA_TITLES, "trace.jsonl", "records.jsonl", "models.jsonl")


@pytest.mark.parametrize("block", DATA, ids=ids(DATA))
def test_docs__every_json_lines_example_is_one_json_object_a_line(block: Block) -> None:
    for line in block.text.splitlines():
        if line.strip():
            assert isinstance(json.loads(line), dict), f"{block.where}: {line[:60]}"


JSON = [b for b in ancha_blocks("json")]


@pytest.mark.parametrize("block", JSON, ids=ids(JSON))
def test_docs__every_json_example_parses(block: Block) -> None:
    json.loads(block.text)


RESULT_FIELDS = {"id", "required", "passed", "status", "expected", "actual", "explanation", "evidence"}
TRACE_FIELDS = {"seq", "at", "actor", "tool", "method", "path", "query", "status", "request", "response",
                "worked", "coverage_gap"}
TRACE_FIELDS_SOMETIMES = {"arrived", "host"}
"""``arrived`` on the agent's calls, ``host`` on a call to a vendor's own hostname."""
REPLAY_FIELDS = {"env_id", "seed", "trial", "scene", "source_hash", "ended"}
EVENT_FIELDS = {"id", "service", "type", "at", "payload"}


def test_docs__json_examples_have_the_fields_ancha_writes() -> None:
    from ancha.checks.results import CheckResult

    fields = set(CheckResult.outcome("x", True, True, "e", "a", "x").to_dict())
    assert fields == RESULT_FIELDS
    for block in blocks_titled("checks.json"):
        data = json.loads(block.text)
        for result in data["results"]:
            assert set(result) == fields, block.where
    for block in blocks_titled("trace.jsonl"):
        for line in filter(str.strip, block.text.splitlines()):
            assert TRACE_FIELDS <= set(json.loads(line)) <= TRACE_FIELDS | TRACE_FIELDS_SOMETIMES, block.where
    for block in blocks_titled("replay.json"):
        assert REPLAY_FIELDS <= set(json.loads(block.text)) <= REPLAY_FIELDS | {"origin"}, block.where
    for block in blocks_titled("calls.jsonl"):
        for line in filter(str.strip, block.text.splitlines()):
            call = RecordedCall.of_dict(json.loads(line))
            assert call.to_dict() == json.loads(line), block.where
    for block in blocks_titled("feed answer"):
        data = json.loads(block.text)
        assert set(data) == {"events", "cursor"}, block.where
        for event in data["events"]:
            assert set(event) == EVENT_FIELDS, block.where
    for block in blocks_titled("feed event", "ANCHA_EVENT_JSON"):
        assert set(json.loads(block.text)) == EVENT_FIELDS, block.where


# --- links ------------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|href=\"([^\"]+)\"")
ROOT = DOCS.parent


def links(path: Path) -> list[str]:
    return [a or b for a, b in _LINK.findall(path.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", [*PAGES, "../README.md"])
def test_docs__no_page_links_outside_the_repository(page: str) -> None:
    path = (DOCS / page).resolve()
    for target in links(path):
        assert "://" not in target and not target.startswith(("/", "mailto:")), (
            f"{page} links outside the repository: {target}")
        file = target.split("#", 1)[0]
        if not file:
            continue
        resolved = (path.parent / file).resolve()
        assert resolved.is_relative_to(DOCS), f"{page} links outside docs/: {target}"
        assert resolved.exists(), f"{page} links to a page that does not exist: {target}"


# --- the quickstart's commands --------------------------------------------------------------


def shell_commands(page: str) -> list[list[str]]:
    commands: list[list[str]] = []
    for block in fenced_blocks(DOCS / page):
        if block.lang not in ("sh", "bash", "console"):
            continue
        for line in block.text.splitlines():
            line = line.split("#", 1)[0].strip().removeprefix("$ ").strip()
            if line:
                commands.append(shlex.split(line))
    return commands


def test_docs__every_ancha_command_in_the_quickstart_exists() -> None:
    from click.testing import CliRunner

    from ancha.cli.main import cli

    shown = [c for c in shell_commands("quickstart.md") if c and Path(c[0]).name == "ancha"]
    assert shown, "the quickstart shows ancha commands"
    for command in shown:
        words = [w for w in command[1:] if not w.startswith("-")][:1]
        answer = CliRunner().invoke(cli, [*words, "--help"])
        assert answer.exit_code == 0, f"`{' '.join(command)}`: {answer.output}"


# --- the quickstart, run for real ----------------------------------------------------------

RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")
QUICKSTART_HOME = "/home/you/hello-ancha"
OLD_GREETING = 'text="Hello team! Ancha sent me to say hi."'
NEW_GREETING = 'text="Hi team! Ancha sent me."'


PROGRAM_PATH = re.compile(r"python3 is \S+")
CHANNEL_ID = re.compile(r"\bC[0-9A-F]{10}\b")
"""A Slack channel id: drawn from the run's seed, so another in every run."""


def normalized(text: str, folder: Path) -> list[str]:
    text = RUN_ID.sub("RUN_ID", text.replace(str(folder.resolve()), QUICKSTART_HOME))
    text = PROGRAM_PATH.sub("python3 is PATH", text)
    text = CHANNEL_ID.sub("CHANNEL_ID", text)
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_docs__the_quickstart_shows_the_files_ancha_init_writes() -> None:
    from importlib import resources

    starter = resources.files("ancha.cli") / "starter"
    page = fenced_blocks(DOCS / "quickstart.md")
    shown = {title(b): b.text for b in page if title(b) in ("ancha.yaml", "scene.yaml")}
    assert shown["ancha.yaml"] == (starter / "ancha.yaml").read_text()
    assert shown["scene.yaml"] == (starter / "scene.yaml").read_text()
    agent = (starter / "agent.py").read_text()
    assert any(b.lang == "python" and b.text == agent for b in page), "the quickstart shows agent.py as written"
    edits = [b.text.strip() for b in page if b.lang == "python" and b.text != agent]
    assert len(edits) == 2 and OLD_GREETING in edits[0] and NEW_GREETING in edits[1]
    assert edits[0] in agent


def test_docs__the_quickstart_prints_what_the_page_shows(tmp_path: Path) -> None:
    import subprocess
    import sys

    outputs = [b for b in fenced_blocks(DOCS / "quickstart.md") if title(b) == "Output"]
    assert len(outputs) == 5, "init, doctor, a passing run, a failing run and explain"

    def ancha(*args: str) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-m", "ancha.cli", *args], cwd=tmp_path, capture_output=True,
                              text=True, check=False)
        return done.returncode, done.stdout + done.stderr

    steps: list[tuple[int, str]] = [ancha("init"), ancha("doctor"), ancha("run", "--no-progress")]
    agent = tmp_path / "agent.py"
    agent.write_text(agent.read_text().replace(OLD_GREETING, NEW_GREETING))
    steps += [ancha("run", "--no-progress"), ancha("explain")]
    assert [code for code, _ in steps] == [0, 0, 0, 1, 0]
    for (_, printed), shown in zip(steps, outputs, strict=True):
        # Lines are compared with runs of spaces as one: a long path wraps the results line.
        real = " ".join(" ".join(normalized(printed, tmp_path)).split())
        for line in normalized(shown.text, tmp_path):
            line = " ".join(line.split())
            assert line in real, f"quickstart.md:{shown.line}: the command does not print {line!r}:\n{printed}"


def test_docs__every_workflow_gate_is_one_agentos_accepts() -> None:
    from agentos.definitions import validate_gate

    blocks = [b for b in ancha_blocks("json") if title(b) == "workflow gate"]
    assert blocks, "teams.md shows a gate"
    for block in blocks:
        gate = json.loads(block.text)
        assert validate_gate(gate) == gate, block.where
