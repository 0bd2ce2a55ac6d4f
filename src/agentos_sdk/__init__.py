"""Python SDK for AgentOS: workflows, runs, checks, evaluations and gated releases.

    from agentos_sdk import AgentOS

    client = AgentOS("http://localhost:8000", api_key="aos_live_...")
    run = client.run("Support Triage Crew", input={"ticket": "double charged"})
"""

from __future__ import annotations

from agentos_sdk.client import JSON, AgentOS, AsyncAgentOS, Ref
from agentos_sdk.errors import (
    AgentOSError,
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    ReleaseBlockedError,
    ValidationError,
)

__all__ = [
    "JSON",
    "AgentOS",
    "AgentOSError",
    "APIConnectionError",
    "AsyncAgentOS",
    "AuthenticationError",
    "ConflictError",
    "NotFoundError",
    "Ref",
    "ReleaseBlockedError",
    "ValidationError",
]
