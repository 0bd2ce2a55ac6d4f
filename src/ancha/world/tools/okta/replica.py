"""OktaReplica: one world's Okta org behind Okta's Management API (``/api/v1/...``).

Requests carry ``Authorization: SSWS <token>``; the agent's token answers as ``agent``, the
world's (world-rule actions) as ``world``; anything else is Okta's 401 ``E0000011``. The
router (``router.py``) picks the handler, the coverage gap (501) or Okta's 404/405.
Every write publishes a domain event (``events.py``) on the world's bus.

Every write also appends Okta's ``LogEvent`` to the System Log (``system_log.py``, what
``audit.py`` says each domain event is), which the event hooks (``event_hooks.py``) deliver.

Refs: seeded users register as ``user`` (id ``00u...``), groups as ``group`` (``00g...``).
"""

from __future__ import annotations

import json
import string
from typing import TYPE_CHECKING, Any

from ancha.world.kernel import hostnames, images
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.okta import audit, errors, event_hooks
from ancha.world.tools.okta import events as ev
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.event_hooks import Channel, EventHook
from ancha.world.tools.okta.models import Group, IdMaker, OktaState, User
from ancha.world.tools.okta.real_hosts import org_of
from ancha.world.tools.okta.router import table
from ancha.world.tools.okta.scene_file import OktaFile
from ancha.world.tools.okta.system_log import SYSTEM_ACTOR, Origin, SystemLog, agent_actor

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

TOOL = "okta"
JSON = "application/json"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_TOKEN_CHARS = string.ascii_letters + string.digits + "-_"
RATE_LIMIT = 600
"""Requests a minute per endpoint family, as Okta's headers report them (never enforced)."""
LOGO_PATH = "/assets/img/logos/groups/"
"""Where the group logos Okta links to are served (Okta's CDN in the real org)."""
PASSWORD_STATUSES = frozenset({"ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED", "SUSPENDED", "DEPROVISIONED"})
"""Seeded users in these statuses once set a password."""


def new_token(world: WorldPort) -> str:
    """An Okta API token's shape: ``00`` and 40 URL-safe characters (the world's secrets: a
    token must never work in another environment)."""
    return "00" + world.secrets.choice(_TOKEN_CHARS, 40)


