"""Repository archives: ``GET /repos/{o}/{r}/tarball/{ref}`` and ``/zipball/{ref}``.

GitHub answers 302 to codeload.github.com; here the ``Location`` is the archive on the
replica's own host (``{base}/{owner}/{repo}/archive/{ref}.tar.gz`` or ``.zip``, served by
``web.py``), so a client that follows the redirect (PyGithub's ``get_archive_link`` reads
it; curl ``-L`` and httpx follow it) gets the bytes from the world. An unknown ref is 404.

Through real hostnames the ``Location`` is GitHub's own shape,
``https://codeload.github.com/{o}/{r}/legacy.tar.gz/refs/heads/main`` (a branch or tag by its
full name, a commit by its sha), which ``real_hosts.py`` leads back to the same archive. A
private repository's link carries a ``token`` as GitHub's does: clients drop the
``Authorization`` header when a redirect leaves api.github.com for codeload.github.com.
"""

from __future__ import annotations

from urllib.parse import quote

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.git_calls import repo_git
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.models.wire import API, archive_url
from ancha.world.tools.github.router import route


def _full_ref(git: RepoGit, ref: str) -> str:
    """How codeload names ``ref``: a branch or tag by its full name, anything else as given."""
    for full in ("refs/heads/" + ref, "refs/tags/" + ref):
        if git.ref_sha(full) is not None:
            return full
    return ref


def _redirect(call: Call, ext: str) -> Reply:
    repo, git = repo_git(call)
    ref = call.params.get("ref") or git.default_branch
    if git.resolve(ref) is None:
        raise errors.NotFound()
    if call.base != API:
        return Reply(302, None, {"location": archive_url(call.base, repo.full_name, quote(ref, safe="/"), ext)})
    location = archive_url(call.base, repo.full_name, quote(_full_ref(git, ref), safe="/"), ext)
    if repo.private and call.caller is not None:
        location += "?token=" + call.replica.link_token(call.caller)
    return Reply(302, None, {"location": location})


@route("GET", "/repos/{owner}/{repo}/tarball/{ref}")
def repos_download_tarball_archive(call: Call) -> Reply:
    return _redirect(call, ".tar.gz")


@route("GET", "/repos/{owner}/{repo}/tarball")
def repos_download_tarball_archive_of_default_branch(call: Call) -> Reply:
    """Without a ref, the default branch (GitHub serves it, as PyGithub's ``get_archive_link`` asks)."""
    return _redirect(call, ".tar.gz")


@route("GET", "/repos/{owner}/{repo}/zipball/{ref}")
def repos_download_zipball_archive(call: Call) -> Reply:
    return _redirect(call, ".zip")


@route("GET", "/repos/{owner}/{repo}/zipball")
def repos_download_zipball_archive_of_default_branch(call: Call) -> Reply:
    return _redirect(call, ".zip")
