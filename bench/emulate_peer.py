"""The peer for replica benchmarks: the npm package ``emulate`` (vercel-labs/emulate), started
fresh in a Node child process on 127.0.0.1 with an inline seed.

``emulate``'s CLI needs Node >= 22 (``module.registerHooks``); its programmatic API
(``createEmulator``) runs on Node 20, so a small ESM starter calls that. The package is
installed once into a cache folder outside the repository (``ANCHA_BENCH_CACHE``, default
``~/.cache/ancha-bench``), never into the project.

emulate counts calls per token and answers 403 "API rate limit exceeded" after 5,000 in an
hour, so a benchmark starts it fresh per measure and spreads seeding over several tokens.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from ancha.server.embedded import free_port

VERSION = "0.12.2"

STARTER = """\
import { readFileSync } from 'node:fs';
import { createEmulator } from 'emulate';

const [service, port, seedPath] = process.argv.slice(2);
const seed = JSON.parse(readFileSync(seedPath, 'utf8'));
const emulator = await createEmulator({ service, port: Number(port), hostname: '127.0.0.1', seed });
process.stdout.write(`ready ${emulator.url}\\n`);
let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await emulator.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
"""


def cache_dir() -> Path:
    base = os.environ.get("ANCHA_BENCH_CACHE") or str(Path.home() / ".cache" / "ancha-bench")
    return Path(base) / f"emulate-{VERSION}"


def unavailable() -> str | None:
    """Why the peer cannot run here, or None."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "node/npm not installed"
    return None


def install() -> Path:
    """The folder holding node_modules/emulate@VERSION and the starter (installed on first use)."""
    folder = cache_dir()
    package = folder / "node_modules" / "emulate" / "package.json"
    if not package.is_file() or json.loads(package.read_text()).get("version") != VERSION:
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "package.json").is_file():
            (folder / "package.json").write_text('{"name": "ancha-bench-peer", "private": true}\n')
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", f"emulate@{VERSION}"],
                       cwd=folder, check=True, timeout=300, capture_output=True)
    starter = folder / "start.mjs"
    if not starter.is_file() or starter.read_text() != STARTER:
        starter.write_text(STARTER)
    return folder


class Emulate:
    """One emulate service (default: github) in a child process; a context manager.

    ``cpus`` pins the child (and every thread it starts) to those cores.
    """

    def __init__(self, seed: dict[str, Any], service: str = "github", cpus: set[int] | None = None) -> None:
        self.seed = seed
        self.service = service
        self.cpus = cpus
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[str] | None = None
        self._seed_file: IO[str] | None = None

    def start(self, timeout: float = 30.0) -> Emulate:
        folder = install()
        self._seed_file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)  # noqa: SIM115
        json.dump(self.seed, self._seed_file)
        self._seed_file.close()
        cpus = self.cpus
        self._proc = subprocess.Popen(
            ["node", str(folder / "start.mjs"), self.service, str(self.port), self._seed_file.name],
            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        assert self._proc.stdout is not None
        readable, _, _ = select.select([self._proc.stdout], [], [], timeout)
        line = self._proc.stdout.readline() if readable else ""  # the starter prints one line once it listens
        if not line.startswith("ready"):
            err = self._proc.stderr.read() if self._proc.stderr else ""
            self.stop()
            raise RuntimeError(f"emulate did not start: {line!r} {err[-2000:]}")
        return self

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        if self._proc is not None:
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
        self._proc = None
        if self._seed_file is not None:
            Path(self._seed_file.name).unlink(missing_ok=True)
            self._seed_file = None

    def __enter__(self) -> Emulate:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