class OktaReplica:
    """The Tool for ``world.okta``; ``state`` is what checks read."""

    name = TOOL

    def __init__(self, world: WorldPort, seed: OktaFile | dict[str, Any] | None) -> None:
        self.world = world
        self.ids = IdMaker(world.rng)
        self.state = OktaState()
        self.base_url = f"http://127.0.0.1/envs/{world.id}/okta"
        self.token = new_token(world)
        self.world_token = new_token(world)
        self.signing_secret = world.secrets.token_hex(16)
        self.tokens = {self.token: "agent", self.world_token: "world"}
        self.log = SystemLog(f"{world.scene.name}:{world.trial}:okta-log")
        self.hooks: dict[str, EventHook] = {}
        self.origin: Origin | None = None
        """The API call being answered (what its System Log entries say about their client)."""
        seed_file = (seed if isinstance(seed, OktaFile)
                     else world.scene.seed(TOOL, OktaFile) or OktaFile.model_validate(seed or {}))
        self.org = org_of(seed_file)
        """The org's subdomain at Okta (``<org>.okta.com``, with real hostnames)."""
        self._seed(seed_file)

    # --- seeding ------------------------------------------------------------------------

    def _seed(self, seed: OktaFile) -> None:
        start = self.world.clock.start
        everyone = Group(self.ids.make("00g"), "Everyone", "All users in your organization", start - 86400 * 365,
                         start - 86400 * 365, start - 86400, type="BUILT_IN", seeded=True)
        self.everyone = everyone.id
        self.state.add_group(everyone)
        by_ref: dict[str, Group] = {}
        for n, seeded in enumerate(seed.groups):
            at = start - 86400 * 30 + n
            group = Group(self.ids.make("00g"), seeded.name, seeded.description, at, at, at, ref=seeded.ref,
                          seeded=True)
            self.state.add_group(group)
            if seeded.ref:
                by_ref[seeded.ref] = group
                self.world.register_ref(seeded.ref, "group", TOOL, group.id)
        for n, item in enumerate(seed.users):
            at = start - 86400 * 20 + n
            profile = {"firstName": item.first_name, "lastName": item.last_name, "mobilePhone": None,
                       "secondEmail": None, "login": item.login, "email": item.email or item.login}
            active = item.status not in ("STAGED",)
            user = User(self.ids.make("00u"), item.status, profile, at, at, status_changed=at if active else None,
                        activated=at if item.status not in ("STAGED", "PROVISIONED") else None,
                        password_changed=at if item.status in PASSWORD_STATUSES else None,
                        has_password=item.status in PASSWORD_STATUSES, ref=item.ref, seeded=True)
            self.state.add_user(user)
            self._join(user, everyone)
            for pointer in item.groups:
                member_of = by_ref.get(pointer) or self.state.groups.get(
                    self.state.by_group_name.get(pointer.casefold(), ""))
                if member_of is not None:
                    self._join(user, member_of)
            if item.ref:
                self.world.register_ref(item.ref, "user", TOOL, user.id)

    @staticmethod
    def _join(user: User, group: Group) -> None:
        user.groups.add(group.id)
        group.members.add(user.id)

    # --- Tool ---------------------------------------------------------------------------

    def credentials(self) -> dict[str, str]:
        return {"token": self.token, "signing_secret": self.signing_secret}

    def handle(self, request: ToolRequest) -> ToolResponse:
        self._base(request)
        if request.method in ("GET", "HEAD") and request.path.startswith(LOGO_PATH):
            return ToolResponse(200, images.PIXEL, "image/png")  # a CDN asset: no token needed
        headers = self._rate_headers()
        self.origin = Origin(request.path, request.query, request.headers.get("user-agent", ""),
                             self.log.request_id())
        try:
            return self._answer(request, headers)
        finally:
            self.origin = None

    def _answer(self, request: ToolRequest, headers: dict[str, str]) -> ToolResponse:
        actor = "agent"
        try:
            actor = self._authenticate(request)
            found = table().match(request.method, request.path)
            if found is None:
                raise errors.PathNotFound()
            if found.route is None:
                if found.vendor:
                    gap = errors.NotImplementedHere(f"{request.method} {found.template}")
                    return self._error(gap, actor, headers, coverage_gap=True)
                raise errors.MethodNotSupported()
            answer: Answer = found.route.handler(Call(self, request, found.params, actor))
        except errors.OktaError as exc:
            return self._error(exc, actor, headers)
        except Exception:  # a bug, never bad input: Okta's own 500 body, and tests see the 500
            return self._error(errors.OktaError(), actor, headers)
        headers.update(answer.headers)
        if answer.body is None:
            # Okta's 204 has no Content-Type, and neither has ours (the official SDK parses any
            # "application/json" body, even an empty one, before it looks at 204).
            return ToolResponse(answer.status, b"", "", headers=headers, actor=actor)
        return ToolResponse(answer.status, _dumps(answer.body).encode(), JSON, headers=headers, actor=actor)

    def snapshot(self) -> dict[str, Any]:
        groups = self.state.groups
        return {
            "users": [{**u.to_dict(self.base_url), "ref": u.ref, "seeded": u.seeded,
                       "groups": sorted(groups[g].name for g in u.groups if g in groups)}
                      for u in self.state.users.values()],
            "deleted_users": [{"id": u.id, "login": u.login, "ref": u.ref} for u in self.state.deleted.values()],
            "groups": [{**g.to_dict(self.base_url), "ref": g.ref, "seeded": g.seeded, "members": sorted(
                self.state.users[m].login for m in g.members if m in self.state.users)}
                       for g in groups.values()],
            # the auth header's value is write-only, and stays out of the snapshot too
            "event_hooks": [self.hook_json(h) for h in sorted(self.hooks.values(), key=lambda h: h.id)],
        }

    def place_label(self, place_id: str) -> str | None:
        group = self.state.groups.get(place_id)
        return f"the Okta group {group.name}" if group is not None else None

    # --- plumbing -----------------------------------------------------------------------

    def _authenticate(self, request: ToolRequest) -> str:
        header = request.headers.get("authorization", "").strip()
        # The official Python SDK (3.x) sends "SSWS<token>" with no space; Okta accepts both.
        actor = self.tokens.get(header[4:].strip()) if header[:4].upper() == "SSWS" else None
        if actor is None:
            raise errors.InvalidToken()
        return actor

    def _base(self, request: ToolRequest) -> None:
        # Links point where the caller reached us: the org's own host, through real hostnames.
        self.base_url = hostnames.base_url(request, self.world.id, self.name) or self.base_url

    def _rate_headers(self) -> dict[str, str]:
        reset = int(self.world.clock.peek()) + 60
        return {"x-rate-limit-limit": str(RATE_LIMIT), "x-rate-limit-remaining": str(RATE_LIMIT - 1),
                "x-rate-limit-reset": str(reset)}

    def _error(self, exc: errors.OktaError, actor: str, headers: dict[str, str], *,
               coverage_gap: bool = False) -> ToolResponse:
        error_id = "oae" + self.world.secrets.choice(string.ascii_letters + string.digits, 22)
        body = exc.body(error_id)
        if isinstance(exc, errors.InvalidToken):
            headers["www-authenticate"] = 'SSWS realm="Okta"'
        return ToolResponse(exc.status, _dumps(body).encode(), JSON, headers=headers, actor=actor,
                            coverage_gap=coverage_gap)

    def publish(self, kind: str, actor: str, **data: Any) -> None:
        now = self.world.clock.now()
        self.world.bus.publish(DomainEvent(kind, TOOL, now, {**data, "actor": actor}))
        who = self.actor_json(actor)
        for entry in audit.entries_for(kind, data, self.state):
            self.log.append(now, entry.event_type, entry.message, entry.legacy, who, entry.targets, self.origin,
                            by=actor)

    def actor_json(self, actor: str) -> dict[str, Any]:
        """The System Log's ``actor`` for a trace actor: the agent's admin user, else Okta's system."""
        if actor != "agent":
            return dict(SYSTEM_ACTOR)
        for ref in self.world.agent_accounts:
            found = self.world.refs.get(ref.lstrip("$"))
            user = self.state.users.get(found.id) if found is not None and found.tool == TOOL else None
            if user is not None:
                return agent_actor(self.user_json(user), self.world.id)
        return agent_actor(None, f"{self.world.scene.name}:{self.world.trial}")

    # --- reads --------------------------------------------------------------------------

    def user_or_404(self, id_or_login: str) -> User:
        user = self.state.user(id_or_login)
        if user is None:
            raise errors.ResourceNotFound(id_or_login, "User")
        return user

    def group_or_404(self, group_id: str) -> Group:
        group = self.state.groups.get(group_id)
        if group is None:
            raise errors.ResourceNotFound(group_id, "UserGroup")
        return group

    def user_json(self, user: User) -> dict[str, Any]:
        return user.to_dict(self.base_url)

    def group_json(self, group: Group) -> dict[str, Any]:
        return group.to_dict(self.base_url)

    # --- writes (each publishes its domain event) ---------------------------------------

    def create_user(self, profile: dict[str, Any], status: str, has_password: bool, actor: str) -> User:
        now = self.world.clock.now()
        user = User(self.ids.make("00u"), status, profile, now, now,
                    status_changed=now if status != "STAGED" else None,
                    activated=now if status == "ACTIVE" else None,
                    password_changed=now if has_password else None, has_password=has_password)
        self.state.add_user(user)
        self._join(user, self.state.groups[self.everyone])
        self.publish(ev.USER_CREATED, actor, user=user.id, login=user.login, status=status)
        return user

    def update_user(self, user: User, profile: dict[str, Any] | None, password: bool, actor: str) -> None:
        now = self.world.clock.now()
        if profile is not None:
            old = user.login
            user.profile = profile
            if user.login.casefold() != old.casefold():
                self.state.relogin(user, old)
        if password:
            user.has_password = True
            user.password_changed = now
        user.last_updated = now
        self.publish(ev.USER_UPDATED, actor, user=user.id, login=user.login, profile=profile is not None,
                     password=password)

    def set_status(self, user: User, status: str, operation: str, actor: str) -> None:
        before = user.status
        now = self.world.clock.now()
        user.status = status
        user.last_updated = now
        if before != status:
            user.status_changed = now
        if status == "ACTIVE" and user.activated is None:
            user.activated = now
        if before != status:
            self.publish(ev.USER_STATUS_CHANGED, actor, user=user.id, login=user.login, **{"from": before},
                         to=status, operation=operation)

    def delete_user(self, user: User, actor: str) -> None:
        self.state.remove_user(user)
        self.publish(ev.USER_DELETED, actor, user=user.id, login=user.login)

    def create_group(self, name: str, description: str | None, actor: str) -> Group:
        now = self.world.clock.now()
        group = Group(self.ids.make("00g"), name, description, now, now, now)
        self.state.add_group(group)
        self.publish(ev.GROUP_CREATED, actor, group=group.id, name=name)
        return group

    def update_group(self, group: Group, name: str, description: str | None, actor: str) -> None:
        old = group.name
        group.name, group.description = name, description
        group.last_updated = self.world.clock.now()
        if old != name:
            self.state.rename_group(group, old)
        self.publish(ev.GROUP_UPDATED, actor, group=group.id, name=name)

    def delete_group(self, group: Group, actor: str) -> None:
        self.state.remove_group(group)
        self.publish(ev.GROUP_DELETED, actor, group=group.id, name=group.name)

    def add_member(self, group: Group, user: User, actor: str) -> None:
        if user.id in group.members:
            return
        self._join(user, group)
        group.last_membership_updated = self.world.clock.now()
        self.publish(ev.GROUP_MEMBER_ADDED, actor, group=group.id, name=group.name, user=user.id, login=user.login)

    def remove_member(self, group: Group, user: User, actor: str) -> None:
        if user.id not in group.members:
            return
        group.members.discard(user.id)
        user.groups.discard(group.id)
        group.last_membership_updated = self.world.clock.now()
        self.publish(ev.GROUP_MEMBER_REMOVED, actor, group=group.id, name=group.name, user=user.id,
                     login=user.login)

    # --- event hooks --------------------------------------------------------------------

    def hook_or_404(self, hook_id: str) -> EventHook:
        hook = self.hooks.get(hook_id)
        if hook is None:
            raise errors.ResourceNotFound(hook_id, "EventHook")
        return hook

    def hook_json(self, hook: EventHook) -> dict[str, Any]:
        return hook.to_dict(self.base_url)

    def create_hook(self, body: dict[str, Any], actor: str) -> EventHook:
        name, description, items, channel = event_hooks.parse(body, None)
        now = self.world.clock.now()
        hook = EventHook(self.ids.make("who"), name, description, items, channel, now, now,
                         str(self.actor_json(actor)["id"]))
        self.hooks[hook.id] = hook
        self.publish(ev.EVENT_HOOK_CREATED, actor, hook=hook.id, name=hook.name)
        return hook

    def replace_hook(self, hook: EventHook, body: dict[str, Any], actor: str) -> None:
        name, description, items, channel = event_hooks.parse(body, hook)
        if _moved(hook.channel, channel):
            hook.verification = "UNVERIFIED"  # a new channel must be verified again
        hook.name, hook.description, hook.items, hook.channel = name, description, items, channel
        hook.last_updated = self.world.clock.now()
        self.publish(ev.EVENT_HOOK_UPDATED, actor, hook=hook.id, name=hook.name)

    def set_hook(self, hook: EventHook, actor: str, *, status: str | None = None, verified: bool = False) -> None:
        if status is not None and status != hook.status:
            hook.status = status
            hook.last_updated = self.world.clock.now()
            kind = ev.EVENT_HOOK_ACTIVATED if status == "ACTIVE" else ev.EVENT_HOOK_DEACTIVATED
            self.publish(kind, actor, hook=hook.id, name=hook.name)
        if verified:
            hook.verification = "VERIFIED"
            hook.last_updated = self.world.clock.now()
            self.publish(ev.EVENT_HOOK_VERIFIED, actor, hook=hook.id, name=hook.name)

    def delete_hook(self, hook: EventHook, actor: str) -> None:
        del self.hooks[hook.id]
        self.publish(ev.EVENT_HOOK_DELETED, actor, hook=hook.id, name=hook.name)


def _moved(old: Channel, new: Channel) -> bool:
    return (old.uri, old.headers, old.auth_key, old.auth_value) != (new.uri, new.headers, new.auth_key,
                                                                     new.auth_value)
