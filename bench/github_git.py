"""Benchmark the GitHub replica's git: environment creation and ``git clone`` over HTTP.

Builds a scene whose repository holds 1,000 files (in 20 folders) and 50 seeded
commits, on an Ancha server in this process, and measures:

- the first environment (the seeded history is built into git objects: cold);
- later environments of the same scene (the objects are shared: target <= 50 ms);
- ``git clone`` of the repository over smart HTTP (target <= 1 s);
- ``build_repo_git`` alone, cold and warm.

Prints a markdown table. Usage: .venv/bin/python bench/github_git.py [--envs 20] [--clones 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from ancha.server.embedded import EmbeddedServer
from ancha.world.tools.github.git_seed import clear_cache
from ancha.world.tools.github.git_store import build_repo_git

FILES = 1_000
COMMITS = 50
START = "2026-03-02T09:00:00Z"


def repo_seed() -> dict[str, Any]:
    files = {f"pkg{i % 20:02d}/module_{i:04d}.py": f'"""Module {i}."""\n\nVALUE = {i}\n' + "x = 1\n" * 20
             for i in range(FILES)}
    files["README.md"] = "# orders\n"
    commits = [{"message": f"Change {n}", "author": "gh_laura",
                "files": {f"pkg{n % 20:02d}/module_{n:04d}.py": f"VALUE = {n * 7}\n"}} for n in range(COMMITS)]
    return {"ref": "orders", "name": "acme/orders", "private": True, "files": files, "commits": commits,
            "branches": {"feature": {"from": "main"}}, "permissions": {"github_agent": "write"}}


def scene() -> dict[str, Any]:
    return {"name": "bench-github-git", "clock": {"start": START},
            "world": {"github": {"users": [{"ref": "gh_laura", "login": "laura", "email": "laura@acme.test"}],
                                 "orgs": [{"login": "acme", "members": ["github_agent"]}],
                                 "repos": [repo_seed()]}}}


def ensure_registered() -> None:
    """Until the tool seam names GitHub, register its replica for the in-process server
    (as tests/world/tools/github/conftest.py does)."""
    try:
        from ancha.scene.sections import WorldSection
        from ancha.world.kernel.spec import ToolSpec
        from ancha.world.registry import registry
    except ImportError:
        return
    tools = getattr(registry(), "tools", None)
    if not isinstance(tools, dict) or "github" in tools:
        return
    from ancha.world.tools.github.replica import GitHubReplica
    from ancha.world.tools.github.scene_file import GitHubFile

    section = WorldSection("github", GitHubFile, lambda data, ctx: None)  # type: ignore[arg-type]
    tools["github"] = ToolSpec(name="github", world=section, replica=GitHubReplica)  # type: ignore[arg-type]


def create_env(client: httpx.Client, trial: int) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    answer = client.post("/envs", json={"scene": scene(), "trial": trial})
    elapsed = time.perf_counter() - started
    if answer.status_code != 201:
        raise RuntimeError(f"POST /envs: {answer.status_code} {answer.text[:500]}")
    context: dict[str, Any] = answer.json()
    return elapsed, context


def clone(context: dict[str, Any], into: Path) -> float:
    tool = context["tools"]["github"]
    scheme, _, rest = tool["url"].partition("://")
    url = f"{scheme}://x-access-token:{tool['token']}@{rest}/acme/orders.git"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(into), "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_NOSYSTEM": "1"}
    started = time.perf_counter()
    subprocess.run(["git", "clone", "-q", url, str(into / "orders")], env=env, check=True, timeout=120,
                   capture_output=True)
    elapsed = time.perf_counter() - started
    count = sum(1 for p in (into / "orders").rglob("*.py"))
    if count != FILES:
        raise RuntimeError(f"the clone holds {count} files, not {FILES}")
    return elapsed


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--envs", type=int, default=20)
    parser.add_argument("--clones", type=int, default=5)
    args = parser.parse_args()

    seed = repo_seed()
    start = datetime.fromisoformat(START.replace("Z", "+00:00")).astimezone(UTC)
    clear_cache()
    t0 = time.perf_counter()
    build_repo_git(seed, start)
    store_cold = time.perf_counter() - t0
    warm_builds = []
    for _ in range(20):
        t0 = time.perf_counter()
        build_repo_git(seed, start)
        warm_builds.append(time.perf_counter() - t0)
    clear_cache()

    rows: list[tuple[str, str, str, str]] = []
    rows.append(("build_repo_git, cold (1,000 files, 51 commits)", ms(store_cold), "-", "-"))
    rows.append(("build_repo_git, warm (p50 of 20)", ms(statistics.median(warm_builds)), "-", "-"))

    ensure_registered()
    with EmbeddedServer() as server, httpx.Client(base_url=server.url, timeout=120) as client:
        first, context = create_env(client, 1)
        later: list[float] = []
        contexts = [context]
        for trial in range(2, args.envs + 2):
            elapsed, made = create_env(client, trial)
            later.append(elapsed)
            contexts.append(made)
        rows.append(("first environment (cold)", ms(first), "-", "-"))
        p50, p95 = statistics.median(later), sorted(later)[max(0, int(len(later) * 0.95) - 1)]
        rows.append((f"later environments (p50 / p95 of {len(later)})", f"{ms(p50)} / {ms(p95)}", "<= 50",
                     "met" if p50 <= 0.050 else "NOT met"))
        clones: list[float] = []
        if shutil.which("git"):
            for n in range(args.clones):
                with tempfile.TemporaryDirectory() as folder:
                    clones.append(clone(contexts[n % len(contexts)], Path(folder)))
            c50 = statistics.median(clones)
            rows.append((f"git clone over HTTP (p50 of {len(clones)}; max)", f"{ms(c50)}; {ms(max(clones))}",
                         "<= 1000", "met" if c50 <= 1.0 else "NOT met"))
        for made in contexts:
            client.delete(f"/envs/{made['env_id']}")

    print("| measure | ms | target ms | |")
    print("|---|---:|---:|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
