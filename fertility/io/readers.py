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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import IO, Any

from fertility.errors import CorpusError, UsageError

COMPRESSIONS = (".gz", ".zst", ".bz2", ".xz")
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


def _decompressed(raw: IO[bytes], compression: str) -> Any:
    if compression == ".gz":
        import gzip
        return gzip.GzipFile(fileobj=raw)
    if compression == ".bz2":
        import bz2
        return bz2.BZ2File(raw)
    if compression == ".xz":
        import lzma
        return lzma.LZMAFile(raw)
    if compression == ".zst":
        try:
            import zstandard
        except ImportError:
            raise CorpusError("reading .zst needs zstandard: pip install zstandard") from None
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))
    return raw


def open_source(source: Source) -> IO[bytes]:
    """The file's bytes, decompressed as its suffix says."""
    try:
        raw = source.open()
    except OSError as err:
        raise CorpusError(f"{source.name}: cannot read ({err.strerror or err})") from None
    return _decompressed(raw, split_suffix(PurePosixPath(source.name).name)[2])


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


def _json_lines(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    for number, raw in enumerate(handle, start=1):
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
        lang, text, problem = _from_record(record, options)
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


def _batches_records(source: Source, batches, options: ReadOptions, bad: _Bad):
    number = 0
    for batch in batches:
        columns = {name: batch.column(name).to_pylist() for name in batch.schema.names}
        texts = columns[options.text_field]
        langs = columns[options.lang_field] if options.lang_field else [None] * len(texts)
        for text, lang in zip(texts, langs):
            number += 1
            if not isinstance(text, str):
                bad(source, number, f"column {options.text_field!r} is {type(text).__name__}, not a string")
                continue
            if options.lang_field and not isinstance(lang, str):
                bad(source, number, f"column {options.lang_field!r} is {type(lang).__name__}, not a string")
                continue
            yield number, lang, text


def _parquet(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(f"{source.name}: reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        parquet = pq.ParquetFile(handle)
        wanted = _columns(source, parquet.schema_arrow.names, options)
        yield from _batches_records(source, parquet.iter_batches(batch_size=1024, columns=wanted), options, bad)
    except (OSError, ValueError) as err:  # pyarrow.ArrowInvalid is a ValueError
        raise CorpusError(f"{source.name}: not a readable Parquet file ({err})") from None


def _arrow(source: Source, handle: IO[bytes], options: ReadOptions, bad: _Bad):
    """An Arrow IPC stream, as `datasets.save_to_disk` writes (`data-00000-of-00001.arrow`)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise CorpusError(f"{source.name}: reading Arrow needs pyarrow: pip install pyarrow") from None
    try:
        reader = pa.ipc.open_stream(handle)
        _columns(source, reader.schema.names, options)
        yield from _batches_records(source, reader, options, bad)
    except (OSError, ValueError) as err:
        raise CorpusError(f"{source.name}: not a readable Arrow stream ({err})") from None


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
