"""GitHub's GraphQL error shapes.

Static errors (validation, parse) carry ``extensions.code``; errors raised while
resolving carry a top-level ``type`` (``NOT_FOUND``, ``FORBIDDEN``, ``UNPROCESSABLE``,
...) as GitHub's answers do::

    {"type": "NOT_FOUND", "path": ["repository"], "locations": [{"line": 1, "column": 3}],
     "message": "Could not resolve to a Repository with the name 'acme/nope'."}

A resolver raises a ``GitHubGraphQLError`` subclass; ``format_error`` turns any
``GraphQLError`` into GitHub's key order.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, GraphQLSyntaxError, Source, TokenKind
from graphql.language.lexer import Lexer


class GitHubGraphQLError(Exception):
    """An error a resolver raises; ``type`` is GitHub's error type."""

    type = "UNPROCESSABLE"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.extensions: dict[str, Any] = {"type": self.type}


class NotFound(GitHubGraphQLError):
    type = "NOT_FOUND"


class Forbidden(GitHubGraphQLError):
    type = "FORBIDDEN"


class Unprocessable(GitHubGraphQLError):
    type = "UNPROCESSABLE"


class InvalidArgument(GitHubGraphQLError):
    type = "INVALID_ARGUMENT"


class ExcessivePagination(GitHubGraphQLError):
    type = "EXCESSIVE_PAGINATION"


class MissingPaginationBoundaries(GitHubGraphQLError):
    type = "MISSING_PAGINATION_BOUNDARIES"


class NotImplementedHere(GitHubGraphQLError):
    """The vendor has this and the replica does not: a coverage gap."""

    type = "NOT_IMPLEMENTED"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.extensions = {"code": "NOT_IMPLEMENTED"}


def not_found_node(global_id: str) -> NotFound:
    return NotFound(f"Could not resolve to a node with the global id of '{global_id}'")


def format_error(error: GraphQLError) -> dict[str, Any]:
    """One error in GitHub's order: type, path, extensions, locations, message."""
    out: dict[str, Any] = {}
    extensions = dict(error.extensions or {})
    kind = extensions.pop("type", None)
    if kind is not None:
        out["type"] = kind
    if error.path is not None:
        out["path"] = list(error.path)
    if extensions:
        out["extensions"] = extensions
    if error.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    out["message"] = error.message
    return out


def is_coverage_gap(error: GraphQLError) -> bool:
    return (error.extensions or {}).get("code") == "NOT_IMPLEMENTED"


_RUBY_TOKENS = {
    TokenKind.BRACE_L: "LCURLY", TokenKind.BRACE_R: "RCURLY", TokenKind.PAREN_L: "LPAREN",
    TokenKind.PAREN_R: "RPAREN", TokenKind.BRACKET_L: "LBRACKET", TokenKind.BRACKET_R: "RBRACKET",
    TokenKind.COLON: "COLON", TokenKind.EQUALS: "EQUALS", TokenKind.BANG: "BANG", TokenKind.DOLLAR: "VAR_SIGN",
    TokenKind.AT: "DIR_SIGN", TokenKind.SPREAD: "ELLIPSIS", TokenKind.PIPE: "PIPE", TokenKind.AMP: "AMP",
    TokenKind.NAME: "IDENTIFIER", TokenKind.INT: "INT", TokenKind.FLOAT: "FLOAT", TokenKind.STRING: "STRING",
    TokenKind.BLOCK_STRING: "STRING",
}
_KEYWORDS = {"query", "mutation", "subscription", "fragment", "on", "true", "false", "null", "type", "schema",
             "input", "enum", "interface", "union", "scalar", "directive", "extend", "implements"}


def syntax_error(source: str, error: GraphQLSyntaxError) -> dict[str, Any]:
    """graphql-ruby's parse error: ``Parse error on "}" (RCURLY) at [1, 12]``."""
    location = error.locations[0] if error.locations else None
    if location is None:
        return {"message": "Parse error"}
    token = _token_at(source, location.line, location.column)
    where = [{"line": location.line, "column": location.column}]
    if token is None:
        return {"message": "Unexpected end of document", "locations": where}
    kind, value = token
    name = value.upper() if kind == TokenKind.NAME and value in _KEYWORDS else _RUBY_TOKENS.get(kind, kind.name)
    return {"message": f'Parse error on "{value}" ({name}) at [{location.line}, {location.column}]',
            "locations": where}


def _token_at(source: str, line: int, column: int) -> tuple[TokenKind, str] | None:
    lexer = Lexer(Source(source))
    try:
        while True:
            token = lexer.advance()
            if token.kind == TokenKind.EOF:
                return None
            if (token.line, token.column) >= (line, column):
                return token.kind, token.value if token.value is not None else token.kind.value
    except GraphQLSyntaxError:
        # A lexing error (bad character, unterminated string): name the character itself.
        offset = _offset(source, line, column)
        char = source[offset] if offset < len(source) else ""
        return (TokenKind.NAME, char) if char else None


def _offset(source: str, line: int, column: int) -> int:
    lines = source.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + column - 1
