"""Uploading Ancha runs to a workspace (`ancha push`): the files arrive whole and checked,
pushing again is harmless and resumes, quotas and roles are enforced, and no workspace can
reach another's runs, however it guesses. On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import json
import re
import secrets
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentos.db import Database
from agentos.keys import issue_key
from ancha.results import upload
from ancha.results.upload import RunSource, UploadError, ci_source, push_run
from conftest import ServerThread


def make_run(root: Path, run_id: str | None = None, *, scenes: dict[str, str] | None = None,
             big: int = 0) -> Path:
    """A finished run folder as `ancha run` writes it: scene -> outcomes ("PPF")."""
    run_id = run_id or f"20261203T120000Z-{secrets.token_hex(3)}"
    folder = root / run_id
    entries = []
    for scene, outcomes in (scenes or {"orders-latency": "PPF"}).items():
        source = root / "scenes" / scene / "scene.yaml"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"name: {scene}\ntask: fix it\n")
        results = []
        for number, outcome in enumerate(outcomes, start=1):
            trial = folder / scene / str(number)
            (trial / "state").mkdir(parents=True)
            verdict = "passed" if outcome == "P" else "failed"
            (trial / "checks.json").write_text(json.dumps({"scene": scene, "trial": number, "verdict": verdict,
                                                           "reason": None, "results": []}))
            (trial / "trace.jsonl").write_text(json.dumps({"seq": 1, "path": "/api/chat.postMessage"}) + "\n")
            (trial / "world.json").write_text("{}")
            (trial / "agent.log").write_bytes(b"agent says \x00\xff " + f"{run_id} {number}".encode())
            (trial / "state" / "notes.txt").write_text("remembered")
            if big and number == 1:
                (trial / "trace.jsonl").write_bytes(secrets.token_bytes(big))
            results.append({"trial": number, "verdict": verdict, "status": "done", "reason": None})
        passed = outcomes.count("P")
        entries.append({"scene": scene, "path": str(source), "source_hash": "ab" * 32, "trials": len(outcomes),
                        "ran": len(outcomes), "passed": passed, "failed": len(outcomes) - passed, "invalid": 0,
                        "pass_rate": passed / len(outcomes), "min_pass_rate": 0.5,
                        "gate_met": passed / len(outcomes) >= 0.5, "trial_results": results})
    (folder / "summary.json").write_text(json.dumps({
        "run_id": run_id, "started_at": "2026-12-03T12:00:00Z", "duration_s": 3.0, "interrupted": False,
        "exit_code": 0, "seed": 7, "server": "embedded", "config": {}, "scenes": entries}))
    (folder / "live.json").write_text("{}")
    return folder


def key_for(key_database: Database, workspace: str, role: str) -> str:
    return issue_key(key_database, workspace, role)


@pytest.fixture
def workspace(key_database: Database) -> Callable[[str], str]:
    """Keys of one fresh workspace, by role."""
    name = f"team-{secrets.token_hex(4)}"
    return lambda role: key_for(key_database, name, role)


def _get(service: ServerThread, key: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.get(service.url + path, headers={"authorization": f"Bearer {key}"}, timeout=30, **kw)


SOURCE = RunSource(commit="a" * 40, branch="main", ci_provider="github",
                   ci_url="https://github.com/acme/agent/actions/runs/1", agent_version="v3")


def test_a_pushed_run_is_listed_with_its_commit_and_its_files_come_back_byte_for_byte(
        service: ServerThread, workspace: Callable[[str], str], tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    ci = workspace("ci")
    done = push_run(folder, service.url, ci, SOURCE)
    assert not done.already_there and done.url == f"{service.url}/ui/runs/{folder.name}"
    viewer = workspace("viewer")
    listed = _get(service, viewer, "/api/ancha/runs").json()["runs"]
    assert [r["id"] for r in listed] == [folder.name]
    assert listed[0] | {"ci": None} == listed[0] | {
        "commit": "a" * 40, "branch": "main", "agent_version": "v3", "trials": 3, "passed": 2, "status": "complete",
        "ci": None}
    assert listed[0]["ci"] == {"provider": "github", "url": "https://github.com/acme/agent/actions/runs/1"}
    for relative in ("orders-latency/1/agent.log", "orders-latency/3/state/notes.txt", "summary.json"):
        answer = _get(service, viewer, f"/api/ancha/runs/{folder.name}/files/{relative}")
        assert answer.status_code == 200 and answer.content == (folder / relative).read_bytes()
    source = _get(service, viewer, f"/api/ancha/runs/{folder.name}/files/_scenes/orders-latency/scene.yaml")
    assert source.text.startswith("name: orders-latency")
    files = {f["path"] for f in _get(service, viewer, f"/api/ancha/runs/{folder.name}").json()["files"]}
    assert "live.json" not in files, "a run's live.json is its runner's, not part of the result"


def test_pushing_a_run_again_sends_nothing_and_answers_the_same_run(
        service: ServerThread, workspace: Callable[[str], str], tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    ci = workspace("ci")
    first = push_run(folder, service.url, ci, SOURCE)
    again = push_run(folder, service.url, ci, SOURCE)
    assert first.sent_files > 0 and again.already_there and again.sent_bytes == 0
    assert len(_get(service, ci, "/api/ancha/runs").json()["runs"]) == 1


def test_a_run_id_already_complete_with_other_files_is_a_conflict(
        service: ServerThread, workspace: Callable[[str], str], tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    ci = workspace("ci")
    push_run(folder, service.url, ci, SOURCE)
    (folder / "orders-latency" / "1" / "agent.log").write_text("changed")
    with pytest.raises(UploadError, match="already uploaded with other files"):
        push_run(folder, service.url, ci, SOURCE)


def test_a_push_that_broke_off_resumes_with_only_the_missing_files_and_the_rest_of_a_large_one(
        service: ServerThread, workspace: Callable[[str], str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload, "CHUNKED_FROM", 64 * 1024)
    monkeypatch.setattr(upload, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(upload, "BATCH_BYTES", 1)  # one file per batch, so the break comes between files
    folder = make_run(tmp_path, big=300 * 1024)
    ci = workspace("ci")
    sent: list[str] = []

    class Breaking(httpx.Client):
        def request(self, method: str, url: Any, *args: Any, **kwargs: Any) -> httpx.Response:
            if method == "PUT" and "upload-offset" in (kwargs.get("headers") or {}):
                sent.append(str(url))
                if len([u for u in sent if "trace.jsonl" in u]) == 3:
                    raise httpx.ConnectError("network gone")
            if str(url).endswith("/complete"):
                raise httpx.ConnectError("network gone")
            return super().request(method, url, *args, **kwargs)

    with Breaking(timeout=30) as client, pytest.raises(UploadError, match="sends only what is missing"):
        push_run(folder, service.url, ci, SOURCE, client=client)
    big_path = "orders-latency/1/trace.jsonl"
    head = httpx.head(f"{service.url}/api/ancha/runs/{folder.name}/files/{big_path}",
                      headers={"authorization": f"Bearer {ci}"})
    assert int(head.headers["upload-offset"]) == 2 * 64 * 1024, "two chunks were stored before the break"
    assert _get(service, ci, "/api/ancha/runs").json()["runs"] == [], "an unfinished upload is not listed"

    resumed = push_run(folder, service.url, ci, SOURCE)
    assert resumed.sent_bytes == (folder / big_path).stat().st_size - 2 * 64 * 1024
    assert resumed.sent_files == 1
    got = _get(service, ci, f"/api/ancha/runs/{folder.name}/files/{big_path}")
    assert hashlib.sha256(got.content).digest() == hashlib.sha256((folder / big_path).read_bytes()).digest()


def _begin(service: ServerThread, key: str, run_id: str, files: list[dict[str, Any]],
           summary: dict[str, Any] | None = None) -> httpx.Response:
    summary = summary or {"run_id": run_id, "started_at": "2026-12-03T12:00:00Z", "scenes": []}
    return httpx.put(f"{service.url}/api/ancha/runs/{run_id}", headers={"authorization": f"Bearer {key}"},
                     json={"summary": summary, "files": files}, timeout=30)


def _entry(path: str, data: bytes) -> dict[str, Any]:
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_a_file_that_does_not_match_its_manifest_is_refused_and_not_kept(
        service: ServerThread, workspace: Callable[[str], str]) -> None:
    ci = workspace("ci")
    summary = b"{}"
    assert _begin(service, ci, "run-1", [_entry("summary.json", summary), _entry("a/1/x", b"right")]).status_code == 201
    answer = httpx.put(f"{service.url}/api/ancha/runs/run-1/files/a/1/x", content=b"wrong",
                       headers={"authorization": f"Bearer {ci}"})
    assert answer.status_code == 422 and "does not match its manifest" in answer.json()["detail"]
    missing = _begin(service, ci, "run-1", [_entry("summary.json", summary), _entry("a/1/x", b"right")]).json()
    assert missing["missing"] == ["summary.json", "a/1/x"]
    done = httpx.post(f"{service.url}/api/ancha/runs/run-1/complete", headers={"authorization": f"Bearer {ci}"})
    assert done.status_code == 409 and "missing 2 file(s)" in done.json()["detail"]


@pytest.mark.parametrize(("files", "says"), [
    ([{"path": "../escape", "size": 1, "sha256": "0" * 64}], "'..' part"),
    ([{"path": "/etc/passwd", "size": 1, "sha256": "0" * 64}], "must be relative"),
    ([{"path": "summary.json", "size": -1, "sha256": "0" * 64}], "size must be"),
    ([{"path": "summary.json", "size": 1, "sha256": "nothex"}], "sha256 must be"),
    ([{"path": "summary.json", "size": 1, "sha256": "0" * 64, "mode": 1}], "exactly path, size and sha256"),
    ([{"path": "trace.jsonl", "size": 1, "sha256": "0" * 64}], "include summary.json"),
    ([], "non-empty list"),
])
def test_a_bad_manifest_is_refused_with_where_it_is_wrong(
        service: ServerThread, workspace: Callable[[str], str], files: list[Any], says: str) -> None:
    answer = _begin(service, workspace("ci"), "run-bad", files)
    assert answer.status_code == 422 and says in answer.json()["detail"]


def test_a_batch_may_only_hold_regular_files_of_the_manifest(
        service: ServerThread, workspace: Callable[[str], str]) -> None:
    ci = workspace("ci")
    data = b"{}"
    _begin(service, ci, "run-tar", [_entry("summary.json", data)])
    for build, status, says in ((_tar_with_symlink, 422, "not a regular file"),
                                (_tar_with_stranger, 422, "not in run 'run-tar''s manifest"),
                                (lambda: b"not a tar at all" * 100, 400, "not a tar archive")):
        answer = httpx.post(f"{service.url}/api/ancha/runs/run-tar/files", content=build(),
                            headers={"authorization": f"Bearer {ci}", "content-type": "application/x-tar"})
        assert answer.status_code == status and says in answer.json()["detail"]


def test_a_batch_with_one_wrong_file_among_many__refuses_it_by_name_and_keeps_the_others(
        service: ServerThread, workspace: Callable[[str], str]) -> None:
    ci = workspace("ci")
    files = {f"orders-latency/{n}/trace.jsonl": f"trace of trial {n}\n".encode() * 40 for n in range(1, 41)}
    files["summary.json"] = b"{}"
    _begin(service, ci, "run-many", [_entry(path, data) for path, data in files.items()])
    wrong = "orders-latency/20/trace.jsonl"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            if path == wrong:
                data = data.replace(b"trace", b"TRACE")
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    answer = httpx.post(f"{service.url}/api/ancha/runs/run-many/files", content=buffer.getvalue(),
                        headers={"authorization": f"Bearer {ci}", "content-type": "application/x-tar"})
    assert answer.status_code == 422 and f"File '{wrong}' does not match its manifest" in answer.json()["detail"]
    again = _begin(service, ci, "run-many", [_entry(path, data) for path, data in files.items()])
    assert again.json()["missing"] == [wrong]
    kept = _get(service, ci, "/api/ancha/runs/run-many/files/orders-latency/40/trace.jsonl")
    assert kept.status_code == 200 and kept.content == files["orders-latency/40/trace.jsonl"]


def _tar_with_symlink() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("summary.json")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
    return buffer.getvalue()


def _tar_with_stranger() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("other.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return buffer.getvalue()


def test_an_upload_over_the_workspace_quota_is_refused_before_any_byte_is_sent(
        service: ServerThread, workspace: Callable[[str], str], key_database: Database, tmp_path: Path) -> None:
    from sqlalchemy import update

    from agentos.models import ApiKey, Workspace

    ci = workspace("ci")
    folder = make_run(tmp_path)
    with key_database.write() as session:
        workspace_id = session.query(ApiKey.workspace_id).filter(
            ApiKey.prefix == ci[:13]).scalar()
        session.execute(update(Workspace).where(Workspace.id == workspace_id).values(quota_bytes=100))
    with pytest.raises(UploadError, match=r"\(507\): Upload refused: .* 100-byte quota; delete old runs"):
        push_run(folder, service.url, ci, SOURCE)
    assert _get(service, ci, f"/api/ancha/runs/{folder.name}").status_code == 404


def test_roles__a_viewer_reads_a_ci_key_uploads_and_only_an_admin_deletes(
        service: ServerThread, workspace: Callable[[str], str], tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    viewer, ci, admin = workspace("viewer"), workspace("ci"), workspace("admin")
    with pytest.raises(UploadError, match=r"\(403\): This key's role is viewer"):
        push_run(folder, service.url, viewer, SOURCE)
    push_run(folder, service.url, ci, SOURCE)
    url = f"{service.url}/api/ancha/runs/{folder.name}"
    refused = httpx.delete(url, headers={"authorization": f"Bearer {ci}"})
    assert refused.status_code == 403 and "needs a key with the role admin" in refused.json()["detail"]
    assert httpx.delete(url, headers={"authorization": f"Bearer {admin}"}).status_code == 204
    assert _get(service, viewer, f"/api/ancha/runs/{folder.name}/files/summary.json").status_code == 404
    assert _get(service, viewer, "/api/ancha/runs").json()["runs"] == []


def test_deleting_a_run_deletes_its_blobs(service: ServerThread, workspace: Callable[[str], str], tmp_path: Path,
                                          blob_folder: Path) -> None:
    folder = make_run(tmp_path)
    push_run(folder, service.url, workspace("ci"), SOURCE)
    before = {p for p in blob_folder.rglob("*") if p.is_file()}
    stored = [p for p in before if p.read_bytes() == (folder / "orders-latency/2/agent.log").read_bytes()]
    assert stored, "the run's files are in the blob store"
    admin = workspace("admin")
    assert httpx.delete(f"{service.url}/api/ancha/runs/{folder.name}",
                        headers={"authorization": f"Bearer {admin}"}).status_code == 204
    assert not any(p.exists() for p in stored)


def test_a_viewer_key_cannot_change_workflows_either(service: ServerThread, workspace: Callable[[str], str]) -> None:
    answer = httpx.post(f"{service.url}/api/workflows", json={"name": "w", "nodes": []},
                        headers={"authorization": f"Bearer {workspace('viewer')}"})
    assert answer.status_code == 403 and "role is viewer" in answer.json()["detail"]


def test_another_workspace_cannot_reach_a_run_by_guessing(
        service: ServerThread, workspace: Callable[[str], str], key_database: Database, tmp_path: Path,
        blob_folder: Path) -> None:
    folder = make_run(tmp_path)
    push_run(folder, service.url, workspace("ci"), SOURCE)
    intruder = key_for(key_database, f"other-{secrets.token_hex(4)}", "admin")
    run = folder.name
    assert _get(service, intruder, "/api/ancha/runs").json()["runs"] == []
    for path in (f"/api/ancha/runs/{run}", f"/api/ancha/runs/{run}/files/summary.json",
                 f"/api/ancha/runs/{run}/files/../{run}/summary.json", "/api/ancha/scenes/orders-latency/history"):
        assert _get(service, intruder, path).status_code == 404, path
    assert httpx.delete(f"{service.url}/api/ancha/runs/{run}",
                        headers={"authorization": f"Bearer {intruder}"}).status_code == 404
    # The blob keys hold the owner's workspace and upload ids, which the intruder's key never reaches.
    workspace_ids = {p.relative_to(blob_folder).parts[0] for p in blob_folder.rglob("summary.json")}
    for guess in workspace_ids:
        answer = _get(service, intruder, f"/api/ancha/runs/{guess}/files/summary.json")
        assert answer.status_code == 404
    # The same run id is the intruder's own, separate run.
    assert push_run(folder, service.url, intruder, SOURCE).already_there is False


def _options(page: str, select: str) -> list[str]:
    found = re.search(rf'<select name="{select}"[^>]*>(.*?)</select>', page)
    assert found, page[:500]
    return re.findall(r"<option[^>]*>([^<]*)</option>", found.group(1))[1:]  # after "any"


def test_the_runs_page_offers_each_branch_and_scene_of_the_workspace_once_and_each_runs_scene_rates(
        service: ServerThread, workspace: Callable[[str], str], key_database: Database, tmp_path: Path) -> None:
    ci = workspace("ci")
    pushed = []
    for branch, scenes in (("main", {"refunds": "PF", "checkout": "PP"}), ("feature/b", {"checkout": "FF"}),
                           ("main", {"alerts": "PPPF"}), (None, {"checkout": "P"})):
        pushed.append(make_run(tmp_path, scenes=scenes).name)
        push_run(tmp_path / pushed[-1], service.url, ci, RunSource(commit=secrets.token_hex(20), branch=branch))
    stranger = key_for(key_database, f"other-{secrets.token_hex(4)}", "ci")
    push_run(make_run(tmp_path / "other", scenes={"strangers-scene": "P"}), service.url, stranger,
             RunSource(branch="strangers-branch"))
    with httpx.Client(base_url=service.url, timeout=30) as browser:
        assert browser.post("/ui/sign-in", data={"key": workspace("viewer")}).status_code == 303
        page = browser.get("/ui/").text
    assert _options(page, "branch") == ["feature/b", "main"]
    assert _options(page, "scene") == ["alerts", "checkout", "refunds"]
    rows = dict(re.findall(r'<tr class="run-row" data-run="([^"]+)">(.*?)</tr>', page, re.S))
    assert sorted(rows) == sorted(pushed)
    scenes = re.sub(r"<[^>]+>", "", re.findall(r"<td>.*?</td>", rows[pushed[0]], re.S)[3])
    assert scenes.split() == ["checkout", "100%,", "refunds", "50%"]


def test_a_revoked_key_stops_at_once(service: ServerThread, workspace: Callable[[str], str]) -> None:
    admin, ci = workspace("admin"), workspace("ci")
    assert _get(service, ci, "/api/ancha/runs").status_code == 200
    keys = _get(service, admin, "/api/keys").json()
    ci_id = next(k["id"] for k in keys if k["prefix"] == ci[:13])
    assert httpx.delete(f"{service.url}/api/keys/{ci_id}", headers={"authorization": f"Bearer {admin}"}).status_code == 204
    assert _get(service, ci, "/api/ancha/runs").status_code == 401


def test_an_admin_creates_keys_with_a_role_shown_once(service: ServerThread, workspace: Callable[[str], str]) -> None:
    admin = workspace("admin")
    made = httpx.post(f"{service.url}/api/keys", json={"role": "ci", "name": "github actions"},
                      headers={"authorization": f"Bearer {admin}"})
    assert made.status_code == 201 and made.json()["role"] == "ci" and made.json()["key"].startswith("aos_live_")
    assert _get(service, made.json()["key"], "/api/ancha/runs").status_code == 200
    listed = _get(service, admin, "/api/keys").json()
    assert all("key" not in k for k in listed)
    bad = httpx.post(f"{service.url}/api/keys", json={"role": "owner"}, headers={"authorization": f"Bearer {admin}"})
    assert bad.status_code == 422 and "viewer, ci, admin" in bad.json()["detail"]


@pytest.mark.parametrize(("env", "expected"), [
    ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main", "GITHUB_SERVER_URL": "https://github.com",
      "GITHUB_REPOSITORY": "acme/agent", "GITHUB_RUN_ID": "42"},
     RunSource("abc", "main", "github", "https://github.com/acme/agent/actions/runs/42")),
    ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "7/merge", "GITHUB_HEAD_REF": "fix-retry"},
     RunSource("abc", "fix-retry", "github", None)),
    ({"GITLAB_CI": "true", "CI_COMMIT_SHA": "def", "CI_COMMIT_REF_NAME": "dev", "CI_JOB_URL": "https://gitlab.example/j/9"},
     RunSource("def", "dev", "gitlab", "https://gitlab.example/j/9")),
    ({"JENKINS_URL": "https://ci.example/", "GIT_COMMIT": "123", "GIT_BRANCH": "origin/release",
      "BUILD_URL": "https://ci.example/job/a/5/"},
     RunSource("123", "release", "jenkins", "https://ci.example/job/a/5/")),
])
def test_the_ci_names_the_commit_branch_and_job(env: dict[str, str], expected: RunSource) -> None:
    assert ci_source(env) == expected
