"""Whether this install's own data is intact: every packaged vendor file reads, and each tool's
own check of its data passes (``ancha doctor``'s ``data`` line)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ancha.world.kernel import vendor_data
from ancha.world.registry import registry

REINSTALL = ("reinstall Ancha (`pip install --force-reinstall ancha`); in a checkout, "
             "`git checkout -- src/ancha/world/tools` restores the committed data")


@dataclass(frozen=True, slots=True)
class DataCheck:
    """``problem`` is None when every file read and every tool's check passed."""

    files: int
    found: tuple[str, ...]
    """What the tools' own checks found, each a clause of doctor's line (a schema built, its size)."""
    seconds: float
    problem: str | None = None


def check_product_data() -> DataCheck:
    """Read every packaged vendor file afresh, then run each tool's own check of its data
    (``ToolSpec.data_check``)."""
    started = time.perf_counter()
    tools = registry()
    files = tools.vendor_files
    for tool, name in files:
        try:
            vendor_data.load(tool, name)  # afresh: a file damaged since it was first read counts
        except vendor_data.VendorDataMissing as exc:
            return DataCheck(0, (), time.perf_counter() - started, str(exc))
    found: list[str] = []
    for spec in tools.tools.values():
        if spec.data_check is None:
            continue
        try:
            found.append(spec.data_check())
        except vendor_data.VendorDataMissing as exc:
            return DataCheck(len(files), tuple(found), time.perf_counter() - started, str(exc))
    return DataCheck(len(files), tuple(found), time.perf_counter() - started)
