"""The headers every console response carries: the browser never guesses a type
(``X-Content-Type-Options: nosniff``), and a page runs and styles itself only from the
console's own static files (a strict ``Content-Security-Policy``: nothing inline, nothing
from elsewhere, never inside another site's frame).

What a page shows comes from runs: text an agent wrote, bodies a replica answered. The
templates escape it; the policy is the second wall, should anything slip through.
"""

from __future__ import annotations

import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""Scripts, styles, images and fetches from the console itself; no inline script or style
(console.js places the timeline from data attributes), no plugins, no frames."""
RAW_POLICY = "default-src 'none'; sandbox; base-uri 'none'; frame-ancestors 'none'"
"""A raw file shown in the browser (``agent.log``) runs nothing and loads nothing."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def raw_file_headers(*parts: str) -> dict[str, str]:
    """The headers of a raw file named from ``parts`` (scene, trial, file name): shown inline,
    under a filename of letters, digits, ``.``, ``_`` and ``-`` only, with ``RAW_POLICY``."""
    name = _UNSAFE.sub("_", "-".join(parts)).strip("._-")[:150] or "file"
    return {"content-disposition": f'inline; filename="{name}"', "content-security-policy": RAW_POLICY}


class SecurityHeaders:
    """Adds ``nosniff`` and ``PAGE_POLICY`` to every response of ``app`` that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("x-content-type-options", "nosniff")
                headers.setdefault("content-security-policy", PAGE_POLICY)
            await send(message)

        await self.app(scope, receive, send_with_headers)
