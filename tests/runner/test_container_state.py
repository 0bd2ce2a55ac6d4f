"""A container agent's ``/state``: copied out and back in as an archive of regular files and
folders only, never through a link, capped like ``files``; and nothing of a run's containers
left behind.

Each test runs on Docker and on podman (``engine``) with a real container; the per-event run
is made once per engine (``per_event_run``) and several tests read what it left.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ancha.runner.agents.container_state import extract_state, write_state_archive

sys.path.insert(0, str(Path(__file__).parent))
from container_image import ENGINES, agent_image, usable_engine  # noqa: E402
from test_run_per_event import SCENE  # noqa: E402

ANCHA = [sys.executable, "-m", "ancha.cli"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOST_TEXT = "HOST-OWNED\n"


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn; in CI one that does not answer fails the tests instead of skipping them."""
    return usable_engine(request.param)


@pytest.fixture(scope="module")
def image(engine: str) -> str:
    return agent_image(engine)


def leftovers(engine: str, pid: int) -> dict[str, list[str]]:
    """What the run with process ID ``pid`` has in the engine and on the host: its containers
    (by label), its volumes (named after it), its network namespaces, and its marker that says
    it used an engine (for the runs after it)."""
    containers = subprocess.run([engine, "ps", "--all", "--filter", f"label=ancha.runner-pid={pid}", "--format",
                                 "{{.Names}}"], capture_output=True, text=True, check=True).stdout.split()
    volumes = [v for v in subprocess.run([engine, "volume", "ls", "--format", "{{.Name}}"], capture_output=True,
                                         text=True, check=True).stdout.split() if v.startswith(f"ancha-{pid}-")]
    namespaces = sorted(n for n in os.listdir("/run/netns") if n.startswith(f"ancha-{pid}-")) \
        if os.path.isdir("/run/netns") else []
    markers = sorted(p.name for p in (Path(tempfile.gettempdir()) / f"ancha-{os.getuid()}" / "container-runs")
                     .glob(f"{pid}-*.json"))
    return {"containers": containers, "volumes": volumes, "namespaces": namespaces, "markers": markers}


NOTHING: dict[str, list[str]] = {"containers": [], "volumes": [], "namespaces": [], "markers": []}

LINKS_AGENT = textwrap.dedent("""
    import ctypes, json, os, platform, subprocess, sys, threading, urllib.request
    state, host = os.environ["ANCHA_STATE_DIR"], sys.argv[1]
    up = "../" * 12 + host.lstrip("/")
    event = json.loads(open(os.environ["ANCHA_EVENT_FILE"]).read())
    seen = sorted(os.path.relpath(os.path.join(d, n), state) + ("@" if os.path.islink(os.path.join(d, n)) else "")
                  for d, dirs, files in os.walk(state) for n in dirs + files)
    number = len(open(os.path.join(state, "events.txt")).read().splitlines()) + 1 \\
        if os.path.exists(os.path.join(state, "events.txt")) else 1
    with open(os.path.join(state, "events.txt"), "a") as out:
        out.write(event["type"] + "\\n")
    with open(os.path.join(state, f"seen-{number}.json"), "w") as out:
        json.dump(seen, out)

    def attempt(action):
        try:
            return "ok: " + str(action())
        except Exception as exc:
            return type(exc).__name__ + ": " + str(exc)

    libc = ctypes.CDLL(None, use_errno=True)

    def syscall_result(result):
        if result < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return result

    def clone_user_namespace():
        number = {"x86_64": 56, "aarch64": 220}[platform.machine()]
        pid = syscall_result(libc.syscall(number, 0x10000000 | 17, 0, 0, 0, 0))  # clone(CLONE_NEWUSER | SIGCHLD)
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return pid

    def thread():
        box = []
        worker = threading.Thread(target=lambda: box.append(1))
        worker.start()
        worker.join()
        return box

    probes = {
        "unshare_user": attempt(lambda: syscall_result(libc.unshare(0x10000000))),
        "unshare_user_mount": attempt(lambda: syscall_result(libc.unshare(0x10000000 | 0x00020000))),
        "clone_user": attempt(clone_user_namespace),
        "thread": attempt(thread),
        "subprocess": attempt(lambda: subprocess.run(["/bin/sh", "-c", "echo child"], capture_output=True,
                                                     check=True).stdout),
    }
    with open(os.path.join(state, f"probes-{number}.json"), "w") as out:
        json.dump(probes, out)

    def link(target, name):
        path = os.path.join(state, name)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)

    # every shape of link, each time: absolute, relative "..", dangling, to a file, to a folder
    for target, name in ((host, "to_folder"), (host + "/target.txt", "to_file"), (up, "relative_up"),
                         (up + "/target.txt", "relative_file"), ("/nonexistent/ancha-dangling", "dangling"),
                         ("target.txt", "relative_dangling")):
        link(target, name)
    os.makedirs(os.path.join(state, "folder"), exist_ok=True)
    with open(os.path.join(state, "folder", "inner.txt"), "w") as out:
        out.write(f"event {number}\\n")
    if number == 1:
        link(host, "vdir")
        os.mkfifo(os.path.join(state, "fifo"))
        os.link(os.path.join(state, "events.txt"), os.path.join(state, "hard"))
    else:  # swapped: the link made at the last event is now a folder, whose file would land on the host through it
        if os.path.lexists(os.path.join(state, "vdir")) and not os.path.isdir(os.path.join(state, "vdir")):
            os.unlink(os.path.join(state, "vdir"))
        os.makedirs(os.path.join(state, "vdir"), exist_ok=True)
        with open(os.path.join(state, "vdir", "target.txt"), "w") as out:
            out.write("AGENT-OVERWROTE\\n")
    if event["type"] != "message":
        raise SystemExit(0)
    inner = event["payload"]["event"]
    body = json.dumps({"channel": inner["channel"], "thread_ts": inner["ts"], "text": "Hi Laura!"}).encode()
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/chat.postMessage", data=body,
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    assert json.load(urllib.request.urlopen(req))["ok"]
""")


