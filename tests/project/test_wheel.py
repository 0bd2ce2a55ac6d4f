"""The product as a package: `python -m build` makes an sdist and a wheel (the wheel built from
the sdist), which installs into a new venv outside the repository and runs from there:
`ancha init && ancha run` in an empty folder, a GraphQL query through `ancha serve`, and a
workflow run on `agentos serve`.

The new venv gets the wheel alone (`--no-deps`); a .pth file appends the dev venv's
site-packages for the dependencies, so no test run waits on PyPI. Python does not process
the .pth files of a folder a .pth names, so the dev venv's editable install of Ancha stays
out: the tests assert that the code that runs is the installed copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ancha.server.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 60.0
"""Seconds a server may take to answer its first request (a loaded 2-core machine)."""

GITHUB_SCENE = """\
name: wheel-graphql
task: Read the repository.
world:
  github:
    repos:
      - { ref: orders, name: acme/orders, description: Order service, files: { README.md: "# orders" } }
checks:
  - id: no-issue-yet
    state:
      github.issue: { repo: $orders }
"""

# Run by the new venv's python: the scene as POST /envs takes it, loaded by the installed package.
SCENE_BODY = """\
import json, pathlib, sys
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog
print(json.dumps({"scene": load_scene(pathlib.Path(sys.argv[1]), catalog()).model_dump(mode="json", by_alias=True)}))
"""

# Run by the new venv's python: each runtime requirement of the installed wheel that is
# missing from the combined environment, or present at a version it does not accept.
UNMET_REQUIREMENTS = """\
import json
from importlib.metadata import PackageNotFoundError, distribution
from packaging.requirements import Requirement
unmet = []
for line in distribution("ancha").requires or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        version = distribution(req.name).version
    except PackageNotFoundError:
        unmet.append(f"{req} (missing)")
        continue
    if not req.specifier.contains(version, prereleases=True):
        unmet.append(f"{req} (have {version})")
print(json.dumps(unmet))
"""

WORKFLOW = {
    "name": "Greeter",
    "nodes": [{"id": "greet", "type": "set", "values": {"greeting": "'Hello, ' + input['name']"}}],
    "checks": [{"name": "Greets by name", "type": "contains", "target": "greeting", "value": "Ada"}],
}


@dataclass
class Installed:
    """The built distributions and a venv that holds the wheel."""

    wheel: Path
    sdist: Path
    product: set[str]
    """Every file of the copy of src/ the distributions were built from, as paths under src/."""
    venv: Path
    site_packages: Path
    env: dict[str, str]
    """Variables for commands in the new venv: its bin/ first on PATH, nothing from the repo."""

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *command: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=timeout)


def _copy_sources(into: Path) -> Path:
    """What the build reads, without the work tree's caches and egg-info."""
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, into / name)
    shutil.copytree(ROOT / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return into / "src"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(ROOT)
    checkout, dist = base / "checkout", base / "dist"
    checkout.mkdir()
    sources = _copy_sources(checkout)
    product = {path.relative_to(sources).as_posix() for path in sources.rglob("*") if path.is_file()}
    # --no-isolation: the build uses this venv's setuptools (in the dev extras), not PyPI.
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(checkout)],
                           capture_output=True, text=True, timeout=180)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")

    target = base / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "--isolated", "install",
                          "--no-deps", "--no-index", "--disable-pip-version-check", "--quiet", str(wheel)],
                         capture_output=True, text=True, timeout=180)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    site_packages = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                        capture_output=True, text=True, check=True).stdout.strip())
    dev_paths = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site_packages / "zz_dev_venv_dependencies.pth").write_text("".join(f"{path}\n" for path in dev_paths))

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
           and not k.startswith(("ANCHA_", "AGENTOS_"))}
    env |= {"PATH": f"{target / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(target),
            "AGENTOS_HOME": str(base / "agentos-home"), "PYTHONDONTWRITEBYTECODE": "1"}
    return Installed(wheel, sdist, product, target, site_packages, env)


