"""GitHubReplica: one environment's GitHub behind GitHub's own REST API.

Requests arrive as ``ToolRequest`` with paths relative to the tool's base URL
(``/repos/acme/orders/issues``). A path the replica serves runs its handler (routes/);
one GitHub has but the replica lacks answers 501 naming it (a coverage gap); anything
else answers GitHub's 404. Around every handler: authentication (``token``/``Bearer``/
Basic with the token as password), per-user rate limits with GitHub's headers,
pagination ``Link`` headers, weak ``ETag``s with ``If-None-Match`` -> 304.

Refs: users register as ``user`` (id: login), repositories as ``repo`` (``owner/name``),
issues as ``issue`` and pulls as ``pull`` (``owner/name#N``), seeded commits as
``commit`` (sha).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import string
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ancha.world.kernel.hostnames import base_url
from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.github import errors
from ancha.world.tools.github.actor import GitHubActor
from ancha.world.tools.github.call import Call, Caller, Reply
from ancha.world.tools.github.coverage_ledger import DOCS, LEDGER
from ancha.world.tools.github.events import domain_event
from ancha.world.tools.github.headers import RateLimits, api_headers
from ancha.world.tools.github.models import Account, GitHubState, Repo, User
from ancha.world.tools.github.models.notifications import record as notify
from ancha.world.tools.github.models.wire import RawJSON, encode_utf8
from ancha.world.tools.github.router import Route, Router, template_params
from ancha.world.tools.github.routes import ROUTER
from ancha.world.tools.github.scene_file import GitHubFile
from ancha.world.tools.github.seed import seed_state
from ancha.world.tools.github.smart_http import serve_git
from ancha.world.tools.github.web import serve_page

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

JSON = "application/json; charset=utf-8"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_TOKEN_CHARS = string.ascii_letters + string.digits


def _vendor_router() -> Router[str]:
    router: Router[str] = Router()
    for key in LEDGER:
        method, _, template = key.partition(" ")
        router.add(method, template, template)
    return router


VENDOR = _vendor_router()


class GitHubReplica:
    """The Tool for ``world.github``; ``state`` is what checks read."""

    name = "github"

    def __init__(self, world: WorldPort, seed: GitHubFile | dict[str, Any] | None) -> None:
        self.world = world
        shared = getattr(world.scene, "seed", None)
        if isinstance(seed, dict) and callable(shared):
            # Parsed once per scene and shared by its trials (never changed by a replica).
            seed = shared("github", GitHubFile)
        self.seed = GitHubFile.parse(seed)
        self.state: GitHubState
        self.agent: User
        self.state, self.agent = seed_state(world, self.seed)
        self.tokens: dict[str, Caller] = {}
        self.link_tokens: dict[str, Caller] = {}
        """Tokens that open only web links (``?token=`` on a private repository's codeload link)."""
        self.rates = RateLimits()
        self.base_url = f"http://127.0.0.1/envs/{world.id}/github"
        """The replica's public base URL, as last seen on an incoming request."""
        self.token = self.issue_token(self.agent.login, "agent")
        self.signing_secret = world.secrets.token_urlsafe(30)
        """The secret of the repository webhooks delivered to an endpoint agent (``X-Hub-Signature-256``)."""
        self._requests = 0
        self.world_actor = GitHubActor(self, world)
        """Makes the world rules' calls (``actions.py``) as their ``from`` user, keeping a token per user."""
        for repo in self.state.repos.values():
            self._watch_refs(repo)

    # --- Tool ---------------------------------------------------------------------------

    def credentials(self) -> dict[str, str]:
        return {"token": self.token, "login": self.agent.login, "signing_secret": self.signing_secret}

    def place_label(self, place_id: str) -> str | None:
        """An issue or pull request (``owner/repo#N``) as it reads in an explanation."""
        full, sep, number = place_id.partition("#")
        owner, _, name = full.partition("/")
        repo = self.state.repo(owner, name) if sep and is_plain_int(number) else None
        if repo is None or int(number) not in repo.issues:
            return None
        kind = "pull request" if repo.issues[int(number)].is_pull else "issue"
        return f"{kind} {repo.full_name}#{number}"

    def snapshot(self) -> dict[str, Any]:
        base = self.base_url
        repos: list[dict[str, Any]] = []
        for repo in self.state.repos.values():
            item = repo.to_dict(base, full=True)
            item.update({
                "ref": repo.ref, "collaborators": dict(repo.collaborators),
                "labels": [label.to_dict(base) for label in repo.labels.values()],
                "milestones": [m.to_dict(base) for m in repo.milestones.values()],
                "issues": [{**issue.to_dict(base, single=True), "ref": issue.ref, "seeded": issue.seeded,
                            "actor": issue.actor,
                            "comment_bodies": [{**c.to_dict(base), "seeded": c.seeded, "actor": c.actor}
                                               for c in issue.comments]}
                           for issue in repo.issues.values()],
                "pulls": [pull.to_dict(base, full=True) for pull in repo.pulls.values()],
                "production": repo.production,
            })
            snapshot = getattr(repo.git, "snapshot", None)
            if callable(snapshot):
                item["git"] = snapshot()
            repos.append(item)
        return {
            "agent": {"login": self.agent.login, "ref": self.agent.ref},
            "users": [{**u.public(base), "ref": u.ref, "person": u.person} for u in self.state.users.values()],
            "orgs": [{**o.full(base), "members": dict(o.members),
                      "teams": [{**t.to_dict(base), "members": dict(t.members), "repos": dict(t.repos)}
                                for t in o.teams.values()]} for o in self.state.orgs.values()],
            "repos": repos,
        }

    # --- tokens ---------------------------------------------------------------------------

    def issue_token(self, login: str, actor: str) -> str:
        """A token acting as ``login``, traced as ``actor`` (``agent``, ``person:laura``, ``world``)."""
        user = self.state.user(login.removeprefix("$"))
        if user is None:
            ref = self.world.refs.get(login.removeprefix("$"))
            user = self.state.user(ref.id) if ref is not None and ref.kind == "user" else None
        if user is None:
            raise KeyError(f"no GitHub user {login!r}")
        # The world's secrets, not the trial's RNG: a token must never work in another environment,
        # and a replay (the same seed) hands out the tokens the agent called with.
        token = "ghp_" + self.world.secrets.choice(_TOKEN_CHARS, 36)
        self.tokens[token] = Caller(user, actor)
        return token

    def link_token(self, caller: Caller) -> str:
        """The token a link to a private repository's bytes carries (``?token=``), as GitHub's
        codeload links do: it opens web links as ``caller`` and no API call."""
        for token, owner in self.link_tokens.items():
            if owner == caller:
                return token
        token = self.world.secrets.choice(_TOKEN_CHARS, 29)
        self.link_tokens[token] = caller
        return token

    # --- requests -------------------------------------------------------------------------

    def handle(self, request: ToolRequest) -> ToolResponse:
        base = self._base(request)
        if request.path.rstrip("/") == "/graphql" and request.method.upper() == "POST":
            from ancha.world.tools.github.graphql import execute  # GitHub's GraphQL API (graphql/)

            try:
                graphql_caller = self._authenticate(request)
            except errors.GitHubError:
                graphql_caller = None
            return execute(self, request, graphql_caller)
        git = serve_git(self, request)  # clone/fetch/push over git's smart HTTP
        if git is not None:
            return git
        method = request.method.upper()
        lookup = "GET" if method == "HEAD" else method
        self._requests += 1
        caller: Caller | None = None
        route: Route | None = None
        docs: str | None = None
        rate_key, resource = "", "core"
        headers = api_headers(self._request_id(), request.headers.get("x-github-api-version"))
        try:
            caller = self._authenticate(request)
            moved = self._moved(request, method, base, caller)
            if moved is not None:
                headers.update(self.rates.headers("anonymous" if caller is None else caller.user.login, "core",
                                                  caller is not None, self.world.clock.peek()))
                moved.headers = {**headers, **moved.headers}
                moved.actor = self._actor(caller)
                return moved
            path = self._by_id(request.path)
            found = ROUTER.match(path, lookup)
            if found is not None and lookup in found[0]:
                route = found[0][lookup]
                docs = DOCS.get(f"{route.method} {route.template}")
                resource = route.resource
            rate_key = caller.user.login if caller is not None else "anonymous"
            if route is None or route.template != "/rate_limit":
                self.rates.spend(rate_key, resource, caller is not None, self.world.clock.peek(),
                                 caller.user.id if caller is not None else 0)
            if route is None or found is None:
                return self._unrouted(method, lookup, path, caller, headers, rate_key, base, request.query)
            params = dict(zip(template_params(route.template), found[1], strict=False))
            call = Call(self, route, method, path, params, request.query, request.body, caller, base)
            call.request_headers = request.headers
            result = route.handler(call)
            reply = result if isinstance(result, Reply) else Reply(200, result)
            headers.update(call.headers)
            headers.update(reply.headers)
        except errors.GitHubError as exc:
            headers.update(self.rates.headers(rate_key or "anonymous", resource, caller is not None,
                                              self.world.clock.peek()))
            return self._error(exc, docs, caller, headers)
        except Exception:  # a bug, never bad input
            body = _dumps({"message": "Server Error", "documentation_url": errors.DOCS, "status": "500"})
            return ToolResponse(500, body.encode(), JSON, headers=headers, actor=self._actor(caller))
        headers.update(self.rates.headers(rate_key, resource, caller is not None, self.world.clock.peek()))
        if reply.body is None and (reply.status in (204, 202, 205) or 300 <= reply.status < 400):
            return ToolResponse(reply.status, b"", JSON, headers=headers, actor=self._actor(caller))
        if isinstance(reply.body, bytes):  # a raw media type (Accept: application/vnd.github.raw)
            kind = headers.pop("content-type", "application/octet-stream")
            return ToolResponse(reply.status, reply.body, kind, headers=headers, actor=self._actor(caller))
        # A cached wire text or page (RawJSON) keeps its bytes and hash; others splice cached texts in as is.
        kept = reply.body if isinstance(reply.body, RawJSON) else None
        encoded = kept.utf8() if kept is not None else encode_utf8(reply.body)
        if lookup == "GET" and reply.status == 200:
            digest = kept.sha256() if kept is not None else hashlib.sha256(encoded).hexdigest()
            etag = 'W/"' + digest + '"'
            headers["etag"] = etag
            if _matches(request.headers.get("if-none-match", ""), etag):
                self.rates.refund(rate_key, resource)
                headers.update(self.rates.headers(rate_key, resource, caller is not None, self.world.clock.peek()))
                return ToolResponse(304, b"", JSON, headers=headers, actor=self._actor(caller))
        return ToolResponse(reply.status, encoded, JSON, headers=headers, actor=self._actor(caller))

    def _unrouted(self, method: str, lookup: str, path: str, caller: Caller | None, headers: dict[str, str],
                  rate_key: str, base: str, query: str = "") -> ToolResponse:
        headers.update(self.rates.headers(rate_key, "core", caller is not None, self.world.clock.peek()))
        vendor = VENDOR.match(path, lookup)
        if vendor is not None and lookup in vendor[0]:
            gap = errors.NotImplementedHere(method, vendor[0][lookup])
            docs = DOCS.get(f"{lookup} {vendor[0][lookup]}")
            response = self._error(gap, docs, caller, headers)
            response.coverage_gap = True
            return response
        if caller is None and "token=" in query:  # a private repository's codeload link
            link = parse_qs(query).get("token")
            caller = self.link_tokens.get(link[0]) if link else None
        page = serve_page(self.state, caller, lookup, path, base)  # html_url, avatar_url, archives (web.py)
        if page is not None:
            page.actor = self._actor(caller)
            return page
        return self._error(errors.NotFound(), errors.DOCS, caller, headers)

    def _by_id(self, path: str) -> str:
        """``/repositories/{id}/...`` (what a renamed repository's old name redirects to; GitHub
        serves it though its OpenAPI description omits it) as ``/repos/{owner}/{name}/...``."""
        if not path.startswith("/repositories/"):
            return path
        _, _, rest = path.partition("/repositories/")
        number, slash, tail = rest.partition("/")
        repo = self.state.repos_by_id.get(int(number)) if number.isascii() and number.isdigit() else None
        if repo is None or self.state.repo(repo.owner.login, repo.name) is not repo:
            return path
        return f"/repos/{repo.full_name}{slash}{tail}"

    def _moved(self, request: ToolRequest, method: str, base: str, caller: Caller | None) -> ToolResponse | None:
        """A renamed repository's old name: 301 (307 for writes) to ``/repositories/{id}/...``, as GitHub."""
        if not request.path.startswith("/repos/") or not self.state.renamed:
            return None
        parts = request.path.split("/", 4)  # '', 'repos', owner, name, rest
        if len(parts) < 4 or self.state.repo(parts[2], parts[3]) is not None:
            return None
        repo_id = self.state.renamed.get(f"{parts[2]}/{parts[3]}".lower())
        repo = self.state.repos_by_id.get(repo_id) if repo_id is not None else None
        if repo is None or self.state.role(repo, caller.user if caller is not None else None) is None:
            return None  # a private repository's old name stays a 404 for those who cannot see it
        tail = "/" + parts[4] if len(parts) > 4 else ""
        location = f"{base}/repositories/{repo_id}{tail}" + (f"?{request.query}" if request.query else "")
        status, message = (301, "Moved Permanently") if method in ("GET", "HEAD") else (307, "Temporary Redirect")
        body = _dumps({"message": message, "url": location,
                       "documentation_url": "https://docs.github.com/v3/#http-redirects"}).encode()
        return ToolResponse(status, body, JSON, headers={"location": location})

    def _authenticate(self, request: ToolRequest) -> Caller | None:
        header = request.headers.get("authorization", "").strip()
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        scheme, value = scheme.lower(), value.strip()
        if scheme == "basic":
            try:
                decoded = base64.b64decode(value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                raise errors.BadCredentials() from None
            user, _, password = decoded.partition(":")
            value = password or user
        elif scheme not in ("token", "bearer"):
            raise errors.BadCredentials()
        caller = self.tokens.get(value)
        if caller is None:
            raise errors.BadCredentials()
        return caller

    def _error(self, exc: errors.GitHubError, docs: str | None, caller: Caller | None,
               headers: dict[str, str]) -> ToolResponse:
        if isinstance(exc, errors.NotModified):
            return ToolResponse(304, b"", JSON, headers=headers, actor=self._actor(caller))
        body = _dumps(exc.body(docs)).encode()
        if isinstance(exc, errors.BadCredentials | errors.RequiresAuthentication):
            headers.setdefault("www-authenticate", 'Bearer realm="GitHub"')
        return ToolResponse(exc.status, body, JSON, headers=headers, actor=self._actor(caller))

    def _base(self, request: ToolRequest) -> str:
        """The base URL the caller reached the replica at (GitHub's own through real hostnames),
        kept for what the world sends later (webhooks, GraphQL, snapshots)."""
        base = base_url(request, self.world.id, "github")
        if base is not None:
            self.base_url = base
        return self.base_url

    def _request_id(self) -> str:
        n = self._requests
        return f"{n % 0xFFFF:04X}:{(n * 7919) % 0xFFFFF:05X}:{n:06X}:{n * 3:06X}:{int(self.world.clock.start):08X}"

    @staticmethod
    def _actor(caller: Caller | None) -> str:
        return caller.actor if caller is not None else "agent"

    # --- writes publish domain events -------------------------------------------------------

    def publish(self, type: str, repo: Repo, who: Account, actor: str, number: int | None = None,
                is_pull: bool = False, **data: Any) -> None:
        if type == "repo_created":
            self._watch_refs(repo)
        now = self.world.clock.now()
        if number is not None:
            notify(self.state, repo, number, who, now)  # the notification threads it makes (models/notifications.py)
        self.world.bus.publish(domain_event(type, now, repo=repo.full_name, actor=actor,
                                          user=who.login, number=number, is_pull=is_pull, **data))

    def _watch_refs(self, repo: Repo) -> None:
        """Every ref move of ``repo`` (push, refs and contents APIs, merges) becomes a
        ``ref_updated`` domain event, so predicates and webhooks see it whatever moved it."""
        git = repo.git
        if git is None or not hasattr(git, "on_ref_update"):
            return
        previous = git.on_ref_update

        def moved(updates: list[Any]) -> None:
            if previous is not None:
                previous(updates)
            for update in updates:
                who = self._account_of_actor(update.actor) or repo.owner
                self.publish("ref_updated", repo, who, update.actor, ref=update.ref, before=update.old,
                             after=update.new)

        git.on_ref_update = moved

    def _account_of_actor(self, actor: str) -> Account | None:
        if actor == "agent":
            return self.agent
        for caller in self.tokens.values():
            if caller.actor == actor:
                return caller.user
        return None


def _matches(header: str, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in header.split(","))
