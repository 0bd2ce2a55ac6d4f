"""What a user downloads and installs, next to what we develop in.

    .venv/bin/python bench/install_size.py [--keep]

Builds the sdist and the wheel (``python -m build --no-isolation``) from a copy of
pyproject.toml, README.md and src/, then makes two fresh venvs with pip: one left empty,
one given ``pip install <wheel>`` with its real dependencies from the package index. The
lean runtime install is the second venv's disk use minus the first's. The dev venv (.venv,
``.[dev]``) is measured for comparison. Disk use counts allocated blocks, each hard-linked
file once, as ``du`` does.

Prints a markdown table of the sizes, the largest packages of the lean install, and
whether any test-only heavyweight (Ray, Playwright, ...) got into it. Needs the package
index; not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY_TEST_ONLY = ("ray", "playwright", "pytest", "mypy", "mkdocs", "pygithub", "githubkit", "openai", "anthropic")


def disk_use(path: Path) -> int:
    """Bytes allocated under ``path``, each inode once (``du -s``)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in [*files, *_dirs]:
            stat = os.lstat(os.path.join(folder, name))
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def build(into: Path) -> tuple[Path, Path]:
    checkout = into / "checkout"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "src", checkout / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(into / "dist"), str(checkout)],
                   check=True, capture_output=True)
    (wheel,), (sdist,) = (into / "dist").glob("*.whl"), (into / "dist").glob("*.tar.gz")
    return wheel, sdist


def fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin" / "python"


def site_packages(python: Path) -> Path:
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())


def installed_names(python: Path) -> set[str]:
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                            check=True, capture_output=True, text=True).stdout
    return {line.split("==")[0].lower() for line in listed.splitlines() if "==" in line}


def largest(site: Path, baseline: Path, count: int) -> list[tuple[str, int]]:
    """The biggest top-level entries of ``site`` that the ``baseline`` venv lacks (pip is in both)."""
    there = {entry.name for entry in baseline.iterdir()}
    sizes = {entry.name: disk_use(entry) if entry.is_dir() else entry.lstat().st_blocks * 512
             for entry in site.iterdir()
             if entry.name not in there and not entry.name.endswith((".dist-info", ".pth"))}
    return sorted(sizes.items(), key=lambda item: -item[1])[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print it")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ancha-install-size-"))
    try:
        started = time.monotonic()
        wheel, sdist = build(work)
        built_s = time.monotonic() - started

        empty = fresh_venv(work / "empty")
        lean = fresh_venv(work / "lean")
        started = time.monotonic()
        pip = subprocess.run([str(lean), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                             capture_output=True, text=True)
        if pip.returncode != 0:
            sys.exit(f"pip install {wheel.name} failed:\n{pip.stdout}{pip.stderr}")
        installed_s = time.monotonic() - started
        lean_size = disk_use(work / "lean") - disk_use(work / "empty")
        names = installed_names(lean)
        dev = ROOT / ".venv"

        print(f"| what | size |\n|---|---:|\n"
              f"| wheel ({wheel.name}) | {mb(wheel.stat().st_size)} |\n"
              f"| sdist ({sdist.name}) | {mb(sdist.stat().st_size)} |\n"
              f"| lean runtime install (`pip install <wheel>`, {len(names - installed_names(empty))} packages) "
              f"| {mb(lean_size)} |\n"
              f"| dev venv (.venv, `.[dev]`) | {mb(disk_use(dev)) if dev.exists() else 'absent'} |")
        if dev.exists():
            print(f"\nlean runtime install / dev venv: {lean_size / disk_use(dev):.2f}")
        print(f"\nbuilt in {built_s:.1f} s; lean install took {installed_s:.1f} s from the package index")
        print("\n| largest in the lean install | size |\n|---|---:|")
        for name, size in largest(site_packages(lean), site_packages(empty), 8):
            print(f"| {name} | {mb(size)} |")
        heavy = sorted(names & set(HEAVY_TEST_ONLY))
        print(f"\ntest-only packages in the lean install: {', '.join(heavy) if heavy else 'none'} "
              f"(looked for {', '.join(HEAVY_TEST_ONLY)})")
        if args.keep:
            print(f"kept {work}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
