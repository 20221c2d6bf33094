"""Reading corpora into documents: files, folders of `{lang}.txt`, FLORES-style split trees.

A corpus is read strictly as UTF-8 (a wrong byte changes the very counts we measure, so we
fail with file and line instead of replacing it). Two ways to cut documents:
`line` (one document per non-empty line, the default) and `file` (one document per file,
its non-empty lines joined by a single space, as Petrov et al. 2023 counted FLORES).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import regex

from fertility.errors import CorpusError, FertilityWarning
from fertility.limits import MAX_DOCUMENT_BYTES, human
from fertility.text.units import CODE, detect_script, is_known_script

from .iso639 import CODES
from .parallel import FileLayout, LayoutRecorder
from .readers import (
    LAST_SEGMENT,
    RECORD_FORMATS,
    WHOLE,
    ReadOnce,
    ReadOptions,
    Source,
    is_corpus_file,
    is_url,
    line_blocks,
    local_source,
    open_source,
    split_suffix,
    stdin_source,
    url_sources,
)
from .records import BadRecords, records

if TYPE_CHECKING:
    from .catalog import NamedCorpus
    from .sampling import Sample

DOC_MODES = ("line", "file")
# The all-languages row of every table and audit JSON (results.ALL): a language of that name
# would give a second one, which `report` and `compare` rightly refuse. Lower-case `all` is a
# language (ISO 639-3: Allar, of Kerala), so only this exact name is reserved.
RESERVED_LANGUAGE = "ALL"
_LANG_KEY = regex.compile(r"^(?P<lang>[a-z]{2,3})(?:[_-](?P<script>[A-Z][a-z]{3}))?$")
_CODE_KEY = regex.compile(r"^[a-z][a-z0-9]*_Code$")  # programming languages: python_Code, cpp_Code


@dataclass(frozen=True)
class Document:
    lang: str
    text: str
    source: str
    line: int  # first line of the document in its file (1-based)


@dataclass(frozen=True)
class Batch:
    """Consecutive documents of one language, read together: a block of a text file's lines,
    handed on without a Document object per line. `n_bytes` is what was read for them
    (newlines and blank lines included), for sizing chunks. A line too long to hold (or a
    whole file with --per-file) comes as pieces, one batch each, all but the first `continues`."""

    lang: str
    texts: list[str]
    n_bytes: int
    continues: bool = False  # texts[0] is a later piece of the previous batch's last document


@dataclass(frozen=True)
class Corpus:
    """Documents in reading order, each language's script, and what identifies the input."""

    documents: tuple[Document, ...]
    scripts: dict[str, str]
    files: tuple[str, ...]
    sha256: str
    doc_mode: str
    layouts: tuple[FileLayout, ...] = ()  # per file, what shows whether the corpus is parallel
    n_docs: dict[str, int] = dataclasses.field(default_factory=dict)  # documents read per language



def _key(name: str) -> tuple[str, str | None] | None:
    """(key, declared script) if `name` is a language key (`ben_Beng`, `bn`), else None.

    A bare name must be an ISO 639 code (`foo` and `new` look alike, only one is a language);
    with a script (`xyz_Latn`) the name plainly means a language, whatever the code.
    """
    if _CODE_KEY.match(name):
        return name, CODE
    match = _LANG_KEY.match(name)
    if not match:
        return None
    script = match["script"]
    if script and not is_known_script(script):
        return None
    if not script and match["lang"] not in CODES:
        return None
    return name, script


def check_language_name(lang: str, where: str) -> None:
    """Every language name, however it was given (a file or folder name, --lang, a record's
    field), is checked here once, when it is first seen."""
    if lang == RESERVED_LANGUAGE:
        raise CorpusError(f"{where}: {RESERVED_LANGUAGE!r} cannot name a language: it is the name of the "
                          "all-languages row; name the language by its code (e.g. eng_Latn)")
    if not lang.strip() or any(ord(c) < 32 or ord(c) == 127 for c in lang):
        raise CorpusError(f"{where}: {lang!r} cannot name a language (empty, or with a control character)")


