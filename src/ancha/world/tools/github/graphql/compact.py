"""GitHub's GraphQL schema as compact structure: every type, field, argument, enum value and
directive, with no descriptions, and the schema built from it without parsing SDL.

``encode`` runs once, when the vendor data is regenerated (``python -m ancha.vendor
regenerate``); ``decode`` runs in every process that serves GraphQL. Building from this
form makes each graphql-core type directly (fields as thunks, resolved when the schema
collects its types), which is what parsing 1.2 MB of SDL and walking its AST cost before.

The form, one list per type (``T`` is a type reference as written in SDL, ``"[Int!]!"``)::

    [name, "S"]                                    scalar
    [name, "O" | "I", [interface...], {field: [T, {arg: A}, deprecation]}]
    [name, "U", [member...]]                       union
    [name, "E", {value: deprecation}]              enum
    [name, "N", {field: A}, one_of]                input object
    A = [T, default literal or None, deprecation]

A directive is ``[name, [location...], repeatable, {arg: A}]``. ``deprecation`` is the
reason of ``@deprecated`` or None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    DirectiveLocation,
    GraphQLArgument,
    GraphQLDefaultInput,
    GraphQLDirective,
    GraphQLEnumType,
    GraphQLEnumValue,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    parse_const_value,
    print_ast,
    specified_directives,
    specified_scalar_types,
)
from graphql.type.definition import GraphQLInputType, GraphQLOutputType, GraphQLType

Compact = dict[str, Any]


# --- encode (at regeneration) -------------------------------------------------------------


def encode(schema: GraphQLSchema) -> Compact:
    """The structure of ``schema`` (built from SDL with its AST nodes) as JSON-ready data."""
    standard = {d.name for d in specified_directives}
    types = [_encode_type(t) for name, t in sorted(schema.type_map.items())
             if not name.startswith("__") and name not in specified_scalar_types]
    return {
        "query": schema.query_type.name if schema.query_type else None,
        "mutation": schema.mutation_type.name if schema.mutation_type else None,
        "subscription": schema.subscription_type.name if schema.subscription_type else None,
        "directives": [[d.name, [loc.name for loc in d.locations], d.is_repeatable, _encode_args(d.args)]
                       for d in schema.directives if d.name not in standard],
        "types": types,
    }


def _encode_type(named: GraphQLNamedType) -> list[Any]:
    if isinstance(named, GraphQLScalarType):
        return [named.name, "S"]
    if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
        kind = "O" if isinstance(named, GraphQLObjectType) else "I"
        fields = {name: [str(field.type), _encode_args(field.args), field.deprecation_reason]
                  for name, field in named.fields.items()}
        return [named.name, kind, [i.name for i in named.interfaces], fields]
    if isinstance(named, GraphQLUnionType):
        return [named.name, "U", [t.name for t in named.types]]
    if isinstance(named, GraphQLEnumType):
        return [named.name, "E", {name: value.deprecation_reason for name, value in named.values.items()}]
    if isinstance(named, GraphQLInputObjectType):
        return [named.name, "N", {name: _encode_input(field) for name, field in named.fields.items()},
                bool(named.is_one_of)]
    raise TypeError(f"unexpected GraphQL type {named!r}")


def _encode_args(args: dict[str, GraphQLArgument]) -> dict[str, list[Any]]:
    return {name: _encode_input(arg) for name, arg in args.items()}


def _encode_input(value: GraphQLArgument | GraphQLInputField) -> list[Any]:
    default = value.default
    literal = print_ast(default.literal) if default is not None and default.literal is not None else None
    if default is not None and literal is None:
        raise ValueError(f"a default without its literal cannot be encoded: {default!r}")
    return [str(value.type), literal, value.deprecation_reason]


# --- decode (at run time) ------------------------------------------------------------------


def decode(data: Compact) -> GraphQLSchema:
    """Build the schema ``encode`` described (validated as GitHub's server treats it)."""
    named: dict[str, GraphQLNamedType] = dict(specified_scalar_types)
    refs: dict[str, GraphQLType] = {}

    def ref(text: str) -> Any:
        found = refs.get(text)
        if found is None:
            if text.endswith("!"):
                found = GraphQLNonNull(ref(text[:-1]))
            elif text.startswith("["):
                found = GraphQLList(ref(text[1:-1]))
            else:
                found = named[text]
            refs[text] = found
        return found

    def args(spec: dict[str, list[Any]]) -> dict[str, GraphQLArgument]:
        return {name: GraphQLArgument(ref(t), default=_default(literal), deprecation_reason=why)
                for name, (t, literal, why) in spec.items()}

    def output_fields(spec: dict[str, list[Any]]) -> Callable[[], dict[str, GraphQLField]]:
        return lambda: {name: GraphQLField(_as_output(ref(t)), args(a) if a else None, deprecation_reason=why)
                        for name, (t, a, why) in spec.items()}

    def input_fields(spec: dict[str, list[Any]]) -> Callable[[], dict[str, GraphQLInputField]]:
        return lambda: {name: GraphQLInputField(_as_input(ref(t)), default=_default(literal),
                                                deprecation_reason=why)
                        for name, (t, literal, why) in spec.items()}

    def members(names: list[str]) -> Callable[[], list[Any]]:
        return lambda: [named[n] for n in names]

    for entry in data["types"]:
        name, kind = entry[0], entry[1]
        made: GraphQLNamedType
        if kind == "S":
            made = GraphQLScalarType(name)
        elif kind == "O":
            made = GraphQLObjectType(name, output_fields(entry[3]), members(entry[2]))
        elif kind == "I":
            made = GraphQLInterfaceType(name, output_fields(entry[3]), interfaces=members(entry[2]))
        elif kind == "U":
            made = GraphQLUnionType(name, members(entry[2]))
        elif kind == "E":
            made = GraphQLEnumType(name, {value: GraphQLEnumValue(value, deprecation_reason=why)
                                          for value, why in entry[2].items()}, names_as_values=None)
        elif kind == "N":
            made = GraphQLInputObjectType(name, input_fields(entry[2]), is_one_of=entry[3])
        else:
            raise ValueError(f"unknown kind {kind!r} of GraphQL type {name!r}")
        named[name] = made

    directives = [*specified_directives, *(
        GraphQLDirective(name, [DirectiveLocation[loc] for loc in locations], args(a), is_repeatable=repeatable)
        for name, locations, repeatable, a in data["directives"])]

    def root(key: str) -> Any:
        return named[data[key]] if data.get(key) else None

    built = GraphQLSchema(query=root("query"), mutation=root("mutation"), subscription=root("subscription"),
                          types=list(named.values()), directives=directives)
    # GitHub's own schema breaks a strict spec rule (deprecated implementations of
    # undeprecated interface fields); graphql-core would refuse every query over it.
    # Mark it as already validated with no errors, as GitHub's server treats it.
    built._validation_errors = []
    return built


def _default(literal: str | None) -> GraphQLDefaultInput | None:
    return None if literal is None else GraphQLDefaultInput(literal=parse_const_value(literal))


def _as_output(t: GraphQLType) -> GraphQLOutputType:
    return t  # type: ignore[return-value]  # the SDL put it in an output position


def _as_input(t: GraphQLType) -> GraphQLInputType:
    return t  # type: ignore[return-value]  # the SDL put it in an input position
