"""github.com's web side, on the replica's own host: what ``html_url``, ``avatar_url`` and
archive links name.

GitHub hands out URLs on three more hosts than its API: ``github.com`` (pages, ``.diff``,
``/raw/``, ``/archive/``), ``avatars.githubusercontent.com`` and ``codeload.github.com``.
Here they all live on the replica's base URL, the way ``clone_url`` already does
(``{base}/{owner}/{repo}.git``): ``html_url`` is ``{base}/{owner}/{repo}/pull/5``,
``avatar_url`` is ``{base}/avatars/u/{id}?v=4`` (and ``GET /emojis``'
pictures, on ``github.githubassets.com`` at GitHub, are ``{base}/images/icons/emoji/...``), and ``GET /repos/{o}/{r}/tarball/{ref}``
redirects to ``{base}/{o}/{r}/archive/{ref}.tar.gz``. So an agent that follows any URL in
an answer stays inside the world. Through real hostnames those URLs name GitHub's own hosts
(``models.wire``), and ``real_hosts.py`` leads each host's paths to these.

A page is a minimal HTML document naming the object and linking to its API URL (200); a
``.diff``/``.patch`` is the unified diff as text; ``raw`` and ``archive`` are the bytes. An
object the caller cannot see (a private repository without its token, an issue that does
not exist) is GitHub's JSON 404, as any unknown path on the replica. These paths are looked up
only after the REST routes and GitHub's own API templates, so they never shadow either.
"""

from __future__ import annotations

import html
import io
import tarfile
import time
import zipfile
from collections.abc import Callable
from urllib.parse import unquote

from ancha.world.kernel import images
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.github.call import Caller
from ancha.world.tools.github.coverage_ledger import LEDGER
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.models import GitHubState, Repo, role_rank
from ancha.world.tools.github.models.wire import AVATAR_PATH, web_url
from ancha.world.tools.github.router import Router
from ancha.world.tools.github.routes.reference import EMOJI_PATH, EMOJIS
from ancha.world.tools.github.routes.releases import releases_of

HTML_TYPE = "text/html; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"

Page = Callable[["Visit"], ToolResponse]


class Visit:
    """One request for a web path: who asks, the path's parameters, the replica's base."""

    def __init__(self, state: GitHubState, caller: Caller | None, params: list[str], base: str) -> None:
        self.state = state
        self.caller = caller
        self.params = params
        self.base = base

    def repo(self) -> Repo | None:
        repo = self.state.repo(self.params[0], self.params[1])
        if (
            repo is None
            or self.state.role(repo, self.caller.user if self.caller is not None else None) is None
        ):
            return None
        return repo


def not_found() -> ToolResponse:
    return ToolResponse(404, _document("Page not found", "<p>Not Found</p>"), HTML_TYPE)


def _document(title: str, body: str) -> bytes:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n"
    ).encode()


def page(title: str, api_url: str | None) -> ToolResponse:
    link = f'<p><a rel="alternate" href="{html.escape(api_url)}">API</a></p>' if api_url else ""
    return ToolResponse(200, _document(title, link), HTML_TYPE)


# --- avatars ------------------------------------------------------------------------------------


def _avatar(visit: Visit) -> ToolResponse:
    wanted = visit.params[0]
    if not wanted.isascii() or not wanted.isdigit():
        return not_found()
    return ToolResponse(200, images.placeholder_png(wanted), "image/png", headers={"cache-control": "max-age=300"})


def _settings(visit: Visit) -> ToolResponse:
    """github.com's settings pages (``current_user_authorizations_html_url``): for signed-in callers."""
    if visit.caller is None:
        return not_found()
    return page(f"Settings: {visit.params[0]}", f"{visit.base}/user")


# --- accounts and repositories -----------------------------------------------------------------


def _account(visit: Visit) -> ToolResponse:
    login = visit.params[0]
    user = visit.state.user(login)
    if user is not None:
        return page(f"{user.login}", f"{visit.base}/users/{user.login}")
    org = visit.state.orgs.get(login.lower())
    if org is not None:
        return page(f"{org.login}", f"{visit.base}/orgs/{org.login}")
    return not_found()


def _repo_page(visit: Visit) -> ToolResponse:
    name = visit.params[1]
    repo = visit.repo() if not name.endswith(".git") else None
    if name.endswith(".git"):  # a clone_url opened in a browser: github.com redirects to the repository
        repo = visit.state.repo(visit.params[0], name.removesuffix(".git"))
        seen = (
            repo is not None
            and visit.state.role(repo, visit.caller.user if visit.caller else None) is not None
        )
        if repo is None or not seen:
            return not_found()
        return ToolResponse(301, b"", HTML_TYPE, headers={"location": f"{web_url(visit.base)}/{repo.full_name}"})
    if repo is None:
        return not_found()
    return page(repo.full_name, f"{visit.base}/repos/{repo.full_name}")


