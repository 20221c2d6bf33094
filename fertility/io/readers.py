"""Corpus sources: files plain or compressed, local or behind an fsspec URL (`memory://`,
`file://`, `s3://` where its backend is installed), read as blocks of whole lines; record files
(JSON lines, Parquet, Arrow) are read by `records.py`.

Each reader yields `(record number, language or None, text)` one at a time: Parquet and Arrow
by record batches, compressed files through a streaming decompressor, never a whole file in
memory. The language is None when it comes from the file or folder name (`--lang-field` unset).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import IO

from fertility.errors import CorpusError, UsageError

from .decompress import COMPRESSIONS, decompressed

FORMATS = (".txt", ".jsonl", ".json", ".parquet", ".arrow")
RECORD_FORMATS = (".jsonl", ".json", ".parquet", ".arrow")


@dataclass(frozen=True)
class ReadOptions:
    """How records become documents: which fields hold the text and the language, and whether a
    bad record stops the audit (the default) or is skipped and counted."""

    text_field: str = "text"
    lang_field: str | None = None
    skip_bad_records: bool = False
    stdin_lang: str | None = None  # the language of `-` (standard input)


def split_suffix(name: str) -> tuple[str, str, str]:
    """`ben_Beng.jsonl.gz` -> (stem `ben_Beng`, format `.jsonl`, compression `.gz`); the
    suffixes in any case. Format is '' when the name has none we read."""
    lower = name.lower()
    compression = next((c for c in COMPRESSIONS if lower.endswith(c)), "")
    base, lower = name[: len(name) - len(compression)], lower[: len(lower) - len(compression)]
    fmt = next((f for f in FORMATS if lower.endswith(f)), "")
    return base[: len(base) - len(fmt)], fmt, compression


_METADATA = ("state.json", "dataset_info.json", "dataset_dict.json")  # datasets.save_to_disk beside its .arrow


def is_corpus_file(name: str) -> bool:
    return bool(split_suffix(name)[1]) and name.lower() not in _METADATA


def is_url(path: str | PurePath) -> bool:
    return "://" in str(path)


@dataclass(frozen=True)
class Source:
    """One corpus file: its name for messages, the path its language is read from, and how to
    open it (bytes, before decompression)."""

    name: str
    path: PurePath
    root: PurePath | None
    open: Callable[[], IO[bytes]]
    size: int | None  # bytes of text, for progress; None when compressed, remote or a pipe
    options: ReadOptions | None = None  # a named corpus's own fields (its text is in `content`, ...)


def url_sources(url: str) -> list[Source]:
    """The corpus files an fsspec URL stands for: itself, or those below it."""
    try:
        import fsspec
        fs, root = fsspec.core.url_to_fs(url)
    except ImportError as err:
        raise CorpusError(f"{url}: reading URLs needs fsspec and its backend ({err}); "
                          "pip install fsspec (and e.g. s3fs)") from None
    except (ValueError, OSError) as err:
        raise CorpusError(f"{url}: cannot open ({err})") from None
    protocol = url.split("://", 1)[0]
    try:
        if fs.isdir(root):
            files = sorted(p for p in fs.find(root) if is_corpus_file(PurePosixPath(p).name))
            if not files:
                raise CorpusError(f"{url}: holds no corpus files ({', '.join(FORMATS)})")
        elif fs.isfile(root):
            files = [root]
        else:
            raise CorpusError(f"{url}: no such file or directory")
    except OSError as err:
        raise CorpusError(f"{url}: cannot read ({err})") from None

    def opener(p: str) -> Callable[[], IO[bytes]]:
        return lambda: fs.open(p, "rb")
    base = PurePosixPath(root)
    return [Source(f"{protocol}://{p.lstrip('/')}" if protocol != "file" else f"file://{p}", PurePosixPath(p),
                   base, opener(p), None) for p in files]


def open_source(source: Source) -> IO[bytes]:
    """The file's bytes, decompressed as its suffix says (to a verified end: see decompress.py)."""
    try:
        raw = source.open()
    except OSError as err:
        raise CorpusError(f"{source.name}: cannot read ({err.strerror or err})") from None
    _, fmt, compression = split_suffix(PurePosixPath(source.name).name)
    if not compression:
        return raw
    if fmt == ".parquet":  # read by seeking to its footer: a stream cannot be
        raw.close()
        raise CorpusError(f"{source.name}: a compressed Parquet file cannot be read as a stream; decompress it "
                          f"first (Parquet compresses its columns itself)")
    return decompressed(raw, compression, source.name)


