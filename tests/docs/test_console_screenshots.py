"""docs/console.md shows the console in screenshots that ``docs/hooks/console_screenshots.py``
makes from real runs of the bundled examples, so they can be made again whenever the console
changes; the page shows each one, and only those."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from doc_snippets import DOCS

sys.path.insert(0, str(DOCS / "hooks"))
import console_screenshots  # noqa: E402  (docs/hooks is not a package)

from ancha.console.timeline import COLOURS  # noqa: E402

PAGE = DOCS / "console.md"
IMAGES = DOCS / "images" / "console"
_IMAGE = re.compile(r"!\[[^\]]*\]\(images/console/([^)\s]+)\)")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_console_screenshots__the_script_makes_every_page_at_1440_by_900(tmp_path: Path) -> None:
    if not Path(console_screenshots.CHROMIUM).exists():
        pytest.fail(f"{console_screenshots.CHROMIUM} is missing: `apt-get install chromium` (.ci/run installs it)")
    out = tmp_path / "images"
    done = subprocess.run([sys.executable, str(DOCS / "hooks" / "console_screenshots.py"), "--out", str(out),
                           "--scratch", str(tmp_path / "project")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    made = sorted(p.name for p in out.iterdir())
    assert made == sorted(shot.name for shot in console_screenshots.SHOTS)
    for name in made:
        assert png_size(out / name) == (1440, 900), name
        assert (out / name).stat().st_size > 10_000, f"{name} is nearly blank"
    assert not (tmp_path / "project").exists()  # the scratch project is cleaned up


def test_console_md__shows_every_generated_screenshot_and_no_other() -> None:
    shown = _IMAGE.findall(PAGE.read_text(encoding="utf-8"))
    generated = [shot.name for shot in console_screenshots.SHOTS]
    assert sorted(shown) == sorted(generated)
    assert sorted(p.name for p in IMAGES.iterdir()) == sorted(generated), \
        f"docs/images/console is not what the script makes: run {console_screenshots.COMMAND}"
    for name in generated:
        assert png_size(IMAGES / name) == (1440, 900), name


def test_console_md__the_colour_table_says_what_the_timeline_legend_says() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| Colour | Means |"):]
    table = table[:table.index("\n\n")]
    meanings = [row.split("|")[2].strip() for row in table.splitlines()[2:]]
    assert meanings == [colour.meaning for colour in COLOURS]
