"""Mutations run through the REST core's own handlers, in-process.

A GraphQL mutation is the same write as a REST call: ``rest_call`` builds the core's
``Call`` for ``METHOD /path`` with the GraphQL caller and runs the route's handler, so
validation, permissions, state changes, issue events and domain events are the REST
API's, by construction. REST errors become GitHub's GraphQL errors (``FORBIDDEN``,
``NOT_FOUND``, ``UNPROCESSABLE``). Nothing here is traced or rate-limited separately:
the agent made one request, the GraphQL one.
"""

from __future__ import annotations

import json
from typing import Any

from ancha.world.tools.github import errors as rest_errors
from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.graphql.context import Context
from ancha.world.tools.github.graphql.errors import (
    Forbidden,
    GitHubGraphQLError,
    NotFound,
    NotImplementedHere,
    Unprocessable,
)
from ancha.world.tools.github.router import template_params
from ancha.world.tools.github.routes import ROUTER


class MissingRoute(RuntimeError):
    """The REST core does not serve the route a mutation needs (yet)."""


def call_for(context: Context, method: str, path: str, body: Any = None, query: str = "") -> tuple[Call, Any]:
    """The core's ``Call`` for ``method path`` as the GraphQL caller, and the route's handler."""
    found = ROUTER.match(path, method)
    if found is None or method not in found[0]:
        raise MissingRoute(f"{method} {path}")
    route = found[0][method]
    params = dict(zip(template_params(route.template), found[1], strict=False))
    raw = json.dumps(body).encode() if body is not None else b""
    call = Call(context.replica, route, method, path, params, query, raw, context.caller,
                context.replica.base_url)
    return call, route.handler


def rest_call(context: Context, mutation: str, method: str, path: str, body: Any = None) -> Any:
    """Run one REST handler; its JSON answer, or the GraphQL error GitHub gives for its failure."""
    try:
        call, handler = call_for(context, method, path, body)
    except MissingRoute:
        context.coverage_gap = True
        raise NotImplementedHere(f"Field 'Mutation.{mutation}' is not implemented by this replica") from None
    try:
        result = handler(call)
    except rest_errors.GitHubError as exc:
        raise translate(exc, mutation, context) from None
    return result.body if isinstance(result, Reply) else result


def translate(exc: rest_errors.GitHubError, mutation: str, context: Context) -> GitHubGraphQLError:
    """GitHub's GraphQL answer for what the REST API refuses."""
    if isinstance(exc, rest_errors.Forbidden):
        login = context.viewer.login
        operation = mutation[:1].upper() + mutation[1:]
        if exc.message in ("Forbidden", rest_errors.MustHavePush.message, rest_errors.MustHaveAdmin.message):
            return Forbidden(f"{login} does not have the correct permissions to execute `{operation}`")
        return Forbidden(exc.message)
    if isinstance(exc, rest_errors.NotFound):
        return NotFound(exc.message if exc.message != "Not Found" else "Could not resolve to a node")
    detail = exc.message
    for error in exc.errors or ():
        if isinstance(error, str):  # some 422s list plain sentences
            detail = error
            break
        if isinstance(error, dict) and error.get("message"):
            detail = str(error["message"])
            break
        if isinstance(error, dict) and error.get("field"):
            detail = f"{detail}: {error.get('field')} {error.get('code', 'invalid')}"
            break
    return Unprocessable(detail.removeprefix("Invalid request.\n\n"))
