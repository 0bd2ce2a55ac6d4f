"""The console's screenshots in docs/console.md, taken again from real runs of the bundled examples.

    .venv/bin/python docs/hooks/console_screenshots.py [--out docs/images/console]

Copies examples/ into a scratch project and runs it twice, as a user would: every scene with
the example agent (one trial each), then beta-exports with a hasty agent that skips the people,
so its checks fail. The two runs get fixed ids and start times, so the pages read the same from
one generation to the next. A real ``ancha ui`` serves them, and Debian's Chromium
(``/usr/bin/chromium``, driven by Playwright) takes each page at 1440×900, the viewport
only (never the full page): the runs list, a run, a scene, the failed trial opened on its
verdict, a world diff, the compare page and the zoomed timeline. Wall-clock figures (how long
a trial took) are the real ones and vary a little between generations. PNGs are optimized
with Pillow when it is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
OUT = ROOT / "docs" / "images" / "console"
COMMAND = "python docs/hooks/console_screenshots.py"
SCRATCH = Path(tempfile.gettempdir()) / "ancha-docs" / "acme"
"""The project the runs are made in: a fixed folder, as the pages show where the runs are."""
CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1440, 900

PASSING_RUN = "20260302T090000Z-a1b2c3"
"""Every bundled example with its example agent."""
FAILING_RUN = "20260302T093000Z-d4e5f6"
"""beta-exports with the hasty agent."""
STARTED = {PASSING_RUN: "2026-03-02T09:00:00.000000Z", FAILING_RUN: "2026-03-02T09:30:00.000000Z"}

HASTY_AGENT = '''"""Labels the report before anyone decided its priority, then stops."""
import os
from slack_sdk import WebClient
client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
support = next(c for c in client.conversations_list()["channels"] if c["name"] == "support")
question = client.conversations_history(channel=support["id"])["messages"][-1]
client.reactions_add(channel=support["id"], timestamp=question["ts"], name="rotating_light")
print("labelled without asking anyone")
'''

Page = Any
"""A Playwright page (Playwright is imported only when the screenshots are taken)."""


@dataclass(frozen=True)
class Shot:
    """One screenshot: its file in ``OUT``, the console address it shows and what is done first."""

    name: str
    path: str
    """The address under ``/ui``."""
    prepare: Callable[[Page], None] | None = None


def _wait_for_diff(page: Page) -> None:
    """The trial page loads its world diff after the page itself: wait until it is there."""
    page.wait_for_function("() => !document.querySelector('#world-diff [data-fragment]')"
                           " || !document.querySelector('#world-diff').textContent.includes('Rebuilding the seed')",
                           timeout=60_000)


def _zoom_into_incident(page: Page) -> None:
    """Drag across the agent's calls on the timeline, as a reader zooms in on them."""
    axis = page.locator("#tl-axis").bounding_box()
    before = page.eval_on_selector_all("#tl-axis .tl-tick", "els => els.map(e => e.textContent).join('|')")
    calls = page.eval_on_selector_all(".lane[data-lane^='tool:'] .mark",
                                      "els => els.map(e => e.getBoundingClientRect().left)")
    y = axis["y"] + 60
    page.mouse.move(min(calls) - 12, y)
    page.mouse.down()
    page.mouse.move(max(calls) + 18, y, steps=8)
    page.mouse.up()
    page.wait_for_function("(before) => [...document.querySelectorAll('#tl-axis .tl-tick')]"
                           ".map(e => e.textContent).join('|') !== before", arg=before)
    page.mouse.move(0, 0)  # no tooltip in the picture


SHOTS = [
    Shot("runs.png", "/"),
    Shot("run.png", f"/runs/{PASSING_RUN}"),
    Shot("scene.png", "/scenes/beta-exports"),
    Shot("trial-failed.png", f"/runs/{FAILING_RUN}/beta-exports/1", _wait_for_diff),
    Shot("world-diff.png", f"/runs/{PASSING_RUN}/orders-latency/1/diff"),
    Shot("compare.png", f"/compare?a={PASSING_RUN}/beta-exports/1&b={FAILING_RUN}/beta-exports/1"),
    Shot("timeline-zoomed.png", f"/runs/{PASSING_RUN}/orders-latency/1", _zoom_into_incident),
]
"""Every screenshot docs/console.md shows, in the order it shows them."""


