"""Query validation with GitHub's own error shapes.

GitHub's GraphQL server (graphql-ruby) words its static errors differently from
graphql-core and adds a ``path`` (operation, then aliases or field names, argument
names) and structured ``extensions``. The common errors are checked here by rules that
speak GitHub's words; the remaining spec rules run as graphql-core wrote them.

Example of what an agent sees for a misspelt field::

    {"path": ["query", "repository", "forkCountx"],
     "extensions": {"code": "undefinedField", "typeName": "Repository", "fieldName": "forkCountx"},
     "locations": [{"line": 1, "column": 40}],
     "message": "Field 'forkCountx' doesn't exist on type 'Repository'"}
"""

from __future__ import annotations

from typing import Any

from graphql import (
    ArgumentNode,
    DirectiveNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLArgument,
    GraphQLError,
    InlineFragmentNode,
    ListValueNode,
    NamedTypeNode,
    Node,
    ObjectValueNode,
    OperationDefinitionNode,
    ValueNode,
    VariableDefinitionNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    is_input_type,
    is_leaf_type,
    is_non_null_type,
    is_type_sub_type_of,
    print_ast,
    specified_rules,
    type_from_ast,
    value_from_ast,
)
from graphql.pyutils import Undefined
from graphql.validation import (
    ASTValidationRule,
    FieldsOnCorrectTypeRule,
    KnownArgumentNamesRule,
    KnownDirectivesRule,
    KnownFragmentNamesRule,
    KnownTypeNamesRule,
    NoUndefinedVariablesRule,
    NoUnusedFragmentsRule,
    NoUnusedVariablesRule,
    OverlappingFieldsCanBeMergedRule,
    ProvidedRequiredArgumentsRule,
    ScalarLeafsRule,
    ValidationContext,
    ValidationRule,
    ValuesOfCorrectTypeRule,
    VariablesAreInputTypesRule,
    VariablesInAllowedPositionRule,
)
from graphql.validation.rules.variables_in_allowed_position import allowed_variable_usage

from ancha.world.tools.github.graphql.merging import FieldsWillMerge

_REPLACED = {FieldsOnCorrectTypeRule, KnownArgumentNamesRule, ProvidedRequiredArgumentsRule, ScalarLeafsRule,
             ValuesOfCorrectTypeRule, NoUndefinedVariablesRule, NoUnusedVariablesRule, KnownTypeNamesRule,
             VariablesAreInputTypesRule, KnownDirectivesRule, NoUnusedFragmentsRule, KnownFragmentNamesRule,
             VariablesInAllowedPositionRule, OverlappingFieldsCanBeMergedRule}


def operation_label(node: OperationDefinitionNode) -> str:
    """How graphql-ruby names an operation in paths and messages: ``query`` / ``mutation Foo``."""
    kind = node.operation.value
    return f"{kind} {node.name.value}" if node.name else kind


