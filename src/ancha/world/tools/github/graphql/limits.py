"""GitHub's GraphQL resource limits, and the bounds that keep one document from holding
up every other environment of the server.

A request is answered on the event loop that serves every environment, so each stage of
its work is bounded before it starts, in the order the executor runs them:

- the request: at most ``MAX_REQUEST_BYTES`` of JSON (413, as GitHub answers a body too
  large), read before anything else;
- the document: at most ``MAX_QUERY_BYTES`` of text and ``MAX_TOKENS`` tokens (the parser
  stops at the limit), at most ``MAX_SELECTIONS`` selections once fragments are spread in,
  and at most ``MAX_DEPTH`` fields deep. Past the first three graphql-ruby (GitHub's
  server) says ``This query is too large to execute.``; past the depth, ``Query has depth
  of 32, which exceeds max depth of 25``;
- ``nodes(ids:)``: at most 100 ids, checked before the variables are coerced
  (``ARGUMENT_LIMIT``, as GitHub answers);
- the variables: at most ``MAX_VARIABLE_VALUES`` JSON values;
- GitHub's node limit: every connection's ``first``/``last`` multiplied along its path,
  at most 500,000 nodes (``MAX_NODE_LIMIT_EXCEEDED``); the same walk gives the query's
  rate-limit cost, GitHub's formula: one request per connection page, summed, divided
  by 100 and rounded, at least 1 point;
- execution: at most ``MAX_RESOLUTIONS`` fields resolved; past it the query stops with
  GitHub's timeout answer.

Every walk here is linear in the document once its expanded size is known to be bounded:
fragment sizes are memoised, so a fragment spread many times is counted, not re-walked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    ListValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    is_interface_type,
    is_object_type,
)

MAX_REQUEST_BYTES = 1024 * 1024
MAX_QUERY_BYTES = 32 * 1024
MAX_TOKENS = 2_000
MAX_SELECTIONS = 5_000
MAX_DEPTH = 25
MAX_NODE_IDS = 100
MAX_VARIABLE_VALUES = 5_000
NODE_LIMIT = 500_000
MAX_PAGE = 100
MAX_RESOLUTIONS = 4_000

TOO_LARGE = "This query is too large to execute."


def too_large(line: int | None = None, column: int | None = None) -> dict[str, Any]:
    """graphql-ruby's answer to a document past a size limit (with where, when it knows)."""
    error: dict[str, Any] = {"message": TOO_LARGE}
    if line is not None and column is not None:
        error["locations"] = [{"line": line, "column": column}]
    return error


# --- size and depth, through fragments ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Shape:
    selections: int
    """Selections once every fragment spread is replaced by its fragment."""
    depth: int
    """graphql-ruby's depth: root fields are 1, each nested field one more."""


def shape(document: DocumentNode) -> Shape:
    """Size and depth of every operation of ``document``; capped just past the limits, so
    a fragment spread exponentially often costs no more than a plain one."""
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    memo: dict[str, tuple[int, int]] = {}
    walking: set[str] = set()
    cap = MAX_SELECTIONS + 1

    def measure(selection_set: SelectionSetNode | None) -> tuple[int, int]:
        if selection_set is None:
            return 0, 0
        size, depth = 0, 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                inner_size, inner_depth = measure(selection.selection_set)
                size, depth = size + 1 + inner_size, max(depth, 1 + inner_depth)
            elif isinstance(selection, InlineFragmentNode):
                inner_size, inner_depth = measure(selection.selection_set)
                size, depth = size + 1 + inner_size, max(depth, inner_depth)
            elif isinstance(selection, FragmentSpreadNode):
                inner_size, inner_depth = spread(selection.name.value)
                size, depth = size + 1 + inner_size, max(depth, inner_depth)
            if size >= cap:
                return cap, depth
        return size, depth

    def spread(name: str) -> tuple[int, int]:
        if name in memo:
            return memo[name]
        fragment = fragments.get(name)
        if fragment is None or name in walking:
            return 0, 0  # unknown or cyclic: validation reports it
        walking.add(name)
        memo[name] = measure(fragment.selection_set)
        walking.discard(name)
        return memo[name]

    total, deepest = 0, 0
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            size, depth = measure(definition.selection_set)
            total, deepest = min(total + size, cap), max(deepest, depth)
    return Shape(total, deepest)


def depth_error(depth: int) -> dict[str, Any]:
    return {"message": f"Query has depth of {depth}, which exceeds max depth of {MAX_DEPTH}"}


# --- nodes(ids:) and the variables ---------------------------------------------------------------

