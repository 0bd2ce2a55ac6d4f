"""search.*: messages and files matching a query, as the person searching can see them.

Search needs a user token: a bot token gets ``not_allowed_token_type``, as in Slack. A
person's search covers public channels and the private ones, DMs and group DMs they are
in. Matches come a page at a time (``page``, ``count``), by relevance (``sort=score``,
the default) or time (``sort=timestamp``), newest first unless ``sort_dir=asc``.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.message_search import Hit, Query, channels_for, highlight, hits, parse, users_for
from ancha.world.tools.slack.models import Channel
from ancha.world.tools.slack.routes.files import file_dict, visible

COUNT = 20
MAX_COUNT = 100
MAX_PAGE = 100


def search_messages(call: Call) -> dict[str, Any]:
    text, query = _query(call)
    return {"ok": True, "query": text, "messages": _messages(call, query)}


def search_files(call: Call) -> dict[str, Any]:
    text, query = _query(call)
    return {"ok": True, "query": text, "files": _files(call, query)}


def search_all(call: Call) -> dict[str, Any]:
    text, query = _query(call)
    return {"ok": True, "query": text, "messages": _messages(call, query), "files": _files(call, query),
            "posts": {"total": 0, "matches": []}}


# --- shared --------------------------------------------------------------------------


def _query(call: Call) -> tuple[str, Query]:
    if call.caller.is_bot:
        raise errors.NotAllowedTokenType()
    text = call.params.required("query")
    return text, parse(text)


def _messages(call: Call, query: Query) -> dict[str, Any]:
    user_id = call.caller.user_id
    named = channels_for(call.replica, query, user_id)
    channels = [c for c in (named if named is not None else call.state.channels.values()) if call.can_see(c)]
    users = users_for(call.replica, query, user_id)
    found: list[Hit] = []
    if users is None or users:
        for channel in channels:
            found.extend(hits(call.replica, channel, query, users))
    found.sort(key=_order(call, by_score=lambda h: h.score, by_time=lambda h: h.key))
    count, page, shown = _page(call, found)
    use_highlight = call.params.get_bool("highlight")
    matches = [_match(call, hit, query, use_highlight) for hit in shown]
    return {"total": len(found), **_paging(len(found), count, page), "matches": matches}


def _files(call: Call, query: Query) -> dict[str, Any]:
    user_id = call.caller.user_id
    named = channels_for(call.replica, query, user_id)
    users = users_for(call.replica, query, user_id)
    found: list[tuple[int, Any]] = []
    for file in call.state.files.shared():
        if file.deleted or not visible(call, file):
            continue
        if users is not None and file.user not in users:
            continue
        if named is not None and not any(c.id in file.shares for c in named):
            continue
        if not query.in_time(file.created * 1_000_000):
            continue
        score = query.matches_text(f"{file.name} {file.title}")
        if score:
            found.append((score, file))
    found.sort(key=_order(call, by_score=lambda f: f[0], by_time=lambda f: f[1].created))
    count, page, shown = _page(call, found)
    return {"total": len(found), **_paging(len(found), count, page),
            "matches": [file_dict(call, file) for _, file in shown]}


def _order(call: Call, by_score: Any, by_time: Any) -> Any:
    """The sort key for ``sort`` and ``sort_dir`` (the list is then sorted ascending)."""
    p = call.params
    sort = (p.get_str("sort") or "score").lower()
    ascending = (p.get_str("sort_dir") or "desc").lower() == "asc"
    sign = 1 if ascending else -1
    if sort == "timestamp":
        return lambda item: sign * by_time(item)
    return lambda item: (sign * by_score(item), -by_time(item))  # equal scores: newest first


def _page(call: Call, found: list[Any]) -> tuple[int, int, list[Any]]:
    p = call.params
    count = p.get_int("count", COUNT)
    count = COUNT if count <= 0 else min(count, MAX_COUNT)
    page = min(max(1, p.get_int("page", 1)), MAX_PAGE)
    return count, page, found[(page - 1) * count:page * count]


def _paging(total: int, count: int, page: int) -> dict[str, Any]:
    pages = -(-total // count) if total else 0
    first = (page - 1) * count + 1
    return {"pagination": {"total_count": total, "page": page, "per_page": count, "page_count": pages,
                           "first": first, "last": min(total, page * count)},
            "paging": {"count": count, "total": total, "page": page, "pages": pages}}


def _match(call: Call, hit: Hit, query: Query, use_highlight: bool) -> dict[str, Any]:
    user = call.state.users.get(hit.user)
    return {"iid": f"{hit.channel.id}-{hit.ts}", "team": call.state.team["id"], "score": hit.score,
            "channel": _channel(call, hit.channel), "type": "message", "user": hit.user,
            "username": user.name if user is not None else "", "ts": hit.ts,
            "text": highlight(hit.text, query) if use_highlight else hit.text,
            "permalink": _permalink(call, hit)}


def _channel(call: Call, channel: Channel) -> dict[str, Any]:
    name = channel.name
    if channel.is_im:  # a DM is named for the other person
        name = next((m for m in channel.members if m != call.caller.user_id), call.caller.user_id)
    return {"id": channel.id, "is_channel": not (channel.is_im or channel.is_mpim or channel.is_private),
            "is_group": channel.is_private and not channel.is_mpim, "is_im": channel.is_im,
            "is_mpim": channel.is_mpim, "is_shared": False, "is_org_shared": False, "is_ext_shared": False,
            "is_private": channel.is_private or channel.is_im, "name": name, "pending_shared": [],
            "is_pending_ext_shared": False}


def _permalink(call: Call, hit: Hit) -> str:
    link = f"{call.replica.urls.workspace}/archives/{hit.channel.id}/p{hit.ts.replace('.', '')}"
    if hit.thread_ts is not None and hit.thread_ts != hit.ts:
        link += f"?thread_ts={hit.thread_ts}&cid={hit.channel.id}"
    return link


ROUTES: dict[str, Handler] = {
    "search.messages": search_messages,
    "search.files": search_files,
    "search.all": search_all,
}

_MODIFIERS = ("modifiers in:, from:, before:/after:/on:, quoted phrases, -exclusions and prefix* only "
              "(no has:, is:, during: or to:); relevance is a count of matched terms")
PARTIAL: dict[str, str] = {
    "search.messages": _MODIFIERS,
    "search.files": _MODIFIERS + "; matches file names and titles, not contents",
    "search.all": _MODIFIERS + "; no posts",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
