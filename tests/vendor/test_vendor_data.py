"""The vendor data Ancha ships: structure only, with its sources named, loaded from the package,
and regenerated (or checked) by ``python -m ancha.vendor regenerate``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from graphql import build_schema, lexicographic_sort_schema, parse, print_schema, validate

from ancha.vendor.__main__ import main
from ancha.vendor.products import PRODUCTS, Inputs, Product, Source
from ancha.vendor.regenerate import data_files, target
from ancha.vendor.structure import shape, structure
from ancha.world.kernel import vendor_data
from ancha.world.tools.github.graphql.compact import decode, encode
from ancha.world.tools.github.graphql.schema import schema

PROSE = {"description", "summary", "example", "examples", "title"}


# --- what is kept ---------------------------------------------------------------------------------


def test_structure__drops_prose_keywords_but_keeps_fields_named_like_them():
    spec = {"openapi": "3.0.3", "info": {"title": "API", "version": "1", "description": "prose"},
            "x-logo": {"url": "x"},
            "paths": {"/things": {"get": {
                "summary": "List things", "description": "prose", "operationId": "listThings",
                "externalDocs": {"description": "prose", "url": "https://docs.example/things"},
                "parameters": [{"name": "q", "in": "query", "required": True, "description": "prose",
                                "example": "x", "schema": {"type": "string", "enum": ["a", "b"]}}],
                "responses": {"200": {"description": "OK", "content": {"application/json": {
                    "examples": {"one": {"value": {}}},
                    "schema": {"$ref": "#/components/schemas/thing"}}}}}}}},
            "components": {"schemas": {"thing": {
                "type": "object", "title": "Thing", "description": "prose", "required": ["description"],
                "properties": {"description": {"type": "string", "nullable": True, "description": "prose"},
                               "example": {"type": "integer", "format": "int64", "example": 3},
                               "summary": {"type": "string", "default": "none", "x-go-name": "S"}}}}}}
    kept = structure(spec)
    operation = kept["paths"]["/things"]["get"]
    assert operation == {
        "operationId": "listThings", "externalDocs": {"url": "https://docs.example/things"},
        "parameters": [{"name": "q", "in": "query", "required": True, "schema": {"type": "string", "enum": ["a", "b"]}}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/thing"}}}}}}
    thing = kept["components"]["schemas"]["thing"]
    assert thing == {"type": "object", "required": ["description"], "properties": {
        "description": {"type": "string", "nullable": True}, "example": {"type": "integer", "format": "int64"},
        "summary": {"type": "string", "default": "none"}}}
    assert kept["info"] == {"version": "1"} and "x-logo" not in kept


def test_shape__keeps_a_samples_fields_and_types_never_its_values():
    sample = {"token": "XXYYZZ", "event": {"type": "message", "ts": "1.2", "blocks": [{"n": 1}], "hidden": False,
                                          "score": 0.5, "parent": None, "files": []}}
    assert shape(sample) == {"type": "object", "properties": {
        "token": {"type": "string"},
        "event": {"type": "object", "properties": {
            "type": {"type": "string"}, "ts": {"type": "string"},
            "blocks": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "hidden": {"type": "boolean"}, "score": {"type": "number"}, "parent": {"type": "null"},
            "files": {"type": "array"}}}}}
    assert "XXYYZZ" not in json.dumps(shape(sample))


SDL = '''
"""A schema"""
directive @preview(toggledBy: String!) repeatable on FIELD_DEFINITION | ENUM_VALUE
interface Node { id: ID! }
"""An actor"""
interface Actor { login: String! }
type User implements Node & Actor { id: ID! login: String! "prose" name(short: Boolean = false): String
  old: String @deprecated(reason: "Use `name`.") }
type Bot implements Node & Actor { id: ID! login: String! }
union Author = User | Bot
enum State { OPEN CLOSED @deprecated(reason: "gone") MERGED @preview(toggledBy: "x") }
scalar DateTime
input Filter { states: [State!] = [OPEN] since: DateTime, limit: Int = 10, nested: Nested }
input Nested @oneOf { a: Int, b: String }
type Query { node(id: ID!): Node author(login: String!, filter: Filter = {limit: 5}): Author
  users(first: Int = 30, after: String): [User!]! }
type Mutation { close(id: ID!, state: State = CLOSED): User }
'''


def _without_descriptions(sdl: str) -> str:
    built = build_schema(sdl)
    for named in built.type_map.values():
        named.description = None
        for field in (getattr(named, "fields", None) or {}).values():
            field.description = None
            for arg in (getattr(field, "args", None) or {}).values():
                arg.description = None
        for value in (getattr(named, "values", None) or {}).values():
            value.description = None
    for directive in built.directives:
        directive.description = None
    built.description = None
    return print_schema(lexicographic_sort_schema(built))


def test_graphql_compact__round_trips_every_type_field_argument_default_and_deprecation():
    source = build_schema(SDL)
    data = orjson.loads(orjson.dumps(encode(source)))
    assert "A schema" not in json.dumps(data) and "An actor" not in json.dumps(data)
    assert print_schema(lexicographic_sort_schema(decode(data))) == _without_descriptions(SDL)


def test_graphql_compact__an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind 'Q'"):
        decode({"query": None, "directives": [], "types": [["Odd", "Q"]]})


# --- what ships ------------------------------------------------------------------------------------


@pytest.mark.parametrize("product", PRODUCTS, ids=lambda p: f"{p.tool}/{p.name}")
def test_packaged__each_file_names_its_sources_and_their_licences(product: Product):
    data = vendor_data.read(product.tool, product.name)
    header = data[vendor_data.HEADER]
    assert header["generated_by"] == "python -m ancha.vendor regenerate"
    assert [s["file"] for s in header["sources"]] == [s.path for s in product.sources]
    assert all(s["from"] and s["licence"] for s in header["sources"])
    assert set(data) - {vendor_data.HEADER}, "the file carries data beside its header"


def _prose_keywords(node: Any, names: bool = False) -> list[str]:
    """Prose keywords found where they are keywords (inside a schema's ``properties`` they are names)."""
    found: list[str] = []
    if isinstance(node, list):
        for item in node:
            found += _prose_keywords(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if not names and key in PROSE:
                found.append(key)
            found += _prose_keywords(value, names=key in ("properties", "schemas", "definitions", "paths",
                                                          "responses", "content", "parameters"))
            if names:
                found += _prose_keywords(value)
    return found


@pytest.mark.parametrize(("tool", "key"), [("slack", "openapi"), ("github", "openapi"), ("datadog", "v1"),
                                           ("datadog", "v2"), ("pagerduty", "openapi"), ("okta", "openapi")])
def test_packaged__openapi_descriptions_keep_no_prose(tool: str, key: str):
    spec = vendor_data.read(tool, "web_api" if tool == "slack" else "rest")[key]
    operations = [op for item in spec["paths"].values() for op in item.values() if isinstance(op, dict)]
    assert len(operations) > 100
    assert not any(k in PROSE for op in operations for k in op)
    assert not any(k in PROSE for op in operations for p in op.get("parameters", []) for k in p)


def test_packaged__payload_fields_named_description_stay():
    repository = vendor_data.read("github", "rest")["openapi"]["components"]["schemas"]["repository"]
    assert repository["properties"]["description"] == {"type": "string", "nullable": True}
    assert "description" not in repository and "title" not in repository


def test_packaged__response_schemas_still_refuse_a_wrong_body():
    import jsonschema

    spec = vendor_data.read("github", "rest")["openapi"]
    label = {**spec["components"]["schemas"]["label"], "components": spec["components"]}
    good = {"id": 1, "node_id": "L", "url": "u", "name": "bug", "description": "d", "color": "f00", "default": False}
    jsonschema.Draft7Validator(label).validate(good)
    errors = list(jsonschema.Draft7Validator(label).iter_errors({**good, "color": 7, "name": None}))
    assert {e.path[0] for e in errors} == {"color", "name"}


def test_packaged__graphql_schema_is_githubs_and_validates_queries():
    built = schema()
    assert {"Query", "Mutation", "Repository", "PullRequest"} <= set(built.type_map)
    assert "createIssue" in built.mutation_type.fields
    assert validate(built, parse('{ repository(owner: "o", name: "r") { issues(first: 5, states: [OPEN]) '
                                 '{ nodes { title number author { login } } } } }')) == []
    errors = validate(built, parse('{ repository(owner: "o", name: "r") { nope } }'))
    assert [e.message.split(".")[0] for e in errors] == ["Cannot query field 'nope' on type 'Repository'"]


def test_packaged__a_missing_file_says_to_reinstall(monkeypatch):
    with pytest.raises(vendor_data.VendorDataMissing, match=r"reinstall Ancha"):
        vendor_data.read("slack", "no_such_file")


# --- regeneration -----------------------------------------------------------------------------------


def _tiny_vendor(folder: Path) -> Product:
    (folder / "demo").mkdir(parents=True)
    (folder / "demo" / "spec.json").write_text(json.dumps(
        {"paths": {"/a": {"get": {"summary": "Get a", "operationId": "getA"}}}}))
    source = Source("demo/spec.json", "example/demo @ 0000000", "MIT")
    return Product("demo", "rest", (source,), lambda read: {"openapi": structure(read.json(source.path))})


def test_regenerate__writes_structure_then_finds_it_current_then_stale(tmp_path: Path):
    product = _tiny_vendor(tmp_path / "vendor")
    read = Inputs(tmp_path / "vendor")
    [wrote] = data_files(read, check=False, products=[product], root=tmp_path / "tools")
    assert wrote.status == "wrote" and wrote.path == target(product, tmp_path / "tools")
    data = orjson.loads(gzip.decompress(wrote.path.read_bytes()))
    assert data["openapi"] == {"paths": {"/a": {"get": {"operationId": "getA"}}}}
    assert data[vendor_data.HEADER]["sources"] == [{"file": "demo/spec.json", "from": "example/demo @ 0000000",
                                                    "licence": "MIT"}]
    first = wrote.path.read_bytes()
    data_files(read, check=False, products=[product], root=tmp_path / "tools")
    assert wrote.path.read_bytes() == first, "the same input gives the same bytes"
    [checked] = data_files(read, check=True, products=[product], root=tmp_path / "tools")
    assert checked.status == "current"
    (tmp_path / "vendor" / "demo" / "spec.json").write_text(json.dumps({"paths": {}}))
    [checked] = data_files(read, check=True, products=[product], root=tmp_path / "tools")
    assert checked.status == "stale"


def test_regenerate__without_the_descriptions_exits_2_and_says_where_to_point(tmp_path: Path, capsys):
    assert main(["regenerate", "--check", "--from", str(tmp_path / "absent")]) == 2
    assert "pass --from DIR" in capsys.readouterr().err


def test_regenerate__without_a_folder_says_how_to_name_one(capsys):
    assert main(["regenerate", "--check"]) == 2
    assert "--from DIR" in capsys.readouterr().err


def test_regenerate__a_folder_missing_a_file_names_it(tmp_path: Path, capsys):
    (tmp_path / "slack").mkdir()
    assert main(["regenerate", "--check", "--from", str(tmp_path)]) == 2
    assert "slack/endpoints.txt is missing" in capsys.readouterr().err


def test_packaged__ledgers_are_current_with_the_packaged_data(capsys):
    from ancha.vendor.regenerate import ledgers

    outcomes = ledgers(check=True)
    assert len(outcomes) == 5 and {o.status for o in outcomes} == {"current"}


@pytest.mark.parametrize("product", PRODUCTS, ids=lambda p: f"{p.tool}/{p.name}")
def test_regenerate__writes_each_file_where_the_product_reads_it(product: Product):
    """The default target is the packaged file ``vendor_data`` reads (the tool's own folder)."""
    assert target(product) == Path(str(vendor_data.location(product.tool, product.name))).resolve()
