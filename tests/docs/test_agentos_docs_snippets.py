"""Every example on the AgentOS pages (docs/agentos/*.md) runs against a real `agentos serve`.

One server is started as users start it (`agentos serve --port N`, with $AGENTOS_HOME a
temporary folder, so its SQLite database is $AGENTOS_HOME/agentos.db), and keys come from
`agentos keys create`. A block's role is read from its info string, mostly its title:

* ```json title="POST /api/workflows"``` (or PUT, PATCH): a request body, sent as the raw
  text of the block (so a documented NaN really is sent as NaN).
* ```json title="→ 201 Created"```: the answer to the request block just before it.
* ```json title="GET /api/dashboard/metrics → 200 OK"``` (or DELETE): a request without a
  body and its answer; "GET /api/workflows without a key → 401 ..." sends no key.
* ```json title="WS /api/runs/{run_id}/stream"```: the events a subscriber receives, as
  a JSON array (the socket is opened after the run ended: a late subscriber's replay).

An answer matches when it has the status shown and the same keys and values as the block,
except values that differ on every run (ids, timestamps, durations). A "…" value matches
anything; a list holding "…" matches the items before it at the start of the real list
and the items after it at its end. Paths may name `{workflow_id}`, `{run_id}`,
`{evaluation_id}`, and `{base}` / `{candidate}` (the evaluation before the last one and the
last one): each is filled from earlier answers on the same page. Each page's JSON blocks
run in order in a workspace of their own which, unless the page creates it, already
holds the Support Triage Crew workflow (the complete example on workflows.md).

```python``` and ```js``` blocks run alone, as scripts (node for js, as ES modules inside
sdk/js so `import ... from "@agentos/sdk"` resolves), each in a fresh workspace holding
that same workflow, with AGENTOS_BASE_URL and AGENTOS_API_KEY set (the variables both
SDKs read); a literal http://localhost:8000 or aos_live_… in a script is replaced by
the server's URL or the key. Every `agentos` command line of a ```sh``` block is parsed by
the real CLI, so its options exist.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import click
import httpx
import pytest
from doc_snippets import DOCS, Block, all_blocks, fenced_blocks
from websockets.sync.client import connect

ROOT = DOCS.parent
PAGES = sorted((DOCS / "agentos").glob("*.md"))
JS_PACKAGE = ROOT / "sdk" / "js"
SEED_NAME = "Support Triage Crew"

_TITLE = re.compile(r'title="(?P<title>[^"]*)"')
_REQUEST = re.compile(r"^(?P<method>POST|PUT|PATCH) (?P<path>/.+)$")
_ANSWER = re.compile(
    r"^(?:(?P<method>GET|DELETE) (?P<path>/.+?)(?P<nokey> without a key)? )?→ (?P<status>\d{3})\b"
)
_STREAM = re.compile(r"^WS (?P<path>/.+)$")
ANYTHING = "…"
# Values that differ on every run: never compared, only required to be there.
VARYING = frozenset(
    {"id", "run_id", "workflow_id", "evaluation_id", "at", "created_at", "updated_at", "started_at",
     "finished_at", "completed_at", "duration_ms", "date"}
)


# The server


@dataclass
class Server:
    url: str
    home: Path
    output: Path
    agentos: str

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTOS_")}
        return {**env, "AGENTOS_HOME": str(self.home)}

    def new_key(self, workspace: str) -> str:
        """A key for a new workspace, made as the docs say: `agentos keys create --workspace NAME`."""
        done = subprocess.run(
            [self.agentos, "keys", "create", "--workspace", workspace],
            env=self.env(), capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def api(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def _agentos_executable() -> str:
    """$AGENTOS_BIN (dev.py sets it), else the agentos beside this interpreter, else on PATH."""
    candidates = [os.environ.get("AGENTOS_BIN"), str(Path(sys.executable).with_name("agentos")), shutil.which("agentos")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no agentos executable: install the project (python3 dev.py setup) or set AGENTOS_BIN")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("agentos-docs")
    port = _free_port()
    found = Server(f"http://127.0.0.1:{port}", folder / "home", folder / "serve.log", _agentos_executable())
    with found.output.open("wb") as log:
        process = subprocess.Popen(
            [found.agentos, "serve", "--port", str(port), "--log-level", "warning"],
            env=found.env(), stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{found.url}/api/workflows", timeout=2)
                break  # any answer, even a 401, means it is serving
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"agentos serve did not start:\n{found.output.read_text()}")
                time.sleep(0.05)
        yield found
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def _seed_request() -> str:
    """The body of the workflows page's complete example: the workflow other examples use."""
    for block in fenced_blocks(DOCS / "agentos" / "workflows.md"):
        if _role(block)[0] == "request" and json.loads(block.text).get("name") == SEED_NAME:
            return block.text
    raise AssertionError(f"workflows.md has no POST /api/workflows example creating {SEED_NAME!r}")


