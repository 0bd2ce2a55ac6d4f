"""A client agent for real hostnames: the ``pagerduty`` package with only its keys lists the
open incidents at https://api.pagerduty.com, acknowledges then resolves the seeded one, and
sends one Events API v2 event to https://events.pagerduty.com."""

from __future__ import annotations

import os
import sys

import pagerduty

TITLE = "Checkout error rate above 5%"
"""The seeded incident's title (scene/scene.yaml)."""


def main() -> int:
    rest = pagerduty.RestApiV2Client(os.environ["ANCHA_PAGERDUTY_TOKEN"],
                                     default_from=os.environ["ANCHA_PAGERDUTY_FROM_EMAIL"])
    incidents = list(rest.iter_all("incidents", params={"statuses[]": ["triggered", "acknowledged"]}))
    seeded = next((i for i in incidents if i["title"] == TITLE), None)
    if seeded is None:
        print(f"pagerduty_client: no open incident {TITLE!r} among {[i['title'] for i in incidents]}",
              file=sys.stderr)
        return 1
    for status in ("acknowledged", "resolved"):
        rest.rput(f"incidents/{seeded['id']}", json={"type": "incident_reference", "status": status})
    events = pagerduty.EventsApiV2Client(os.environ["ANCHA_PAGERDUTY_ROUTING_KEY"])
    dedup_key = events.trigger("Real hostnames: an event from the pagerduty package", "real-hostnames-client")
    print(f"pagerduty_client: listed {len(incidents)} open incidents, resolved {seeded['id']}, "
          f"sent an event ({dedup_key})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