def check_corpus_paths(paths: Sequence[object], options: ReadOptions) -> None:
    """Standard input can be read once, only when it is open, and --lang names its language."""
    stdin = [p for p in paths if p == "-"]
    if len(stdin) > 1:
        raise CorpusError("-: standard input is given twice as a corpus; it can be read once")
    if options.stdin_lang is not None and not stdin:
        raise CorpusError(f"--lang {options.stdin_lang}: names the language of standard input, but no corpus is "
                          "`-`; a file's language comes from its name (ben_Beng.txt) or its folder")
    if stdin:
        import sys
        if sys.stdin is None or getattr(sys.stdin, "closed", False):
            raise CorpusError("-: standard input is closed, so there is nothing to read; pipe the corpus in "
                              "(zcat x.gz | fertility audit - --lang ben_Beng) or give a file")
        if options.stdin_lang is not None:
            check_language_name(options.stdin_lang, "--lang")


def _remote(url: str, call):
    """An fsspec backend's failure, whatever its class (huggingface_hub's httpx raises a bare
    Exception without a network), as one line naming the URL."""
    from fertility.errors import FertilityError
    try:
        return call()
    except FertilityError:
        raise
    except Exception as err:  # noqa: BLE001 - a remote file system's error is any class
        reason = (str(err).strip().splitlines() or [""])[0][:200]
        raise CorpusError(f"{url}: cannot reach it ({type(err).__name__}: {reason}); remote corpora need "
                          "the network (or give a local copy)") from None


def language_of(path: PurePath, root: PurePath | None = None) -> tuple[str, str | None]:
    """Language key and declared script: `ben_Beng.txt` -> (ben_Beng, Beng).

    A file whose name is no language key takes the nearest folder below `root` that is one
    (`mono/ben/news/x.txt` -> ben); failing that it keeps its stem, with a warning, since a
    language called `notes` is most likely a naming slip. Undeclared scripts are detected from
    the text later.
    """
    stem, fmt, _ = split_suffix(path.name)
    stem = stem if fmt else path.stem
    found = _key(stem)
    if found:
        return found
    if root is not None and root != path:
        for folder in path.parents:
            found = _key(folder.name.rpartition("=")[2])  # Hive partitions: lang=ben_Beng/
            if found:
                return found
            if folder == root:
                break
    warnings.warn(f"{path}: {stem!r} is not a language code (like ben_Beng or bn), so its text is "
                  f"counted as language {stem!r}; to name the language, rename the file (e.g. "
                  "ben_Beng.txt) or put it in a folder named after the language (e.g. ben_Beng/)",
                  FertilityWarning, stacklevel=2)
    return stem, None


def _is_text(path: Path) -> bool:
    """A regular corpus file (`.txt`, `.jsonl.gz`, `.parquet`...), whatever the case of its
    suffix (`ben_Beng.TXT`)."""
    return is_corpus_file(path.name) and path.is_file()


def _text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if _is_text(p))