_workspaces = iter(range(1, 1_000_000))


def _workspace_with_seed(server: Server, label: str, seed: bool = True) -> str:
    key = server.new_key(f"docs-{label}-{next(_workspaces)}")
    if seed:
        with server.api(key) as api:
            created = api.post("/api/workflows", content=_seed_request(), headers={"Content-Type": "application/json"})
            assert created.status_code == 201, created.text
    return key


# Block roles and answers


def _role(block: Block) -> tuple[str, re.Match[str] | None]:
    title = _TITLE.search(block.info)
    text = title["title"] if title else ""
    for kind, pattern in (("request", _REQUEST), ("answer", _ANSWER), ("stream", _STREAM)):
        found = pattern.match(text)
        if found:
            return kind, found
    return "unknown", None


def _mismatch(doc: Any, real: Any, where: str = "$", ids: dict[str, str] | None = None) -> str | None:
    """Why `real` does not look like the documented `doc`; None when it does. `ids` learns
    which real id each documented id stands for."""
    if doc == ANYTHING:
        return None
    if isinstance(doc, dict):
        if not isinstance(real, dict):
            return f"{where}: documented an object, got {real!r}"
        if set(doc) != set(real):
            return f"{where}: documented keys {sorted(doc)}, got {sorted(real)}"
        for key, value in doc.items():
            if key in VARYING and value is not None and real[key] is not None:
                if ids is not None and key.endswith("id") and isinstance(value, str):
                    ids.setdefault(value, real[key])
                continue
            if (key == "detail" and doc.get("type") == "max_duration_ms"
                    and re.fullmatch(r"duration_ms \d+ (<=|>) \d+", str(real[key]))):
                continue  # the duration differs on every run
            problem = _mismatch(value, real[key], f"{where}.{key}", ids)
            if problem:
                return problem
        return None
    if isinstance(doc, list):
        if not isinstance(real, list):
            return f"{where}: documented a list, got {real!r}"
        if ANYTHING in doc:
            cut = doc.index(ANYTHING)
            head, tail = doc[:cut], doc[cut + 1 :]
            if len(head) + len(tail) > len(real):
                return f"{where}: documented at least {len(head) + len(tail)} items, got {len(real)}"
            pairs = list(zip(head, real[: len(head)], strict=True))
            pairs += list(zip(tail, real[len(real) - len(tail) :], strict=True))
            offsets = list(range(len(head))) + list(range(len(real) - len(tail), len(real)))
        else:
            if len(doc) != len(real):
                return f"{where}: documented {len(doc)} items, got {len(real)}: {real!r}"
            pairs, offsets = list(zip(doc, real, strict=True)), list(range(len(doc)))
        for (value, got), offset in zip(pairs, offsets, strict=True):
            problem = _mismatch(value, got, f"{where}[{offset}]", ids)
            if problem:
                return problem
        return None
    if isinstance(doc, float) or isinstance(real, float):
        same = isinstance(real, int | float) and not isinstance(real, bool) and math.isclose(doc, real, rel_tol=1e-6)
        return None if same else f"{where}: documented {doc!r}, got {real!r}"
    return None if doc == real else f"{where}: documented {doc!r}, got {real!r}"


