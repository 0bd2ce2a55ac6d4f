"""A client agent for real hostnames: GitHub's MCP server (@modelcontextprotocol/server-github,
which calls https://api.github.com itself) driven over stdio with the official ``mcp`` Python
client: list its tools, get issue #4 of acme/orders, comment on it.

The server is ``node $ANCHA_TEST_MCP_GITHUB`` (node_clients.mcp_github_server()). It gets this
agent's whole environment, so that the proxy and trust variables reach it, plus
GITHUB_PERSONAL_ACCESS_TOKEN."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ISSUE = 4
SERVER = "ANCHA_TEST_MCP_GITHUB"


async def drive() -> int:
    server = StdioServerParameters(
        command=os.environ.get("ANCHA_TEST_NODE", "node"), args=[os.environ[SERVER]],
        env={**os.environ, "GITHUB_PERSONAL_ACCESS_TOKEN": os.environ["ANCHA_GITHUB_TOKEN"]})
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        missing = {"get_issue", "add_issue_comment"} - tools
        if missing:
            print(f"mcp_github: the server lacks {sorted(missing)}", file=sys.stderr)
            return 1
        where = {"owner": "acme", "repo": "orders", "issue_number": ISSUE}
        got = await session.call_tool("get_issue", where)
        if got.is_error:
            print(f"mcp_github: get_issue failed: {_text(got)}", file=sys.stderr)
            return 1
        title = json.loads(_text(got))["title"]
        added = await session.call_tool("add_issue_comment", {**where, "body": f"The MCP server read {title!r}"})
        if added.is_error:
            print(f"mcp_github: add_issue_comment failed: {_text(added)}", file=sys.stderr)
            return 1
        print(f"mcp_github: {len(tools)} tools; read issue #{ISSUE} ({title!r}), "
              f"commented {json.loads(_text(added))['html_url']}")
    return 0


def _text(result: object) -> str:
    return "".join(getattr(part, "text", "") for part in getattr(result, "content", []))


if __name__ == "__main__":
    sys.exit(asyncio.run(drive()))
