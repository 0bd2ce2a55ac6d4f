"""The GitHub replica's state: plain classes with indexes, each with GitHub's wire shape.

``to_dict(base)`` (or a named shape such as ``simple(base)``, ``full(base)``) renders
api.github.com's JSON with API URLs on ``base``, the replica's own base URL.
"""

from __future__ import annotations

from ancha.world.tools.github.models.checks import CheckRun, CommitStatus, combined_state
from ancha.world.tools.github.models.deployments import Deployment, DeploymentStatus
from ancha.world.tools.github.models.issues import Issue, IssueComment, IssueEvent, Label, Milestone
from ancha.world.tools.github.models.pulls import Pull, Review, ReviewComment
from ancha.world.tools.github.models.releases import Release
from ancha.world.tools.github.models.repos import Repo
from ancha.world.tools.github.models.state import GitHubState
from ancha.world.tools.github.models.users import Account, Org, Team, User, role_rank, stronger
from ancha.world.tools.github.models.wire import Ids, iso, node_id

__all__ = [
    "Account", "CheckRun", "CommitStatus", "Deployment", "DeploymentStatus", "GitHubState", "Ids", "Issue",
    "IssueComment", "IssueEvent", "Label", "Milestone", "Org", "Pull", "Release", "Repo", "Review", "ReviewComment",
    "Team", "User", "combined_state", "iso", "node_id", "role_rank", "stronger",
]