@dataclass
class PerEventRun:
    result: subprocess.CompletedProcess[str]
    pid: int
    host: Path
    host_mode: int
    host_file_mode: int
    trial: Path
    before: dict[str, list[str]]
    after: dict[str, list[str]]


@pytest.fixture(scope="module")
def per_event_run(engine: str, image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PerEventRun]:
    """A per-event agent that, at each of its two events, links every shape of link in
    ``/state`` to a folder of the host's, then turns the link of the first event into a folder."""
    root = tmp_path_factory.mktemp("links")
    host = tmp_path_factory.mktemp("host-owned")
    host.chmod(0o755)
    (host / "target.txt").write_text(HOST_TEXT)
    (host / "target.txt").chmod(0o644)
    (root / "scenes" / "greeter").mkdir(parents=True)
    (root / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (root / "agent.py").write_text(LINKS_AGENT)
    (root / "ancha.yaml").write_text(
        f"agent:\n  command: python3 agent.py {host}\n  input: per_event\n  idle: 5m\n"
        f"  execution: {{ mode: container, image: {image} }}\ntrials: 1\n")
    process = subprocess.Popen([*ANCHA, "run", "--no-progress"], cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine})
    before = leftovers(engine, process.pid)
    out, err = process.communicate(timeout=300)
    result = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    after = leftovers(engine, process.pid)
    yield PerEventRun(result, process.pid, host, stat.S_IMODE(host.stat().st_mode),
                      stat.S_IMODE((host / "target.txt").stat().st_mode), root / ".ancha" / "runs" / "latest" /
                      "greeter" / "1", before, after)


def test_container_state__no_link_in_it_reaches_the_host(per_event_run: PerEventRun) -> None:
    run = per_event_run
    assert (run.host / "target.txt").read_text() == HOST_TEXT
    assert run.host_mode == 0o755 and run.host_file_mode == 0o644
    assert sorted(p.name for p in run.host.iterdir()) == ["target.txt"]
    checks = json.loads((run.trial / "checks.json").read_text())
    assert checks["verdict"] == "passed", (checks, run.result.stdout, run.result.stderr)
    assert run.result.returncode == 0, run.result.stdout + run.result.stderr


