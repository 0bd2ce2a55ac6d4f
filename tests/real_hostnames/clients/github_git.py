"""A client agent for real hostnames: git clones https://github.com/acme/orders.git, commits a
file and pushes it to main. The token rides in the URL as GitHub's apps send it
(``x-access-token:TOKEN``); no base URL, no ``insteadOf``. (A Python program calling git, not a
shell script, so that it needs no coreutils in the container image.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

FILE = "real-hostnames/git.txt"
TEXT = "pushed by git over https://github.com\n"


def main() -> int:
    token = os.environ["ANCHA_GITHUB_TOKEN"]
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "HOME": work, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}

        def git(*args: str, cwd: str = work) -> str:
            done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"github_git: git {args[0]} failed ({done.returncode}): "
                                 f"{(done.stderr or done.stdout).replace(token, '***').strip()}")
            return done.stdout.strip()

        git("clone", "--quiet", f"https://x-access-token:{token}@github.com/acme/orders.git", "orders")
        repo = str(Path(work) / "orders")
        git("config", "user.name", "acme-helper", cwd=repo)
        git("config", "user.email", "acme-helper@acme.test", cwd=repo)
        (Path(repo) / FILE).parent.mkdir(parents=True, exist_ok=True)
        (Path(repo) / FILE).write_text(TEXT)
        git("add", FILE, cwd=repo)
        git("commit", "--quiet", "-m", f"Add {FILE}", cwd=repo)
        git("push", "--quiet", "origin", "HEAD:main", cwd=repo)
        print(f"github_git: cloned acme/orders, pushed {git('rev-parse', 'HEAD', cwd=repo)} to main")
    return 0


if __name__ == "__main__":
    sys.exit(main())