class PageSession:
    """The JSON examples of one page, sent in order in the page's own workspace."""

    def __init__(self, server: Server, key: str) -> None:
        self.server = server
        self.key = key
        self.ids: dict[str, str] = {}
        self.documented: dict[str, str] = {}
        """The real id of each id an answer block showed."""
        self.evaluations: list[str] = []
        self.pending: tuple[Block, httpx.Response] | None = None

    def path(self, template: str, block: Block) -> str:
        names = dict(self.ids)
        if len(self.evaluations) >= 2:
            names.update(base=self.evaluations[-2], candidate=self.evaluations[-1])

        def fill(found: re.Match[str]) -> str:
            assert found[1] in names, f"{block.where}: nothing on the page so far gives {{{found[1]}}}"
            return names[found[1]]

        return re.sub(r"\{(\w+)\}", fill, template)

    def remember(self, answer: httpx.Response) -> None:
        if not answer.is_success or not answer.content:
            return
        body = answer.json()
        if not isinstance(body, dict) or "id" not in body:
            return
        if "nodes" in body:
            self.ids["workflow_id"] = body["id"]
        elif "state" in body:
            self.ids["run_id"] = body["id"]
        elif "check_pass_rate" in body:
            self.ids["evaluation_id"] = body["id"]
            self.evaluations.append(body["id"])

    def send(self, block: Block, role: str, found: re.Match[str]) -> None:
        if role == "request":
            self.settle()
            with self.server.api(self.key) as api:
                answer = api.request(
                    found["method"], self.path(found["path"], block),
                    content=block.text.encode(), headers={"Content-Type": "application/json"},
                )
            self.remember(answer)
            self.pending = (block, answer)
        elif role == "answer" and found["method"] is None:
            assert self.pending is not None, f"{block.where}: an answer with no request block before it"
            request, answer = self.pending
            self.pending = None
            self.check(block, found, answer, request)
        elif role == "answer":
            self.settle()
            with self.server.api(None if found["nokey"] else self.key) as api:
                answer = api.request(found["method"], self.path(found["path"], block))
            self.remember(answer)
            self.check(block, found, answer, block)
        else:
            self.settle()
            self.stream(block, found)

    def settle(self) -> None:
        """A request block without an answer block must still have been accepted."""
        if self.pending is not None:
            request, answer = self.pending
            self.pending = None
            assert answer.is_success, f"{request.where}: answered {answer.status_code}: {answer.text}"

    def check(self, block: Block, found: re.Match[str], answer: httpx.Response, request: Block) -> None:
        status = int(found["status"])
        assert answer.status_code == status, (
            f"{block.where}: documented {status}, {request.where} got {answer.status_code}: {answer.text}"
        )
        documented = json.loads(block.text)
        real = answer.json() if answer.content else None
        problem = _mismatch(documented, real, ids=self.documented)
        assert problem is None, f"{block.where}: {problem}\nthe server answered: {json.dumps(real, indent=1)}"

    def stream(self, block: Block, found: re.Match[str]) -> None:
        """The stream of the run the documented events name (by the id an earlier answer
        block showed for it), else of the last run."""
        documented = json.loads(block.text)
        shown = documented[0].get("run_id") if documented and isinstance(documented[0], dict) else None
        path = found["path"]
        if shown in self.documented:
            path = path.replace("{run_id}", self.documented[shown])
        url = self.server.url.replace("http://", "ws://") + self.path(path, block)
        with connect(url, additional_headers={"Authorization": f"Bearer {self.key}"}, open_timeout=30) as ws:
            events = [json.loads(message) for message in ws]
        problem = _mismatch(documented, events)
        assert problem is None, f"{block.where}: {problem}\nthe stream sent: {json.dumps(events, indent=1)}"


# The tests


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_agentos_docs__every_json_example_is_answered_as_the_page_shows(server: Server, page: Path) -> None:
    blocks = [b for b in fenced_blocks(page) if b.lang == "json"]
    creates_seed = any(
        _role(b)[0] == "request" and b.info.find('"POST /api/workflows"') >= 0 and SEED_NAME in b.text for b in blocks
    )
    session = PageSession(server, _workspace_with_seed(server, page.stem, seed=not creates_seed))
    for block in blocks:
        role, found = _role(block)
        assert found is not None, (
            f"{block.where}: a json block needs a title saying what it is: \"POST /path\", \"→ 201 ...\", "
            "\"GET /path → 200 ...\" or \"WS /path\" (see this test's docstring)"
        )
        session.send(block, role, found)
    session.settle()


