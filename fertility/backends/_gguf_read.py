"""Read the tokenizer metadata of a GGUF file (llama.cpp, Ollama, LM Studio), never its tensors.

`gguf.GGUFReader` maps every tensor and builds a numpy view per array element: 18 s for
Command-R's 256k-token vocabulary on a vocab-only file. We parse the key/value header
directly with the `gguf` package's own value types, and stop before the tensor infos.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from fertility.errors import TokenizerError

GGUF_MAGIC = b"GGUF"
_SCALARS = {  # GGUFValueType -> struct format (little-endian)
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<u1", 10: "<u8",
          11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9
# Declared sizes are checked against the bytes left in the file before anything is allocated;
# these caps bound what a well-sized but hostile header could still make us build.
MAX_STRING = 1 << 24  # one key, token or merge: far above anything real, far below a bogus length
MAX_KEYS = 1 << 16  # metadata keys: real files have a few dozen to a few hundred
# strings and arrays built from the header in all: a 262,144-token vocabulary with its merges
# is under a million; each costs about 60 bytes as a Python object
MAX_ITEMS = 1 << 22
MAX_METADATA_BYTES = 1 << 27  # the header read in all: the largest tokenizer metadata we know is 11 MB
MAX_NESTING = 8  # arrays of arrays: tokenizer keys use none
# bytes each item of a kind occupies at least in the file (a string is its 8-byte length)
_MIN_ITEM_BYTES = {_STRING: 8, _ARRAY: 12, **{kind: struct.calcsize(fmt) for kind, fmt in _SCALARS.items()}}


class _Reader:
    def __init__(self, handle: BinaryIO, path: Path, size: int):
        self.handle, self.path, self.size = handle, path, size
        self.position = 0
        self.items = 0

    def corrupt(self, problem: str) -> TokenizerError:
        return TokenizerError(f"{self.path}: corrupt GGUF file ({problem}, at byte {self.position:,})")

    def read(self, n: int) -> bytes:
        if n > self.size - self.position:
            raise TokenizerError(f"{self.path}: truncated GGUF file (metadata ends early: {n:,} bytes wanted at "
                                 f"byte {self.position:,} of {self.size:,})")
        if self.position + n > MAX_METADATA_BYTES:
            raise self.corrupt(f"metadata of over {MAX_METADATA_BYTES >> 20} MiB; tokenizer metadata is a few MB")
        data = self.handle.read(n)
        if len(data) != n:
            raise TokenizerError(f"{self.path}: truncated GGUF file (metadata ends early)")
        self.position += n
        return data

    def count(self, count: int, least: int, what: str, *, objects: bool) -> None:
        """Refuse a declared count of items of at least `least` bytes each that the rest of
        the file cannot hold, or (`objects`: strings, arrays) too many Python objects."""
        if count * least > self.size - self.position:
            raise TokenizerError(f"{self.path}: truncated GGUF file, or a corrupt count: {what} of {count:,} items "
                                 f"at byte {self.position:,} needs at least {count * least:,} bytes, only "
                                 f"{self.size - self.position:,} are left")
        if objects:
            self.items += count
            if self.items > MAX_ITEMS:
                raise self.corrupt(f"over {MAX_ITEMS:,} strings and arrays in the metadata; a tokenizer has "
                                   "under a million")

    def scalar(self, kind: int) -> Any:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        (length,) = struct.unpack("<Q", self.read(8))
        if length > MAX_STRING:
            raise self.corrupt(f"a string of {length:,} bytes")
        raw = self.read(length)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.corrupt("a string is not UTF-8") from None

    def value(self, kind: int, depth: int = 0) -> Any:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            if depth >= MAX_NESTING:
                raise self.corrupt(f"arrays nested over {MAX_NESTING} deep")
            (item_kind,) = struct.unpack("<I", self.read(4))
            (count,) = struct.unpack("<Q", self.read(8))
            if item_kind not in _MIN_ITEM_BYTES:
                raise self.corrupt(f"unknown array item type {item_kind}")
            self.count(count, _MIN_ITEM_BYTES[item_kind], "an array", objects=item_kind in (_STRING, _ARRAY))
            if item_kind == _STRING:
                return [self.string() for _ in range(count)]
            if item_kind in _NUMPY:
                dtype = np.dtype(_NUMPY[item_kind])
                return np.frombuffer(self.read(dtype.itemsize * count), dtype=dtype)
            return [self.value(_ARRAY, depth + 1) for _ in range(count)]
        if kind in _SCALARS:
            return self.scalar(kind)
        raise self.corrupt(f"unknown value type {kind}")


def is_gguf(head: bytes) -> bool:
    return head[:4] == GGUF_MAGIC


def read_metadata(path: Path) -> dict[str, Any]:
    """Every key/value pair of the GGUF header (versions 2 and 3)."""
    try:
        with path.open("rb") as handle:
            reader = _Reader(handle, path, os.fstat(handle.fileno()).st_size)
            if reader.read(4) != GGUF_MAGIC:
                raise TokenizerError(f"{path}: not a GGUF file (no GGUF magic)")
            version = reader.scalar(4)
            if version not in (2, 3):
                raise TokenizerError(f"{path}: GGUF version {version} is not supported (2 or 3 are)")
            reader.scalar(10)  # tensor count
            n_kv = reader.scalar(10)
            if n_kv > MAX_KEYS:
                raise reader.corrupt(f"{n_kv:,} metadata keys")
            reader.count(n_kv, 13, "a header", objects=True)  # a key's length, its type, a one-byte value
            metadata: dict[str, Any] = {"GGUF.version": version}
            for _ in range(n_kv):
                key = reader.string()
                kind = reader.scalar(4)
                metadata[key] = reader.value(kind)
            return metadata
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror})") from None
