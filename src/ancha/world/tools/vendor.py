"""Where the vendors' published API descriptions are read from (never copied into the project).

``$ANCHA_VENDOR_DIR`` (the folder holding one folder per vendor, or one vendor's folder
itself), else ``../shared/vendor`` beside the repository. Coverage ledgers, the GitHub
GraphQL schema and the schema-validating tests all read them through here.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[4]


def vendor_dir(vendor: str) -> Path:
    """The folder of ``vendor``'s descriptions (``slack``, ``github``, ...)."""
    configured = os.environ.get("ANCHA_VENDOR_DIR")
    root = Path(configured) if configured else REPO_ROOT.parent / "shared" / "vendor"
    return root / vendor if (root / vendor).is_dir() else root
