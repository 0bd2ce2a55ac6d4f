"""validate_checks: every problem of a batch at once, in the reference's words."""

from __future__ import annotations

import re

import pytest

from agentos.evals import MAX_CHECKS, CheckValidationError, validate_checks

REFERENCE_DETAIL = (
    "Invalid checks: check 1: name is required; check 2: unknown type 'looks_good'; "
    "check 3: 'contains' needs a target state variable; "
    "check 4: invalid regex (missing ), unterminated subpattern at position 0); "
    "check 5: 'max_cost_usd' needs a numeric value; "
    "check 6: invalid expression (Function 'open' is not allowed)"
)


def _detail(raw: object) -> str:
    with pytest.raises(CheckValidationError) as caught:
        validate_checks(raw)
    assert str(caught.value) == caught.value.detail
    return caught.value.detail


def test_validate_checks__reference_invalid_batch_detail() -> None:
    batch = [
        {"type": "contains", "target": "draft_reply", "value": "refund"},
        {"name": "looks fine", "type": "looks_good"},
        {"name": "mentions refund", "type": "contains", "value": "refund"},
        {"name": "order id", "type": "regex", "target": "order_id", "value": "("},
        {"name": "cheap", "type": "max_cost_usd", "value": "five cents"},
        {"name": "sneaky", "type": "expression", "value": "open('/etc/passwd').read() == ''"},
    ]
    assert _detail(batch) == REFERENCE_DETAIL


def test_validate_checks__normalizes_the_reference_checks() -> None:
    checks = validate_checks(
        [
            {"name": "Mentions the refund", "type": "contains", "target": "draft_reply", "value": "refund"},
            {"name": "Under budget", "type": "max_cost_usd", "value": 0.05},
        ]
    )
    for check in checks:
        assert re.fullmatch(r"chk_[0-9a-f]{10}", check.pop("id"))
    assert checks == [
        {"name": "Mentions the refund", "type": "contains", "target": "draft_reply", "value": "refund",
         "case_sensitive": False},
        {"name": "Under budget", "type": "max_cost_usd", "target": "", "value": 0.05, "case_sensitive": False},
    ]  # fmt: skip


def test_validate_checks__keeps_a_valid_id() -> None:
    checks = validate_checks([{"id": "chk_a1b2c3d4e5", "name": "n", "type": "max_cost_usd", "value": 1}])
    assert checks[0]["id"] == "chk_a1b2c3d4e5"


@pytest.mark.parametrize("given", ["chk_A1B2C3D4E5", "chk_123", "a1b2c3d4e5", 12, None])
def test_validate_checks__replaces_an_invalid_id(given: object) -> None:
    check = validate_checks([{"id": given, "name": "n", "type": "max_cost_usd", "value": 1}])[0]
    assert check["id"] != given and re.fullmatch(r"chk_[0-9a-f]{10}", check["id"])


def test_validate_checks__duplicate_ids_are_made_unique() -> None:
    same = {"id": "chk_a1b2c3d4e5", "name": "n", "type": "max_cost_usd", "value": 1}
    first, second = validate_checks([same, dict(same)])
    assert first["id"] == "chk_a1b2c3d4e5" and second["id"] != first["id"]


def test_validate_checks__refuses_unknown_fields_naming_them() -> None:
    """A typo such as "threshold" used to be dropped, and still made a new version."""
    with pytest.raises(CheckValidationError) as refused:
        validate_checks([{"name": "n", "type": "max_cost_usd", "value": 1, "threshold": 0.8}])
    assert str(refused.value) == ("Invalid checks: check 1: unknown field 'threshold' (a check's fields are id, name,"
                                  " type, target, value, case_sensitive)")


def test_validate_checks__keeps_case_sensitive() -> None:
    check = {"name": "n", "type": "equals", "target": "t", "value": "v", "case_sensitive": True}
    assert validate_checks([check])[0]["case_sensitive"] is True


def test_validate_checks__empty_list_is_valid() -> None:
    assert validate_checks([]) == []


def test_validate_checks__fifty_is_allowed() -> None:
    batch = [{"name": f"n{i}", "type": "max_duration_ms", "value": 1} for i in range(MAX_CHECKS)]
    assert len(validate_checks(batch)) == 50