def test_container_state__keeps_files_and_folders_and_leaves_out_links(per_event_run: PerEventRun) -> None:
    state = per_event_run.trial / "state"
    found = sorted(str(p.relative_to(state)) for p in state.rglob("*"))
    assert not [p for p in state.rglob("*") if p.is_symlink() or not (p.is_file() or p.is_dir())]
    # the second event found the first's files and folders again, and none of its links
    assert json.loads((state / "seen-2.json").read_text()) == ["events.txt", "folder", "folder/inner.txt", "hard",
                                                               "probes-1.json", "seen-1.json"]
    assert (state / "hard").read_text() == "message\n"  # a hard link comes back as a copy of its file
    assert (state / "folder" / "inner.txt").read_text() == "event 2\n"
    assert (state / "vdir" / "target.txt").read_text() == "AGENT-OVERWROTE\n"  # in the trial's folder only
    assert found == ["events.txt", "folder", "folder/inner.txt", "hard", "probes-1.json", "probes-2.json", "seen-1.json",
                     "seen-2.json", "vdir", "vdir/target.txt"]
    log = (per_event_run.trial / "agent.log").read_text()
    assert "ancha: /state: left out what is not a regular file or a folder: dangling (a symbolic link)" in log
    assert "fifo (a FIFO)" in log and "vdir (a symbolic link)" in log


def test_container_state__a_run_leaves_nothing_behind(per_event_run: PerEventRun) -> None:
    assert per_event_run.before == NOTHING
    assert per_event_run.after == NOTHING


def test_container_agent__cannot_make_a_user_namespace(per_event_run: PerEventRun) -> None:
    probes = json.loads((per_event_run.trial / "state" / "probes-1.json").read_text())
    assert probes["unshare_user"].startswith("PermissionError: [Errno 1]"), probes
    assert probes["unshare_user_mount"].startswith("PermissionError: [Errno 1]"), probes
    assert probes["clone_user"].startswith(("PermissionError: [Errno 1]", "OSError: [Errno 38]")), probes
    assert probes["thread"] == "ok: [1]" and probes["subprocess"] == "ok: b'child\\n'"


BIG_AGENT = textwrap.dedent("""
    import os
    state = os.environ["ANCHA_STATE_DIR"]
    for number in range(3):
        with open(os.path.join(state, f"small-{number}.txt"), "w") as out:
            out.write("small\\n")
    with open(os.path.join(state, "big.bin"), "wb") as out:  # sparse: 600 MiB to read, none on disk
        out.truncate(600 * 1024 * 1024)
""")


