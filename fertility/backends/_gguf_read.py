"""Read the tokenizer metadata of a GGUF file (llama.cpp, Ollama, LM Studio), never its tensors.

`gguf.GGUFReader` maps every tensor and builds a numpy view per array element: 18 s for
Command-R's 256k-token vocabulary on a vocab-only file. We parse the key/value header
directly with the `gguf` package's own value types, and stop before the tensor infos.
"""

from __future__ import annotations

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
MAX_STRING = 1 << 24  # one key, token or merge: far above anything real, far below a bogus length


class _Reader:
    def __init__(self, handle: BinaryIO, path: Path):
        self.handle, self.path = handle, path

    def read(self, n: int) -> bytes:
        data = self.handle.read(n)
        if len(data) != n:
            raise TokenizerError(f"{self.path}: truncated GGUF file (metadata ends early)")
        return data

    def scalar(self, kind: int) -> Any:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        (length,) = struct.unpack("<Q", self.read(8))
        if length > MAX_STRING:
            raise TokenizerError(f"{self.path}: corrupt GGUF file (a string of {length} bytes)")
        raw = self.read(length)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise TokenizerError(f"{self.path}: corrupt GGUF file (a string is not UTF-8)") from None

    def value(self, kind: int) -> Any:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            (item_kind,) = struct.unpack("<I", self.read(4))
            (count,) = struct.unpack("<Q", self.read(8))
            if count > 1 << 28:
                raise TokenizerError(f"{self.path}: corrupt GGUF file (an array of {count} items)")
            if item_kind == _STRING:
                return [self.string() for _ in range(count)]
            if item_kind in _NUMPY:
                dtype = np.dtype(_NUMPY[item_kind])
                return np.frombuffer(self.read(dtype.itemsize * count), dtype=dtype)
            if item_kind == _ARRAY:
                return [self.value(_ARRAY) for _ in range(count)]
            raise TokenizerError(f"{self.path}: corrupt GGUF file (unknown array item type {item_kind})")
        if kind in _SCALARS:
            return self.scalar(kind)
        raise TokenizerError(f"{self.path}: corrupt GGUF file (unknown value type {kind})")


def is_gguf(head: bytes) -> bool:
    return head[:4] == GGUF_MAGIC


def read_metadata(path: Path) -> dict[str, Any]:
    """Every key/value pair of the GGUF header (versions 2 and 3)."""
    try:
        with path.open("rb") as handle:
            reader = _Reader(handle, path)
            if reader.read(4) != GGUF_MAGIC:
                raise TokenizerError(f"{path}: not a GGUF file (no GGUF magic)")
            version = reader.scalar(4)
            if version not in (2, 3):
                raise TokenizerError(f"{path}: GGUF version {version} is not supported (2 or 3 are)")
            reader.scalar(10)  # tensor count
            n_kv = reader.scalar(10)
            if n_kv > 1 << 20:
                raise TokenizerError(f"{path}: corrupt GGUF file ({n_kv} metadata keys)")
            metadata: dict[str, Any] = {"GGUF.version": version}
            for _ in range(n_kv):
                key = reader.string()
                kind = reader.scalar(4)
                metadata[key] = reader.value(kind)
            return metadata
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror})") from None
