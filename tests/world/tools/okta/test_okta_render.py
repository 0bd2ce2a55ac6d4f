"""Okta in the console's world diff: a user's status change, with the timestamps and lifecycle
links that follow it left out."""

from __future__ import annotations

from ancha.world.kernel.rendered import FieldChange, ObjectChange
from ancha.world.tools.okta.render import render

DANA = {"id": "00u1", "status": "ACTIVE", "statusChanged": "2026-02-10T09:00:00.000Z", "groups": ["Everyone", "VPN"],
        "profile": {"firstName": "Dana", "lastName": "Scully", "login": "dana@acme.com"}, "_links": {"suspend": {}}}


def test_okta_render__a_deactivated_user_shows_the_status_change() -> None:
    after = {**DANA, "status": "DEPROVISIONED", "statusChanged": "2026-03-02T09:00:07.944Z", "groups": ["Everyone"],
             "_links": {"activate": {}}}
    fields = (FieldChange("status", "changed", "ACTIVE", "DEPROVISIONED"),
              FieldChange("statusChanged", "changed", DANA["statusChanged"], after["statusChanged"]),
              FieldChange("groups", "changed", ["Everyone", "VPN"], ["Everyone"]),
              FieldChange("_links.activate", "added", None, {}))
    shown = render(ObjectChange("users", "id=00u1", "changed", DANA, after, fields))
    assert shown is not None and shown.kind == "user" and not shown.bookkeeping
    assert shown.title == "user Dana Scully (dana@acme.com)"
    values = {f.label: (f.before, f.value) for f in shown.fields}
    assert values["status"] == ("ACTIVE", "DEPROVISIONED")
    assert values["since"] == (None, "2026-03-02 09:00:07 UTC")
    assert values["groups"] == ("Everyone, VPN", "Everyone")
    assert "_links" not in values


def test_okta_render__a_user_whose_links_and_timestamps_alone_moved_is_bookkeeping() -> None:
    after = {**DANA, "lastUpdated": "2026-03-02T09:00:00.000Z"}
    shown = render(ObjectChange("users", "id=00u1", "changed", DANA, after,
                                (FieldChange("lastUpdated", "added", None, "2026-03-02T09:00:00.000Z"),)))
    assert shown is not None and shown.bookkeeping