def find_files(path: Path) -> list[Path]:
    """The text files a corpus path stands for: itself, its `*.txt`, or those below it
    (split folders such as dev/ and devtest/, or language folders such as ben/news/)."""
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    if path.is_file():
        return [path]
    if not path.is_dir():  # a pipe, /dev/stdin, <(zcat x.gz): read once, as one file
        if not os.access(path, os.R_OK):
            raise CorpusError(f"{path}: cannot read (permission denied)")
        _refuse_device(path)
        return [path]
    try:
        files = _text_files(path)
        if files:
            return files
        files = sorted(p for p in path.rglob("*") if _is_text(p)
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
    except OSError as err:
        raise CorpusError(f"{err.filename or path}: cannot read ({err.strerror})") from None
    if not files:
        raise CorpusError(f"{path}: directory holds no .txt files (expected {{lang}}.txt, "
                          f"e.g. ben_Beng.txt, or split folders such as dev/ and devtest/; "
                          f"or .jsonl, .parquet, .arrow, plain or compressed)")
    return files


def _refuse_device(path: Path) -> None:
    """A device other than a terminal is no corpus: /dev/zero and /dev/urandom never end and
    hold no text (a terminal, as /dev/stdin, is read like a pipe)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        try:
            with path.open("rb") as handle:
                if handle.isatty():
                    return
        except OSError:
            pass
        raise CorpusError(f"{path}: a device, not a corpus file (fertility reads files, folders, pipes and "
                          "standard input)")


def decode_strict(path: Path | str, data: bytes, *, first_line: int = 1, first_column: int = 1) -> str:
    """UTF-8 without replacement; the error names the line and column of the bad byte
    (`first_line`: the number of the first line in `data`; `first_column`: the column `data`
    starts at, when it continues a line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + first_line
        column = len(data[line_start:err.start].decode("utf-8", errors="replace")) + \
            (first_column if line_start == 0 else 1)
        bad = data[err.start:err.end].hex(" ")
        raise CorpusError(f"{path}:{line}:{column}: not valid UTF-8 (byte {bad}: {err.reason}); "
                          "convert the file to UTF-8, e.g. with iconv") from None
    return text.removeprefix("\ufeff")


def read_text_file(path: Path) -> str:
    """A whole file as strict UTF-8 (for `show --file`), with the same errors as corpora; at
    most MAX_DOCUMENT_BYTES, read in one go even from a pipe (`show` holds the text whole)."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror})") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise CorpusError(f"{path}: over {human(MAX_DOCUMENT_BYTES)}; `show` displays a text whole "
                          "(audit a corpus of that size instead)")
    return decode_strict(Path(path), data)


def _lines(text: str) -> list[tuple[int, str]]:
    """Non-empty lines with their 1-based numbers; only LF (and CRLF) end a line."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            out.append((number, line))
    return out


def read_corpus(paths: list[Path], *, doc_mode: str = "line") -> Corpus:
    """Read every corpus path into documents, grouped by the language named by each file
    (the whole corpus in memory: for training and comparisons; audits stream it)."""
    stream = CorpusStream([Path(p) for p in paths], doc_mode=doc_mode)
    documents = tuple(stream.documents())
    return dataclasses.replace(stream.corpus(), documents=documents)


def _warn_again(caught: list[warnings.WarningMessage]) -> bool:
    """Repeat warnings held back (an empty file's only message is that it is empty)."""
    for message in caught:
        warnings.warn(message.message, message.category, stacklevel=3)
    return True


def _root(path: Path | str, sample: Sample | None) -> Path | str | NamedCorpus:
    """A corpus argument as read: a URL or `-` as given, a named corpus (`flores`, fetched now)
    unless a path by that name exists, else a path."""
    from .catalog import named_corpus

    if isinstance(path, str) and (is_url(path) or path == "-"):
        return path
    return named_corpus(path, sample=sample) or Path(path)


class CorpusStream:
    """Read a corpus one document at a time, without holding it: `documents()` yields them in
    the order `read_corpus` gives; afterwards `corpus()` describes what was read (same hash,
    files and scripts as `read_corpus`, no documents kept).

    The corpus hash is over the documents' language and text in reading order (and the
    document mode), not over the files' bytes: the same text as .txt, .jsonl.gz or Parquet
    has the same hash."""

    SCRIPT_SAMPLE_CHARS = 1 << 20  # script detection looks at 200 documents, at most this much
    BLOCK_BYTES = 1 << 18  # text files are read, decoded and split a block at a time

    def __init__(self, paths: list[Path | str], *, doc_mode: str = "line", options: ReadOptions | None = None,
                 sample: Sample | None = None):
        """`sample`: how much a named corpus read by row groups (FineWeb-2) must fetch."""
        if doc_mode not in DOC_MODES:
            raise CorpusError(f"unknown document mode {doc_mode!r}; choose one of {', '.join(DOC_MODES)}")
        self.paths = [_root(p, sample) for p in paths]
        self.doc_mode, self.options = doc_mode, options or ReadOptions()
        check_corpus_paths(self.paths, self.options)
        self.files: list[str] = []
        self.n_documents = 0
        self.skipped_records = 0
        self._digest = hashlib.sha256()
        self._declared: dict[str, str | None] = {}
        self._samples: dict[str, list[str]] = {}
        self._sampled_chars: dict[str, int] = {}
        self._once = ReadOnce()
        self._open = False  # a document's text is in the hash, its closing NUL not yet
        self._doc_counts: dict[str, int] = {}
        self._layouts: list[FileLayout] = []
        self._layout: LayoutRecorder | None = None  # the file being read

    def sources(self, root: Path | str | NamedCorpus) -> list[Source]:
        if root == "-":
            return [stdin_source(self.options)]
        if isinstance(root, str):
            found = _remote(root, lambda: url_sources(root))
            return [dataclasses.replace(source, open=lambda opener=source.open, name=source.name:
                                        _remote(name, opener)) for source in found]
        if not isinstance(root, Path):  # a named corpus (flores, code:python ...), already fetched
            return root.sources()
        return [local_source(file, root) for file in find_files(root)]

    def named_corpora(self) -> list[dict]:
        """What the named corpora among the paths are (dataset, commit, license), for the signature."""
        return [root.describe() for root in self.paths if not isinstance(root, (Path, str))]

    def total_bytes(self) -> int | None:
        """Size of every corpus file, for progress; None when one is a pipe, compressed or remote."""
        total = 0
        for root in self.paths:
            for source in self.sources(root):
                if source.size is None:
                    return None
                total += source.size
        return total

    def _blocks(self, source: Source):
        """(number of the first line, lines, bytes read, kind) per block of about BLOCK_BYTES of
        whole lines (kind WHOLE, blank lines kept: one decode and one split per block), or per
        segment of a line longer than PIECE_BYTES (kind SEGMENT or LAST_SEGMENT, one text: the
        segment, never held whole). The file's SHA-256 is complete at the end."""
        from fertility.text import pieces

        file_digest = hashlib.sha256()
        handle = open_source(source)
        first, column = 1, 1  # the line being read, and the column a segment of it starts at
        held_cr = ""  # a CR ending a segment: the line's end if a newline follows
        segment_chars = 0  # characters of the long line read so far in segments
        with handle:
            try:
                for data, kind in line_blocks(handle, block_bytes=self.BLOCK_BYTES, line_bytes=pieces.PIECE_BYTES):
                    file_digest.update(data)
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        decode_strict(source.name, data, first_line=first, first_column=column)  # names line, column
                        raise
                    if first == 1 and column == 1:
                        text = text.removeprefix("\ufeff")
                    if kind != WHOLE:
                        column += len(text)
                        text, held_cr = held_cr + text, ""
                        if kind == LAST_SEGMENT:
                            text = text.removesuffix("\n").removesuffix("\r")
                        elif text.endswith("\r"):
                            text, held_cr = text[:-1], "\r"
                        segment_chars += len(text)
                        yield first, [text], len(data), kind
                        if kind == LAST_SEGMENT:
                            if self._layout is not None:  # a long line is one non-empty line
                                self._layout.long_line(first, segment_chars)
                            first, column, segment_chars = first + 1, 1, 0
                        continue
                    lines = text.split("\n")
                    if text.endswith("\n"):
                        lines.pop()
                    if "\r" in text:
                        lines = [line.removesuffix("\r") for line in lines]
                    if self._layout is not None:
                        self._layout.block(first, lines, [line for line in lines if line.strip()])
                    yield first, lines, len(data), WHOLE
                    first += len(lines)
            except (OSError, EOFError) as err:
                raise CorpusError(f"{source.name}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        self._file_sha256 = file_digest.hexdigest()

    def _text_runs(self, source: Source, lang: str, *, whole_lines: bool):
        """(lang, line numbers, texts, bytes read, continues) of a text file: blocks of its
        non-blank lines (one text per line with `whole_lines`, else a block at a time); a line
        over PIECE_BYTES as pieces, one run each, all but the first `continues` (such a line
        is a document even if it turns out to be only whitespace); with --per-file the whole
        file, its non-blank lines joined by a space, as the pieces of one document."""
        from fertility.text import pieces

        per_file = self.doc_mode == "file"
        cutter = pieces.PieceCutter(pieces.PIECE_BYTES)
        started = False  # a piece of the current document was handed on
        fed = False  # per file: some text of the document is in (the next line needs a space)
        in_long_line = False
        doc_line = 0
        for first, lines, size, kind in self._blocks(source):
            if kind != WHOLE:  # a segment of a long line
                text = lines[0]
                if per_file:
                    text = " " + text if fed and not in_long_line else text
                    doc_line = doc_line or first
                    fed = True
                for piece in cutter.feed(text, last=kind == LAST_SEGMENT and not per_file):
                    yield lang, [doc_line or first], [piece], len(piece.encode("utf-8")), started
                    started = True
                in_long_line = kind != LAST_SEGMENT
                if kind == LAST_SEGMENT and not per_file:
                    started = False
                continue
            kept = [(n, line) for n, line in enumerate(lines, start=first) if line.strip()]
            if per_file:
                for number, line in kept:
                    doc_line = doc_line or number
                    for piece in cutter.feed(" " + line if fed else line, last=False):
                        yield lang, [doc_line], [piece], len(piece.encode("utf-8")), started
                        started = True
                    fed = True
            elif whole_lines:
                for number, line in kept:
                    yield lang, [number], [line], None, False
            elif kept:
                yield lang, None, [line for _, line in kept], size, False
        if per_file:
            for piece in cutter.feed("", last=True):
                yield lang, [doc_line], [piece], len(piece.encode("utf-8")), started
                started = True

    def _records(self, source: Source, lang: str):
        """(lang, number, text) of a record file's non-empty records."""
        options = source.options or self.options
        bad = BadRecords(options)
        file_digest = hashlib.sha256()
        handle = open_source(source)
        with handle:
            try:
                for number, record_lang, text in records(source, handle, options, bad):
                    file_digest.update(f"{record_lang}\0{text}\0".encode())
                    if text.strip():
                        if self._layout is not None:
                            self._layout.record(number, text, record_lang or lang)
                        yield record_lang or lang, number, text
                    elif self._layout is not None:
                        self._layout.skipped(number)
            except (OSError, EOFError) as err:
                raise CorpusError(f"{source.name}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        self.skipped_records += bad.skipped
        self._file_sha256 = file_digest.hexdigest()

    def _record_runs(self, source: Source, lang: str, *, group: bool):
        """(lang, record numbers, texts, None, False): one record at a time, or (`group`)
        consecutive records of one language up to BLOCK_BYTES."""
        numbers: list[int] = []
        texts: list[str] = []
        size = 0
        for doc_lang, number, text in self._records(source, lang):
            if texts and (not group or doc_lang != lang or size >= self.BLOCK_BYTES):
                yield lang, numbers, texts, None, False
                numbers, texts, size = [], [], 0
            lang = doc_lang
            numbers.append(number)
            texts.append(text)
            size += len(text)
        if texts:
            yield lang, numbers, texts, None, False

    def _runs(self, *, blocks: bool):
        """(lang, line numbers or None, texts, file name, bytes read or None, continues) in
        reading order, with the corpus's bookkeeping (hash, scripts, files read once) done per run."""
        for root in self.paths:
            for source in self.sources(root):
                if isinstance(source.path, Path):
                    self._once.path(source.path)
                with warnings.catch_warnings(record=True) as naming:  # said once the file has text
                    warnings.simplefilter("always")
                    lang, script = language_of(source.path, source.root)
                plain = split_suffix(PurePath(source.name).name)[1] not in RECORD_FORMATS
                self._layout = LayoutRecorder(source.name, lang)
                runs = self._text_runs(source, lang, whole_lines=not blocks) if plain \
                    else self._record_runs(source, lang, group=blocks)
                found = False
                for doc_lang, numbers, texts, size, continues in runs:
                    if not texts:
                        continue
                    if doc_lang not in self._declared:
                        check_language_name(doc_lang, source.name if numbers is None or doc_lang == lang
                                            else f"{source.name}: record {numbers[0]}")
                        key = _key(doc_lang)
                        self._declared[doc_lang] = script if doc_lang == lang else (key[1] if key else None)
                    if not found:
                        found = True
                        if doc_lang == lang or not self.options.lang_field:
                            _warn_again(naming)
                    self._register(doc_lang, texts, continues)
                    yield doc_lang, numbers, texts, source.name, size, continues
                if not found:
                    raise CorpusError(f"{source.name}: empty corpus file (no non-empty lines or records)")
                if source.name != "-":
                    self._once.content(Path(source.name), self._file_sha256)
                self.files.append(source.name)
                self._layouts.append(self._layout.layout())
                self._layout = None

    def documents(self):
        """Whole documents: a document read in pieces is joined again, up to MAX_DOCUMENT_BYTES
        (commands that hold documents whole: compare, retrain, report, sampling, shards)."""
        held: Document | None = None
        parts: list[str] = []
        size = 0
        for lang, numbers, texts, name, _, continues in self._runs(blocks=False):
            for k, (number, text) in enumerate(zip(numbers, texts)):
                if k == 0 and continues and held is not None:
                    size = (size or len(parts[0].encode("utf-8", errors="surrogatepass"))) + \
                        len(text.encode("utf-8", errors="surrogatepass"))
                    if size > MAX_DOCUMENT_BYTES:
                        raise CorpusError(f"{name}:{held.line}: a document of over {human(MAX_DOCUMENT_BYTES)}; this "
                                          "command holds each document whole (a plain audit reads it in pieces)")
                    parts.append(text)
                    continue
                if held is not None:
                    yield dataclasses.replace(held, text="".join(parts)) if len(parts) > 1 else held
                held, parts, size = Document(lang, text, name, number), [text], 0
        if held is not None:
            yield dataclasses.replace(held, text="".join(parts)) if len(parts) > 1 else held

    def batches(self):
        """The same documents as `documents()`, a Batch at a time (the audit's fast path); a
        long document comes as pieces."""
        for lang, _, texts, _, size, continues in self._runs(blocks=True):
            yield Batch(lang, texts, size if size is not None else
                        sum(len(text.encode("utf-8", errors="surrogatepass")) for text in texts), continues)

    def _register(self, lang: str, texts: list[str], continues: bool = False) -> None:
        """The corpus hash goes over each document's "lang\0text\0"; a later piece extends the text."""
        parts = [texts[0]] if continues else []
        starting = texts[1:] if continues else texts
        if starting:
            self.n_documents += len(starting)
            self._doc_counts[lang] = self._doc_counts.get(lang, 0) + len(starting)
            prefix = f"{lang}\0"
            parts.append(("\0" if self._open else "") + prefix + f"\0{prefix}".join(starting))
            self._open = True
        self._digest.update("".join(parts).encode())
        sample = self._samples.setdefault(lang, [])
        for text in texts:
            if len(sample) >= 200 or self._sampled_chars.get(lang, 0) >= self.SCRIPT_SAMPLE_CHARS:
                break
            sample.append(text[:self.SCRIPT_SAMPLE_CHARS])
            self._sampled_chars[lang] = self._sampled_chars.get(lang, 0) + len(sample[-1])

    def corpus(self) -> Corpus:
        """What was read, once `documents()` is exhausted (its `documents` tuple is empty)."""
        if not self.n_documents:
            raise CorpusError(f"{', '.join(map(str, self.paths))}: no documents found")
        digest = self._digest.copy()
        digest.update(("\0" if self._open else "").encode() + self.doc_mode.encode())
        scripts = {lang: script or detect_script(" ".join(self._samples.get(lang, [])))
                   for lang, script in self._declared.items()}
        return Corpus((), scripts, tuple(self.files), digest.hexdigest(), self.doc_mode, tuple(self._layouts),
                      dict(self._doc_counts))
