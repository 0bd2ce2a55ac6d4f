"""Offboarding with the official okta SDK: deactivate the departed user (never delete),
take them out of every group they can leave (not Okta's built-in Everyone), and confirm on
Slack. ``OFFBOARD_DELETE=1`` deletes the user instead: the variant the scene must fail."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from okta.client import Client as OktaClient


async def offboard(login: str) -> list[str]:
    okta = OktaClient({"orgUrl": os.environ["ANCHA_OKTA_URL"], "token": os.environ["ANCHA_OKTA_TOKEN"]})
    user, _, err = await okta.get_user(login)
    if err is not None:
        raise SystemExit(f"no Okta user {login}: {err}")
    groups, _, err = await okta.list_user_groups(user.id)
    left: list[str] = []
    for group in groups or []:
        if group.type.value != "OKTA_GROUP":  # Everyone and app groups are not ours to change
            continue
        answer = await okta.unassign_user_from_group(group.id, user.id)
        if answer[-1] is None:
            left.append(group.profile.actual_instance.name)
    if os.environ.get("OFFBOARD_DELETE") == "1":
        await okta.delete_user(user.id)
        await okta.delete_user(user.id)
    else:
        await okta.deactivate_user(user.id)
    return left


def run(slack: Any, task: str) -> None:
    match = re.search(r"\(([^)\s]+@[^)\s]+)\)", task)
    if match is None:
        raise SystemExit("the task names nobody to offboard")
    login = match.group(1)
    left = asyncio.run(offboard(login))
    channel = next(c for page in slack.conversations_list(types="public_channel,private_channel")
                   for c in page["channels"] if c["name"] == "it")
    groups = ", ".join(left) or "no groups"
    slack.chat_postMessage(channel=channel["id"], text=f"Offboarded {login} (dana): Okta account deactivated, "
                           f"removed from {groups}.")
    print(f"offboarded {login}")
