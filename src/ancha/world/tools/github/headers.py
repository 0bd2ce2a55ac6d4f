"""GitHub's response headers: rate limits per user and resource, and the fixed ones.

Limits are GitHub's for a personal token: ``core`` 5,000 an hour, ``search`` 30 a
minute (anonymous callers: 60 an hour and 10 a minute), windows starting at a user's
first call and measured on the simulated clock. Past the limit a call answers 403
``API rate limit exceeded``; a 304 does not count, as on GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass

from ancha.world.tools.github import errors

LIMITS = {"core": (5000, 3600.0), "search": (30, 60.0), "graphql": (5000, 3600.0)}
ANONYMOUS = {"core": (60, 3600.0), "search": (10, 60.0), "graphql": (0, 3600.0)}


@dataclass(slots=True)
class Window:
    limit: int
    reset: float
    used: int = 0


class RateLimits:
    def __init__(self) -> None:
        self._windows: dict[tuple[str, str], Window] = {}

    def window(self, key: str, resource: str, authenticated: bool, now: float) -> Window:
        limit, span = (LIMITS if authenticated else ANONYMOUS).get(resource, LIMITS["core"])
        window = self._windows.get((key, resource))
        if window is None or now >= window.reset:
            window = self._windows[(key, resource)] = Window(limit, now + span)
        return window

    def spend(self, key: str, resource: str, authenticated: bool, now: float, user_id: int) -> None:
        """Count one call; 403 when the window is spent."""
        window = self.window(key, resource, authenticated, now)
        if window.used >= window.limit:
            raise errors.RateLimitExceeded(user_id)
        window.used += 1

    def refund(self, key: str, resource: str) -> None:
        window = self._windows.get((key, resource))
        if window is not None and window.used > 0:
            window.used -= 1

    def headers(self, key: str, resource: str, authenticated: bool, now: float) -> dict[str, str]:
        window = self.window(key, resource, authenticated, now)
        return {"x-ratelimit-limit": str(window.limit), "x-ratelimit-remaining": str(max(0, window.limit - window.used)),
                "x-ratelimit-reset": str(int(window.reset)), "x-ratelimit-used": str(window.used),
                "x-ratelimit-resource": resource}

    def overview(self, key: str, authenticated: bool, now: float) -> dict[str, dict[str, int]]:
        """``GET /rate_limit``'s ``resources``."""
        out: dict[str, dict[str, int]] = {}
        for resource in LIMITS:
            window = self.window(key, resource, authenticated, now)
            out[resource] = {"limit": window.limit, "used": window.used,
                             "remaining": max(0, window.limit - window.used), "reset": int(window.reset)}
        return out


API_VERSIONS = ("2022-11-28", "2026-03-10")
"""REST API versions a client may ask for with ``X-GitHub-Api-Version`` (the first is the default)."""


def api_headers(request_id: str, version: str | None = None) -> dict[str, str]:
    """What every REST answer carries besides rate limits."""
    return {
        "x-github-api-version-selected": version if version in API_VERSIONS else API_VERSIONS[0],
        "x-github-media-type": "github.v3; format=json",
        "x-github-request-id": request_id,
        "x-oauth-scopes": "repo, read:org, workflow, gist",
        "x-accepted-oauth-scopes": "",
        "access-control-allow-origin": "*",
        "access-control-expose-headers": "ETag, Link, Location, Retry-After, X-GitHub-OTP, X-RateLimit-Limit, "
                                         "X-RateLimit-Remaining, X-RateLimit-Used, X-RateLimit-Resource, "
                                         "X-RateLimit-Reset, X-OAuth-Scopes, X-Accepted-OAuth-Scopes, X-Poll-Interval, "
                                         "X-GitHub-Media-Type, X-GitHub-SSO, X-GitHub-Request-Id, Deprecation, Sunset",
        "x-content-type-options": "nosniff",
        "x-frame-options": "deny",
        "vary": "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding, Accept, X-Requested-With",
        "cache-control": "private, max-age=60, s-maxage=60",
    }