def node_id_errors(document: DocumentNode, operation: OperationDefinitionNode,
                   variables: dict[str, Any]) -> list[dict[str, Any]]:
    """GitHub's ``ARGUMENT_LIMIT`` for each root ``nodes`` field given more than 100 ids.

    Checked on the raw variables, before they are coerced: coercing 100,000 ids is what
    took the time.
    """
    if operation.operation != OperationType.QUERY:
        return []
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    errors: list[dict[str, Any]] = []
    for field in _root_fields(operation.selection_set, fragments, set()):
        if field.name.value != "nodes":
            continue
        for argument in field.arguments or ():
            if argument.name.value != "ids":
                continue
            value = argument.value
            if isinstance(value, ListValueNode):
                count = len(value.values)
            elif isinstance(value, VariableNode) and isinstance(variables.get(value.name.value), list):
                count = len(variables[value.name.value])
            else:
                count = 0
            if count > MAX_NODE_IDS:
                error: dict[str, Any] = {"type": "ARGUMENT_LIMIT", "path": [(field.alias or field.name).value]}
                if field.loc is not None:
                    location = field.loc.source.get_location(field.loc.start)
                    error["locations"] = [{"line": location.line, "column": location.column}]
                error["message"] = f"You may not provide more than {MAX_NODE_IDS} node ids; you provided {count}."
                errors.append(error)
    return errors


def _root_fields(selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode],
                 seen: set[str]) -> list[FieldNode]:
    found: list[FieldNode] = []
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            found.append(selection)
        elif isinstance(selection, InlineFragmentNode):
            found += _root_fields(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
            seen.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                found += _root_fields(fragment.selection_set, fragments, seen)
    return found


def variable_values(value: Any, budget: int = MAX_VARIABLE_VALUES + 1) -> int:
    """How many JSON values ``value`` holds, counting no further than ``budget``."""
    count = 0
    stack = [value]
    while stack and count < budget:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if len(item) + count >= budget:
                return budget
            stack.extend(item)
    return count


# --- GitHub's node limit and rate-limit cost ------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Cost:
    nodes: int
    """GitHub's ``nodeCount``: the nodes every connection could return, multiplied out."""
    requests: int
    """Connection pages needed to fill the query: one per connection per parent node."""
    error: dict[str, Any] | None = None
    """``MAX_NODE_LIMIT_EXCEEDED`` when the nodes pass the limit."""

    @property
    def points(self) -> int:
        """GitHub's formula: the requests divided by 100, rounded, at least 1."""
        return max(1, (self.requests + 50) // 100)


def cost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode,
         variables: dict[str, Any]) -> Cost:
    """The node count and cost of ``operation``, as GitHub's resource limits page computes them.

    A connection is a field returning a ``*Connection`` type; its size is its ``first`` or
    ``last`` (100 when neither is given, at most 100: a larger one is refused at execution
    with its own error). Nodes multiply along a path and add up across it.
    """
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    root = schema.get_root_type(operation.operation)
    nodes = 0
    requests = 0

    def walk(parent: Any, selection_set: SelectionSetNode | None, multiplier: int) -> str | None:
        nonlocal nodes, requests
        if selection_set is None:
            return None
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                definition = parent.fields.get(selection.name.value) if _has_fields(parent) else None
                if definition is None:
                    continue
                named = get_named_type(definition.type)
                inner = multiplier
                if named.name.endswith("Connection") and "first" in definition.args:
                    size = _page_size(selection, variables)
                    inner = multiplier * size
                    requests += multiplier
                    nodes += inner
                    if inner > NODE_LIMIT:
                        return (f"By the time this query traverses to the {selection.name.value} connection, it "
                                f"is requesting up to {inner:,} possible nodes which exceeds the maximum limit "
                                f"of {NODE_LIMIT:,}.")
                stopped = walk(named, selection.selection_set, inner)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = schema.get_type(condition.name.value) if condition else parent
                stopped = walk(target, selection.selection_set, multiplier)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = fragments.get(selection.name.value)
                if fragment is None:
                    continue
                stopped = walk(schema.get_type(fragment.type_condition.name.value), fragment.selection_set,
                               multiplier)
            else:
                continue
            if stopped:
                return stopped
        return None

    stopped = walk(root, operation.selection_set, 1)
    if stopped is None and nodes > NODE_LIMIT:
        stopped = (f"This query requests up to {nodes:,} possible nodes which exceeds the maximum limit of "
                   f"{NODE_LIMIT:,}.")
    error = {"type": "MAX_NODE_LIMIT_EXCEEDED", "message": stopped} if stopped else None
    return Cost(nodes, requests, error)


def _has_fields(parent: Any) -> bool:
    return isinstance(parent, GraphQLObjectType) or is_object_type(parent) or is_interface_type(parent)


def _page_size(field: FieldNode, variables: dict[str, Any]) -> int:
    size: int | None = None
    for argument in field.arguments or ():
        if argument.name.value not in ("first", "last"):
            continue
        value = argument.value
        if isinstance(value, IntValueNode):
            given: Any = int(value.value) if len(value.value) <= 9 else MAX_PAGE + 1
        elif isinstance(value, VariableNode):
            given = variables.get(value.name.value)
        else:
            given = None
        if isinstance(given, int) and not isinstance(given, bool):
            size = max(size or 0, given)
    if size is None:
        return MAX_PAGE
    return min(max(size, 0), MAX_PAGE)
