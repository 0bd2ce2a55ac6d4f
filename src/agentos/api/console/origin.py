"""The hosted console refuses a form posted from another site.

A session cookie is ``SameSite=Strict``, so another site cannot post with the visitor's
session, but it could still post the sign-in form with its own key and sign the visitor
into the attacker's workspace (login CSRF). Browsers name a form's origin in ``Origin``
(else ``Referer``): a write whose origin is not the console's own is refused. A request
with neither header (a script, not a browser) goes through: it carries no one's cookie.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


class SameOrigin:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE:
            request = Request(scope)
            claimed = request.headers.get("origin") or request.headers.get("referer")
            if claimed is not None and not _same(claimed, request):
                answer = PlainTextResponse(
                    "This form was sent from another site; open the console itself and send it from there", 403)
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _same(claimed: str, request: Request) -> bool:
    if claimed == "null":
        return False
    parts = urlsplit(claimed)
    # Behind a reverse proxy that rewrites Host, the address the browser used is X-Forwarded-Host.
    hosts = {request.headers.get("host", "").lower(), request.headers.get("x-forwarded-host", "").lower()}
    return parts.scheme in ("http", "https") and parts.netloc.lower() in hosts - {""}
