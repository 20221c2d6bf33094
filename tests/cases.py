"""The bad-input table's row type and the proof that nothing a user owns changed."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Case:
    """One bad input: `setup(tmp)` prepares the folder, `args` may use {tmp} for its path."""

    id: str
    args: tuple[str, ...]
    exit_code: int
    stderr_starts: str  # the first words of stderr, after "fertility: error: " / "check failed: "
    setup: Callable[[Path], None] = lambda tmp: None
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def snapshot(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every existing entry's content (or link target) and mode, to prove nothing changed."""
    seen: dict[str, tuple[bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                seen[str(path)] = (os.readlink(path), info.st_mode)
            elif stat.S_ISREG(info.st_mode):
                seen[str(path)] = (path.read_bytes(), info.st_mode)
            else:
                seen[str(path)] = ("", info.st_mode)
    return seen