class PathRule(ValidationRule):
    """A rule that knows graphql-ruby's path to the node it is visiting."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self.path: list[str] = []

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        self.path = [operation_label(node)]

    def enter_fragment_definition(self, node: FragmentDefinitionNode, *_: Any) -> None:
        self.path = [f"fragment {node.name.value}"]

    def enter_inline_fragment(self, node: InlineFragmentNode, *_: Any) -> None:
        self.path.append(f"... on {node.type_condition.name.value}" if node.type_condition else "...")

    def leave_inline_fragment(self, *_: Any) -> None:
        self.path.pop()

    def enter_field(self, node: FieldNode, *_: Any) -> None:
        self.path.append((node.alias or node.name).value)

    def leave_field(self, *_: Any) -> None:
        self.path.pop()

    def enter_argument(self, node: ArgumentNode, *_: Any) -> None:
        self.path.append(node.name.value)

    def leave_argument(self, *_: Any) -> None:
        self.path.pop()

    def fail(self, message: str, node: Any, extensions: dict[str, Any], path: list[str] | None = None) -> None:
        error = GraphQLError(message, node, extensions=extensions)
        error.path = list(self.path if path is None else path)
        self.report_error(error)


class GitHubFieldRules(PathRule):
    """Unknown fields, unknown and missing arguments, selections, argument literals and variables."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self.variables: dict[str, VariableDefinitionNode] = {}

    def enter_operation_definition(self, node: OperationDefinitionNode, *args: Any) -> None:
        super().enter_operation_definition(node, *args)
        self.variables = {d.variable.name.value: d for d in node.variable_definitions or ()}

    def enter_fragment_definition(self, node: FragmentDefinitionNode, *args: Any) -> None:
        super().enter_fragment_definition(node, *args)
        self.variables = {}

    def enter_field(self, node: FieldNode, *args: Any) -> None:
        super().enter_field(node, *args)
        context = self.context
        parent = context.get_parent_type()
        name = node.name.value
        field = context.get_field_def()
        if parent is not None and field is None and not name.startswith("__"):
            self.fail(f"Field '{name}' doesn't exist on type '{parent.name}'", node,
                      {"code": "undefinedField", "typeName": parent.name, "fieldName": name})
            return
        if field is None:
            return
        given = {arg.name.value for arg in node.arguments or ()}
        missing = [arg for arg, spec in field.args.items()
                   if is_non_null_type(spec.type) and spec.default_value is Undefined and arg not in given]
        if missing:
            self.fail(f"Field '{name}' is missing required arguments: {', '.join(missing)}", node,
                      {"code": "missingRequiredArguments", "className": "Field", "name": name,
                       "arguments": ", ".join(missing)})
        named = get_named_type(field.type)
        if is_leaf_type(named) and node.selection_set:
            chosen = [print_ast(s) for s in node.selection_set.selections]
            self.fail(f"Selections can't be made on scalars (field '{name}' returns {named.name} but has "
                      f"selections [{', '.join(_quote(s) for s in chosen)}])", node,
                      {"code": "selectionMismatch", "nodeName": f"field '{name}'", "typeName": named.name})
        elif not is_leaf_type(named) and not node.selection_set:
            self.fail(f"Field must have selections (field '{name}' returns {named.name} but has no selections. "
                      f"Did you mean '{name} {{ ... }}'?)", node,
                      {"code": "selectionMismatch", "nodeName": f"field '{name}'", "typeName": named.name})

    def enter_argument(self, node: ArgumentNode, *args: Any) -> None:
        super().enter_argument(node, *args)
        context = self.context
        name = node.name.value
        directive = context.get_directive()
        field = context.get_field_def()
        owner = f"@{directive.name}" if directive else (self._field_name() or "")
        kind = "Directive" if directive else "Field"
        argument = context.get_argument()
        if argument is None:
            if directive is None and field is None:
                return  # the field itself is unknown: reported once, above
            self.fail(f"{kind} '{owner}' doesn't accept argument '{name}'", node,
                      {"code": "argumentNotAccepted", "name": owner, "typeName": kind, "argumentName": name})
            return
        if isinstance(node.value, VariableNode):
            self._check_variable(node, node.value, argument)
            return
        if _has_variable(node.value):
            return  # a variable inside a list or object: coerced (and refused) at execution
        if value_from_ast(node.value, argument.type) is Undefined:
            self.fail(f"Argument '{name}' on {kind} '{owner}' has an invalid value ({print_ast(node.value)}). "
                      f"Expected type '{argument.type}'.", node,
                      {"code": "argumentLiteralsIncompatible", "typeName": kind, "argumentName": name})

    def _check_variable(self, node: ArgumentNode, variable: VariableNode, argument: GraphQLArgument) -> None:
        var = variable.name.value
        definition = self.variables.get(var)
        if definition is None:
            return  # undeclared (reported by GitHubVariableRules) or inside a fragment
        schema = self.context.schema
        declared = type_from_ast(schema, definition.type)  # type: ignore[arg-type]
        if declared is None or allowed_variable_usage(schema, declared, definition.default_value,
                                                      argument.type, argument.default_value):
            return
        nullability = is_type_sub_type_of(schema, get_nullable_type(declared), get_nullable_type(argument.type))  # type: ignore[call-overload]
        problem = "Nullability mismatch" if nullability else "Type mismatch"
        name = node.name.value
        self.fail(f"{problem} on variable ${var} and argument {name} ({declared} / {argument.type})", node,
                  {"code": "variableMismatch", "variableName": var, "typeName": str(declared),
                   "argumentName": name, "errorMessage": problem})

    def _field_name(self) -> str | None:
        return self.path[-2] if len(self.path) >= 2 else None


