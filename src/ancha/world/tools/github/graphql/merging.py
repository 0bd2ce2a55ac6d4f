"""Fields that share a response name must merge: graphql-ruby's ``FieldsWillMerge``, linear.

graphql-core's ``OverlappingFieldsCanBeMergedRule`` compares every pair of fields that
share a response name, so ``{ viewer { login } viewer { login } ... }`` with 500 copies
made 125,000 comparisons: three seconds on the loop that serves every environment. Here
the fields of a response name are grouped once, their distinct names, arguments and
types compared as sets, and their selections merged into one before going a level down,
so the work grows with the document, not with its square. What is refused, and the
words, are graphql-ruby's (GitHub's server)::

    {"path": [], "extensions": {"code": "fieldConflict", "fieldName": "who", "conflicts": "login or name"},
     "locations": [...], "message": "Field 'who' has a field conflict: login or name?"}

As in the spec, fields on two different object types never conflict by name or arguments
(only one of them can apply); their selections are merged per object type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    get_named_type,
    is_interface_type,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
    print_ast,
)
from graphql.language.visitor import SKIP
from graphql.validation import ValidationContext, ValidationRule

from ancha.world.tools.github.graphql.limits import MAX_SELECTIONS


@dataclass(frozen=True, slots=True)
class _Entry:
    parent: Any
    node: FieldNode
    definition: GraphQLField | None


class FieldsWillMerge(ValidationRule):
    """Replaces ``OverlappingFieldsCanBeMergedRule`` (see the module's docstring)."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        # Selections merged per object type are walked once per type; this bounds the
        # total (the executor has bounded the document's expanded size already).
        self.budget = 4 * MAX_SELECTIONS
        self.reported: set[tuple[str, str, str]] = set()

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> Any:
        root = self.context.schema.get_root_type(node.operation)
        if root is not None:
            self._merge([(root, node.selection_set)])
        return SKIP

    def enter_fragment_definition(self, node: FragmentDefinitionNode, *_: Any) -> Any:
        return SKIP  # checked where it is spread (an unused fragment is an error of its own)

    def _merge(self, sets: list[tuple[Any, SelectionSetNode]]) -> None:
        groups: dict[str, list[_Entry]] = {}
        for parent, selection_set in sets:
            self._collect(parent, selection_set, groups, set())
        for key, entries in groups.items():
            if self.budget <= 0:
                return
            by_object: dict[str, list[_Entry]] = {}
            shared: list[_Entry] = []
            for entry in entries:
                if is_object_type(entry.parent):
                    by_object.setdefault(entry.parent.name, []).append(entry)
                else:
                    shared.append(entry)
            conflicted = False
            for members in [own + shared for own in by_object.values()] or [shared]:
                conflicted = self._compare_fields(key, members) or conflicted
                below = [(get_named_type(e.definition.type), e.node.selection_set) for e in members
                         if e.definition is not None and e.node.selection_set is not None]
                if below:
                    self._merge(below)
            if not conflicted:  # one conflict a response name, as graphql-ruby reports them
                self._compare_types(key, entries)

    def _collect(self, parent: Any, selection_set: SelectionSetNode, groups: dict[str, list[_Entry]],
                 spread: set[str]) -> None:
        schema = self.context.schema
        for selection in selection_set.selections:
            self.budget -= 1
            if self.budget <= 0:
                return
            if isinstance(selection, FieldNode):
                fields = parent.fields if is_object_type(parent) or is_interface_type(parent) else {}
                key = (selection.alias or selection.name).value
                groups.setdefault(key, []).append(_Entry(parent, selection, fields.get(selection.name.value)))
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = schema.get_type(condition.name.value) if condition else parent
                if target is not None:
                    self._collect(target, selection.selection_set, groups, spread)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self.context.get_fragment(name)
                if name in spread or fragment is None:
                    continue  # the same fields again, or an unknown fragment (reported elsewhere)
                spread.add(name)
                target = schema.get_type(fragment.type_condition.name.value)
                if target is not None:
                    self._collect(target, fragment.selection_set, groups, spread)

    def _compare_fields(self, key: str, members: list[_Entry]) -> bool:
        """Report differing field names, else differing arguments; True when it reported."""
        names: dict[str, FieldNode] = {}
        for entry in members:
            names.setdefault(entry.node.name.value, entry.node)
        if len(names) > 1:
            self._report(key, "field", list(names), list(names.values()))
            return True
        arguments: dict[str, FieldNode] = {}
        for entry in members:
            arguments.setdefault(_arguments(entry.node), entry.node)
        if len(arguments) > 1:
            self._report(key, "argument", list(arguments), list(arguments.values()))
            return True
        return False

    def _compare_types(self, key: str, entries: list[_Entry]) -> None:
        typed = [e for e in entries if e.definition is not None]
        if not typed:
            return
        first = typed[0]
        assert first.definition is not None
        for entry in typed[1:]:
            assert entry.definition is not None
            if _types_conflict(first.definition.type, entry.definition.type):
                self._report(key, "return_type", [f"`{first.definition.type}`", f"`{entry.definition.type}`"],
                             [first.node, entry.node])
                return

    def _report(self, key: str, kind: str, conflicts: list[str], nodes: list[FieldNode]) -> None:
        text = " or ".join(conflicts)
        if (key, kind, text) in self.reported:
            return
        self.reported.add((key, kind, text))
        article = "an" if kind == "argument" else "a"
        error = GraphQLError(f"Field '{key}' has {article} {kind} conflict: {text}?", nodes,
                             extensions={"code": "fieldConflict", "fieldName": key, "conflicts": text})
        error.path = []
        self.report_error(error)


def _arguments(node: FieldNode) -> str:
    """graphql-ruby's way of showing a field's arguments: ``{first: 1, states: OPEN}``."""
    given = sorted((argument.name.value, print_ast(argument.value)) for argument in node.arguments or ())
    return "{" + ", ".join(f"{name}: {value}" for name, value in given) + "}"


def _types_conflict(first: Any, second: Any) -> bool:
    """The spec's test: lists and non-nulls must match in shape, leaf types exactly."""
    if is_list_type(first) or is_list_type(second):
        return not (is_list_type(first) and is_list_type(second)) or _types_conflict(first.of_type, second.of_type)
    if is_non_null_type(first) or is_non_null_type(second):
        return not (is_non_null_type(first) and is_non_null_type(second)) or _types_conflict(
            first.of_type, second.of_type)
    if is_leaf_type(first) or is_leaf_type(second):
        return first is not second
    return False
