"""Record files: JSON lines, Parquet and Arrow, one record at a time (Parquet and Arrow by
record batches), each read to a verified end: the row counts its metadata declares, the
Arrow end-of-stream marker. A bad record is refused with its number, or skipped and counted
with --skip-bad-records."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import PurePosixPath
from typing import IO, Any

from fertility.errors import CorpusError
from fertility.limits import MAX_DOCUMENT_BYTES, human

from .parquet_pages import check_pages
from .readers import ReadOptions, Source, split_suffix


class BadRecords:
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
        kind = "int" if isinstance(value, Decimal) else type(value).__name__  # a long integer: see _json_record
        return None, f"field {name!r} ({what}) is {kind}, not a string"
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


def _json_record(line: str) -> Any:
    """One JSON line parsed. Python refuses to make an int of over 4,300 digits (a guard against
    quadratic parsing) with a plain ValueError; such a number is still valid JSON, and often in a
    field fertility never reads, so it becomes a Decimal (parsed in linear time) instead."""
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        raise
    except ValueError:
        return json.loads(line, parse_int=Decimal)


def _json_lines(source: Source, handle: IO[bytes], options: ReadOptions, bad: BadRecords):
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
            record = _json_record(line)
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


def _batches_records(source: Source, batches, options: ReadOptions, bad: BadRecords, counted: list[int]):
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


def _parquet(source: Source, handle: IO[bytes], options: ReadOptions, bad: BadRecords):
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
        self.first = b""  # the first bytes: an Arrow IPC file (not a stream) starts with ARROW1

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # not RawIOBase's, which zero-fills `size` bytes first
        data = self.handle.read(size)
        if not data and size:
            self.at_end = True
        self.last = (self.last + data)[-8:]
        if len(self.first) < 8:
            self.first = (self.first + data)[:8]
        self.position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


ARROW_END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _arrow(source: Source, handle: IO[bytes], options: ReadOptions, bad: BadRecords):
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
        if tap.first.startswith(b"ARROW1"):  # its footer is at the end: read as a stream it made no sense
            raise CorpusError(f"{source.name}: an Arrow IPC file (the random-access format pyarrow.feather and "
                              "ipc.new_file write), not an Arrow stream; fertility reads streams (ipc.new_stream, "
                              "datasets.save_to_disk) and Parquet: write it as one of those") from None
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
            bad: BadRecords) -> Iterator[tuple[int, str | None, str]]:
    """(record number, language or None, text) of a JSON-lines, Parquet or Arrow file."""
    fmt = split_suffix(PurePosixPath(source.name).name)[1]
    if fmt == ".parquet":
        return _parquet(source, handle, options, bad)
    if fmt == ".arrow":
        return _arrow(source, handle, options, bad)
    return _json_lines(source, handle, options, bad)