WHOLE, SEGMENT, LAST_SEGMENT = "whole", "segment", "last segment"


def _character_boundary(data: bytes) -> int:
    """The end of the last whole UTF-8 character in `data` (a segment never splits one)."""
    lead = len(data) - 1
    while lead > 0 and len(data) - lead < 4 and 0x80 <= data[lead] < 0xC0:
        lead -= 1
    width = 2 if 0xC0 <= data[lead] < 0xE0 else 3 if 0xE0 <= data[lead] < 0xF0 else 4 if data[lead] >= 0xF0 else 1
    return lead if lead + width > len(data) else len(data)


def line_blocks(handle: IO[bytes], *, block_bytes: int, line_bytes: int) -> Iterator[tuple[bytes, str]]:
    """A text stream as (data, kind): WHOLE data is one or more whole lines (the last may lack
    its newline at the end of the stream); a line longer than `line_bytes` comes as SEGMENTs of
    about `line_bytes`, cut between UTF-8 characters, the last one a LAST_SEGMENT. Memory is
    bounded whatever the stream holds: an endless line without a newline (`/dev/zero` through a
    pipe) is read a segment at a time."""
    while block := handle.read(block_bytes):
        if block.endswith(b"\n"):
            yield block, WHOLE
            continue
        start = block.rfind(b"\n") + 1  # where the unfinished line begins
        want = line_bytes - (len(block) - start) + 1
        rest = handle.readline(want) if want > 0 else b""
        if rest.endswith(b"\n") or len(rest) < want:  # the line ended, or the stream did
            yield block + rest, WHOLE
            continue
        if start:
            yield block[:start], WHOLE
        carry = block[start:] + rest
        while True:
            cut = _character_boundary(carry) or len(carry)
            yield carry[:cut], SEGMENT
            carry = carry[cut:]
            more = handle.readline(line_bytes)
            carry += more
            if carry.endswith(b"\n") or len(more) < line_bytes:
                yield carry, LAST_SEGMENT
                break


class ReadOnce:
    """Refuse a file counted twice: the same file reached by two corpus paths, or two files
    with the same content (a copy would double that language's weight without a word)."""

    def __init__(self) -> None:
        self._paths: dict[str, Path] = {}
        self._contents: dict[str, Path] = {}

    def path(self, file: Path) -> None:
        try:
            key = str(file.resolve())
        except (OSError, RuntimeError):
            key = os.path.abspath(file)
        if key in self._paths:
            raise CorpusError(f"{file}: given twice (also as {self._paths[key]}); "
                              "each corpus file may be counted once")
        self._paths[key] = file

    def content(self, file: Path, sha256: str) -> None:
        key = sha256
        if key in self._contents:
            raise CorpusError(f"{file}: same content as {self._contents[key]}; "
                              "each text may be counted once (remove the copy)")
        self._contents[key] = file


def local_source(file: Path, root: Path | None) -> Source:
    size = None
    if not split_suffix(file.name)[2] and split_suffix(file.name)[1] in ("", ".txt", ".jsonl", ".json"):
        try:
            size = file.stat().st_size if file.is_file() else None
        except OSError:
            size = None
    return Source(str(file), file, root, lambda: file.open("rb"), size)


def stdin_source(options: ReadOptions) -> Source:
    import sys
    if not options.stdin_lang:
        raise UsageError("reading standard input (-) needs --lang LANG (e.g. --lang ben_Beng)")
    return Source("-", PurePosixPath(options.stdin_lang + ".txt"), None, lambda: sys.stdin.buffer, None)


__all__ = ["COMPRESSIONS", "FORMATS", "RECORD_FORMATS", "ReadOptions", "Source", "is_corpus_file", "is_url",
           "open_source", "split_suffix", "url_sources"]
