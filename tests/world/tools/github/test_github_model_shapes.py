"""Wire shapes of the models whose routes other families serve: each fits the vendor's schema."""

from __future__ import annotations

from ancha.world.tools.github.models import (
    CheckRun,
    CommitStatus,
    Deployment,
    DeploymentStatus,
    Release,
    Review,
    ReviewComment,
    combined_state,
)

SHA = "a84d88e7554fc1fa21bcbc4efae3c782a70d2b9d"


def test_deployment_and_status__fit_the_schema(gh, matches_spec):
    repo = gh.replica.state.repo("acme", "orders")
    agent = gh.replica.agent
    deployment = Deployment(repo, 7, SHA, "main", agent, gh.replica.world.clock.now(), description="ship it")
    status = DeploymentStatus(deployment, 8, "success", agent, gh.replica.world.clock.now())
    deployment.statuses.append(status)
    matches_spec("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}", deployment.to_dict(gh.url))
    matches_spec("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses/{status_id}",
                 status.to_dict(gh.url))
    assert deployment.state == "success" and deployment.production is True


def test_commit_status_and_check_run__fit_the_schema(gh, matches_spec):
    repo = gh.replica.state.repo("acme", "orders")
    now = gh.replica.world.clock.now()
    statuses = [CommitStatus(repo, 1, SHA, "pending", gh.replica.agent, now, context="ci"),
                CommitStatus(repo, 2, SHA, "success", gh.replica.agent, now, context="ci"),
                CommitStatus(repo, 3, SHA, "failure", gh.replica.agent, now, context="lint")]
    matches_spec("POST", "/repos/{owner}/{repo}/statuses/{sha}", statuses[0].to_dict(gh.url), 201)
    assert combined_state(statuses[:2]) == "success" and combined_state(statuses) == "failure"
    run = CheckRun(repo, 4, "tests", SHA, now, conclusion="success", output={"title": "ok", "summary": "all green"})
    matches_spec("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", run.to_dict(gh.url))
    assert run.status == "completed"


def test_release__fits_the_schema(gh, matches_spec):
    repo = gh.replica.state.repo("acme", "orders")
    release = Release(repo, 9, "v1.0.0", gh.replica.agent, gh.replica.world.clock.now(), name="One", body="notes")
    matches_spec("GET", "/repos/{owner}/{repo}/releases/{release_id}", release.to_dict(gh.url))


def test_pull_review_and_comment__fit_the_schema(gh, matches_spec):
    pull = gh.replica.state.repo("acme", "orders").pulls[3]
    review = Review(pull, 10, gh.replica.agent, "APPROVED", "lgtm", gh.replica.world.clock.now(), SHA)
    comment = ReviewComment(pull, 11, gh.replica.agent, "nit", "README.md", gh.replica.world.clock.now(), line=1,
                            commit_id=SHA, review_id=10)
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}", review.to_dict(gh.url))
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", comment.to_dict(gh.url))
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", pull.to_dict(gh.url, full=True))
    matches_spec("GET", "/repos/{owner}/{repo}/pulls", [pull.to_dict(gh.url)])