class GitHubVariableRules(PathRule):
    """Undeclared, unused and badly typed variables, unknown types, directives, fragments."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self.declared: dict[str, VariableDefinitionNode] = {}
        self.used: set[str] = set()
        self.in_fragments: dict[str, list[VariableNode]] = {}

    def enter_operation_definition(self, node: OperationDefinitionNode, *args: Any) -> None:
        super().enter_operation_definition(node, *args)
        self.declared = {d.variable.name.value: d for d in node.variable_definitions or ()}
        self.used = set()
        label = "anonymous query" if node.name is None else node.name.value
        # The variables the operation and its fragments use, by a plain walk of their nodes:
        # graphql-core's get_recursive_variable_usages walks them again with type info, a
        # second pass over the whole document that doubled validation's time.
        usages = _variables_in(node)
        for fragment in self.context.get_recursively_referenced_fragments(node):
            name = fragment.name.value
            if name not in self.in_fragments:
                self.in_fragments[name] = _variables_in(fragment)
            usages += self.in_fragments[name]
        for usage in usages:
            var = usage.name.value
            self.used.add(var)
            if var not in self.declared:
                self.fail(f"Variable ${var} is used by {label} but not declared", usage,
                          {"code": "variableNotDefined", "variableName": var}, path=[self.path[0]])
        for var, definition in self.declared.items():
            if var not in self.used:
                self.fail(f"Variable ${var} is declared by {label} but not used", definition,
                          {"code": "variableNotUsed", "variableName": var}, path=[self.path[0]])

    def enter_variable_definition(self, node: VariableDefinitionNode, *_: Any) -> None:
        declared = type_from_ast(self.context.schema, node.type)  # type: ignore[arg-type]
        if declared is None or not is_input_type(declared):
            var = node.variable.name.value
            self.fail(f"{_named(node)} isn't a defined input type (on ${var})", node,
                      {"code": "variableRequiresValidType", "typeName": _named(node), "variableName": var})

    def enter_named_type(self, node: NamedTypeNode, _key: Any, parent: Any, *_: Any) -> None:
        if isinstance(parent, (InlineFragmentNode, FragmentDefinitionNode)):
            name = node.name.value
            if self.context.schema.get_type(name) is None:
                self.fail(f"No such type {name}, so it can't be a fragment condition", node,
                          {"code": "undefinedType", "typeName": name})

    def enter_directive(self, node: DirectiveNode, *_: Any) -> None:
        name = node.name.value
        if self.context.schema.get_directive(name) is None:
            self.fail(f"Directive @{name} is not defined", node,
                      {"code": "undefinedDirective", "directiveName": name})

    def enter_document(self, node: Any, *_: Any) -> None:
        defined = {d.name.value: d for d in node.definitions if isinstance(d, FragmentDefinitionNode)}
        spread: set[str] = set()
        for definition in node.definitions:
            if isinstance(definition, OperationDefinitionNode):
                spread |= {f.name.value for f in self.context.get_recursively_referenced_fragments(definition)}
        for name, fragment in defined.items():
            if name not in spread:
                self.fail(f"Fragment {name} was defined, but not used", fragment,
                          {"code": "useAndDefineFragment", "fragmentName": name}, path=[f"fragment {name}"])

    def enter_fragment_spread(self, node: FragmentSpreadNode, *_: Any) -> None:
        name = node.name.value
        if self.context.get_fragment(name) is None:
            self.fail(f"Fragment {name} was used, but not defined", node,
                      {"code": "useAndDefineFragment", "fragmentName": name})


def rules() -> list[type[ASTValidationRule]]:
    """GitHub-worded rules first, then graphql-core's spec rules they do not replace."""
    kept = [rule for rule in specified_rules if rule not in _REPLACED]
    return [GitHubVariableRules, GitHubFieldRules, *kept, FieldsWillMerge]


_KEYS: dict[type, tuple[str, ...]] = {}
"""The child attributes of each AST node class (graphql-core works them out on every read)."""


def _variables_in(root: Node) -> list[VariableNode]:
    """Every variable ``root`` uses, in document order (not those it declares)."""
    found: list[VariableNode] = []
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, VariableNode):
            found.append(node)
            continue
        children: list[Node] = []
        keys = _KEYS.get(type(node))
        if keys is None:
            keys = _KEYS[type(node)] = tuple(key for key in node.keys if key != "loc")
        for key in keys:
            value = getattr(node, key, None)
            if isinstance(value, Node):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children += [item for item in value if isinstance(item, Node)]
        stack += [child for child in reversed(children) if not isinstance(child, VariableDefinitionNode)]
    return found


def _has_variable(value: ValueNode) -> bool:
    if isinstance(value, VariableNode):
        return True
    if isinstance(value, ListValueNode):
        return any(_has_variable(v) for v in value.values)
    if isinstance(value, ObjectValueNode):
        return any(_has_variable(f.value) for f in value.fields)
    return False


def _named(node: VariableDefinitionNode) -> str:
    type_node: Any = node.type
    while not isinstance(type_node, NamedTypeNode):
        type_node = type_node.type
    return type_node.name.value


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'
