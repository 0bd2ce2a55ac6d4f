"""``POST /graphql``: one GraphQL request against one environment's GitHub state.

Order, as GitHub's server answers: authentication (401 ``Bad credentials``), the
body (400 ``Problems parsing JSON``), the query attribute, parsing, validation against
the public schema (all HTTP 200 with ``errors`` only), the coverage walk (the same,
with ``coverage_gap``), then execution with the resolver map. GitHub's resource limits
(``limits.py``) bound every stage before it starts: the document's size and depth with
the parse, ``nodes(ids:)`` and the variables before coercion, the node limit and the
rate-limit cost before execution, and the fields resolved during it. Resolvers reach state
through ``info.context`` (a ``Context``); the shared schema never holds per-trial data.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLSyntaxError,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)
from graphql import execute as graphql_execute
from graphql.execution.values import get_variable_values

from ancha.world.kernel import bounded_json
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.github.graphql.context import Context, type_of
from ancha.world.tools.github.graphql.coverage import coverage_gaps
from ancha.world.tools.github.graphql.errors import (
    GitHubGraphQLError,
    NotImplementedHere,
    format_error,
    is_coverage_gap,
    syntax_error,
)
from ancha.world.tools.github.graphql.limits import (
    MAX_DEPTH,
    MAX_QUERY_BYTES,
    MAX_REQUEST_BYTES,
    MAX_RESOLUTIONS,
    MAX_SELECTIONS,
    MAX_TOKENS,
    MAX_VARIABLE_VALUES,
    cost,
    depth_error,
    node_id_errors,
    shape,
    too_large,
    variable_values,
)
from ancha.world.tools.github.graphql.registry import FIELDS
from ancha.world.tools.github.graphql.resolvers.meta import spend
from ancha.world.tools.github.graphql.schema import SchemaUnavailable, schema
from ancha.world.tools.github.graphql.validation import rules
from ancha.world.tools.github.models.wire import reset_web_base, set_web_base

log = logging.getLogger(__name__)
JSON = "application/json; charset=utf-8"
INTERNAL = ("Something went wrong while executing your query. This may be the result of a timeout, or it could "
            "be a GitHub bug. Please include the request id when reporting this issue.")
DOCS = "https://docs.github.com/graphql"
AUTH_DOCS = "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def execute(replica: Any, request: ToolRequest, caller: Any) -> ToolResponse:
    """Answer one ``POST /graphql`` for an authenticated ``caller`` (None: no or bad credentials)."""
    if caller is None:
        if not request.headers.get("authorization", "").strip():
            return _answer(401, {"message": "This endpoint requires you to be authenticated.",
                                 "documentation_url": AUTH_DOCS}, "agent", ok=False)
        return _answer(401, {"message": "Bad credentials", "documentation_url": DOCS}, "agent", ok=False)
    actor = getattr(caller, "actor", "agent")
    if len(request.body) > MAX_REQUEST_BYTES:  # before reading it: JSON of 100 MiB takes seconds
        return _answer(413, {"message": "Request body too large", "documentation_url": DOCS}, actor, ok=False)
    try:
        payload = bounded_json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        return _answer(400, {"message": "Problems parsing JSON", "documentation_url": DOCS}, actor, ok=False)
    query = payload.get("query") if isinstance(payload, dict) else None
    if not isinstance(query, str) or not query.strip():
        return _errors([{"message": "A query attribute must be specified and must be a string."}], actor)
    variables = payload.get("variables")
    if isinstance(variables, str):  # some clients send the variables as a JSON string
        try:
            variables = bounded_json.loads(variables) if variables.strip() else None
        except ValueError:
            return _errors([{"message": "Variables are invalid JSON."}], actor)
    if variables is not None and not isinstance(variables, dict):
        return _errors([{"message": "Variables are invalid JSON."}], actor)
    operation_name = payload.get("operationName")
    if operation_name is not None and not isinstance(operation_name, str):
        return _errors([{"message": "Operation name must be a string."}], actor)
    try:
        the_schema = schema()
    except SchemaUnavailable as exc:
        return _answer(503, {"message": str(exc), "documentation_url": DOCS}, actor, ok=False)
    if len(query) > MAX_QUERY_BYTES or len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        return _errors([too_large()], actor)
    document = checked(query)
    if isinstance(document, list):
        return _errors(document, actor)
    operation = _operation(document, operation_name)
    if isinstance(operation, str):
        return _errors([{"message": operation}], actor)
    if operation.operation == OperationType.SUBSCRIPTION:
        return _errors([{"message": "Subscriptions are not supported"}], actor)
    refused = node_id_errors(document, operation, variables or {})
    if refused:
        return ToolResponse(200, _dumps({"data": None, "errors": refused}).encode(), JSON, actor=actor,
                            vendor_ok=False)
    if variable_values(variables or {}) > MAX_VARIABLE_VALUES:
        return _errors([too_large()], actor)
    coerced = get_variable_values(the_schema, operation.variable_definitions or (), variables or {})
    if isinstance(coerced, list):
        return _errors([_variable_error(e) for e in coerced], actor)
    priced = cost(the_schema, document, operation, coerced.coerced)  # GitHub's, so before ours
    if priced.error is not None:
        return _errors([priced.error], actor)
    gaps = coverage_gaps(the_schema, document, operation, coerced.coerced)
    if gaps:
        return _errors([format_error(e) for e in gaps], actor, gap=True)
    context = Context(replica, caller)
    context.cost = priced
    spend(context, priced.points)
    base = set_web_base(replica.base_url)  # the resolvers' url fields lead back to the replica
    try:
        result = graphql_execute(the_schema, document, None, context, variables or {}, operation_name,
                                 field_resolver=_resolve, type_resolver=_type_resolver)
    finally:
        reset_web_base(base)
    assert isinstance(result, ExecutionResult)  # every resolver is synchronous
    if context.resolutions > MAX_RESOLUTIONS:  # stopped: GitHub's answer to a query that timed out
        return ToolResponse(200, _dumps({"data": None, "errors": [{"message": INTERNAL}]}).encode(), JSON,
                            actor=actor, vendor_ok=False)
    return _result(result, actor, context)


_CACHED_QUERY = 4 * 1024
"""Queries up to this size are remembered with their parse (512 of them: at most ~25 MB);
larger ones are rare, and each parse of one holds hundreds of KB."""


def checked(query: str) -> DocumentNode | list[dict[str, Any]]:
    """The parsed and validated document, or its errors in GitHub's shapes.

    Both depend on the query text alone (the schema is fixed), and agents repeat their
    queries (polling, paging), so the answer for a query of usual size is cached by text;
    ASTs are never mutated.
    """
    return _checked_cached(query) if len(query) <= _CACHED_QUERY else _checked(query)


@lru_cache(maxsize=512)
def _checked_cached(query: str) -> DocumentNode | list[dict[str, Any]]:
    return _checked(query)


def _checked(query: str) -> DocumentNode | list[dict[str, Any]]:
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLSyntaxError as exc:
        if "tokens. Parsing aborted." in exc.message:
            location = exc.locations[0] if exc.locations else None
            return [too_large(location.line, location.column) if location else too_large()]
        return [syntax_error(query, exc)]
    except RecursionError:
        return [{"message": "Query too deeply nested"}]
    try:
        measured = shape(document)
    except RecursionError:  # a chain of fragments deeper than the interpreter's stack
        return [too_large()]
    if measured.selections > MAX_SELECTIONS:
        return [too_large()]
    if measured.depth > MAX_DEPTH:
        return [depth_error(measured.depth)]
    invalid = validate(schema(), document, rules())
    return [format_error(e) for e in invalid] if invalid else document


def _operation(document: DocumentNode, name: str | None) -> OperationDefinitionNode | str:
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if name:
        for operation in operations:
            if operation.name is not None and operation.name.value == name:
                return operation
        return f'No operation named "{name}"'
    if len(operations) == 1:
        return operations[0]
    return "An operation name is required" if operations else "No operations in query document"


def _resolve(parent: Any, info: GraphQLResolveInfo, **args: Any) -> Any:
    context: Context = info.context
    context.resolutions += 1
    if context.resolutions > MAX_RESOLUTIONS:
        return None  # the query is over its budget: unwind quickly, answered as a timeout
    key = f"{info.parent_type.name}.{info.field_name}"
    spec = FIELDS.get(key)
    if spec is None:
        # Only reachable through an abstract type whose concrete type the coverage walk
        # could not know; the walk has refused every other unserved field.
        info.context.coverage_gap = True
        raise GraphQLError(f"Field '{key}' is not implemented by this replica",
                           extensions={"code": "NOT_IMPLEMENTED"})
    try:
        return spec.resolve(parent, info, **args)
    except NotImplementedHere:
        info.context.coverage_gap = True
        raise
    except (GitHubGraphQLError, GraphQLError):
        raise
    except Exception as exc:  # a bug, never bad input: GitHub's words, the traceback in our log
        log.exception("GraphQL resolver %s failed", key)
        raise GraphQLError(INTERNAL) from exc


def _type_resolver(value: Any, info: GraphQLResolveInfo, abstract_type: Any) -> str | None:
    return type_of(value)


def _variable_error(error: GraphQLError) -> dict[str, Any]:
    """graphql-ruby's wording: ``Variable $n of type Int! was provided invalid value``."""
    message = error.message
    if message.startswith("Variable '$"):
        name = message[len("Variable '$"):].split("'", 1)[0]
        declared = _declared_type(error)
        explanation = message.split("; ", 1)[1] if "; " in message else message
        if "was not provided" in message:
            explanation = "Expected value to not be null"
        out: dict[str, Any] = {"extensions": {"value": None, "problems": [{"path": [], "explanation": explanation}]}}
        if error.locations:
            out["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
        out["message"] = f"Variable ${name} of type {declared} was provided invalid value"
        return out
    return format_error(error)


def _declared_type(error: GraphQLError) -> str:
    for node in error.nodes or ():
        type_node = getattr(node, "type", None)
        if type_node is not None:
            from graphql import print_ast

            return print_ast(type_node)
    return "?"


def _result(result: ExecutionResult, actor: str, context: Context) -> ToolResponse:
    errors = [format_error(e) for e in result.errors or ()]
    gap = context.coverage_gap or any(is_coverage_gap(e) for e in result.errors or ())
    body: dict[str, Any] = {"data": result.data}  # execution began: data is present, null or not
    if errors:
        body["errors"] = errors
    ok = not errors or result.data is not None and any(v is not None for v in result.data.values())
    return ToolResponse(200, _dumps(body).encode(), JSON, actor=actor, coverage_gap=gap, vendor_ok=ok)


def _errors(errors: list[dict[str, Any]], actor: str, *, gap: bool = False) -> ToolResponse:
    return ToolResponse(200, _dumps({"errors": errors}).encode(), JSON, actor=actor, coverage_gap=gap,
                        vendor_ok=False)


def _answer(status: int, body: dict[str, Any], actor: str, *, ok: bool) -> ToolResponse:
    return ToolResponse(status, _dumps(body).encode(), JSON, actor=actor, vendor_ok=ok)
