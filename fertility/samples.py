"""Where the bundled parallel samples (`corpora_samples/`) are, in a checkout or an install."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import CorpusError


def samples_dir() -> Path:
    checkout = Path(__file__).resolve().parent.parent / "corpora_samples"
    if checkout.is_dir():
        return checkout
    try:
        installed = Path(str(resources.files("fertility.corpora_samples")))
    except ModuleNotFoundError:
        installed = None
    if installed is not None and installed.is_dir():
        return installed
    raise CorpusError("the bundled corpora_samples/ are not installed; pass a corpus path")
