"""What is generated from which vendor description, under which licence.

One ``Product`` per generated file: the tool folder it goes into, its name, the vendor
files it is built from (with where they came from and their licence, copied into the
file's header) and how it is built. The sources are those of the vendor folder's README.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ancha.vendor.structure import shape, structure

KEPT = ("structure only: operations, parameters, types, fields, required, enums, formats, "
        "defaults and documentation URLs; every description, summary, title and example left out")


class VendorFolderError(Exception):
    """The vendor descriptions are not where regeneration was told to read them."""


@dataclass(frozen=True, slots=True)
class Source:
    """One vendor file: ``path`` inside the vendor folder, where it was published, its licence."""

    path: str
    origin: str
    licence: str


class Inputs:
    """Reads the vendor folder (``slack/endpoints.txt``, ...), with errors that say what is missing."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def file(self, path: str) -> Path:
        found = self.folder / path
        if not found.is_file():
            raise VendorFolderError(f"{found} is missing: point --from at the vendors' descriptions "
                                    "(the folder holding slack/, github/, datadog/, pagerduty/, okta/)")
        return found

    def text(self, path: str) -> str:
        return self.file(path).read_text(encoding="utf-8")

    def json(self, path: str) -> Any:
        return json.loads(self.text(path))

    def yaml(self, path: str) -> Any:
        import yaml  # a regeneration-only dependency (the dev extras); the C loader takes 3 s, not 30

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with self.file(path).open("rb") as handle:
            return yaml.load(handle, Loader=loader)  # noqa: S506  (a safe loader)

    def lines(self, path: str) -> list[str]:
        return [line.strip() for line in self.text(path).splitlines() if line.strip()]

    def samples(self, folder: str) -> dict[str, Any]:
        found = self.folder / folder
        if not found.is_dir():
            raise VendorFolderError(f"{found} is missing: point --from at the vendors' descriptions")
        return {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(found.glob("*.json"))}


@dataclass(frozen=True, slots=True)
class Product:
    """A generated file: ``src/ancha/world/tools/<tool>/vendor/<name>.json.gz``."""

    tool: str
    name: str
    sources: tuple[Source, ...]
    build: Callable[[Inputs], dict[str, Any]]

    @property
    def file_name(self) -> str:
        return f"{self.name}.json.gz"

    def header(self) -> dict[str, Any]:
        return {"generated_by": "python -m ancha.vendor regenerate", "kept": KEPT,
                "sources": [{"file": s.path, "from": s.origin, "licence": s.licence} for s in self.sources]}


# --- the sources (the vendor folder's README) ------------------------------------------------

SLACK_SPECS = "slackapi/slack-api-specs @ bc08db49625630e3585bf2f1322128ea04f2a7f3"
SLACK_SDK = "slackapi/java-slack-sdk @ 86ff7ca9915e21882def04c2d579ac02503f95fe"
PAGERDUTY_SCHEMA = "PagerDuty/api-schema @ 91a06fb3c64b0ab2b2bd6c485d12b327dfb55c18"
PAGERDUTY_LICENCE = ("none stated (the repository has no licence file): only this structure is kept, "
                     "none of the vendor's text")
DATADOG = "DataDog/datadog-api-client-python"

SLACK_WEB_API = Source("slack/slack_web_openapi_v2.json", f"{SLACK_SPECS}: web-api/slack_web_openapi_v2.json",
                       "MIT (c) 2017 SlackAPI")
SLACK_METHODS = Source("slack/endpoints.txt", "derived from slack/slack_web_openapi_v2.json", "MIT (c) 2017 SlackAPI")
SLACK_WRAPPER = Source("slack/slack_common_event_wrapper_schema.json",
                       f"{SLACK_SPECS}: events-api/slack_common_event_wrapper_schema.json", "MIT (c) 2017 SlackAPI")
