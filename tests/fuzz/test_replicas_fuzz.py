"""The standing fuzzer: every implemented operation of all five replicas, with inputs drawn
from the vendor's own (packaged) schemas and hostile strings, over real HTTP.

For each operation the coverage ledger marks implemented or partial, Hypothesis draws path
parameters (values the seeded world holds, or hostile ones), query parameters and a body
from the vendor's description of that operation, with hostile strings at the leaves (lone
surrogates, NUL, a megabyte, right-to-left and combining marks), and now and then a raw
hostile body (10,000-deep nesting, NaN, bytes that are not UTF-8). Every answer must be
below 500 (a 501 is the documented coverage-gap answer). After each operation's cases the
world must still read: ``/state``, ``/trace`` and a list call of the tool answer 2xx.

The budget is fixed (``ANCHA_FUZZ_EXAMPLES`` cases per operation, 6 by default) and the
seed too (``derandomize``), so a CI run is repeatable and stays within the suite's time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.scene.loading import load_scene
from ancha.world.kernel import vendor_data
from ancha.world.registry import catalog
from ancha.world.tools.datadog.coverage_ledger import LEDGER as DATADOG_LEDGER
from ancha.world.tools.github.coverage_ledger import LEDGER as GITHUB_LEDGER
from ancha.world.tools.okta.coverage_ledger import LEDGER as OKTA_LEDGER
from ancha.world.tools.pagerduty.coverage_ledger import LEDGER as PAGERDUTY_LEDGER
from ancha.world.tools.slack.coverage_ledger import LEDGER as SLACK_LEDGER

EXAMPLES = int(os.environ.get("ANCHA_FUZZ_EXAMPLES", "6"))
"""Cases per operation."""
EXAMPLES_ROOT = Path(__file__).resolve().parents[2] / "examples" / "scenes"
SCENE_OF = {"slack": "orders-latency", "github": "orders-latency", "datadog": "orders-latency",
            "pagerduty": "orders-latency", "okta": "offboarding"}
"""A bundled example scene whose world seeds each tool (ids to aim the path parameters at)."""
MAX_DEPTH = 4
"""How deep a generated body follows the vendor's schema."""

HOSTILE_TEXT = ["\ud800", "a\udfffb", "\x00", "nul\x00inside", "x" * 1_000_000, "\u202eevil\u202c",
                "e\u0301\u0301\u0301", "\U0001f600" * 50, "../../etc/passwd", "%ED%A0%80", "%00", "'\"<>;--",
                "((((((((((", "\\", " ", ""]
HOSTILE_BODIES = [b"[" * 10_000 + b"]" * 10_000, b'{"a": NaN, "b": Infinity}', b"\xff\xfe\xfd",
                  b'{"text": "\\ud800"}', b"{" * 5_000, b'"' + b"x" * 2_000_000 + b'"', b"null", b"[]"]

HOSTILE = st.sampled_from(HOSTILE_TEXT)
hostile_in_url = st.sampled_from([t for t in HOSTILE_TEXT if len(t) < 10_000] + ["x" * 8_000])
"""A URL holds at most a few tens of KB (the client refuses more): no megabyte there."""
plain_text = st.text(max_size=40)


# --- the operations ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operation:
    tool: str
    method: str
    template: str
    """``/repos/{owner}/{repo}`` (REST) or the Web API method name (Slack)."""
    spec: dict[str, Any] | None
    """The vendor's description of this operation (structure only), if it has one."""
    document: dict[str, Any]
    """The description the operation comes from (its ``$ref`` targets)."""

    def __str__(self) -> str:
        return f"{self.tool} {self.method} {self.template}"


def _served(ledger: dict[str, tuple[str, str]]) -> list[str]:
    return [key for key, (status, _) in ledger.items() if status != "not_implemented"]


@cache
def operations() -> list[Operation]:
    found: list[Operation] = []
    slack = vendor_data.read("slack", "web_api")["openapi"]
    for name in _served(SLACK_LEDGER):
        item = slack["paths"].get(f"/{name}", {})
        verb = "get" if "get" in item and "post" not in item else "post"
        found.append(Operation("slack", verb.upper(), name, item.get(verb), slack))
    rest = {"github": (GITHUB_LEDGER, [vendor_data.read("github", "rest")["openapi"]]),
            "datadog": (DATADOG_LEDGER, [vendor_data.read("datadog", "rest")[v] for v in ("v1", "v2")]),
            "pagerduty": (PAGERDUTY_LEDGER, [vendor_data.read("pagerduty", "rest")["openapi"]]),
            "okta": (OKTA_LEDGER, [vendor_data.read("okta", "rest")["openapi"]])}
    for tool, (ledger, documents) in rest.items():
        for key in _served(ledger):
            method, template = key.split(" ", 1)
            if tool == "pagerduty" and template.startswith("/v2/"):
                continue  # the Events API lives on its own host: tests/world/tools/pagerduty cover it
            spec, document = None, documents[0]
            for candidate in documents:
                operation = candidate["paths"].get(template, {}).get(method.lower())
                if operation is not None:
                    spec, document = operation, candidate
                    break
            found.append(Operation(tool, method, template, spec, document))
    return found


