"""A client agent for real hostnames: datadog-api-client's ``Configuration()`` with only the
keys, from DD_API_KEY and DD_APP_KEY as Datadog documents (so it calls
https://api.datadoghq.com), lists the monitors, posts an event and reads it back."""

from __future__ import annotations

import os
import sys

from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v1.api.events_api import EventsApi
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.model.event_create_request import EventCreateRequest

MONITOR = "orders p99 latency"
TITLE = "Real hostnames: datadog-api-client was here"


def main() -> int:
    os.environ["DD_API_KEY"] = os.environ["ANCHA_DATADOG_API_KEY"]
    os.environ["DD_APP_KEY"] = os.environ["ANCHA_DATADOG_APP_KEY"]
    with ApiClient(Configuration()) as client:
        monitors = MonitorsApi(client).list_monitors()
        names = [monitor.name for monitor in monitors]
        if MONITOR not in names:
            print(f"datadog_client: no monitor {MONITOR!r} among {names}", file=sys.stderr)
            return 1
        events = EventsApi(client)
        posted = events.create_event(EventCreateRequest(title=TITLE, text="posted at api.datadoghq.com",
                                                        tags=["source:real-hostnames"]))
        read = events.get_event(posted.event.id)
        if read.event.title != TITLE:
            print(f"datadog_client: event {posted.event.id} reads back as {read.event.title!r}", file=sys.stderr)
            return 1
    print(f"datadog_client: listed {len(names)} monitors, posted and read back event {posted.event.id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