def _repo_subpage(visit: Visit) -> ToolResponse:
    """Any page under a repository the caller can see (issues, releases, runs, compare...)."""
    repo = visit.repo()
    if repo is None:
        return not_found()
    rest = visit.params[2]
    kind, _, tail = rest.partition("/")
    api = f"{visit.base}/repos/{repo.full_name}"
    if kind in ("pull", "issues"):
        number, _, suffix = tail.partition("/")
        plain, dot, ext = number.partition(".")
        if not plain.isascii() or not plain.isdigit() or int(plain) not in repo.issues:
            return not_found()
        issue = repo.issues[int(plain)]
        if kind == "pull" and not issue.is_pull:
            return not_found()
        if dot and ext in ("diff", "patch") and kind == "pull":
            pull = repo.pulls.get(int(plain))
            git = repo.git
            if pull is None or not isinstance(git, RepoGit):
                return not_found()
            return _diff(
                git, git.branch_sha(pull.base) or pull.base_sha, git.branch_sha(pull.head) or pull.head_sha
            )
        if dot:
            return not_found()
        return page(
            f"{issue.title} · {kind} #{plain} · {repo.full_name}",
            f"{api}/{'pulls' if kind == 'pull' else 'issues'}/{plain}",
        )
    if kind == "releases" and tail.startswith("download/"):
        return _release_download(visit, repo, tail.removeprefix("download/"))
    git = repo.git if isinstance(repo.git, RepoGit) else None
    if kind in ("commit", "blob", "tree", "raw", "archive", "compare") and git is None:
        return not_found()
    assert git is not None or kind not in ("commit", "blob", "tree", "raw", "archive", "compare")
    if kind == "commit":
        sha = git.resolve(tail) if git is not None else None
        if sha is None:
            return not_found()
        return page(f"Commit {sha[:7]} · {repo.full_name}", f"{api}/commits/{sha}")
    if kind in ("blob", "tree", "raw") and git is not None:
        return _file(git, repo, kind, tail, api)
    if kind == "archive" and git is not None:
        return _archive(git, repo, tail)
    if kind == "compare" and git is not None:
        spec, dot, ext = tail.rpartition(".") if tail.endswith((".diff", ".patch")) else (tail, "", "")
        base, sep, head = spec.partition("...")
        if not sep:
            base, sep, head = spec.partition("..")
        if not sep:  # a branch created: compared with the default branch
            base, head = repo.default_branch, spec
        base_sha, head_sha = (
            git.resolve(unquote(base).split(":")[-1]),
            git.resolve(unquote(head).split(":")[-1]),
        )
        if base_sha is None or head_sha is None:
            return (
                not_found() if dot else page(f"Comparing {spec} · {repo.full_name}", f"{api}/compare/{spec}")
            )
        if dot:
            return _diff(git, base_sha, head_sha)
        return page(f"Comparing {spec} · {repo.full_name}", f"{api}/compare/{base_sha}...{head_sha}")
    return page(f"{rest} · {repo.full_name}", api)


def _release_download(visit: Visit, repo: Repo, tail: str) -> ToolResponse:
    """``releases/download/{tag}/{name}``: an asset's ``browser_download_url``."""
    tag, _, name = unquote(tail).rpartition("/")
    writer = role_rank(visit.state.role(repo, visit.caller.user if visit.caller is not None else None)) >= 3
    for release in releases_of(repo):
        if release.tag_path != tag or (release.draft and not writer):
            continue
        for asset in release.assets:
            if asset.name == name:
                asset.download_count += 1
                return ToolResponse(
                    200,
                    asset.data,
                    asset.content_type or "application/octet-stream",
                    headers={"content-disposition": f"attachment; filename={asset.name}"},
                )
    return not_found()


def _split_ref(git: RepoGit, tail: str) -> tuple[str, str] | None:
    """``ref/path`` where the ref may hold slashes: the shortest prefix that names a commit."""
    parts = [p for p in unquote(tail).split("/") if p]
    for i in range(1, len(parts) + 1):
        sha = git.resolve("/".join(parts[:i]))
        if sha is not None:
            return sha, "/".join(parts[i:])
    return None


