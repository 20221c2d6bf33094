"""Helpers shared by backends: file hashing and turning offsets into byte spans."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..text import char_to_byte_offsets


@lru_cache(maxsize=64)
def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def spans_from_lengths(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous tokens of the given byte lengths -> (starts, ends)."""
    ends = np.cumsum(lengths, dtype=np.int64)
    return ends - lengths, ends


def char_spans_to_bytes(text: str, offsets: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Character offsets (as Hugging Face reports them) -> UTF-8 byte offsets."""
    byte_at = char_to_byte_offsets(text)
    pairs = np.array(offsets, dtype=np.int64).reshape(-1, 2)
    return byte_at[pairs[:, 0]], byte_at[pairs[:, 1]]


_GENERIC_FILES = {"tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model"}
_GENERIC_DIRS = {"model", "models", "tokenizer", "snapshots", ""}


def display_name(path: Path) -> str:
    """A short, recognisable name: for `x/tokenizer.json` the nearest telling folder name.

    Hub cache paths (`models--org--name/snapshots/<sha>/tokenizer.json`) give `org/name`.
    """
    if path.name not in _GENERIC_FILES:
        return path.name
    for parent in path.absolute().parents:  # not resolve(): hub snapshots symlink into blobs/
        name = parent.name
        if name.startswith("models--"):
            return name.removeprefix("models--").replace("--", "/")
        if name not in _GENERIC_DIRS and not (len(name) == 40 and all(c in "0123456789abcdef" for c in name)):
            return name
    return path.name
