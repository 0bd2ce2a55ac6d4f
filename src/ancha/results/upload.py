"""Sending a finished run to a team's AgentOS (``ancha push``, ``ancha run --upload``).

The run folder's files (``live.json`` aside) and each scene's source file go up with a
manifest of their sizes and SHA-256s. AgentOS answers which files it does not hold yet, so a
push that broke off is simply run again: only what is missing travels. Small files travel
in tar batches, large ones (a long ``trace.jsonl``) in chunks that resume at the offset
the server reports. See AgentOS's ``agentos.history.uploads`` for the other side.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from ancha.results.run_folder import LIVE, SUMMARY

SCENE_SOURCES = "_scenes"
BATCH_BYTES = 16 * 1024 * 1024
"""A tar batch holds files up to this many bytes in all."""
CHUNKED_FROM = 8 * 1024 * 1024
"""Files this large or larger go in chunks of ``CHUNK_BYTES`` that resume where they broke off."""
CHUNK_BYTES = 8 * 1024 * 1024
TIMEOUT = httpx.Timeout(30.0, read=300.0, write=300.0)


class UploadError(Exception):
    """The upload did not finish; the message says why and what to do (pushing again resumes)."""


@dataclass(frozen=True)
class RunSource:
    """Where the run came from: the commit, branch and CI job, from the CI's variables."""

    commit: str | None = None
    branch: str | None = None
    ci_provider: str | None = None
    ci_url: str | None = None
    agent_version: str | None = None


def ci_source(env: Mapping[str, str], cwd: Path | None = None, agent_version: str | None = None) -> RunSource:
    """GitHub Actions, GitLab CI and Jenkins name the commit, branch and job in their
    variables; elsewhere, the commit and branch of the git checkout at ``cwd``, if any."""
    if env.get("GITHUB_ACTIONS") == "true":
        url = None
        if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
            server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
            url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
            if env.get("GITHUB_RUN_ATTEMPT"):
                url += f"/attempts/{env['GITHUB_RUN_ATTEMPT']}"
        # A pull request's GITHUB_REF_NAME is "123/merge": its branch is GITHUB_HEAD_REF.
        branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME")
        return RunSource(env.get("GITHUB_SHA"), branch, "github", url, agent_version)
    if env.get("GITLAB_CI") == "true":
        branch = env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") or env.get("CI_COMMIT_REF_NAME")
        return RunSource(env.get("CI_COMMIT_SHA"), branch, "gitlab", env.get("CI_JOB_URL"), agent_version)
    if env.get("JENKINS_URL") or env.get("JENKINS_HOME"):
        branch = env.get("CHANGE_BRANCH") or env.get("BRANCH_NAME") or env.get("GIT_BRANCH")
        if branch and branch.startswith("origin/"):
            branch = branch.removeprefix("origin/")
        return RunSource(env.get("GIT_COMMIT"), branch, "jenkins", env.get("BUILD_URL"), agent_version)
    commit, branch = _git(cwd or Path.cwd())
    return RunSource(commit, branch, None, None, agent_version)


