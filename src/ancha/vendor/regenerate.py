"""Writing (or checking) the generated vendor data and what is derived from it.

A file is written gzipped with a fixed mtime, so the same input gives the same bytes; a
check compares the JSON inside, so a different zlib cannot make current data look stale.
After the data, each tool's coverage ledger is rebuilt from it (with the routes the
replica serves), so one command brings everything generated up to date.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import orjson

from ancha.vendor.products import PRODUCTS, Inputs, Product
from ancha.world.kernel import vendor_data
from ancha.world.kernel.ledger import CoverageLedger

TOOLS_ROOT = Path(str(resources.files("ancha.world.tools"))).resolve()
"""The folder of the tool folders: each tool's data goes to its own ``vendor/``."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one generated file."""

    path: Path
    status: str
    """``wrote``, ``current`` or ``stale``."""
    detail: str = ""


def target(product: Product, root: Path = TOOLS_ROOT) -> Path:
    """Where ``product`` is written: ``<root>/<tool>/vendor/<name>.json.gz``."""
    return root / product.tool / "vendor" / product.file_name


def encode(product: Product, read: Inputs) -> bytes:
    """The file's JSON: its header first, then what the product builds."""
    return orjson.dumps({vendor_data.HEADER: product.header(), **product.build(read)})


def _committed(path: Path) -> bytes | None:
    try:
        return gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def data_files(read: Inputs, check: bool, products: Iterable[Product] = PRODUCTS,
               root: Path = TOOLS_ROOT) -> list[Outcome]:
    """Write each product's file, or (``check``) say whether the committed one is current."""
    outcomes: list[Outcome] = []
    for product in products:
        started = time.perf_counter()
        raw = encode(product, read)
        path = target(product, root)
        if check:
            outcomes.append(Outcome(path, "current" if _committed(path) == raw else "stale"))
            continue
        packed = gzip.compress(raw, compresslevel=9, mtime=0)
        path.parent.mkdir(parents=True, exist_ok=True)
        if _committed(path) != raw:
            path.write_bytes(packed)
        outcomes.append(Outcome(path, "wrote", f"{len(raw):>10,} bytes of structure, {len(packed):>8,} gzipped, "
                                              f"{time.perf_counter() - started:5.2f} s"))
    vendor_data.read.cache_clear()
    return outcomes


def ledgers(check: bool) -> list[Outcome]:
    """Each tool's coverage ledger, rebuilt from the packaged data and the served routes."""
    outcomes: list[Outcome] = []
    for ledger in coverage_ledgers():
        text = ledger.generate()
        current = ledger.path.is_file() and ledger.path.read_text() == text
        if check:
            outcomes.append(Outcome(ledger.path, "current" if current else "stale"))
            continue
        if not current:
            ledger.path.write_text(text)
        outcomes.append(Outcome(ledger.path, "wrote", text.splitlines()[3]))
    return outcomes


def coverage_ledgers() -> list[CoverageLedger]:
    """Every tool's coverage ledger, as its ToolSpec declares it."""
    from ancha.world.registry import registry

    return [spec.coverage for spec in registry().tools.values() if spec.coverage is not None]
