"""Corpus file formats: text lines, JSON lines, Parquet and Arrow, plain or compressed, local
or behind an fsspec URL (`memory://`, `file://`, `s3://` where its backend is installed).

Each reader yields `(record number, language or None, text)` one at a time: Parquet and Arrow
by record batches, compressed files through a streaming decompressor, never a whole file in
memory. The language is None when it comes from the file or folder name (`--lang-field` unset).
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import IO, Any

from fertility.errors import CorpusError, UsageError
from fertility.limits import MAX_DOCUMENT_BYTES, human

from .decompress import COMPRESSIONS, decompressed
from .parquet_pages import check_pages

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


class _Bad:
    """Bad records: an error naming file and record, or counted when skipping."""

    def __init__(self, options: ReadOptions):
        self.options, self.skipped = options, 0

    def __call__(self, source: Source, number: int, problem: str) -> None:
        if not self.options.skip_bad_records:
            raise CorpusError(f"{source.name}: record {number}: {problem} "
                              "(or pass --skip-bad-records to skip and count such records)")
        self.skipped += 1


def _field(record: Any, name: str, what: str) -> tuple[str | None, str | None]:
    """(value, problem)."""
    if not isinstance(record, dict):
        return None, f"not a JSON object but {type(record).__name__}"
    if name not in record:
        return None, f"no field {name!r} ({what}); fields: {', '.join(map(repr, list(record)[:8])) or 'none'}"
    value = record[name]
    if not isinstance(value, str):
        return None, f"field {name!r} ({what}) is {type(value).__name__}, not a string"
    return value, None


def _from_record(record: Any, options: ReadOptions) -> tuple[str | None, str | None, str | None]:
    """(lang, text, problem) of one record."""
    text, problem = _field(record, options.text_field, "the text")
    if problem:
        return None, None, problem
    lang = None
    if options.lang_field:
        lang, problem = _field(record, options.lang_field, "the language")
        if problem:
            return None, None, problem
    return lang, text, None


# A JSON escape of a UTF-16 surrogate (`\ud800`): paired ones spell one astral character, a lone
# one is no character at all and cannot be UTF-8 encoded, so it must never reach the counters.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _lone_surrogate(*values: str | None) -> str | None:
    """The problem with a value holding a lone surrogate, else None."""
    for value in values:
        if value is None or value.isascii():
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            return (f"an escaped lone surrogate (\\u{ord(value[err.start]):04x}) at character {err.start + 1}; "
                    "it is half of a UTF-16 pair, not text")
    return None


def _json_lines(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    """Records one line at a time, each at most MAX_DOCUMENT_BYTES (a record cannot be cut)."""
    number = 0
    while raw := handle.readline(MAX_DOCUMENT_BYTES + 1):
        number += 1
        if len(raw) > MAX_DOCUMENT_BYTES and not raw.endswith(b"\n"):
            bad(source, number, f"a record of over {human(MAX_DOCUMENT_BYTES)} (fertility holds at most "
                                "that much of one record: split the document)")
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass  # skipped: the rest of the line, read and dropped in bounded steps
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CorpusError(f"{source.name}:{number}: not valid UTF-8 ({err.reason})") from None
        if not line.strip():
            continue
        if line.lstrip().startswith("["):
            raise CorpusError(f"{source.name}:{number}: a JSON array; fertility reads JSON lines "
                              "(one object per line), e.g. convert with jq -c '.[]'")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            bad(source, number, f"not valid JSON ({err.msg})")
            continue
        except RecursionError:
            bad(source, number, "JSON nested too deeply to read (a record is an object holding strings)")
            continue
        lang, text, problem = _from_record(record, options)
        if not problem and _SURROGATE_ESCAPE.search(raw):
            problem = _lone_surrogate(text, lang)
        if problem:
            bad(source, number, problem)
            continue
        yield number, lang, text


def _columns(source: Source, names: list[str], options: ReadOptions) -> list[str]:
    wanted = [options.text_field] + ([options.lang_field] if options.lang_field else [])
    for name in wanted:
        if name not in names:
            raise CorpusError(f"{source.name}: no column {name!r}; columns: {', '.join(names[:12])}"
                              f" (choose with --text-field / --lang-field)")
    return wanted


def _batches_records(source: Source, batches, options: ReadOptions, bad: _Bad, counted: list[int]):
    """Records of Arrow record batches; `counted[0]` is the number of rows seen (checked
    against what the file declares). A cell over MAX_DOCUMENT_BYTES is a bad record, found
    from the column's offsets before it becomes a Python string."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = [options.text_field] + ([options.lang_field] if options.lang_field else [])
    number = 0
    for batch in batches:
        rows = batch.num_rows
        counted[0] += rows
        long = None
        for name in wanted:
            column = batch.column(name)
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) \
                    or pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
                too_long = pc.fill_null(pc.greater(pc.binary_length(column), MAX_DOCUMENT_BYTES), False)
                long = too_long if long is None else pc.or_(long, too_long)
        skip: set[int] = set()
        if long is not None and pc.any(long).as_py():
            skip = set(pc.indices_nonzero(long).to_pylist())
            batch = batch.filter(pc.invert(long))
        columns = {name: batch.column(name).to_pylist() for name in wanted}
        texts = iter(columns[options.text_field])
        langs = iter(columns[options.lang_field]) if options.lang_field else None
        for row in range(rows):
            number += 1
            if row in skip:
                bad(source, number, f"a cell of over {human(MAX_DOCUMENT_BYTES)} (fertility holds at most that "
                                    "much of one record: split the document)")
                continue
            text, lang = next(texts), next(langs) if langs is not None else None
            if not isinstance(text, str):
                bad(source, number, f"column {options.text_field!r} is {type(text).__name__}, not a string")
                continue
            if options.lang_field and not isinstance(lang, str):
                bad(source, number, f"column {options.lang_field!r} is {type(lang).__name__}, not a string")
                continue
            yield number, lang, text


