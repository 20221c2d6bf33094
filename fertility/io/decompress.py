"""Compressed corpus files (.gz, .bz2, .xz, .zst) read to their verified end, in bounded memory.

Python's file objects for these formats stop quietly where a `.zst` is cut short, ignore junk
(or a damaged second stream) after the first one, and raise their codecs' own errors
(`zlib.error`, `LZMAError`, `ZstdError`) on a damaged body. Here every format goes through one
loop: each member or frame must reach its end marker (checksums verified by the codec), what
follows must be another member (or the padding the format allows), and any failure is one
`CorpusError` naming the file and the compressed byte offset. Memory is bounded whatever the
ratio: output comes out at most `OUTPUT_BYTES` at a time (zstd one block of at most 128 KiB at
a time), and the codecs' windows are capped (an xz dictionary, a zstd window).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import IO, Any

from fertility.errors import CorpusError

COMPRESSIONS = (".gz", ".zst", ".bz2", ".xz")
INPUT_BYTES = 1 << 16  # compressed bytes read at a time
OUTPUT_BYTES = 1 << 18  # decompressed bytes produced at a time
# xz -9 needs 65 MiB to decompress; a header asking for more is refused, not allocated
XZ_MEMORY_LIMIT = 1 << 27
# zstd's own default (windowLog 27); above it `zstd -d` also needs --long
ZSTD_WINDOW_LIMIT = 1 << 27

_NAMES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class _Input:
    """The compressed bytes, with the offset of what has been handed to the codec."""

    def __init__(self, raw: IO[bytes], name: str, kind: str):
        self.raw, self.name, self.kind = raw, name, _NAMES[kind]
        self.buffer = b""
        self.offset = 0  # compressed bytes consumed before `buffer`
        self.ended = False

    def fill(self, at_least: int = 1) -> bool:
        """Read until `buffer` holds `at_least` bytes; False if the file ends first."""
        while len(self.buffer) < at_least and not self.ended:
            try:
                block = self.raw.read(max(INPUT_BYTES, at_least - len(self.buffer)))
            except OSError as err:
                raise CorpusError(f"{self.name}: cannot read ({err.strerror or err})") from None
            if not block:
                self.ended = True
            self.buffer += block
        return len(self.buffer) >= at_least

    def take(self, n: int) -> bytes:
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        self.offset += len(data)
        return data

    def give_back(self, data: bytes) -> None:
        self.buffer = data + self.buffer
        self.offset -= len(data)

    def corrupt(self, problem: object) -> CorpusError:
        return CorpusError(f"{self.name}: corrupt {self.kind} data near compressed byte {self.offset:,} ({problem})")

    def truncated(self) -> CorpusError:
        return CorpusError(f"{self.name}: truncated {self.kind} file: the data ends at byte {self.offset + len(self.buffer):,} "
                           "before its end marker (an interrupted download or copy?)")

    def trailing(self, what: str) -> CorpusError:
        return CorpusError(f"{self.name}: {what} at compressed byte {self.offset:,} after a complete "
                           f"{self.kind} stream; refusing to read part of a file")

    def skip_zero_padding(self, multiple: int) -> None:
        """Skip NUL padding between members (gzip tolerates any, xz a multiple of four)."""
        skipped = 0
        while self.fill() and self.buffer[:1] == b"\0":
            stripped = self.buffer.lstrip(b"\0")
            skipped += len(self.buffer) - len(stripped)
            self.take(len(self.buffer) - len(stripped))
        if skipped % multiple:
            raise self.corrupt(f"{skipped} bytes of stream padding, not a multiple of {multiple}")


def _streams(source: _Input, new: Callable[[], Any], magic: bytes, errors: tuple[type[BaseException], ...],
             padding: int) -> Iterator[bytes]:
    """Members one after the other, each decompressed to its end marker by a zlib, bz2 or lzma
    decompressor, whose `decompress(data, max_length)` bounds each step's output."""
    first = True
    while True:
        if padding and not first:
            source.skip_zero_padding(padding)
        if not source.fill():
            return  # the end after a complete member (or an empty file: an empty corpus file)
        if not source.fill(len(magic)) or source.buffer[:len(magic)] != magic:
            if first:
                raise source.corrupt(f"not {source.kind} data: it does not start with the {source.kind} magic bytes")
            raise source.trailing("data that is not another stream")
        first = False
        decoder = new()
        while not decoder.eof:
            tail = getattr(decoder, "unconsumed_tail", None)  # zlib hands back what it did not take
            data = tail or b""
            if not tail if tail is not None else decoder.needs_input:
                if not source.fill():
                    raise source.truncated()
                data = source.take(len(source.buffer))
            try:
                out = decoder.decompress(data, OUTPUT_BYTES)
            except errors as err:
                raise source.corrupt(_reason(err)) from None
            if out:
                yield out
        source.give_back(decoder.unused_data)


