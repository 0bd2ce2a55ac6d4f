"""A client agent for real hostnames: the okta SDK at https://acme.okta.com with only its
token (no testing switch: the SDK checks the org URL is https and an Okta host) lists the
users and suspends Walter."""

from __future__ import annotations

import asyncio
import os
import sys

from okta.client import Client as OktaClient

ORG_URL = "https://acme.okta.com"
SUSPENDED = "walter@acme.com"


async def suspend() -> int:
    client = OktaClient({"orgUrl": ORG_URL, "token": os.environ["ANCHA_OKTA_TOKEN"]})
    users, _, error = await client.list_users()
    if error is not None:
        print(f"okta_client: list_users failed: {error}", file=sys.stderr)
        return 1
    logins = {user.profile.login: user.id for user in users}
    if SUSPENDED not in logins:
        print(f"okta_client: {SUSPENDED} is not among {sorted(logins)}", file=sys.stderr)
        return 1
    # The SDK answers (result, response, error), or (response, error) for an operation with no body.
    error = (await client.suspend_user(logins[SUSPENDED]))[-1]
    if error is not None:
        print(f"okta_client: suspend_user failed: {error}", file=sys.stderr)
        return 1
    print(f"okta_client: listed {len(logins)} users at {ORG_URL}, suspended {SUSPENDED}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(suspend()))