SLACK_EVENTS = Source("slack/events.txt", "derived from slack/slack_events_api_async_v1.json and the samples",
                      "MIT")
SLACK_SAMPLES = Source("slack/events-api-samples/*.json", f"{SLACK_SDK}: json-logs/samples/events/*.json "
                       "(only each sample's fields and their JSON types are kept, no values)",
                       "MIT (c) Slack Technologies, LLC")
SLACK_TIERS = Source("slack/web_api_rate_limit_tiers.json", f"{SLACK_SDK}: metadata/web-api/rate_limit_tiers.json",
                     "MIT (c) Slack Technologies, LLC")

GITHUB_REST = Source("github/api.github.com.json",
                     "npm @octokit/openapi@23.0.2: generated/api.github.com.json (github/rest-api-description)",
                     "MIT")
GITHUB_ENDPOINTS = Source("github/endpoints.txt", "derived from github/api.github.com.json", "MIT")
GITHUB_WEBHOOKS = Source("github/webhooks-schema.json", "npm @octokit/webhooks-schemas@7.6.1: schema.json "
                         "(octokit/webhooks payload-schemas/api.github.com)", "MIT")
GITHUB_WEBHOOK_EVENTS = Source("github/webhook_events.txt", "derived from github/api.github.com.json x-webhooks",
                               "MIT")
GITHUB_GRAPHQL = Source("github/schema.graphql",
                        "octokit/graphql-schema @ 82ff2d4780080e6929ebb95608cefa22dfa05ac7: schema.graphql",
                        "MIT (c) GitHub 2025")
GITHUB_ROOT_FIELDS = Source("github/graphql_root_fields.txt", "derived from github/schema.graphql",
                            "MIT (c) GitHub 2025")

DATADOG_V1 = Source("datadog/openapi-v1.yaml", f"{DATADOG} @ 6d8f356e4a3fdf83307c9db00e7a081d56a47ea5: "
                    ".generator/schemas/v1/openapi.yaml", "Apache-2.0")
DATADOG_V2 = Source("datadog/openapi-v2.yaml", f"{DATADOG} @ 9a09c580b3a02f15baff495191e8be309cd63642: "
                    ".generator/schemas/v2/openapi.yaml", "Apache-2.0")
DATADOG_ENDPOINTS = Source("datadog/endpoints.txt", "derived from datadog/openapi-v1.yaml and openapi-v2.yaml",
                           "Apache-2.0")

PAGERDUTY_REST = Source("pagerduty/rest-openapiv3.json", f"{PAGERDUTY_SCHEMA}: reference/REST/openapiv3.json",
                        PAGERDUTY_LICENCE)
PAGERDUTY_EVENTS = Source("pagerduty/events-v2-openapiv3.json",
                          f"{PAGERDUTY_SCHEMA}: reference/events-v2/openapiv3.json", PAGERDUTY_LICENCE)
PAGERDUTY_ENDPOINTS = Source("pagerduty/endpoints.txt", "derived from the two PagerDuty descriptions",
                             PAGERDUTY_LICENCE)
PAGERDUTY_WEBHOOK_TYPES = Source("pagerduty/webhook_v3_event_types.txt",
                                 "derived from PagerDuty/developer-docs @ 94224391aa3eac8fa73ea6a6af542dee0613d3e8: "
                                 "docs/webhooks/01-Overview.md (the event type names)", PAGERDUTY_LICENCE)

OKTA_MANAGEMENT = Source("okta/management-minimal.yaml", "okta/okta-management-openapi-spec @ "
                         "fdda229e82940cf5af4611ad673ca6a27974e31b: dist/current/management-minimal.yaml",
                         "Apache-2.0 (the description's info.license)")
OKTA_ENDPOINTS = Source("okta/endpoints.txt", "derived from okta/management-minimal.yaml", "Apache-2.0")


# --- how each is built ---------------------------------------------------------------------------