def _env() -> dict[str, str]:
    """This interpreter's folder first on PATH, so the agents' ``python`` finds the SDKs."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _ancha(project: Path, *args: str, expect: int) -> None:
    done = subprocess.run([sys.executable, "-m", "ancha.cli", *args], cwd=project, env=_env(),
                          capture_output=True, text=True, timeout=600)
    if done.returncode != expect:
        raise SystemExit(f"ancha {' '.join(args)} exited {done.returncode}, not {expect}:\n{done.stdout}\n{done.stderr}")


def make_runs(project: Path) -> Path:
    """The two runs, in ``project/.ancha/runs`` under fixed ids; returns that folder."""
    for part in ("scenes", "agents"):
        shutil.copytree(EXAMPLES / part, project / part)
    shutil.copy(EXAMPLES / "ancha.yaml", project / "ancha.yaml")
    (project / "agents" / "hasty.py").write_text(HASTY_AGENT)
    (project / "hasty.yaml").write_text("agent:\n  command: python agents/hasty.py\n"
                                        "scenes: [scenes/beta-exports/scene.yaml]\ntrials: 1\n")
    runs = project / ".ancha" / "runs"
    _ancha(project, "run", "-n", "1", "--no-progress", expect=0)
    _pin(runs, PASSING_RUN)
    _ancha(project, "run", "--config", "hasty.yaml", "--no-progress", expect=1)
    _pin(runs, FAILING_RUN)
    return runs


def _pin(runs: Path, run_id: str) -> None:
    """Give the run ``latest`` points at a fixed id and start time."""
    latest = runs / "latest"
    current = latest.resolve()
    current.rename(runs / run_id)
    latest.unlink()
    latest.symlink_to(run_id, target_is_directory=True)
    summary_path = runs / run_id / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary.update(run_id=run_id, started_at=STARTED[run_id])
    summary_path.write_text(json.dumps(summary, indent=2))


@contextmanager
def console(project: Path) -> Iterator[str]:
    """A real ``ancha ui`` over ``project``'s runs, as a user starts it in the project (the pages
    show ``.ancha/runs``, not the scratch folder); yields its ``http://127.0.0.1:PORT/ui``."""
    from ancha.server.embedded import free_port

    port = free_port("127.0.0.1")
    process = subprocess.Popen([sys.executable, "-m", "ancha.cli", "ui", "--no-open", "--port", str(port),
                                "--runs-dir", ".ancha/runs"], cwd=project, env=_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/ui"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise SystemExit(f"ancha ui exited {process.returncode}: {process.stderr.read() if process.stderr else ''}")
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"ancha ui did not answer on {url} within 30 s")
            time.sleep(0.05)  # the port is not open yet
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def take(url: str, out: Path, shots: list[Shot] = SHOTS) -> list[Path]:
    """Each shot of the console at ``url``, written to ``out``; returns the files."""
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: `apt-get install chromium`")
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1,
                                      locale="en-US", timezone_id="UTC", color_scheme="light")
        for shot in shots:
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(url + shot.path, wait_until="networkidle")
            if shot.prepare is not None:
                shot.prepare(page)
            path = out / shot.name
            page.screenshot(path=str(path), animations="disabled", caret="hide")
            page.close()
            written.append(path)
        browser.close()
    for path in written:
        _optimize(path)
    return written


def _optimize(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return  # left as Chromium wrote it
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--scratch", type=Path, default=SCRATCH,
                        help=f"the project folder the runs are made in, emptied first (default: {SCRATCH})")
    args = parser.parse_args(argv)
    shutil.rmtree(args.scratch, ignore_errors=True)
    args.scratch.mkdir(parents=True)
    try:
        make_runs(args.scratch)
        with console(args.scratch) as url:
            written = take(url, args.out)
    finally:
        shutil.rmtree(args.scratch, ignore_errors=True)
    for path in written:
        print(f"{path}  {path.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
