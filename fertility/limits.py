"""Sanity limits on what a file may make fertility hold, each with the reason for its size.

A corrupt or hostile file must cost an error, never the machine: a declared count is checked
against the bytes that exist before anything is allocated, and what fertility holds whole (a
document, a tokenizer file, a saved audit) is checked against a limit far above any real input
and far below what would exhaust memory (a process stays under about 600 MB on any input; a
test runs the command over hostile inputs to hold it to that). The limits of one file format
live beside its reader (GGUF in `backends/_gguf_read.py`); these are shared by several readers.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import FertilityError, InputError

# The longest document fertility holds whole: one JSON record, one Parquet or Arrow cell, or a
# document where a command needs it whole (compare, retrain, report, --sample-*). A plain-text
# audit reads longer lines in pieces and has no limit. 64 MiB is a long book 20 times over;
# held as bytes, as text and once more while it is cut into pieces it stays near 250 MB.
MAX_DOCUMENT_BYTES = 1 << 26

# A tokenizer file read whole (tokenizer.json, .tiktoken, SentencePiece .model, Tekken JSON,
# vocab.json, merges.txt, ...): the largest published tokenizer.json (Gemma 3's) is 33 MB.
MAX_TOKENIZER_FILE_BYTES = 1 << 28

# A saved audit JSON (compare, check --baseline, report, merge): 200 languages and ten
# tokenizers with findings is a few MB; parsed, JSON takes several times its size in memory.
MAX_AUDIT_JSON_BYTES = 1 << 26

# A token id: per-id tables (unknown, byte tokens, id counts) are sized by the largest id. The
# largest published vocabularies hold about 262,144 tokens (Gemma); 2**24 is 64 times that and
# keeps each table under 17 MB, where one bogus id of 2**32 asked for gigabytes.
MAX_TOKEN_ID = 1 << 24


def human(n_bytes: int) -> str:
    """`67108864` -> `64 MiB`, for messages about limits."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= size:
            value = n_bytes / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n_bytes} bytes"


def check_file_size(path: Path | str, limit: int, what: str, error: type[FertilityError] = InputError) -> int:
    """The size of a regular file that will be read whole, refused (`error`, naming the file)
    when it is larger than `limit` or is not a regular file (a pipe or device has no size and
    may never end). Symlinks are followed, as opening the file would."""
    try:
        info = os.stat(path)
    except OSError as err:
        raise error(f"{path}: cannot read ({err.strerror or err})") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: not a regular file (a pipe, device or folder); a {what} is read from a file")
    if info.st_size > limit:
        raise error(f"{path}: {info.st_size:,} bytes, more than any real {what} (fertility reads at most "
                    f"{human(limit)})")
    return info.st_size


def read_file_capped(path: Path | str, limit: int, what: str, error: type[FertilityError] = InputError) -> bytes:
    """A whole regular file of at most `limit` bytes (see `check_file_size`); it may not grow
    past the limit while it is read."""
    check_file_size(path, limit, what, error)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as err:
        raise error(f"{path}: cannot read ({err.strerror or err})") from None
    if len(data) > limit:
        raise error(f"{path}: grew past {human(limit)} while being read; a {what} is read whole")
    return data


def check_token_id(source: object, token_id: int, what: str = "a token id",
                   error: type[InputError] = InputError) -> None:
    """Refuse an id that per-id tables cannot be sized by (see MAX_TOKEN_ID)."""
    if not 0 <= token_id < MAX_TOKEN_ID:
        raise error(f"{source}: {what} is {token_id:,}, out of range (ids run from 0 to under "
                    f"{MAX_TOKEN_ID:,}, 64 times the largest published vocabulary)")