def test_validate_checks__more_than_fifty_is_a_problem() -> None:
    batch = [{"name": f"n{i}", "type": "max_duration_ms", "value": 1} for i in range(51)]
    assert _detail(batch) == "Invalid checks: at most 50 checks are allowed, got 51"


def test_validate_checks__too_many_and_bad_checks_are_all_reported() -> None:
    batch = [{"name": f"n{i}", "type": "max_duration_ms", "value": 1} for i in range(51)]
    batch[50] = {"name": "x"}
    assert _detail(batch) == (
        "Invalid checks: at most 50 checks are allowed, got 51; check 51: type is required"
    )


@pytest.mark.parametrize("raw", [None, {"name": "n"}, "checks", 3])
def test_validate_checks__a_non_list_is_a_problem(raw: object) -> None:
    assert _detail(raw) == "Invalid checks: checks must be a list"


def test_validate_checks__a_non_object_check_is_a_problem() -> None:
    batch = [{"name": "a", "type": "max_cost_usd", "value": 1}] * 2 + ["contains"]
    assert _detail(batch) == "Invalid checks: check 3: must be an object"


def test_validate_checks__reports_every_problem_of_one_check() -> None:
    assert _detail([{"name": "", "type": "regex", "value": 5, "case_sensitive": "yes"}]) == (
        "Invalid checks: check 1: name is required; check 1: 'regex' needs a target state variable; "
        "check 1: 'regex' needs a string value; check 1: case_sensitive must be true or false"
    )


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"name": 7, "type": "max_cost_usd", "value": 1}, "name must be a string"),
        ({"name": "   ", "type": "max_cost_usd", "value": 1}, "name is required"),
        ({"name": "n", "type": 5}, "unknown type 5"),
        ({"name": "n", "type": "contains", "target": 3, "value": "x"},
         "target must be a string; check 1: 'contains' needs a target state variable"),
        ({"name": "n", "type": "equals", "target": "", "value": "x"}, "'equals' needs a target state variable"),
        ({"name": "n", "type": "not_contains", "target": "t"}, "'not_contains' needs a string value"),
        ({"name": "n", "type": "max_cost_usd", "value": True}, "'max_cost_usd' needs a numeric value"),
        ({"name": "n", "type": "max_cost_usd"}, "'max_cost_usd' needs a numeric value"),
        ({"name": "n", "type": "max_cost_usd", "value": -0.01},
         "'max_cost_usd' needs a non-negative value, got -0.01"),
        ({"name": "n", "type": "max_duration_ms", "value": float("nan")},
         "'max_duration_ms' needs a finite numeric value"),
        ({"name": "n", "type": "max_duration_ms", "value": "8000"}, "'max_duration_ms' needs a numeric value"),
        ({"name": "n", "type": "expression"}, "'expression' needs a string value"),
        ({"name": "n", "type": "expression", "value": "len(x) >"},
         "invalid expression (Syntax error: invalid syntax)"),
        ({"name": "n", "type": "expression", "value": "x.__class__"},
         "invalid expression (Access to '__class__' is not allowed)"),
        ({"name": "n", "type": "regex", "target": "t", "value": r"(a)\1"},
         r"invalid regex (invalid escape sequence: \1)"),
        ({"name": "n", "type": "regex", "target": "t", "value": "(?<=a)b"},
         "invalid regex (invalid perl operator: (?<=)"),
        ({"name": "n", "type": "regex", "target": "t", "value": "[z-a]"},
         "invalid regex (bad character range z-a at position 1)"),
    ],
)  # fmt: skip
def test_validate_checks__problem_wording(check: dict, problem: str) -> None:
    assert _detail([check]) == f"Invalid checks: check 1: {problem}"


def test_validate_checks__problems_are_listed_in_detail_and_problems() -> None:
    with pytest.raises(CheckValidationError) as caught:
        validate_checks([{"type": "contains"}, {"name": "n", "type": "nope"}])
    assert caught.value.problems == [
        "check 1: name is required",
        "check 1: 'contains' needs a target state variable",
        "check 1: 'contains' needs a string value",
        "check 2: unknown type 'nope'",
    ]
