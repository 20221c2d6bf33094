"""Where the bundled parallel samples (`corpora_samples/`) are, in a checkout or an install."""

from __future__ import annotations

import importlib.util
from importlib import resources
from pathlib import Path

from fertility.errors import CorpusError

PACKAGE = "fertility.corpora_samples"


def samples_dir() -> Path:
    """A real folder: corpora are read by path, so a resource reader's wrapper will not do.

    `corpora_samples/` has no `__init__.py`, so once installed it is a namespace package and
    `resources.files` gives a `MultiplexedPath` (whose `str()` is not a path) on Python 3.11;
    its folders are the spec's `submodule_search_locations`.
    """
    checkout = Path(__file__).resolve().parents[2] / "corpora_samples"
    if checkout.is_dir():
        return checkout
    for folder in _installed_folders():
        if folder.is_dir() and any(folder.glob("*.txt")):
            return folder
    raise CorpusError("the bundled corpora_samples/ are not installed; pass a corpus path")


def _installed_folders() -> list[Path]:
    try:
        root = resources.files(PACKAGE)
        spec = importlib.util.find_spec(PACKAGE)
    except ModuleNotFoundError:
        return []
    if isinstance(root, Path):
        return [root]
    locations = spec.submodule_search_locations if spec is not None else None
    return [Path(location) for location in locations or []]