def _parquet(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    """Row groups a batch at a time; the rows read must be the rows the footer declares."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(f"{source.name}: reading Parquet needs pyarrow: pip install pyarrow") from None
    counted = [0]
    try:
        parquet = pq.ParquetFile(handle, buffer_size=1 << 20, pre_buffer=False)
        wanted = _columns(source, parquet.schema_arrow.names, options)
        declared = parquet.metadata.num_rows
        check_pages(source.name, handle, parquet, wanted)
        yield from _batches_records(source, parquet.iter_batches(batch_size=1024, columns=wanted), options, bad,
                                    counted)
    except (OSError, ValueError) as err:  # pyarrow.ArrowInvalid is a ValueError
        raise CorpusError(f"{source.name}: not a readable Parquet file ({err})") from None
    if counted[0] != declared:
        raise CorpusError(f"{source.name}: {counted[0]:,} rows read, but its footer declares {declared:,}; "
                          "the file is damaged")


class _Tap(io.RawIOBase):
    """A stream that remembers what its reader last read and whether it met the end."""

    def __init__(self, handle: IO[bytes]):
        self.handle, self.last, self.at_end, self.position = handle, b"", False, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # not RawIOBase's, which zero-fills `size` bytes first
        data = self.handle.read(size)
        if not data and size:
            self.at_end = True
        self.last = (self.last + data)[-8:]
        self.position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


ARROW_END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _arrow(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    """An Arrow IPC stream, as `datasets.save_to_disk` writes (`data-00000-of-00001.arrow`).
    A stream has no row count to check against; it ends with an end-of-stream marker, which
    a stream cut between two record batches lacks (Arrow's reader takes that as the end)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise CorpusError(f"{source.name}: reading Arrow needs pyarrow: pip install pyarrow") from None
    tap = _Tap(handle)
    counted = [0]
    try:
        reader = pa.ipc.open_stream(tap)
        _columns(source, reader.schema.names, options)
        yield from _batches_records(source, reader, options, bad, counted)
    except (OSError, ValueError) as err:
        raise CorpusError(f"{source.name}: not a readable Arrow stream ({err})") from None
    except MemoryError:
        raise CorpusError(f"{source.name}: not a readable Arrow stream (a record batch at byte {tap.position:,} "
                          "declares more bytes than memory can hold)") from None
    if tap.at_end or tap.last != ARROW_END_OF_STREAM:
        raise CorpusError(f"{source.name}: truncated Arrow stream: it ends at byte {tap.position:,}, after "
                          f"{counted[0]:,} rows, without its end-of-stream marker")
    if handle.read(1):
        raise CorpusError(f"{source.name}: data after the Arrow end-of-stream marker at byte {tap.position:,}")


def records(source: Source, handle: IO[bytes], options: ReadOptions,
            bad: _Bad) -> Iterator[tuple[int, str | None, str]]:
    """(record number, language or None, text) of a JSON-lines, Parquet or Arrow file."""
    fmt = split_suffix(PurePosixPath(source.name).name)[1]
    if fmt == ".parquet":
        return _parquet(source, handle, options, bad)
    if fmt == ".arrow":
        return _arrow(source, handle, options, bad)
    return _json_lines(source, handle, options, bad)


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
           "open_source", "records", "split_suffix", "url_sources"]
