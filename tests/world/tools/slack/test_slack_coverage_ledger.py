"""The coverage ledger is derived from the vendor's method list and matches what we serve."""

from __future__ import annotations

import pytest

from ancha.world.tools.slack import coverage
from ancha.world.tools.slack.coverage_ledger import LEDGER
from ancha.world.tools.slack.router import PARTIAL, ROUTES


@pytest.fixture(scope="module")
def vendor() -> set[str]:
    return coverage.vendor_methods()


def test_ledger__lists_exactly_the_vendors_methods(vendor):
    assert set(LEDGER) == vendor
    assert len(LEDGER) >= 326


def test_ledger__is_current(vendor):
    assert coverage.COVERAGE.path.read_text() == coverage.COVERAGE.render(coverage.COVERAGE.build_ledger(vendor))


def test_ledger__every_served_method_is_slacks(vendor):
    assert coverage.served_methods() <= vendor


def test_ledger__statuses_follow_the_routes():
    for method, (status, note) in LEDGER.items():
        if method in PARTIAL:
            assert (status, note) == ("partial", PARTIAL[method])
        elif method in ROUTES or method in coverage.served_methods():
            assert status == "implemented"
        else:
            assert status == "not_implemented"
    assert PARTIAL.keys() <= ROUTES.keys()