def _reason(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    if "memory usage limit" in text.lower():
        return f"it needs more than {XZ_MEMORY_LIMIT >> 20} MiB to decompress; xz -9 needs 65 MiB"
    return text


def _gzip(source: _Input) -> Iterator[bytes]:
    import zlib
    yield from _streams(source, lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), b"\x1f\x8b",
                        (zlib.error,), padding=1)


def _bzip2(source: _Input) -> Iterator[bytes]:
    import bz2
    yield from _streams(source, bz2.BZ2Decompressor, b"BZh", (OSError, ValueError), padding=0)


def _xz(source: _Input) -> Iterator[bytes]:
    import lzma

    def new() -> Any:
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=XZ_MEMORY_LIMIT)
    yield from _streams(source, new, b"\xfd7zXZ\x00", (lzma.LZMAError,), padding=4)


def _zstd(source: _Input) -> Iterator[bytes]:
    """Frame by frame, and within a frame block by block (a block decompresses to at most 128
    KiB), so a frame's end and the file's end are known exactly; skippable frames are skipped."""
    try:
        import zstandard
    except ImportError:
        raise CorpusError("reading .zst needs zstandard: pip install zstandard") from None
    factory = zstandard.ZstdDecompressor(max_window_size=ZSTD_WINDOW_LIMIT)
    first = True
    while True:
        if not source.fill():
            return
        if not source.fill(4):
            raise source.truncated() if first else source.trailing(f"{len(source.buffer)} stray bytes")
        magic = source.buffer[:4]
        if 0x184D2A50 <= int.from_bytes(magic, "little") <= 0x184D2A5F:  # a skippable frame
            if not source.fill(8):
                raise source.truncated()
            size = int.from_bytes(source.buffer[4:8], "little")
            source.take(8)
            while size:
                if not source.fill():
                    raise source.truncated()
                size -= len(source.take(min(size, len(source.buffer))))
            first = False
            continue
        if magic != _ZSTD_MAGIC:
            if first:
                raise source.corrupt("not zstd data: it does not start with the zstd magic bytes")
            raise source.trailing("data that is not another frame")
        first = False
        if not source.fill(5):
            raise source.truncated()
        descriptor = source.buffer[4]
        single_segment, has_checksum = descriptor >> 5 & 1, descriptor >> 2 & 1
        header = (5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
                  + ((1 if single_segment else 0), 2, 4, 8)[descriptor >> 6])
        decoder = factory.decompressobj()
        try:
            if not source.fill(header):
                raise source.truncated()
            decoder.decompress(source.take(header))
            while True:
                if not source.fill(3):
                    raise source.truncated()
                block = int.from_bytes(source.buffer[:3], "little")
                last, kind, size = block & 1, block >> 1 & 3, block >> 3
                if kind == 3:
                    raise source.corrupt("a block of the reserved type")
                if size > 1 << 17:
                    raise source.corrupt(f"a block of {size:,} bytes, over zstd's 128 KiB")
                length = 3 + (1 if kind == 1 else size)
                if not source.fill(length):
                    raise source.truncated()
                out = decoder.decompress(source.take(length))
                if out:
                    yield out
                if last:
                    break
            if has_checksum:
                if not source.fill(4):
                    raise source.truncated()
                decoder.decompress(source.take(4))
        except zstandard.ZstdError as err:
            raise source.corrupt(err) from None
        if not decoder.eof:
            raise source.corrupt("a frame that does not end where its last block says")


_CODECS = {".gz": _gzip, ".bz2": _bzip2, ".xz": _xz, ".zst": _zstd}


class _Chunks(io.RawIOBase):
    """A generator of byte strings as a readable binary stream."""

    def __init__(self, chunks: Iterator[bytes], raw: IO[bytes]):
        self._chunks, self._raw = chunks, raw
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._left = memoryview(chunk)
        n = min(len(buffer), len(self._left))
        buffer[:n] = self._left[:n]
        self._left = self._left[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._chunks.close()  # type: ignore[attr-defined]
            self._raw.close()
        super().close()


def decompressed(raw: IO[bytes], compression: str, name: str) -> IO[bytes]:
    """`raw`'s bytes decompressed as `compression` (a suffix of COMPRESSIONS) says, checked
    to the end; errors name the file `name`."""
    source = _Input(raw, name, compression)
    return io.BufferedReader(_Chunks(_CODECS[compression](source), raw), buffer_size=1 << 16)