def _git(cwd: Path) -> tuple[str | None, str | None]:
    def ask(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() or None if done.returncode == 0 else None

    commit = ask("rev-parse", "HEAD")
    branch = ask("rev-parse", "--abbrev-ref", "HEAD")
    return commit, None if branch == "HEAD" else branch


@dataclass(frozen=True)
class RunFile:
    path: str
    """Its place in the upload: relative to the run folder, or ``_scenes/SCENE/scene.yaml``."""
    source: Path
    size: int
    sha256: str


def run_files(run_dir: Path, summary: dict[str, Any]) -> list[RunFile]:
    """Every file of the run folder (``live.json`` aside, links not followed) and each scene's source."""
    files: list[RunFile] = []
    for path in sorted(run_dir.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name == LIVE and path.parent == run_dir:
            continue
        relative = path.relative_to(run_dir).as_posix()
        if relative.split("/")[0].startswith((".", "_")):
            continue
        files.append(_described(relative, path))
    for scene in summary.get("scenes") or []:
        source = Path(str(scene.get("path") or "")) if isinstance(scene, dict) else None
        if source is not None and source.is_file() and isinstance(scene.get("scene"), str):
            files.append(_described(f"{SCENE_SOURCES}/{scene['scene']}/{source.name}", source))
    return files


def _described(relative: str, path: Path) -> RunFile:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return RunFile(relative, path, size, digest.hexdigest())


@dataclass(frozen=True)
class Uploaded:
    run_id: str
    url: str | None
    """The run's page in the hosted console."""
    sent_files: int
    sent_bytes: int
    already_there: bool


def push_run(run_dir: Path, base_url: str, api_key: str, source: RunSource, *,
             client: httpx.Client | None = None, progress: Callable[[str], None] | None = None) -> Uploaded:
    """Upload the run in ``run_dir`` to the AgentOS at ``base_url``; safe to repeat."""
    summary_path = run_dir / SUMMARY
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UploadError(f"{summary_path} cannot be read ({exc}): only a finished run can be pushed") from None
    run_id = str(summary.get("run_id") or run_dir.name)
    files = run_files(run_dir, summary)
    owned = client is None
    http = client or httpx.Client(timeout=TIMEOUT)
    headers = {"authorization": f"Bearer {api_key}"}
    base = f"{base_url.rstrip('/')}/api/ancha/runs/{quote(run_id, safe='')}"
    try:
        answer = _ok(http.put(base, headers=headers, json={
            "summary": summary, "source": {k: v for k, v in asdict(source).items() if v},
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in files]}), base_url)
        if answer.get("status") == "complete":
            return Uploaded(run_id, answer.get("url"), 0, 0, True)
        missing = set(answer.get("missing") or [])
        todo = [f for f in files if f.path in missing]
        sent = 0
        for batch in _batches([f for f in todo if f.size < CHUNKED_FROM]):
            _ok(http.post(f"{base}/files", headers=headers | {"content-type": "application/x-tar"},
                          content=_tar(batch)), base_url)
            sent += sum(f.size for f in batch)
            if progress:
                progress(f"sent {len(batch)} file(s), {sent:,} bytes")
        for big in (f for f in todo if f.size >= CHUNKED_FROM):
            sent += _send_chunked(http, f"{base}/files/{quote(big.path)}", headers, big, base_url)
            if progress:
                progress(f"sent {big.path}, {big.size:,} bytes")
        done = _ok(http.post(f"{base}/complete", headers=headers), base_url)
        return Uploaded(run_id, done.get("url"), len(todo), sent, False)
    except httpx.HTTPError as exc:
        raise UploadError(f"the upload to {base_url} broke off ({exc}); run `ancha push {run_id}` again:"
                          " it sends only what is missing") from None
    finally:
        if owned:
            http.close()


def _ok(answer: httpx.Response, base_url: str) -> dict[str, Any]:
    if answer.status_code in (200, 201):
        data: dict[str, Any] = answer.json()
        return data
    try:
        detail = answer.json().get("detail")
    except ValueError:
        detail = answer.text[:300]
    if answer.status_code == 401:
        raise UploadError(f"AgentOS at {base_url} refused the key: {detail}")
    if answer.status_code == 404 and not str(detail or "").startswith(("Run", "File")):
        raise UploadError(f"{base_url} answered 404: is it an AgentOS server with uploads (agentos serve)?")
    raise UploadError(f"AgentOS refused the upload ({answer.status_code}): {detail}")


def _batches(files: list[RunFile]) -> Iterator[list[RunFile]]:
    batch: list[RunFile] = []
    size = 0
    for item in files:
        if batch and size + item.size > BATCH_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item.size
    if batch:
        yield batch


def _tar(files: list[RunFile]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for item in files:
            info = tarfile.TarInfo(item.path)
            info.size = item.size
            info.mode = 0o644
            with item.source.open("rb") as handle:
                tar.addfile(info, handle)
    return buffer.getvalue()


def _send_chunked(http: httpx.Client, url: str, headers: dict[str, str], item: RunFile, base_url: str) -> int:
    """The file from where the server stands (HEAD's ``Upload-Offset``) to its end."""
    head = http.head(url, headers=headers)
    if head.status_code != 200:
        _ok(head, base_url)
    offset = int(head.headers.get("upload-offset", "0"))
    sent = 0
    with item.source.open("rb") as handle:
        handle.seek(offset)
        while offset < item.size:
            chunk = handle.read(CHUNK_BYTES)
            answer = _ok(http.put(url, headers=headers | {"upload-offset": str(offset)}, content=chunk), base_url)
            offset = int(answer["offset"])
            sent += len(chunk)
    return sent


def agentos_target(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(AgentOS URL, API key) from AGENTOS_URL (or AGENTOS_BASE_URL) and AGENTOS_API_KEY."""
    env = os.environ if env is None else env
    url = env.get("AGENTOS_URL") or env.get("AGENTOS_BASE_URL")
    key = env.get("AGENTOS_API_KEY")
    if not url:
        raise UploadError("no AgentOS to upload to: set AGENTOS_URL (for example https://agentos.example.com)"
                          " or pass --url")
    if not key:
        raise UploadError("no key to upload with: set AGENTOS_API_KEY to a `ci` key of your workspace"
                          " (agentos keys create --workspace NAME --role ci)")
    return url, key
