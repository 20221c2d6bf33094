"""Where fertility keeps what it may recompute: unit profiles and records of hub downloads.

One home, below every stage, because the engine (profiles), the hub (finished downloads) and the
command line (refusing to write an output into it) all need the same folder.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$FERTILITY_CACHE_DIR`, else `$XDG_CACHE_HOME/fertility`, else `~/.cache/fertility`."""
    if os.environ.get("FERTILITY_CACHE_DIR"):
        return Path(os.environ["FERTILITY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fertility"
