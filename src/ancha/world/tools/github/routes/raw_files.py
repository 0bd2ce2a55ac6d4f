"""Raw file downloads on the replica's own host: what a contents answer's ``download_url`` names.

GitHub's ``download_url`` points at ``raw.githubusercontent.com/{owner}/{repo}/{ref}/{path}``,
outside the API; here it is ``{base}/raw/{owner}/{repo}/{ref}/{path}``, so an agent that
follows it (``requests.get(download_url)``, ``curl``) stays inside the world (through real
hostnames it is raw.githubusercontent.com's own URL, which ``real_hosts.py`` leads here). The answer
is the file's bytes as ``text/plain``, as raw.githubusercontent.com sends them. Public
repositories need no token; a private one takes the caller's token in the
``Authorization`` header or, as GitHub's private download URLs carry one, a ``token``
query parameter. A ref may contain slashes (``feature/x``): the shortest prefix of the
path that names a ref and leads to a file wins.

This is not a REST operation of GitHub's, so the coverage ledger lists it as an extra.
"""

from __future__ import annotations

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.models import User
from ancha.world.tools.github.router import route


def _reader(call: Call) -> User | None:
    token = call.query.get("token")
    if token:
        found = call.replica.tokens.get(token)
        if found is None:
            raise errors.NotFound()
        return found.user
    return call.caller.user if call.caller is not None else None


@route("GET", "/raw/{owner}/{repo}/{path}")
def raw_download(call: Call) -> Reply:
    repo = call.state.repo(call.params["owner"], call.params["repo"])
    if repo is None or call.state.role(repo, _reader(call)) is None or not isinstance(repo.git, RepoGit):
        raise errors.NotFound()
    git: RepoGit = repo.git
    parts = [p for p in call.params["path"].split("/") if p]
    for i in range(1, len(parts)):
        sha = git.resolve("/".join(parts[:i]))
        data = git.read_file(sha, "/".join(parts[i:])) if sha is not None else None
        if data is not None:
            return Reply(200, data, {"content-type": "text/plain; charset=utf-8"})
    raise errors.NotFound()
