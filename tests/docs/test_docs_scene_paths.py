"""Every scene file the docs name exists: shipped in examples/, written by ``ancha init``, or
the stand-in the pages use for a user's own scene. The checks page's playground example
runs as written, from examples/, with the scene and task it shows (shipped beside each other)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest
from doc_snippets import DOCS, fenced_blocks

ROOT = DOCS.parent
EXAMPLES = ROOT / "examples"
CHECKS_TOUR = EXAMPLES / "playground" / "checks-tour"
SCENE_PATH = re.compile(r"[\w.*/-]+/scene\.yaml")
STAND_INS = {"scenes/example/scene.yaml": "the docs tests' own scene, in error outputs",
             "scenes/**/scene.yaml": "a glob: every scene of a project"}
USER_FOLDERS = ("/path/to/project/", "/home/you/hello-ancha/")
"""How the pages write the folder of the user's project."""


def named_scene_paths() -> list[tuple[str, str]]:
    """(page, path) for every ``.../scene.yaml`` the docs pages and the README name."""
    pages = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
    return [(page.relative_to(ROOT).as_posix(), path) for page in pages
            for path in SCENE_PATH.findall(page.read_text(encoding="utf-8"))]


def starter_scene() -> str:
    """Where ``ancha init`` writes its scene (the starter's scene.yaml)."""
    assert (resources.files("ancha.cli") / "starter" / "scene.yaml").is_file()
    return "scenes/hello/scene.yaml"


def test_docs__every_scene_path_the_docs_name_exists() -> None:
    named = named_scene_paths()
    assert ("docs/checks.md", "playground/checks-tour/scene.yaml") in named
    missing = []
    for page, path in named:
        for folder in USER_FOLDERS:
            path = path.removeprefix(folder)
        if path in STAND_INS or path == starter_scene():
            continue
        if not ((EXAMPLES / path).is_file() or (ROOT / path).is_file()):
            missing.append(f"{page}: {path}")
    assert not missing, "scene files the docs name that are not shipped: " + ", ".join(missing)


def test_docs__the_checks_pages_scene_and_task_are_the_shipped_checks_tour() -> None:
    blocks = fenced_blocks(DOCS / "checks.md")
    scene = next(b for b in blocks if 'title="scene.yaml"' in b.info)
    task = next(b for b in blocks if 'title="task.json"' in b.info)
    assert (CHECKS_TOUR / "scene.yaml").read_text(encoding="utf-8") == scene.text
    assert (CHECKS_TOUR / "task.json").read_text(encoding="utf-8") == task.text


def test_docs__the_checks_tour_is_not_one_of_the_scenes_the_examples_run() -> None:
    """examples/ancha.yaml runs scenes/**/scene.yaml with the example agent, which does not
    attempt the tour: the tour lives outside that glob."""
    assert "scenes: [scenes/**/scene.yaml]" in (EXAMPLES / "ancha.yaml").read_text(encoding="utf-8")
    assert not CHECKS_TOUR.is_relative_to(EXAMPLES / "scenes")


def test_docs__the_playground_example_opens_the_checks_tour_and_ancha_check_grades_it(tmp_path: Path) -> None:
    command = next(line for b in fenced_blocks(DOCS / "checks.md") if b.lang == "sh"
                   for line in b.text.splitlines() if line.startswith("ancha playground "))
    ancha = str(Path(sys.executable).with_name("ancha"))
    log = tmp_path / "playground.log"
    with log.open("w") as output:
        playground = subprocess.Popen([ancha, *command.split()[1:]], cwd=EXAMPLES, stdout=output,
                                      stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (grade := re.search(r"^grade it: (ancha check .+)$", log.read_text(), re.MULTILINE)):
            if playground.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"`{command}` did not open the world:\n{log.read_text()}")
            time.sleep(0.05)
        assert "of scene checks-tour" in log.read_text()
        checked = subprocess.run([ancha, *grade.group(1).split()[1:]], cwd=EXAMPLES, capture_output=True,
                                 text=True, timeout=60, check=False)
        # Nobody acted in the world: the task's checks run, and fail.
        assert checked.returncode == 1, checked.stdout + checked.stderr
        assert "answered" in checked.stdout + checked.stderr
    finally:
        playground.terminate()
        try:
            playground.wait(15)
        except subprocess.TimeoutExpired:
            playground.kill()
            playground.wait(5)