def _slack_web_api(read: Inputs) -> dict[str, Any]:
    return {"methods": read.lines(SLACK_METHODS.path), "openapi": structure(read.json(SLACK_WEB_API.path))}


def _slack_events(read: Inputs) -> dict[str, Any]:
    samples = read.samples("slack/events-api-samples")
    return {"event_types": read.lines(SLACK_EVENTS.path), "wrapper": structure(read.json(SLACK_WRAPPER.path)),
            "payload_shapes": {name: shape(sample) for name, sample in samples.items()}}


def _slack_rate_tiers(read: Inputs) -> dict[str, Any]:
    tiers: dict[str, str] = read.json(SLACK_TIERS.path)
    return {"tiers": dict(sorted(tiers.items()))}


def _github_rest(read: Inputs) -> dict[str, Any]:
    spec = read.json(GITHUB_REST.path)
    spec.pop("x-webhooks", None)  # GitHub's webhook payloads are webhooks.json.gz's, from octokit's bundle
    return {"endpoints": read.lines(GITHUB_ENDPOINTS.path), "openapi": structure(spec)}


def _github_webhooks(read: Inputs) -> dict[str, Any]:
    return {"events": read.lines(GITHUB_WEBHOOK_EVENTS.path), "schema": structure(read.json(GITHUB_WEBHOOKS.path))}


def _github_graphql(read: Inputs) -> dict[str, Any]:
    from graphql import build_ast_schema, parse

    from ancha.world.tools.github.graphql.compact import encode

    built = build_ast_schema(parse(read.text(GITHUB_GRAPHQL.path), no_location=True), assume_valid_sdl=True)
    return {"root_fields": read.lines(GITHUB_ROOT_FIELDS.path), "schema": encode(built)}


def _datadog_rest(read: Inputs) -> dict[str, Any]:
    return {"endpoints": read.lines(DATADOG_ENDPOINTS.path), "v1": structure(read.yaml(DATADOG_V1.path)),
            "v2": structure(read.yaml(DATADOG_V2.path))}


def _pagerduty_rest(read: Inputs) -> dict[str, Any]:
    return {"endpoints": read.lines(PAGERDUTY_ENDPOINTS.path), "openapi": structure(read.json(PAGERDUTY_REST.path)),
            "events_v2": structure(read.json(PAGERDUTY_EVENTS.path)),
            "webhook_v3_event_types": read.lines(PAGERDUTY_WEBHOOK_TYPES.path)}


def _okta_rest(read: Inputs) -> dict[str, Any]:
    return {"endpoints": read.lines(OKTA_ENDPOINTS.path), "openapi": structure(read.yaml(OKTA_MANAGEMENT.path))}


PRODUCTS: tuple[Product, ...] = (
    Product("slack", "web_api", (SLACK_WEB_API, SLACK_METHODS), _slack_web_api),
    Product("slack", "events", (SLACK_WRAPPER, SLACK_EVENTS, SLACK_SAMPLES), _slack_events),
    Product("slack", "rate_tiers", (SLACK_TIERS,), _slack_rate_tiers),
    Product("github", "rest", (GITHUB_REST, GITHUB_ENDPOINTS), _github_rest),
    Product("github", "webhooks", (GITHUB_WEBHOOKS, GITHUB_WEBHOOK_EVENTS), _github_webhooks),
    Product("github", "graphql", (GITHUB_GRAPHQL, GITHUB_ROOT_FIELDS), _github_graphql),
    Product("datadog", "rest", (DATADOG_V1, DATADOG_V2, DATADOG_ENDPOINTS), _datadog_rest),
    Product("pagerduty", "rest", (PAGERDUTY_REST, PAGERDUTY_EVENTS, PAGERDUTY_ENDPOINTS, PAGERDUTY_WEBHOOK_TYPES),
            _pagerduty_rest),
    Product("okta", "rest", (OKTA_MANAGEMENT, OKTA_ENDPOINTS), _okta_rest),
)