# --- values from the vendor's schemas ------------------------------------------------------------


def _resolve(document: dict[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 20:
        target: Any = document
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        node, seen = target, seen + 1
    return node


def values(document: dict[str, Any], schema: Any, depth: int = 0, url: bool = False) -> st.SearchStrategy[Any]:
    """Values fitting ``schema`` (loosely: the point is to reach the handler), with hostile leaves
    (``url``: ones a URL can carry)."""
    hostile_text = hostile_in_url if url else HOSTILE
    schema = _resolve(document, schema)
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return st.one_of(st.none(), plain_text, hostile_text)
    for combinator in ("oneOf", "anyOf"):
        if schema.get(combinator):
            return st.one_of(*(values(document, option, depth + 1, url) for option in schema[combinator][:4]))
    if schema.get("allOf"):
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            part = _resolve(document, part)
            if isinstance(part, dict):
                merged["properties"].update(part.get("properties", {}))
                merged["required"] += part.get("required", [])
        return values(document, merged, depth + 1, url)
    if "enum" in schema and schema["enum"]:
        return st.one_of(st.sampled_from(schema["enum"]), hostile_text)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = [name for name in schema.get("required", []) if name in properties]
        optional = [name for name in properties if name not in required][:12]
        return st.fixed_dictionaries(
            {name: values(document, properties[name], depth + 1, url) for name in required},
            optional={name: values(document, properties[name], depth + 1, url) for name in optional})
    if kind == "array":
        return st.lists(values(document, schema.get("items", {}), depth + 1, url), max_size=3)
    if kind == "integer":
        return st.one_of(st.integers(-5, 1000), st.sampled_from([2**63, -(2**63) - 1, 10**30]), hostile_text)
    if kind == "number":
        return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.just(1e308), hostile_text)
    if kind == "boolean":
        return st.one_of(st.booleans(), hostile_text)
    return st.one_of(plain_text, hostile_text)


# --- requests --------------------------------------------------------------------------------------


@dataclass(slots=True)
class World:
    env_id: str
    context: dict[str, Any]
    server: httpx.Client
    client: httpx.Client
    pool: list[str]
    """Values the seeded world holds (ids, names, logins), to aim path parameters at."""
    traced: int = 0
    """Trace entries already read back: each operation reads only its own (``?after=``), so
    the check does not grow with every operation before it."""


def auth_headers(tool: str, credentials: dict[str, Any]) -> dict[str, str]:
    token = credentials.get("token", "")
    return {
        "slack": {"authorization": f"Bearer {token}"},
        "github": {"authorization": f"token {token}", "accept": "application/vnd.github+json"},
        "datadog": {"dd-api-key": credentials.get("api_key", ""), "dd-application-key": credentials.get("app_key", "")},
        "pagerduty": {"authorization": f"Token token={token}", "accept": "application/vnd.pagerduty+json;version=2",
                      "from": credentials.get("from_email", "")},
        "okta": {"authorization": f"SSWS {token}", "accept": "application/json"},
    }[tool]


def _pool(state: Any) -> list[str]:
    found: set[str] = set()

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node[:50]:
                walk(v, key)
        elif isinstance(node, str | int) and not isinstance(node, bool) and len(str(node)) <= 80 and \
                re.search(r"(^|_)(id|name|login|number|key|slug|email|ts|sha|ref|handle)$", key):
            found.add(str(node))

    walk(state)
    return sorted(found)


@pytest.fixture(scope="module")
def worlds(ancha_server: str) -> Iterator[dict[str, World]]:
    server = httpx.Client(base_url=ancha_server, timeout=60)
    made: dict[str, World] = {}
    clients: list[httpx.Client] = []
    for tool, scene_name in SCENE_OF.items():
        scene = load_scene(EXAMPLES_ROOT / scene_name / "scene.yaml", catalog())
        answer = server.post("/envs", json={"scene": scene.model_dump(mode="json", by_alias=True), "trial": 1})
        assert answer.status_code == 201, answer.text
        context = answer.json()
        credentials = context["tools"][tool]
        client = httpx.Client(base_url=credentials["url"], headers=auth_headers(tool, credentials), timeout=60)
        clients.append(client)
        state = server.get(f"/envs/{context['env_id']}/state").json()
        made[tool] = World(context["env_id"], context, server, client, _pool(state))
    yield made
    for world in made.values():
        server.delete(f"/envs/{world.env_id}")
    for client in clients:
        client.close()
    server.close()


@st.composite
def requests(draw: st.DrawFn, operation: Operation, pool: list[str]) -> tuple[str, str, dict[str, str], bytes]:
    """One request for ``operation``: (path, query, headers, body)."""
    spec = operation.spec or {}
    document = operation.document
    parameters = [_resolve(document, p) for p in spec.get("parameters", [])]
    aimed = st.sampled_from(pool) if pool else plain_text
    if operation.tool == "slack":
        path = f"/api/{operation.template}"
        fields = {p["name"]: draw(st.one_of(aimed, values(document, p.get("schema", p)), HOSTILE))
                  for p in parameters if p.get("in") in ("query", "formData") and p.get("name") != "token"
                  and (p.get("required") or draw(st.booleans()))}
        if draw(st.integers(0, 9)) == 0:
            return path, "", {"content-type": "application/json"}, draw(st.sampled_from(HOSTILE_BODIES))
        if draw(st.booleans()):
            return path, "", {"content-type": "application/json; charset=utf-8"}, _json(fields)
        return path, "", {"content-type": "application/x-www-form-urlencoded"}, _form(fields).encode()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        spec_of: dict[str, Any] = next((p for p in parameters if p.get("in") == "path" and p.get("name") == name), {})
        value = draw(st.one_of(aimed, aimed, values(document, spec_of.get("schema", {}), url=True), hostile_in_url))
        return quote(str(value).encode("utf-8", "surrogatepass"), safe="")

    path = re.sub(r"\{([^}]+)\}", fill, operation.template)
    query = {p["name"]: draw(values(document, p.get("schema", {}), url=True)) for p in parameters
             if p.get("in") == "query" and (p.get("required") or draw(st.integers(0, 3)) == 0)}
    body = b""
    headers: dict[str, str] = {}
    if operation.method in ("POST", "PUT", "PATCH"):
        headers["content-type"] = "application/json"
        choice = draw(st.integers(0, 9))
        if choice == 0:
            body = draw(st.sampled_from(HOSTILE_BODIES))
        else:
            content = _resolve(document, spec.get("requestBody", {})).get("content", {})
            schema = next((c.get("schema") for t, c in content.items() if "json" in t), None)
            body = _json(draw(values(document, schema))) if schema is not None else b"{}"
    return path, _form(query), headers, body


def _json(value: Any) -> bytes:
    """JSON as a client sends it: non-ASCII escaped, so a lone surrogate is the escape ``"\\ud800"``."""
    return json.dumps(value).encode()


def _form(fields: dict[str, Any]) -> str:
    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return urlencode({k: text(v).encode("utf-8", "surrogatepass") for k, v in fields.items()})


def _readable(world: World, operation: Operation) -> None:
    for what in ("state", f"trace?after={world.traced}"):
        answer = world.server.get(f"/envs/{world.env_id}/{what}")
        if answer.status_code != 200:
            pytest.fail(f"after {operation}: /{what} answered {answer.status_code}: {answer.text[:300]}", pytrace=False)
        if what == "state":
            json.loads(answer.text, parse_constant=_refuse)
        else:
            lines = answer.text.splitlines()
            if lines:
                world.traced = json.loads(lines[-1])["seq"]
    listing = {"slack": ("POST", "/api/conversations.list"), "github": ("GET", "/repos/acme/orders/issues"),
               "datadog": ("GET", "/api/v1/monitor"), "pagerduty": ("GET", "/incidents"),
               "okta": ("GET", "/api/v1/users")}[operation.tool]
    answer = world.client.request(*listing)
    if answer.status_code >= 300:
        pytest.fail(f"after {operation}: {listing} answered {answer.status_code}: {answer.text[:300]}", pytrace=False)


def _refuse(constant: str) -> Any:
    raise AssertionError(f"/state holds {constant}, which is not JSON")


# --- the property ------------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", operations(), ids=str)
def test_fuzz__no_operation_answers_5xx_and_the_world_stays_readable(operation: Operation,
                                                                     worlds: dict[str, World]) -> None:
    world = worlds[operation.tool]

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(request=requests(operation, world.pool))
    def one(request: tuple[str, str, dict[str, str], bytes]) -> None:
        path, query, headers, body = request
        url = path + (f"?{query}" if query else "")
        answer = world.client.request(operation.method, url, headers=headers, content=body)
        if answer.status_code >= 500 and answer.status_code != 501:
            # Reported without a traceback: pytest's source formatting can trip over a world
            # left near the recursion limit, and the request says all there is to say.
            pytest.fail(f"{operation}: {operation.method} {url[:200]} with {body[:200]!r} answered "
                        f"{answer.status_code}: {answer.text[:300]}", pytrace=False)

    one()
    _readable(world, operation)


def test_fuzz__covers_every_implemented_operation_of_every_tool() -> None:
    counts = {tool: sum(1 for o in operations() if o.tool == tool) for tool in SCENE_OF}
    assert all(counts.values()), counts
    with_spec = sum(1 for o in operations() if o.spec is not None)
    assert with_spec / len(operations()) > 0.8, "most operations draw their inputs from the vendor's schema"
