"""The real-hostname client programs are what a user with ``agent.hostnames: real`` runs:
unchanged vendor clients with no base URL. These tests pin that down, and that the scene
they run against loads and grades each program with checks of its own."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ruamel.yaml import YAML

from ancha.scene.loading import load_scene
from ancha.world.registry import catalog

sys.path.insert(0, str(Path(__file__).parent))
from client_programs import CLIENTS, PROGRAMS, SCENE  # noqa: E402

BASE_URL_SETTINGS = re.compile(r"ANCHA_\w+_URL|base_?url\s*[=:]|\bhost\s*=|\.insteadOf|testingDisableHttpsCheck"
                               r"|TESTINGDISABLEHTTPSCHECK", re.IGNORECASE)
"""How a client is pointed elsewhere than the vendor: an Ancha URL variable, a base URL or host
setting, git's URL rewriting, Okta's switch for a non-Okta org URL."""


def test_client_programs__read_no_base_url_and_set_none() -> None:
    found = {program.name: BASE_URL_SETTINGS.findall(program.path.read_text()) for program in PROGRAMS.values()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_client_programs__every_program_in_the_folder_is_described() -> None:
    assert sorted(path.name for path in CLIENTS.iterdir() if path.is_file()) == sorted(PROGRAMS)


def test_scene__loads_and_each_check_belongs_to_exactly_one_program() -> None:
    scene = load_scene(SCENE, catalog())
    ids = [check["id"] for check in YAML(typ="safe").load(SCENE.read_text())["checks"]]
    owners = {check: [p.name for p in PROGRAMS.values() if check in p.checks] for check in ids}
    assert scene.name == "real-hostnames"
    assert {check: names for check, names in owners.items() if len(names) != 1} == {}
