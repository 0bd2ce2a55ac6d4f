"""The coverage ledger is derived from the vendor's endpoint list and matches what we serve."""

from __future__ import annotations

import pytest

from ancha.world.tools.github import coverage
from ancha.world.tools.github.coverage_ledger import DOCS, LEDGER
from ancha.world.tools.github.router import registered
from ancha.world.tools.github.routes import load_all


@pytest.fixture(scope="module")
def endpoints() -> list[str]:
    return coverage.vendor_endpoints()


def test_ledger__lists_exactly_the_vendors_operations(endpoints):
    assert list(LEDGER) == endpoints
    assert len(LEDGER) >= 1200


def test_ledger__is_current(endpoints):
    assert coverage.COVERAGE.path.read_text() == coverage.COVERAGE.generate(), "run: python -m ancha.world.tools.github.coverage --regenerate"


def test_ledger__statuses_follow_the_routes():
    load_all()
    served = {f"{r.method} {r.template}": r.partial for r in registered()}
    for key, (status, note) in LEDGER.items():
        if key not in served:
            assert status == "not_implemented", key
        else:
            assert (status, note) == (("partial", served[key]) if served[key] else ("implemented", "")), key


def test_ledger__docs_url_for_every_operation():
    assert all(url.startswith("https://docs.github.com/") for url in DOCS.values())
    assert DOCS["GET /repos/{owner}/{repo}/issues/{issue_number}"] == \
        "https://docs.github.com/rest/issues/issues#get-an-issue"


def test_main__check_mode(endpoints, capsys):
    assert coverage.COVERAGE.main(["--check"]) == 0
    assert "current" in capsys.readouterr().out
