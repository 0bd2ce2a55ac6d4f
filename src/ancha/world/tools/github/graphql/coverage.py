"""Coverage: what a query asks for that GitHub has and this replica does not serve.

Runs after validation and before execution, over the chosen operation and the
fragments it uses, with the coerced variables, so the answer depends on the query
alone: a field of a served type missing from the resolver map, or an argument its
resolver does not honour given a non-null value, answers::

    {"path": ["query", "repository", "forkCount"], "extensions": {"code": "NOT_IMPLEMENTED"},
     "locations": [...], "message": "Field 'Repository.forkCount' is not implemented by this replica"}

A type the replica never returns (``... on Discussion`` inside a search) is skipped:
its fragment can never apply, so asking for it is harmless.
"""

from __future__ import annotations

from typing import Any

from graphql import (
    ArgumentNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    NullValueNode,
    OperationDefinitionNode,
    TypeInfo,
    TypeInfoVisitor,
    VariableNode,
    Visitor,
    is_abstract_type,
    is_object_type,
    visit,
)
from graphql.language.visitor import SKIP

from ancha.world.tools.github.graphql.registry import FIELDS, served_types
from ancha.world.tools.github.graphql.validation import operation_label

_ROOTS = frozenset({"Query", "Mutation", "Subscription"})


class _Walk(Visitor):
    def __init__(self, type_info: TypeInfo, schema: GraphQLSchema, operation: OperationDefinitionNode,
                 variables: dict[str, Any], served: set[str]) -> None:
        super().__init__()
        self.type_info = type_info
        self.schema = schema
        self.operation = operation
        self.variables = variables
        self.served = served
        self.path: list[str] = []
        self.errors: list[GraphQLError] = []
        self.reported: set[tuple[str, ...]] = set()

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> Any:
        if node is not self.operation:
            return SKIP
        self.path = [operation_label(node)]
        return None

    def enter_fragment_definition(self, node: FragmentDefinitionNode, *_: Any) -> None:
        self.path = [f"fragment {node.name.value}"]

    def enter_inline_fragment(self, node: InlineFragmentNode, *_: Any) -> None:
        self.path.append(f"... on {node.type_condition.name.value}" if node.type_condition else "...")

    def leave_inline_fragment(self, *_: Any) -> None:
        self.path.pop()

    def enter_field(self, node: FieldNode, *_: Any) -> None:
        self.path.append((node.alias or node.name).value)
        name = node.name.value
        parent = self.type_info.get_parent_type()
        if name.startswith("__") or parent is None:
            return
        if is_object_type(parent):
            owners = [parent.name] if parent.name in self.served else []
        elif is_abstract_type(parent):
            # The root types implement Node on GitHub; no abstract field ever resolves to them.
            owners = sorted(t.name for t in self.schema.get_possible_types(parent)  # type: ignore[arg-type]
                            if t.name in self.served and t.name not in _ROOTS)
        else:
            return
        missing = [owner for owner in owners if f"{owner}.{name}" not in FIELDS]
        if missing:
            shown = parent.name if len(missing) == len(owners) else missing[0]
            self._gap(f"Field '{shown}.{name}' is not implemented by this replica", node)
            return
        for owner in owners:
            self._check_arguments(f"{owner}.{name}", node)

    def leave_field(self, *_: Any) -> None:
        self.path.pop()

    def _check_arguments(self, key: str, node: FieldNode) -> None:
        honoured = FIELDS[key].args
        for argument in node.arguments or ():
            if argument.name.value not in honoured and self._given(argument):
                self.path.append(argument.name.value)
                self._gap(f"Argument '{argument.name.value}' of '{key}' is not implemented by this replica",
                          argument)
                self.path.pop()

    def _given(self, argument: ArgumentNode) -> bool:
        value = argument.value
        if isinstance(value, NullValueNode):
            return False
        if isinstance(value, VariableNode):
            return self.variables.get(value.name.value) is not None
        return True

    def _gap(self, message: str, node: Any) -> None:
        key = (message, *self.path)
        if key in self.reported:
            return
        self.reported.add(key)
        error = GraphQLError(message, node, extensions={"code": "NOT_IMPLEMENTED"})
        error.path = list(self.path)
        self.errors.append(error)


def coverage_gaps(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode,
                  variables: dict[str, Any]) -> list[GraphQLError]:
    """``NOT_IMPLEMENTED`` errors for everything ``operation`` asks that is not served."""
    type_info = TypeInfo(schema)
    walk = _Walk(type_info, schema, operation, variables, served_types())
    visit(document, TypeInfoVisitor(type_info, walk))
    return walk.errors
