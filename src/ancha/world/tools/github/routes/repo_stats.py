"""What a repository's git history says about it: tags, contributors, languages.

Contributors come from the default branch's commit authors, matched to accounts by
email as commits are (``git_wire.Accounts``); unmatched authors appear only with
``anon=1``, as GitHub's ``Anonymous`` entries. Languages count the bytes of files at the
default branch's tip by file name, as GitHub's linguist does for programming and markup
languages (prose such as Markdown, and data such as YAML or JSON, are not counted;
vendored folders neither).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import quote

from dulwich.objects import Blob

from ancha.world.tools.github.call import Call, Reply
from ancha.world.tools.github.git_calls import repo_git
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.git_wire import Accounts, sha_node_id
from ancha.world.tools.github.router import route

_EXTENSIONS = {
    "py": "Python", "pyi": "Python", "js": "JavaScript", "mjs": "JavaScript", "cjs": "JavaScript",
    "jsx": "JavaScript", "ts": "TypeScript", "mts": "TypeScript", "tsx": "TSX", "go": "Go", "rs": "Rust",
    "java": "Java", "kt": "Kotlin", "kts": "Kotlin", "scala": "Scala", "rb": "Ruby", "php": "PHP", "c": "C",
    "h": "C", "cc": "C++", "cpp": "C++", "cxx": "C++", "hpp": "C++", "cs": "C#", "swift": "Swift",
    "m": "Objective-C", "sh": "Shell", "bash": "Shell", "zsh": "Shell", "ps1": "PowerShell", "html": "HTML",
    "htm": "HTML", "css": "CSS", "scss": "SCSS", "sass": "Sass", "less": "Less", "vue": "Vue",
    "svelte": "Svelte", "lua": "Lua", "pl": "Perl", "r": "R", "ex": "Elixir", "exs": "Elixir",
    "erl": "Erlang", "hs": "Haskell", "clj": "Clojure", "dart": "Dart", "tf": "HCL", "hcl": "HCL",
    "sql": "PLpgSQL", "groovy": "Groovy", "jl": "Julia", "zig": "Zig", "nim": "Nim", "ml": "OCaml",
    "fs": "F#", "elm": "Elm", "tex": "TeX", "ipynb": "Jupyter Notebook", "mk": "Makefile",
}
_FILENAMES = {"dockerfile": "Dockerfile", "makefile": "Makefile", "gnumakefile": "Makefile",
              "rakefile": "Ruby", "gemfile": "Ruby", "cmakelists.txt": "CMake", "justfile": "Just"}
_VENDORED = re.compile(r"(^|/)(node_modules|vendor|third_party|\.venv|venv|dist|build)/")


def language_of(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    if name.startswith("dockerfile."):
        return "Dockerfile"
    _, dot, extension = name.rpartition(".")
    return _EXTENSIONS.get(extension) if dot else None


def languages(git: RepoGit) -> dict[str, int]:
    """Bytes per language at the default branch's tip, most first."""
    sha = git.branch_sha(git.default_branch)
    info = git.commit_info(sha) if sha is not None else None
    entries = git.tree_entries(info.tree, recursive=True) if info is not None else None
    totals: Counter[str] = Counter()
    for path, entry in entries or []:
        language = language_of(path) if entry.kind == "blob" and not _VENDORED.search(path) else None
        if language is None:
            continue
        blob = git.object(entry.sha.decode())
        if isinstance(blob, Blob):
            totals[language] += len(blob.data)
    return {name: size for name, size in totals.most_common() if size > 0}


@route("GET", "/repos/{owner}/{repo}/languages")
def repos_list_languages(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return languages(repo.git) if isinstance(repo.git, RepoGit) else {}


def _version_key(name: str) -> tuple[Any, ...]:
    """Tags newest version first: ``v10.0`` after ``v9.1`` counts higher, as GitHub lists them."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name.lower()) if p)


@route("GET", "/repos/{owner}/{repo}/tags")
def repos_list_tags(call: Call) -> list[dict[str, Any]]:
    repo, git = repo_git(call)
    items: list[dict[str, Any]] = []
    for name, _ in sorted(git.tags(), key=lambda t: _version_key(t[0]), reverse=True):
        sha = git.resolve("refs/tags/" + name)
        if sha is None:  # a tag of a tree or blob: GitHub lists commits' tags only
            continue
        url = f"{call.base}/repos/{repo.full_name}"
        items.append({"name": name, "zipball_url": f"{url}/zipball/refs/tags/{quote(name, safe='')}",
                      "tarball_url": f"{url}/tarball/refs/tags/{quote(name, safe='')}",
                      "commit": {"sha": sha, "url": f"{url}/commits/{sha}"}, "node_id": sha_node_id("Ref", sha)})
    return list(call.page(items))


@route("GET", "/repos/{owner}/{repo}/contributors", partial="counts the default branch (or the first 500 "
       "contributors of it); no 202 while statistics are computed")
def repos_list_contributors(call: Call) -> Any:
    _, git = repo_git(call)
    anon = call.query.get("anon", "") in ("1", "true")
    if not git.branches():
        return Reply(204)
    accounts = Accounts(call.state)
    counts: Counter[str] = Counter()
    people: dict[str, dict[str, Any]] = {}
    for info in git.log(git.default_branch):
        email = info.author.email
        user = accounts.find(email)
        if user is not None:
            key = "user:" + user.key
            people.setdefault(key, user.simple(call.base))
        elif anon:
            key = "anon:" + email.lower()
            people.setdefault(key, {"email": email, "name": info.author.name, "type": "Anonymous"})
        else:
            continue
        counts[key] += 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:500]
    return list(call.page([{**people[key], "contributions": n} for key, n in ordered]))
