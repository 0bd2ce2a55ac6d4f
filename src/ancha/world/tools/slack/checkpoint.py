"""What a checkpoint of a Slack world names instead of copying.

The seeded history's plan (``history.HistoryPlan``: every seeded message placed, and each
channel's ``ChannelPlan``) is worked out once per scene and shared by all its trials: a
checkpoint names it, and each channel's plan, the way a trial's channels refer to them.
A trial's own messages (written, or seeded and since read) travel with the checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping

from ancha.world.tools.slack.replica import SlackReplica


def shared(replica: SlackReplica) -> Mapping[str, object]:
    plan = replica.history.plan
    found: dict[str, object] = {"history": plan}
    for index, channel in plan.channels.items():
        found[f"history:{index}"] = channel
    return found