def _file(git: RepoGit, repo: Repo, kind: str, tail: str, api: str) -> ToolResponse:
    found = _split_ref(git, tail)
    if found is None:
        return not_found()
    sha, path = found
    if kind == "raw":
        data = git.read_file(sha, path)
        return not_found() if data is None else ToolResponse(200, data, TEXT_TYPE)
    entry = git.entry(sha, path) if path else None
    if path and entry is None:
        return not_found()
    return page(f"{path or repo.name} at {sha[:7]} · {repo.full_name}", f"{api}/contents/{path}?ref={sha}")


def _diff(git: RepoGit, base: str, head: str) -> ToolResponse:
    base_sha, head_sha = git.resolve(base), git.resolve(head)
    if base_sha is None or head_sha is None:
        return not_found()
    comparison = git.compare(base_sha, head_sha)
    out: list[str] = []
    for change in comparison.files:
        old = change.previous_filename or change.filename
        out.append(f"diff --git a/{old} b/{change.filename}\n")
        out.append(f"--- {'/dev/null' if change.status == 'added' else 'a/' + old}\n")
        out.append(f"+++ {'/dev/null' if change.status == 'removed' else 'b/' + change.filename}\n")
        if change.patch:
            out.append(change.patch.rstrip("\n") + "\n")
    return ToolResponse(200, "".join(out).encode(), TEXT_TYPE)


def _archive(git: RepoGit, repo: Repo, tail: str) -> ToolResponse:
    """``archive/{ref}.tar.gz`` or ``.zip``: the tree at ``ref`` under ``{repo}-{sha7}/``, as codeload does."""
    ext = ".tar.gz" if tail.endswith(".tar.gz") else ".zip" if tail.endswith(".zip") else ""
    if not ext:
        return not_found()
    ref = unquote(tail[: -len(ext)])
    sha = git.resolve(ref)
    info = git.commit_info(sha) if sha is not None else None
    entries = git.tree_entries(info.tree, recursive=True) if info is not None else None
    if sha is None or info is None or entries is None:
        return not_found()
    top = f"{repo.owner.login}-{repo.name}-{sha[:7]}"
    files = [
        (path, data)
        for path, entry in entries
        if not entry.is_dir and (data := git.read_file(sha, path)) is not None
    ]
    buffer = io.BytesIO()
    stamp = info.committer.time
    if ext == ".tar.gz":
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path, data in files:
                member = tarfile.TarInfo(f"{top}/{path}")
                member.size, member.mtime = len(data), int(stamp)
                tar.addfile(member, io.BytesIO(data))
        content_type = "application/x-gzip"
    else:
        when = time.gmtime(max(stamp, 315532800))[:6]
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path, data in files:
                archive.writestr(zipfile.ZipInfo(f"{top}/{path}", date_time=when), data)
        content_type = "application/zip"
    disposition = f"attachment; filename={top}{ext}"
    return ToolResponse(200, buffer.getvalue(), content_type, headers={"content-disposition": disposition})


def _emoji(visit: Visit) -> ToolResponse:
    name = visit.params[0]
    if not name.endswith(".png") or name.removesuffix(".png") not in EMOJIS:
        return not_found()
    return ToolResponse(200, images.placeholder_png(name, 20), "image/png", headers={"cache-control": "max-age=300"})


def _build() -> Router[Page]:
    router: Router[Page] = Router()
    router.add("GET", AVATAR_PATH + "{id}", _avatar)
    router.add("GET", EMOJI_PATH + "{name}", _emoji)
    router.add("GET", "/settings/{path}", _settings)
    router.add("GET", "/{owner}", _account)
    router.add("GET", "/{owner}/{repo}", _repo_page)
    router.add("GET", "/{owner}/{repo}/{path}", _repo_subpage)
    return router


PAGES = _build()


API_ROOTS = frozenset(key.partition(" ")[2].split("/")[1].lower() for key in LEDGER) - {"avatars", "settings", "images"}
"""The first segments of GitHub's API paths (``repos``, ``users``...): never a web page, so an
unknown API path keeps GitHub's JSON 404."""


def serve_page(
    state: GitHubState, caller: Caller | None, method: str, path: str, base: str
) -> ToolResponse | None:
    """The web page at ``path`` (GET/HEAD), or None when no web path has that shape."""
    if method not in ("GET", "HEAD") or path.strip("/").split("/")[0].lower() in API_ROOTS:
        return None
    found = PAGES.match(path, "GET")
    if found is None or "GET" not in found[0]:
        return None
    answer = found[0]["GET"](Visit(state, caller, found[1], base))
    return None if answer.status == 404 else answer  # nothing there: GitHub's JSON 404, as for any path
