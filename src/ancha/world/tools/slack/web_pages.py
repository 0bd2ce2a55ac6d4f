"""The pages behind the links the replica hands out, so that every URL in an answer leads
back to this replica and answers there: the workspace's home (``auth.test``'s ``url``, and
where ``url_private`` sends a request without a token), message permalinks
(``/archives/<channel>/p<ts>``), file permalinks (``/files/<user>/<file>/<name>``,
``/files-pub/<team>-<file>-<secret>``) the team's and apps' icons and people's avatars (``/img/...``,
see ``image_links``).

Slack serves these to a person's browser; the replica answers with a short page saying what
the link names (404 when it names nothing), and a placeholder PNG for an icon.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ancha.world.kernel import images
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.slack.models import ts_key

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

_HTML = "text/html; charset=utf-8"


def serve(replica: SlackReplica, path: str) -> ToolResponse:
    """The page at ``path`` (below the tool's base URL), or 404."""
    parts = [part for part in path.split("/") if part]
    team = replica.state.team
    if not parts:
        return _page(f"{team['name']}", f"The Slack workspace {team['name']} ({team['domain']}).")
    if parts[0] == "img":  # icons, and the folder team.info names as avatar_base_url
        return ToolResponse(200, images.PIXEL, "image/png") if path.endswith((".png", ".jpg")) else _page("Images", "Icons.")
    if parts[0] == "archives" and len(parts) >= 2:
        return _message_page(replica, parts[1:])
    if parts[0] == "files" and len(parts) >= 3:
        return _file_page(replica, parts[2])
    if parts[0] == "files-pub" and len(parts) == 2:
        _, _, rest = parts[1].partition("-")
        return _file_page(replica, rest.partition("-")[0])
    return _not_found()


def _message_page(replica: SlackReplica, parts: list[str]) -> ToolResponse:
    channel = replica.state.channels.get(parts[0])
    if channel is None:
        return _not_found()
    name = f"#{channel.name}" if not channel.is_im else "a direct message"
    if len(parts) == 1:
        return _page(name, f"The conversation {name} ({channel.id}).")
    stamp = parts[1]
    ts = f"{stamp[1:-6]}.{stamp[-6:]}"
    valid = stamp.startswith("p") and len(stamp) > 7 and ts_key(ts) is not None
    message = replica.state.message(channel.id, ts) if valid else None
    if message is None:
        return _not_found()
    return _page(name, f"A message in {name} ({channel.id}) at {message.ts}.")


def _file_page(replica: SlackReplica, file_id: str) -> ToolResponse:
    file = replica.state.files.by_id.get(file_id)
    if file is not None and file.completed and not file.deleted:
        return _page(file.title, f"The file {file.title} ({file.id}).")
    remote = replica.state.files.remote.by_id.get(file_id)
    if remote is not None:
        return _page(remote.title, f"The remote file {remote.title} ({remote.id}), at {remote.external_url}.")
    return _not_found()


def _page(title: str, text: str) -> ToolResponse:
    body = (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)} | Slack</title></head>"
        f"<body><p>{html.escape(text)}</p></body></html>"
    )
    return ToolResponse(200, body.encode(), _HTML)


def _not_found() -> ToolResponse:
    return ToolResponse(404, b"Not Found", "text/plain; charset=utf-8", vendor_ok=False)