def test_container_state__is_capped_like_files_and_the_trial_says_so(tmp_path: Path, engine: str,
                                                                      image: str) -> None:
    shutil.copytree(EXAMPLES / "scenes" / "export-question", tmp_path / "scenes" / "export-question")
    (tmp_path / "agent.py").write_text(BIG_AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: python3 agent.py\n  execution: {{ mode: container, image: {image} }}\n"
        "scenes: [scenes/export-question/scene.yaml]\ntrials: 1\n")
    result = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine})
    assert result.returncode == 1, result.stdout + result.stderr  # the agent answers nobody: its checks fail
    trial = tmp_path / ".ancha" / "runs" / "latest" / "export-question" / "1"
    state = trial / "state"
    kept = sorted(p.name for p in state.iterdir())
    assert "big.bin" not in kept and set(kept) <= {"small-0.txt", "small-1.txt", "small-2.txt"}
    assert sum(p.stat().st_size for p in state.iterdir()) <= 512 * 1024 * 1024
    checks = json.loads((trial / "checks.json").read_text())
    assert checks["state"] == {"cut": "more than 512 MiB", "kept_files": len(kept), "kept_bytes": 6 * len(kept),
                               "max_files": 5000, "max_bytes": 512 * 1024 * 1024}
    log = (trial / "agent.log").read_text()
    assert (f"ancha: /state: more than 512 MiB: only the first {len(kept)} files and folders ({6 * len(kept)} "
            "bytes) were copied to the trial's state/ folder (the limit is 5,000 files and 512 MiB, as for "
            "agent.execution.files)") in log
    explained = subprocess.run([*ANCHA, "explain"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (f"agent: /state: more than 512 MiB: only the first {len(kept)} files and folders "
            f"({6 * len(kept)} bytes) were copied to state/ (the limit is 5,000 files and 512 MiB)") in explained.stdout


def archive(*members: tuple[str, bytes | str | None, bytes]) -> io.BytesIO:
    """A tar stream as an engine's ``cp`` writes one: (name, kind, data) with kind ``file``,
    ``folder``, or a tarfile type for links and the rest (data: the link's target)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            if kind == "folder":
                info.type = tarfile.DIRTYPE
            else:
                assert isinstance(kind, bytes)
                info.type, info.linkname = kind, data.decode()
            tar.addfile(info)
    out.seek(0)
    return out


def test_extract_state__keeps_files_and_folders_only_and_never_leaves_its_folder(tmp_path: Path) -> None:
    dest = tmp_path / "fresh"
    dest.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    stream = archive(("./", "folder", b""), ("./a", "folder", b""), ("./a/b.txt", "file", b"b"),
                     ("/abs.txt", "file", b"x"), ("../up.txt", "file", b"x"), ("a/../../up2.txt", "file", b"x"),
                     ("link", tarfile.SYMTYPE, str(outside).encode()), ("rel", tarfile.SYMTYPE, b"../outside"),
                     ("hard", tarfile.LNKTYPE, b"a/b.txt"), ("hard-out", tarfile.LNKTYPE, b"/etc/passwd"),
                     ("fifo", tarfile.FIFOTYPE, b""), ("dev", tarfile.CHRTYPE, b""),
                     ("link/into.txt", "file", b"through the link"), ("a/b.txt/c", "file", b"under a file"))
    copy = extract_state(stream, dest)
    found = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert found == ["a", "a/b.txt", "abs.txt", "hard", "link", "link/into.txt"]  # "link" is a folder made here
    assert not [p for p in dest.rglob("*") if p.is_symlink()] and list(outside.iterdir()) == []
    assert (dest / "hard").read_text() == "b" and (dest / "abs.txt").read_text() == "x"
    assert not (tmp_path / "up.txt").exists() and not (tmp_path / "up2.txt").exists()
    assert sorted(copy.left_out) == ["../up.txt (a name outside /state)", "a/../../up2.txt (a name outside /state)",
                                     "a/b.txt/c (a file under a file)", "dev (a character device)",
                                     "fifo (a FIFO)", "hard-out (a hard link)", "link (a symbolic link)",
                                     "rel (a symbolic link)"]
    assert copy.cut is None and copy.record() is None


def test_extract_state__stops_past_5000_files_and_says_so(tmp_path: Path) -> None:
    stream = archive(*((f"f{n}", "file", b"x") for n in range(5_001)))
    copy = extract_state(stream, tmp_path)
    assert len(list(tmp_path.iterdir())) == 5_000
    assert copy.record() == {"cut": "more than 5,000 files and folders", "kept_files": 5_000, "kept_bytes": 5_000,
                             "max_files": 5_000, "max_bytes": 512 * 1024 * 1024}


def test_extract_state__names_20_of_the_entries_it_leaves_out_and_stops_past_5000(tmp_path: Path) -> None:
    stream = archive(("kept.txt", "file", b"x"),
                     *((f"link-{n:05}", tarfile.SYMTYPE, b"/etc") for n in range(5_001)), ("late.txt", "file", b"x"))
    copy = extract_state(stream, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    assert copy.cut == "more than 5,000 entries that are not files or folders"
    assert copy.notes()[0] == ("ancha: /state: left out what is not a regular file or a folder: "
                               + ", ".join(f"link-{n:05} (a symbolic link)" for n in range(20)) + ", and 4,981 more")


def test_state_archive__sends_no_link_of_the_trials_folder(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "folder").mkdir(parents=True)
    (state / "folder" / "kept.txt").write_text("kept")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host")
    (state / "to_folder").symlink_to(outside)
    (state / "to_file").symlink_to(outside / "secret.txt")
    (state / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(state / "fifo")
    out = io.BytesIO()
    write_state_archive(state, out)
    out.seek(0)
    with tarfile.open(fileobj=out) as tar:
        assert [(m.name, m.type, oct(m.mode)) for m in tar.getmembers()] == [
            ("folder", tarfile.DIRTYPE, "0o777"), ("folder/kept.txt", tarfile.REGTYPE, "0o666")]
