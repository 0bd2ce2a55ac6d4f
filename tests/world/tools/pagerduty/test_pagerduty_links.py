"""Every link the PagerDuty replica hands out leads back to it: the official ``pagerduty``
client, reaching the replica over TLS, follows each ``self`` and ``html_url`` it is given."""

from __future__ import annotations

from typing import Any

from pagerduty_support import PD


def _links(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for item in value.values():
            if isinstance(item, str) and item.startswith(("http://", "https://")):
                found.add(item)
            else:
                _links(item, found)
    elif isinstance(value, list):
        for item in value:
            _links(item, found)
    return found


def test_every_link__of_every_record__is_followed_by_the_official_client(pd: PD) -> None:
    client = pd.client
    team = client.rpost("teams", json={"type": "team", "name": "Payments"})
    client.rput(f"teams/{team['id']}/users/{pd.ref('pd_laura')}", json={"role": "responder"})
    client.rput(f"teams/{team['id']}/escalation_policies/{pd.ref('pd_orders_policy')}")
    pd.events().trigger("Orders 5xx above 5%", "orders-api", dedup_key="orders-5xx")
    incident = client.list_all("incidents", params={"incident_key": "orders-5xx"})[0]
    assert pd.url.startswith("https://")
    answers: list[Any] = [
        client.list_all("incidents", params={"date_range": "all"}),
        client.list_all("services"),
        client.list_all("users"),
        client.list_all("escalation_policies"),
        client.list_all("schedules"),
        client.list_all("teams"),
        client.list_all("oncalls"),
        client.list_all("log_entries"),
        client.list_all(f"incidents/{incident['id']}/alerts"),
        client.rget(f"incidents/{incident['id']}/notes"),
        client.rget(
            f"schedules/{pd.ref('pd_primary')}",
            params={"since": "2026-03-02T00:00:00Z", "until": "2026-03-09T00:00:00Z"},
        ),
    ]
    links = _links(answers, set())
    kinds = {link.removeprefix(pd.url).split("/")[1] for link in links}
    assert kinds >= {
        "incidents",
        "services",
        "users",
        "escalation_policies",
        "schedules",
        "teams",
        "log_entries",
    }
    for link in sorted(links):
        assert link.startswith(pd.url + "/"), link
        if "/avatars/" in link:
            picture = client.get(link)
            assert picture.status_code == 200 and picture.headers["content-type"] == "image/png", link
            continue
        followed = client.rget(link)  # the client refuses any URL outside its base URL
        assert followed["id"] == link.rsplit("/", 1)[1], link