@pytest.fixture
def empty_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    assert not folder.resolve().is_relative_to(ROOT)
    return folder


def _start(command: list[str], installed: Installed, cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # a file, not a pipe: a chatty server never blocks on a full pipe
        return subprocess.Popen(command, cwd=cwd, env=installed.env, stdout=out, stderr=subprocess.STDOUT)


def _wait_until_answers(url: str, server: subprocess.Popen[bytes], log: Path,
                        headers: dict[str, str] | None = None) -> httpx.Response:
    deadline = time.monotonic() + STARTUP
    while True:
        try:
            return httpx.get(url, headers=headers, timeout=5)
        except httpx.TransportError:
            if server.poll() is not None:
                pytest.fail(f"the server exited with {server.returncode}:\n{log.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{url} did not answer within {STARTUP:.0f} s:\n{log.read_text()}")
            time.sleep(0.05)


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


@pytest.fixture
def stopped_at_end() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for server in started:
        _stop(server)


def test_wheel__holds_every_file_of_the_product_and_the_sdist_too(installed: Installed) -> None:
    product = installed.product
    in_wheel = {name for name in zipfile.ZipFile(installed.wheel).namelist() if ".dist-info/" not in name}
    assert product - in_wheel == set()
    assert in_wheel - product == set()
    with tarfile.open(installed.sdist) as sdist:
        in_sdist = {member.name.split("/", 1)[1] for member in sdist.getmembers() if member.isfile()}
    assert {f"src/{name}" for name in product} - in_sdist == set()
    # What the code reads beside itself at run time, named so that a lost glob shows here.
    for needed in ("ancha/console/templates/base.html", "ancha/console/static/console.js",
                   "ancha/console/static/console.css", "ancha/world/tools/github/vendor/graphql.json.gz",
                   "ancha/world/tools/slack/vendor/web_api.json.gz", "ancha/cli/starter/ancha.yaml",
                   "ancha/cli/starter/scene.yaml", "ancha/cli/starter/agent.py", "agentos/migrations/env.py",
                   "agentos/migrations/script.py.mako", "agentos/migrations/versions/0001_initial.py",
                   "agentos_sdk/py.typed"):
        assert needed in in_wheel
    assert len([name for name in in_wheel if name.endswith(".json.gz")]) == 9


def test_wheel__runtime_requirements_leave_out_the_test_only_extras(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.removeprefix("Requires-Dist: ") for line in metadata.splitlines()
                if line.startswith("Requires-Dist: ")]
    runtime = {line.split(";")[0].split("[")[0].split(">")[0].split("=")[0].strip().lower()
               for line in requires if "extra ==" not in line}
    assert {"starlette", "fastapi", "sqlalchemy", "alembic", "graphql-core", "dulwich"} <= runtime
    assert runtime.isdisjoint({"ray", "playwright", "pytest", "mypy", "ruff", "mkdocs", "pygithub", "build"})


def test_wheel__runs_the_installed_copy_with_every_requirement_met(installed: Installed, empty_folder: Path) -> None:
    where = installed.run(installed.bin("python"), "-c", "import json, sys, ancha, agentos, agentos_sdk; "
                          "print(json.dumps([sys.path, [ancha.__file__, agentos.__file__, agentos_sdk.__file__]]))",
                          cwd=empty_folder)
    assert where.returncode == 0, where.stderr
    search_path, module_files = json.loads(where.stdout)
    # The dev venv's editable install (a .pth naming src/) is not processed through our .pth.
    assert str(ROOT / "src") not in search_path
    for module_file in module_files:
        assert Path(module_file).is_relative_to(installed.site_packages), module_files
        assert not Path(module_file).is_relative_to(ROOT), module_files
    unmet = installed.run(installed.bin("python"), "-c", UNMET_REQUIREMENTS, cwd=empty_folder)
    assert unmet.returncode == 0, unmet.stderr
    assert json.loads(unmet.stdout) == []
    version = installed.wheel.name.split("-")[1]
    for command in ("ancha", "agentos"):
        shown = installed.run(installed.bin(command), "--version", cwd=empty_folder)
        assert (shown.returncode, shown.stdout) == (0, f"{command} {version}\n"), shown.stderr


def test_wheel__init_then_run_pass_in_an_empty_folder(installed: Installed, empty_folder: Path) -> None:
    init = installed.run(installed.bin("ancha"), "init", cwd=empty_folder)
    assert init.returncode == 0, init.stdout + init.stderr
    assert sorted(p.relative_to(empty_folder).as_posix() for p in empty_folder.rglob("*") if p.is_file()) == [
        "agent.py", "ancha.yaml", "scenes/hello/scene.yaml"]
    ran = installed.run(installed.bin("ancha"), "run", "--no-progress", cwd=empty_folder)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = json.loads((empty_folder / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert summary["scenes"][0]["passed"] == 1


def test_wheel__ancha_serve_answers_a_graphql_query(installed: Installed, empty_folder: Path,
                                                   stopped_at_end: list[subprocess.Popen[bytes]]) -> None:
    (empty_folder / "scene.yaml").write_text(GITHUB_SCENE)
    body = installed.run(installed.bin("python"), "-c", SCENE_BODY, "scene.yaml", cwd=empty_folder)
    assert body.returncode == 0, body.stderr
    port, log = free_port(), empty_folder / "serve.log"
    server = _start([installed.bin("ancha"), "serve", "--port", str(port), "--key", "wheel-key"], installed,
                    empty_folder, log)
    stopped_at_end.append(server)
    url = f"http://127.0.0.1:{port}"
    assert _wait_until_answers(url + "/envs", server, log).status_code == 401  # the control API needs the key
    created = httpx.post(url + "/envs", content=body.stdout, timeout=30,
                         headers={"content-type": "application/json", "authorization": "Bearer wheel-key"})
    assert created.status_code == 201, created.text
    github = created.json()["tools"]["github"]
    answer = httpx.post(github["url"] + "/graphql", headers={"authorization": f"Bearer {github['token']}"}, timeout=30,
                        json={"query": '{ viewer { login } repository(owner: "acme", name: "orders") '
                                       "{ nameWithOwner description defaultBranchRef { name } } }"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"data": {
        "viewer": {"login": "ancha-agent"},
        "repository": {"nameWithOwner": "acme/orders", "description": "Order service",
                       "defaultBranchRef": {"name": "main"}}}}


def test_wheel__agentos_serve_runs_a_workflow(installed: Installed, empty_folder: Path,
                                              stopped_at_end: list[subprocess.Popen[bytes]]) -> None:
    database = f"sqlite:///{empty_folder / 'agentos.db'}"
    created = installed.run(installed.bin("agentos"), "keys", "create", "--workspace", "wheel",
                            "--database-url", database, cwd=empty_folder)
    assert created.returncode == 0, created.stderr
    auth = {"authorization": f"Bearer {created.stdout.strip()}"}
    port, log = free_port(), empty_folder / "agentos.log"
    server = _start([installed.bin("agentos"), "serve", "--port", str(port), "--database-url", database,
                     "--log-level", "warning"], installed, empty_folder, log)
    stopped_at_end.append(server)
    api = f"http://127.0.0.1:{port}/api"
    assert _wait_until_answers(api + "/workflows", server, log, auth).status_code == 200
    workflow = httpx.post(api + "/workflows", json=WORKFLOW, headers=auth, timeout=30)
    assert workflow.status_code == 201, workflow.text
    run = httpx.post(f"{api}/workflows/{workflow.json()['id']}/runs", json={"input": {"name": "Ada"}},
                     headers=auth, timeout=60)
    assert run.status_code == 201, run.text
    finished = run.json()
    assert finished["status"] == "success", finished
    assert finished["state"]["greeting"] == "Hello, Ada"
    assert (finished["evals"]["passed"], finished["evals"]["total"]) == (1, 1)
