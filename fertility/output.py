"""Writing result files without ever clobbering or half-writing what a user owns."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import OutputError


def write_output(path: Path, text: str, *, force: bool = False) -> None:
    """Write atomically (temp file + rename); refuse to replace an existing file unless forced."""
    if path.is_dir():
        raise OutputError(f"{path}: is a directory; give a file name for --output")
    if path.exists() and not force:
        raise OutputError(f"{path}: already exists; pass --force to overwrite it")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist")
    handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
