"""Markdown: ``POST /markdown`` (JSON: ``text``, ``mode``, ``context``) and ``POST /markdown/raw``
(the text as the body), answered as HTML (``text/html;charset=utf-8``), as GitHub does.

Rendering is CommonMark with GitHub's extensions (tables, strikethrough, autolinks) by
markdown-it-py. In ``gfm`` mode line breaks are kept, ``@login`` links to the account's page
and ``#N`` to issue or pull N of the ``context`` repository, when they exist. Raw HTML in
the text is escaped rather than passed through (GitHub passes a sanitised subset).
"""

from __future__ import annotations

import html
import re
from functools import cache

from markdown_it import MarkdownIt

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route

HTML_TYPE = "text/html;charset=utf-8"
_REFERENCE = re.compile(r"(?<![\w/@#&])(@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})|#\d{1,9})\b")
_OUTSIDE_TAGS = re.compile(r"(<(?:code|pre|a)\b.*?</(?:code|pre|a)>|<[^>]+>)", re.S)


@cache
def _renderer(breaks: bool) -> MarkdownIt:
    return MarkdownIt("gfm-like", {"html": False, "breaks": breaks, "linkify": True})


def render(call: Call, text: str, mode: str, context: str | None) -> bytes:
    rendered = _renderer(mode == "gfm").render(text)
    if mode == "gfm":
        rendered = _references(call, rendered, context)
    return rendered.encode()


def _references(call: Call, rendered: str, context: str | None) -> str:
    """``@login`` and ``#N`` as links, outside tags, code and existing links."""
    repo = None
    if context and "/" in context:
        owner, _, name = context.partition("/")
        found = call.state.repo(owner, name)
        repo = found if found is not None and call.role(found) is not None else None

    def link(match: re.Match[str]) -> str:
        token = match.group(1)
        if token.startswith("@"):
            account = call.state.account(token[1:])
            if account is None:
                return token
            return f'<a class="user-mention" href="{web_url(call.base)}/{account.login}">@{html.escape(account.login)}</a>'
        number = int(token[1:])
        if repo is None or number not in repo.issues:
            return token
        kind = "pull" if repo.issues[number].is_pull else "issues"
        return f'<a class="issue-link" href="{web_url(call.base)}/{repo.full_name}/{kind}/{number}">{token}</a>'

    parts = _OUTSIDE_TAGS.split(rendered)
    return "".join(part if i % 2 else _REFERENCE.sub(link, part) for i, part in enumerate(parts))


@route("POST", "/markdown")
def markdown_render(call: Call) -> Reply:
    if "text" not in call.body:
        raise errors.invalid_request('"text" wasn\'t supplied.')
    text = call.field_str("text", allow_none=False) or ""
    mode = call.field_str("mode", allow_none=False) or "markdown"
    if mode not in ("markdown", "gfm"):
        raise errors.invalid_request(f"For 'mode', \"{mode}\" is not one of markdown, gfm.")
    context = call.field_str("context")
    return Reply(200, render(call, text, mode, context), {"content-type": HTML_TYPE})


@route("POST", "/markdown/raw")
def markdown_render_raw(call: Call) -> Reply:
    try:
        text = call.raw_body.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.BadRequest("Problems parsing text: the body is not UTF-8.") from None
    return Reply(200, render(call, text, "markdown", None), {"content-type": HTML_TYPE})