def test_agentos_docs__every_json_example_has_a_role_and_parses(server: Server) -> None:
    """Guards the test above: no JSON block is skipped for want of a title, and each parses
    (as Python's json does, which reads NaN: the unstorable-value example sends one)."""
    blocks = all_blocks("json", under="agentos")
    assert blocks, "the AgentOS pages show no JSON examples"
    for block in blocks:
        assert _role(block)[0] != "unknown", f"{block.where}: {block.info!r} names no role"
        json.loads(block.text)


def _script_env(server: Server, key: str) -> dict[str, str]:
    return {**server.env(), "AGENTOS_BASE_URL": server.url, "AGENTOS_API_KEY": key}


def _fill(text: str, server: Server, key: str) -> str:
    return text.replace("http://localhost:8000", server.url).replace("aos_live_…", key).replace("aos_live_...", key)


@pytest.mark.parametrize("block", all_blocks("python", under="agentos"), ids=lambda block: block.where)
def test_agentos_docs__every_python_example_runs_against_a_real_server(
    server: Server, block: Block, tmp_path: Path
) -> None:
    key = _workspace_with_seed(server, "py")
    script = tmp_path / "example.py"
    script.write_text(_fill(block.text, server, key), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=_script_env(server, key),
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", all_blocks("js", under="agentos"), ids=lambda block: block.where)
def test_agentos_docs__every_js_example_runs_against_a_real_server(server: Server, block: Block) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to run the JavaScript examples: install Node.js 20 or newer")
    if not (JS_PACKAGE / "node_modules" / "ws").is_dir():
        pytest.fail("the JavaScript SDK's dependencies are not installed: run `npm ci` in sdk/js "
                    "(python3 dev.py test does)")
    key = _workspace_with_seed(server, "js")
    # Inside the package (in its git-ignored .snippets/), so "@agentos/sdk" resolves to it.
    folder = JS_PACKAGE / ".snippets" / f"docs-{os.getpid()}-{next(_workspaces)}"
    folder.mkdir(parents=True)
    try:
        script = folder / "example.mjs"
        script.write_text(_fill(block.text, server, key), encoding="utf-8")
        done = subprocess.run(
            [node, str(script)], cwd=folder, env=_script_env(server, key), capture_output=True, text=True, timeout=120
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


class _Registry(BaseHTTPRequestHandler):
    """An npm registry on loopback serving only the packages sdk/js's lock installs, packed from
    its node_modules (`npm ci` there put them in), so installing it sends nothing to npmjs.org."""

    packuments: dict[str, bytes] = {}
    tarballs: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        path = unquote(self.path.split("?", 1)[0])
        body = self.packuments.get(path.strip("/")) or self.tarballs.get(path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json" if path.strip("/") in self.packuments
                         else "application/octet-stream")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def npm_registry(tmp_path: Path) -> Iterator[str]:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to install the JavaScript SDK as the docs say: install Node.js 20 or newer")
    lock = json.loads((JS_PACKAGE / "package-lock.json").read_text())
    names = [key.removeprefix("node_modules/") for key in lock["packages"] if key.startswith("node_modules/")]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    packs = tmp_path / "packs"
    packs.mkdir()
    for name in names:
        folder = JS_PACKAGE / "node_modules" / name
        if not folder.is_dir():
            pytest.fail(f"the JavaScript SDK's dependencies are not installed: run `npm ci` in sdk/js "
                        f"(python3 dev.py test does); no {folder}")
        manifest = json.loads((folder / "package.json").read_text())
        packed = subprocess.run([npm, "pack", str(folder), "--pack-destination", str(packs), "--json"],
                                capture_output=True, text=True, timeout=120, check=True)
        tarball = (packs / json.loads(packed.stdout)[0]["filename"]).read_bytes()
        path = f"/{name}/-/{name.rsplit('/', 1)[-1]}-{manifest['version']}.tgz"
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
        version = {key: manifest[key] for key in ("name", "version", "dependencies", "peerDependencies",
                                                   "peerDependenciesMeta", "engines") if key in manifest}
        version["dist"] = {"tarball": url + path, "integrity": integrity}
        _Registry.tarballs[path] = tarball
        _Registry.packuments[name] = json.dumps({"name": name, "dist-tags": {"latest": manifest["version"]},
                                                 "versions": {manifest["version"]: version}}).encode()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url + "/"
    finally:
        server.shutdown()
        server.server_close()


def test_agentos_docs__the_documented_npm_install_gives_a_client_that_streams(
    server: Server, npm_registry: str, tmp_path: Path
) -> None:
    """sdks.md's `npm install` line, run in a new project, installs the SDK with `ws`: the
    page's streaming example then runs there (not inside sdk/js, whose own node_modules a
    linked install would borrow)."""
    page = fenced_blocks(DOCS / "agentos" / "sdks.md")
    command = next(shlex.split(line) for b in page if b.lang == "sh" for line in b.text.splitlines()
                   if line.startswith("npm install"))
    command = [str(JS_PACKAGE) if word.endswith("/sdk/js") else word for word in command]
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "docs-install", "private": True}))
    env = {**os.environ, "npm_config_registry": npm_registry, "npm_config_cache": str(tmp_path / "npm-cache"),
           "npm_config_audit": "false", "npm_config_fund": "false", "npm_config_update_notifier": "false"}
    installed = subprocess.run([shutil.which("npm") or "npm", *command[1:]], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300, check=False)
    assert installed.returncode == 0, f"`{shlex.join(command)}`:\n{installed.stdout}\n{installed.stderr}"
    sdk = project / "node_modules" / "@agentos" / "sdk"
    assert sdk.is_dir() and not sdk.is_symlink(), "the SDK is installed as a copy, not a link to sdk/js"
    assert (project / "node_modules" / "ws" / "package.json").is_file(), "ws is installed with it"

    streaming = next(b for b in page if b.lang == "js" and "client.stream(" in b.text)
    key = _workspace_with_seed(server, "npm")
    script = project / "example.mjs"
    script.write_text(_fill(streaming.text, server, key), encoding="utf-8")
    done = subprocess.run([shutil.which("node") or "node", str(script)], cwd=project, env=_script_env(server, key),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{streaming.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert "run_started" in done.stdout and "run_evaluated" in done.stdout, done.stdout


def _agentos_command_lines(block: Block) -> Iterator[list[str]]:
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            words.pop(0)  # VAR=value before the command
        if words and words[0] == "agentos":
            cut = next((i for i, w in enumerate(words) if w in ("|", "&&", ";", ">", "2>")), len(words))
            yield words[1:cut]


def _parse(group: click.Group, args: list[str]) -> None:
    """Parse `args` as the CLI would, down to the command, without running it."""
    command: click.Command = group
    name = "agentos"
    parent = None
    while True:
        context = command.make_context(name, list(args), parent=parent)
        if not isinstance(command, click.Group):
            return
        rest = [*context.protected_args, *context.args]
        assert rest, f"`agentos {' '.join(args)}` names no command"
        name, args = rest[0], rest[1:]
        found = command.get_command(context, name)
        assert found is not None, f"agentos has no command {name!r}"
        command, parent = found, context


def test_agentos_docs__every_agentos_command_line_parses() -> None:
    from agentos.cli import main

    lines = [(block, args) for block in all_blocks("sh", under="agentos") for args in _agentos_command_lines(block)]
    assert lines, "the AgentOS pages show no agentos command"
    for block, args in lines:
        try:
            _parse(main, args)
        except click.UsageError as error:
            pytest.fail(f"{block.where}: `agentos {' '.join(args)}`: {error.format_message()}")


def test_agentos_docs__serve_keeps_its_database_in_agentos_home(server: Server) -> None:
    """The overview says `agentos serve` prints where its database is, $AGENTOS_HOME/agentos.db."""
    database = server.home / "agentos.db"
    deadline = time.monotonic() + 10
    while f"agentos: database {database}" not in server.output.read_text():
        assert time.monotonic() < deadline, server.output.read_text()
        time.sleep(0.05)
    assert database.is_file()


def test_agentos_docs__the_pages_link_only_inside_the_site() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)", text):
            assert not re.match(r"[a-z]+:", target), f"{page.name}: links outside the site: {target}"
            assert "../" not in target.split("#")[0].removeprefix("../"), f"{page.name}: {target}"
