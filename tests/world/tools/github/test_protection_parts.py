"""Branch protection one setting at a time, through PyGithub and the raw API; the
settings are the ones merges and pushes obey."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

GH = Any  # conftest.GH
P = "/repos/acme/orders/branches/main/protection"


@pytest.fixture
def admin(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> GH:
    github_seed["repos"][0]["permissions"]["github_agent"] = "admin"
    gh = make_github(github_seed)
    body = {"required_status_checks": {"strict": False, "contexts": ["ci"]}, "enforce_admins": False,
            "required_pull_request_reviews": {"required_approving_review_count": 1}, "restrictions": None}
    assert gh.raw("PUT", P, json=body).status_code == 200
    return gh


def test_enforce_admins__get_set_delete(admin: GH, matches_spec: Callable[..., None]) -> None:
    branch = admin.client.get_repo("acme/orders").get_branch("main")
    assert branch.get_admin_enforcement() is False
    answer = admin.raw("POST", P + "/enforce_admins")
    matches_spec("POST", "/repos/{owner}/{repo}/branches/{branch}/protection/enforce_admins", answer.json())
    assert answer.json()["enabled"] is True and branch.get_admin_enforcement() is True
    assert admin.raw("GET", P).json()["enforce_admins"]["enabled"] is True
    branch.remove_admin_enforcement()
    assert admin.raw("DELETE", P + "/enforce_admins").status_code == 404  # already off


def test_required_reviews__get_patch_delete(admin: GH, matches_spec: Callable[..., None]) -> None:
    branch = admin.client.get_repo("acme/orders").get_branch("main")
    assert branch.get_required_pull_request_reviews().required_approving_review_count == 1
    branch.edit_required_pull_request_reviews(required_approving_review_count=2, dismiss_stale_reviews=True)
    got = admin.raw("GET", P + "/required_pull_request_reviews").json()
    matches_spec("GET", "/repos/{owner}/{repo}/branches/{branch}/protection/required_pull_request_reviews", got)
    assert got["required_approving_review_count"] == 2 and got["dismiss_stale_reviews"] is True
    assert admin.raw("PATCH", P + "/required_pull_request_reviews",
                     json={"required_approving_review_count": 7}).status_code == 422
    branch.remove_required_pull_request_reviews()
    assert admin.raw("GET", P + "/required_pull_request_reviews").json()["message"] == \
        "Required pull request reviews not enabled"
    assert "required_pull_request_reviews" not in admin.raw("GET", P).json()


def test_required_status_checks__and_contexts(admin: GH, matches_spec: Callable[..., None]) -> None:
    branch = admin.client.get_repo("acme/orders").get_branch("main")
    checks = branch.get_required_status_checks()
    assert checks.contexts == ["ci"] and checks.strict is False
    branch.edit_required_status_checks(strict=True, contexts=["ci", "lint"])
    got = admin.raw("GET", P + "/required_status_checks").json()
    matches_spec("GET", "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks", got)
    assert got["strict"] is True and got["contexts"] == ["ci", "lint"]
    ctx = P + "/required_status_checks/contexts"
    assert admin.raw("POST", ctx, json={"contexts": ["deploy"]}).json() == ["ci", "lint", "deploy"]
    assert admin.raw("DELETE", ctx, json=["lint"]).json() == ["ci", "deploy"]
    assert admin.raw("PUT", ctx, json={"contexts": ["only"]}).json() == ["only"]
    assert admin.raw("GET", ctx).json() == ["only"]
    assert admin.raw("PUT", ctx, json={"contexts": [1]}).status_code == 422
    branch.remove_required_status_checks()
    assert admin.raw("GET", ctx).json()["message"] == "Required status checks not enabled"


def test_settings__admin_only_and_unprotected_branch(admin: GH) -> None:
    ben = admin.token_for("ben")  # maintain through the Backend team: not admin
    assert admin.raw("GET", P + "/enforce_admins", token=ben).status_code == 403
    answer = admin.raw("GET", "/repos/acme/orders/branches/fix-exports/protection/enforce_admins")
    assert answer.status_code == 404 and answer.json()["message"] == "Branch not protected"


def test_enforce_admins__closes_main_to_the_admins_own_writes(admin: GH) -> None:
    """The contents API obeys the same protection: admins write to main until it is enforced on them."""
    import base64

    put = {"message": "m", "content": base64.b64encode(b"x").decode(), "branch": "main"}
    assert admin.raw("PUT", "/repos/acme/orders/contents/a.txt", json=put).status_code == 201
    admin.raw("POST", P + "/enforce_admins")
    put["content"], put["sha"] = base64.b64encode(b"y").decode(), admin.raw(
        "GET", "/repos/acme/orders/contents/a.txt").json()["sha"]
    assert admin.raw("PUT", "/repos/acme/orders/contents/a.txt", json=put).status_code == 409
