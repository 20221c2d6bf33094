"""A file's SHA-256, read a block at a time: what signatures and training records name files by.

Below every stage: tokenizer files (backends), corpus files and tokenizers written (train) are
all hashed the same way.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache


@lru_cache(maxsize=64)  # signatures name the same files again and again: each is read once per process
def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
