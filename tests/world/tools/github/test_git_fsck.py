"""What a push may name and carry, as GitHub checks it: git's ref-name rules
(``git check-ref-format``, UTF-8) and fsck of every object in the pack
(``receive.fsckObjects``). A refused push answers git's own report lines, the git CLI
prints git's usual failure, and nothing already stored is touched.

A refused push changes nothing (each test here says so), so the tests whose pushes are
refused share one seeded world (``refusing``) and one clone of it; a push that lands gets
a world of its own (``landing``). Requests go over one kept-alive client: a fresh client
per request costs more than the request (it loads the CA bundle each time)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tag, Tree
from push_bodies import HEADERS, RECEIVE_PACK, ZERO, RawObject, push_body, read_answer
from test_webhooks import hooks_for

from conftest import SEED

GH = Any  # conftest.GH

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


@dataclass(frozen=True)
class World:
    """A seeded world's GitHub, reached over a shared HTTP client (as ``GH.raw`` reaches it)."""

    url: str
    token: str
    http: httpx.Client

    def raw(self, method: str, path: str, token: str | None = "", **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers.setdefault("Authorization", f"token {token or self.token}")
        return self.http.request(method, f"{self.url}{path}", headers=headers, **kwargs)

    def state(self) -> dict[str, Any]:
        base = self.url.rsplit("/github", 1)[0]
        return dict(self.http.get(f"{base}/state").json()["github"])


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def refusing(embedded_server: Any, http: httpx.Client) -> Iterator[World]:
    """One seeded world (``gh``'s seed) for every test whose push is refused."""
    body = {"scene": {"name": "test-scene", "clock": {"start": "2026-03-02T09:00:00Z"},
                      "world": {"github": SEED}}, "trial": 1}
    answer = http.post(f"{embedded_server.url}/envs", json=body)
    assert answer.status_code == 201, answer.text
    context = answer.json()
    yield World(context["tools"]["github"]["url"], context["tools"]["github"]["token"], http)
    http.delete(f"{embedded_server.url}/envs/{context['env_id']}")


@pytest.fixture
def landing(gh: GH, http: httpx.Client) -> World:
    """A world of its own, for a test whose push lands."""
    return World(gh.url, gh.token, http)


def _readable(world: World) -> None:
    for path in ("/repos/acme/orders/git/refs", "/repos/acme/orders/git/matching-refs/heads",
                 "/repos/acme/orders/branches", "/repos/acme/orders/contents/",
                 "/repos/acme/orders/contents/README.md?ref=main", "/repos/acme/orders/commits?sha=main"):
        assert world.raw("GET", path).status_code == 200, path
    assert world.state()["repos"]  # GET /envs/ID/state


def _main(world: World) -> tuple[str, str]:
    """(main's commit sha, its tree sha)."""
    head = world.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    return head, world.raw("GET", f"/repos/acme/orders/git/commits/{head}").json()["tree"]["sha"]


def _commit(tree: bytes, parent: str, message: bytes = b"Push\n") -> Commit:
    commit = Commit()
    commit.tree = ObjectID(tree)
    commit.parents = [ObjectID(parent.encode())]
    commit.author = commit.committer = b"Agent <agent@example.com>"
    commit.author_time = commit.commit_time = 1_770_000_000
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message
    return commit


def _push(world: World, commands: list[tuple[bytes, bytes, bytes]], objects: list[ShaFile | RawObject]) -> Any:
    answer = world.raw("POST", RECEIVE_PACK, headers=HEADERS, content=push_body(commands, objects))
    assert answer.status_code == 200, answer.text
    return read_answer(answer.content)


# --- ref names ------------------------------------------------------------------------------------

FUNNY_REFS = [
    b"refs/heads/\xff", b"refs/heads/\xc3\x28", b"refs/heads/caf\xe9", b"refs/heads/\xed\xa0\x80",
    b"refs/heads/a..b", b"refs/heads/a~1", b"refs/heads/a^", b"refs/heads/a:b",
    b"refs/heads/a?", b"refs/heads/a*", b"refs/heads/a[b", b"refs/heads/a\\b", b"refs/heads/x/",
    b"refs/heads/x.lock", b"refs/heads/x.lock/y", b"refs/heads/a@{1}", b"refs/heads/.hidden",
    b"refs/heads/x/.y", b"refs/heads/x.", b"refs/heads//x", b"refs/heads/\x01", b"refs/heads/\x7f",
    b"refs/heads/a\tb", b"refs/foo", b"refs/", b"HEAD", b"@", b"refs/@", b"main",
]


@pytest.mark.parametrize("ref", FUNNY_REFS, ids=lambda ref: repr(ref)[2:-1])
def test_push_to_a_ref_git_refuses__ng_funny_refname_and_the_world_stays_readable(refusing: World, ref: bytes) -> None:
    head, tree = _main(refusing)
    commit = _commit(tree.encode(), head)
    before = refusing.raw("GET", "/repos/acme/orders/git/refs").json()
    answer = _push(refusing, [(ZERO, commit.id, ref)], [commit])
    assert answer.report == [b"unpack ok", b"ng " + ref + b" funny refname"]
    assert refusing.raw("GET", "/repos/acme/orders/git/refs").json() == before
    _readable(refusing)


def test_push_to_a_ref_with_a_space__4xx_and_the_world_stays_readable(refusing: World) -> None:
    # (the command line is OLD NEW REF: dulwich reads a space as a malformed line)
    head, tree = _main(refusing)
    commit = _commit(tree.encode(), head)
    body = push_body([(ZERO, commit.id, b"refs/heads/a b")], [commit])
    assert 400 <= refusing.raw("POST", RECEIVE_PACK, headers=HEADERS, content=body).status_code < 500
    assert refusing.raw("GET", "/repos/acme/orders/branches/a b").status_code == 404
    _readable(refusing)


def test_push_of_funny_and_good_refs__only_the_good_one_moves(landing: World) -> None:
    head, tree = _main(landing)
    commit = _commit(tree.encode(), head)
    answer = _push(landing, [(ZERO, commit.id, b"refs/heads/\xff"), (ZERO, commit.id, "refs/heads/café".encode())],
                   [commit])
    assert answer.report == [b"unpack ok", b"ng refs/heads/\xff funny refname", "ok refs/heads/café".encode()]
    assert "refusing to update funny ref 'refs/heads/\udcff' remotely" in answer.remote
    assert landing.raw("GET", "/repos/acme/orders/branches/café").json()["commit"]["sha"] == commit.id.decode()
    _readable(landing)


# --- objects: GitHub's fsck -----------------------------------------------------------------------

BLOB = Blob.from_string(b"x\n")
SUB = Tree()
SUB.add(b"file", 0o100644, BLOB.id)


def _entry(mode: bytes, name: bytes, sha: bytes) -> bytes:
    return mode + b" " + name + b"\0" + bytes.fromhex(sha.decode())


def _tree(*entries: bytes) -> RawObject:
    return RawObject(Tree.type_num, b"".join(entries))


BAD_TREES = {
    "dotdot": (_tree(_entry(b"40000", b"..", SUB.id)), "hasDotdot: contains '..'"),
    "dot": (_tree(_entry(b"40000", b".", SUB.id)), "hasDot: contains '.'"),
    "dotgit": (_tree(_entry(b"40000", b".git", SUB.id)), "hasDotgit: contains '.git'"),
    "dotgit_upper": (_tree(_entry(b"100644", b".GiT", BLOB.id)), "hasDotgit: contains '.git'"),
    "dotgit_ntfs_dots": (_tree(_entry(b"40000", b".git. .", SUB.id)), "hasDotgit: contains '.git'"),
    "dotgit_ntfs_stream": (_tree(_entry(b"100644", b".git::$INDEX_ALLOCATION", BLOB.id)),
                           "hasDotgit: contains '.git'"),
    "dotgit_ntfs_short": (_tree(_entry(b"40000", b"GIT~1", SUB.id)), "hasDotgit: contains '.git'"),
    "dotgit_hfs_ignorable": (_tree(_entry(b"40000", ".g\u200cit".encode(), SUB.id)),
                             "hasDotgit: contains '.git'"),
    "dotgit_hfs_bom": (_tree(_entry(b"40000", ".git\ufeff".encode(), SUB.id)), "hasDotgit: contains '.git'"),
    "dotgit_after_backslash": (_tree(_entry(b"100644", b"a\\.git", BLOB.id)), "hasDotgit: contains '.git'"),
    "slash": (_tree(_entry(b"100644", b"a/b", BLOB.id)), "fullPathname: contains full pathnames"),
    "empty_name": (_tree(_entry(b"100644", b"", BLOB.id)), "badTree: cannot be parsed as a tree"),
    "not_utf8": (_tree(_entry(b"100644", b"\xff\xfe", BLOB.id)),
                 "badPathname: contains a pathname that is not UTF-8"),
    "zero_padded": (_tree(_entry(b"040000", b"sub", SUB.id)),
                    "zeroPaddedFilemode: contains zero-padded file modes"),
    "bad_mode": (_tree(_entry(b"100600", b"f", BLOB.id)), "badFilemode: contains bad file modes"),
    "duplicate": (_tree(_entry(b"100644", b"a", BLOB.id), _entry(b"100644", b"a", BLOB.id)),
                  "duplicateEntries: contains duplicate file entries"),
    "duplicate_file_and_dir": (_tree(_entry(b"100644", b"a", BLOB.id), _entry(b"100644", b"a.c", BLOB.id),
                                     _entry(b"40000", b"a", SUB.id)),
                               "duplicateEntries: contains duplicate file entries"),
    "unsorted": (_tree(_entry(b"100644", b"b", BLOB.id), _entry(b"100644", b"a", BLOB.id)),
                 "treeNotSorted: not properly sorted"),
    "null_sha": (_tree(_entry(b"100644", b"a", ZERO)),
                 "nullSha1: contains entries pointing to null sha1"),
    "gitmodules_symlink": (_tree(_entry(b"120000", b".gitmodules", BLOB.id)),
                           "gitmodulesSymlink: .gitmodules is a symbolic link"),
}


def _refused(answer: Any, bad: RawObject, message: str, ref: bytes = b"refs/heads/bad") -> None:
    assert answer.report == [b"unpack unpack-objects abnormal exit", b"ng " + ref + b" unpacker error"]
    assert f"error: object {bad.id.decode()}: {message}\n" in answer.remote
    assert "fatal: fsck error in packed object\n" in answer.remote


@pytest.mark.parametrize("case", sorted(BAD_TREES))
def test_push_of_a_tree_fsck_refuses__unpacker_error_and_nothing_stored(refusing: World, case: str) -> None:
    bad, message = BAD_TREES[case]
    head, _ = _main(refusing)
    commit = _commit(bad.id, head)
    answer = _push(refusing, [(ZERO, commit.id, b"refs/heads/bad")], [BLOB, SUB, bad, commit])
    _refused(answer, bad, message)
    assert refusing.raw("GET", "/repos/acme/orders/branches/bad").status_code == 404
    assert refusing.raw("GET", f"/repos/acme/orders/git/trees/{bad.id.decode()}").status_code == 404
    assert refusing.raw("GET", f"/repos/acme/orders/git/commits/{commit.id.decode()}").status_code == 404
    _readable(refusing)


def test_push_of_a_bad_tree_below_a_good_one__refused(refusing: World) -> None:
    bad, message = BAD_TREES["dotgit"]
    top = Tree()
    top.add(b"src", 0o040000, bad.id)
    head, _ = _main(refusing)
    commit = _commit(top.id, head)
    _refused(_push(refusing, [(ZERO, commit.id, b"refs/heads/bad")], [BLOB, SUB, bad, top, commit]), bad, message)
    _readable(refusing)


def test_push_of_a_good_tree_with_odd_but_valid_names__accepted(landing: World) -> None:
    tree = Tree()
    for name in (b".github", b".gitignore", b"git", b"..x", b".git-blame-ignore-revs", "ça va".encode()):
        tree.add(name, 0o100644, BLOB.id)
    head, _ = _main(landing)
    commit = _commit(tree.id, head)
    answer = _push(landing, [(ZERO, commit.id, b"refs/heads/odd")], [BLOB, tree, commit])
    assert answer.report == [b"unpack ok", b"ok refs/heads/odd"]
    listing = landing.raw("GET", "/repos/acme/orders/contents/?ref=odd").json()
    assert sorted(entry["name"] for entry in listing) == sorted(
        [".github", ".gitignore", "git", "..x", ".git-blame-ignore-revs", "ça va"])


def _raw_commit(header: bytes) -> RawObject:
    return RawObject(Commit.type_num, header + b"\nA message\n")


BAD_COMMITS = {
    "no_tree": (b"author A <a@x> 1770000000 +0000\ncommitter A <a@x> 1770000000 +0000\n",
                "missingTree: invalid format - expected 'tree' line"),
    "bad_tree_sha": (b"tree 1234\nauthor A <a@x> 1770000000 +0000\ncommitter A <a@x> 1770000000 +0000\n",
                     "badTreeSha1: invalid 'tree' line format - bad sha1"),
    "no_email": (b"tree %s\nauthor A 1770000000 +0000\ncommitter A <a@x> 1770000000 +0000\n",
                 "missingEmail: invalid author/committer line - missing email"),
    "bad_email": (b"tree %s\nauthor A <a<x> 1770000000 +0000\ncommitter A <a@x> 1770000000 +0000\n",
                  "badEmail: invalid author/committer line - bad email"),
    "bad_timezone": (b"tree %s\nauthor A <a@x> 1770000000 +00\ncommitter A <a@x> 1770000000 +0000\n",
                     "badTimezone: invalid author/committer line - bad time zone"),
    "zero_padded_date": (b"tree %s\nauthor A <a@x> 01770000000 +0000\ncommitter A <a@x> 1770000000 +0000\n",
                         "zeroPaddedDate: invalid author/committer line - zero-padded date"),
    "two_authors": (b"tree %s\nauthor A <a@x> 1 +0000\nauthor B <b@x> 1 +0000\ncommitter A <a@x> 1 +0000\n",
                    "multipleAuthors: invalid format - multiple 'author' lines"),
    "no_committer": (b"tree %s\nauthor A <a@x> 1770000000 +0000\n",
                     "missingCommitter: invalid format - expected 'committer' line"),
}


@pytest.mark.parametrize("case", sorted(BAD_COMMITS))
def test_push_of_a_commit_fsck_refuses__unpacker_error(refusing: World, case: str) -> None:
    header, message = BAD_COMMITS[case]
    _, tree = _main(refusing)
    bad = _raw_commit(header.replace(b"%s", tree.encode()))
    _refused(_push(refusing, [(ZERO, bad.id, b"refs/heads/bad")], [bad]), bad, message)
    _readable(refusing)


def test_push_of_a_tag_fsck_refuses__unpacker_error(refusing: World) -> None:
    head, _ = _main(refusing)
    bad = RawObject(Tag.type_num, b"object %s\ntype commit\ntag v1\ntagger T <t@x> 1770000000 +00\n\nv1\n"
                     % head.encode())
    _refused(_push(refusing, [(ZERO, bad.id, b"refs/tags/v1")], [bad]), bad,
             "badTimezone: invalid author/committer line - bad time zone", b"refs/tags/v1")
    _readable(refusing)


# --- the git CLI ----------------------------------------------------------------------------------


def git(*args: str | bytes, cwd: Path, check: bool = True, stdin: bytes | None = None,
        ) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ancha Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
           "GIT_COMMITTER_NAME": "Ancha Agent", "GIT_COMMITTER_EMAIL": "agent@example.com", "LC_ALL": "C"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, input=stdin, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def refusing_clone(refusing: World, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the shared world, for the git CLI's refused pushes."""
    if shutil.which("git") is None:
        pytest.skip("needs the git CLI")
    where = tmp_path_factory.mktemp("clone")
    scheme, _, rest = refusing.url.partition("://")
    git("clone", "-q", f"{scheme}://x-access-token:{refusing.token}@{rest}/acme/orders.git", "orders", cwd=where)
    return where / "orders"


@needs_git
def test_git_push_to_a_funny_ref__remote_rejected_funny_refname(refusing: World, refusing_clone: Path) -> None:
    work = refusing_clone
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=work)
    for ref, shown in ((b"refs/heads/\xff", b"\xff"), (b"refs/foo", b"refs/foo")):
        done = git("push", "origin", b"HEAD:" + ref, cwd=work, check=False)
        assert done.returncode != 0
        assert b"remote: error: refusing to update funny ref '" + ref + b"' remotely" in done.stderr
        assert b" ! [remote rejected] HEAD -> " + shown + b" (funny refname)" in done.stderr
        assert b"error: failed to push some refs" in done.stderr
    _readable(refusing)


@needs_git
def test_git_push_of_a_tree_holding_dotgit__remote_unpack_failed(refusing: World, refusing_clone: Path) -> None:
    work = refusing_clone
    blob = git("hash-object", "-w", "--stdin", cwd=work, stdin=b"[core]\n").stdout.strip()
    raw = b"100644 .git\0" + bytes.fromhex(blob.decode())
    tree = git("hash-object", "-w", "-t", "tree", "--literally", "--stdin", cwd=work, stdin=raw).stdout.strip()
    commit = git("commit-tree", tree, "-p", "HEAD", "-m", "Sneak in .git", cwd=work).stdout.strip()
    done = git("push", "origin", commit + b":refs/heads/sneaky", cwd=work, check=False)
    assert done.returncode != 0
    assert b"remote: error: object " + tree + b": hasDotgit: contains '.git'" in done.stderr
    assert b"remote: fatal: fsck error in packed object" in done.stderr
    assert b"error: remote unpack failed: unpack-objects abnormal exit" in done.stderr
    assert b"-> sneaky (unpacker error)" in done.stderr
    assert refusing.raw("GET", "/repos/acme/orders/branches/sneaky").status_code == 404
    _readable(refusing)


@pytest.mark.parametrize(("when", "zone"), [(b"0", b"+0000"), (b"99999999999999", b"+1400"),
                                            (b"9223372036854775807", b"-9959"), (b"1770000000", b"+9959")])
def test_push_of_a_commit_git_accepts_at_any_date__readable_and_delivered(gh: GH, landing: World, embedded_server: Any,
                                                                          when: bytes, zone: bytes) -> None:
    hooks = hooks_for(gh, embedded_server)
    head, tree = _main(landing)
    commit = RawObject(Commit.type_num, b"tree %s\nparent %s\nauthor A <a@x> %s %s\ncommitter C <c@x> %s %s\n"
                       b"\nWhen?\n" % (tree.encode(), head.encode(), when, zone, when, zone))
    body = push_body([(ZERO, commit.id, b"refs/heads/when")], [commit])  # as a person: delivered
    answer = landing.raw("POST", RECEIVE_PACK, token=hooks.laura, headers=HEADERS, content=body)
    assert read_answer(answer.content).report == [b"unpack ok", b"ok refs/heads/when"]
    sha = commit.id.decode()
    for path in (f"/repos/acme/orders/commits/{sha}", f"/repos/acme/orders/git/commits/{sha}",
                 "/repos/acme/orders/commits?sha=when", "/repos/acme/orders/branches/when"):
        assert landing.raw("GET", path).status_code == 200, path
    pushes = [body for kind, body in hooks.take() if kind == "push"]
    assert [p["head_commit"]["id"] for p in pushes] == [sha]
    _readable(landing)


@pytest.mark.parametrize("ref", ["refs/heads/\ud800", "refs/heads/a\x7fb", "refs/foo", "refs/heads/x.lock",
                                 "refs/heads/a..b"])
def test_create_ref_through_rest_with_a_name_git_refuses__422_and_the_world_stays_readable(refusing: World,
                                                                                         ref: str) -> None:
    head, _ = _main(refusing)
    answer = refusing.raw("POST", "/repos/acme/orders/git/refs", content=json.dumps({"ref": ref, "sha": head}),
                          headers={"Content-Type": "application/json"})
    assert answer.status_code in (400, 422), answer.text
    _readable(refusing)


TAGS_GIT_ACCEPTS = {
    "odd_bytes": b"tag \xff\xfe\ntagger \xff <\xfe@x> 1770000000 +0000\n\n\xff message\n",
    "no_tagger": b"tag v1\n\nOld style\n",
    "far_date": b"tag v1\ntagger T <t@x> 9223372036854775807 +9959\n\nLate\n",
}


@pytest.mark.parametrize("case", sorted(TAGS_GIT_ACCEPTS))
def test_push_of_a_tag_git_accepts__served_by_the_git_data_api(landing: World, case: str) -> None:
    head, _ = _main(landing)
    tag = RawObject(Tag.type_num, b"object %s\ntype commit\n" % head.encode() + TAGS_GIT_ACCEPTS[case])
    answer = _push(landing, [(ZERO, tag.id, b"refs/tags/t1")], [tag])
    assert answer.report == [b"unpack ok", b"ok refs/tags/t1"]
    served = landing.raw("GET", f"/repos/acme/orders/git/tags/{tag.id.decode()}")
    assert served.status_code == 200, served.text
    assert served.json()["object"]["sha"] == head
    for path in ("/repos/acme/orders/tags", "/repos/acme/orders/git/refs/tags/t1", "/repos/acme/orders/commits/t1"):
        assert landing.raw("GET", path).status_code == 200, path
    _readable(landing)
