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
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePath

import regex

from fertility.errors import CorpusError, FertilityWarning
from fertility.text.units import detect_script, is_known_script

from .iso639 import CODES
from .parallel import FileLayout, LayoutRecorder
from .readers import (
    RECORD_FORMATS,
    ReadOnce,
    ReadOptions,
    Source,
    is_corpus_file,
    is_url,
    local_source,
    open_source,
    records,
    split_suffix,
    stdin_source,
    url_sources,
)

DOC_MODES = ("line", "file")
_LANG_KEY = regex.compile(r"^(?P<lang>[a-z]{2,3})(?:[_-](?P<script>[A-Z][a-z]{3}))?$")


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
    (newlines and blank lines included), for sizing chunks."""

    lang: str
    texts: list[str]
    n_bytes: int


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
    match = _LANG_KEY.match(name)
    if not match:
        return None
    script = match["script"]
    if script and not is_known_script(script):
        return None
    if not script and match["lang"] not in CODES:
        return None
    return name, script


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


def decode_strict(path: Path | str, data: bytes, *, first_line: int = 1) -> str:
    """UTF-8 without replacement; the error names the line and column of the bad byte
    (`first_line`: the number of the first line in `data`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + first_line
        column = len(data[line_start:err.start].decode("utf-8", errors="replace")) + 1
        bad = data[err.start:err.end].hex(" ")
        raise CorpusError(f"{path}:{line}:{column}: not valid UTF-8 (byte {bad}: {err.reason}); "
                          "convert the file to UTF-8, e.g. with iconv") from None
    return text.removeprefix("\ufeff")


def read_text_file(path: Path) -> str:
    """A whole file as strict UTF-8 (for `show --file`), with the same errors as corpora."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror})") from None
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


class CorpusStream:
    """Read a corpus one document at a time, without holding it: `documents()` yields them in
    the order `read_corpus` gives; afterwards `corpus()` describes what was read (same hash,
    files and scripts as `read_corpus`, no documents kept).

    The corpus hash is over the documents' language and text in reading order (and the
    document mode), not over the files' bytes: the same text as .txt, .jsonl.gz or Parquet
    has the same hash."""

    SCRIPT_SAMPLE_CHARS = 1 << 20  # script detection looks at 200 documents, at most this much
    BLOCK_BYTES = 1 << 18  # text files are read, decoded and split a block at a time

    def __init__(self, paths: list[Path | str], *, doc_mode: str = "line", options: ReadOptions | None = None):
        if doc_mode not in DOC_MODES:
            raise CorpusError(f"unknown document mode {doc_mode!r}; choose one of {', '.join(DOC_MODES)}")
        self.paths = [p if isinstance(p, str) and (is_url(p) or p == "-") else Path(p) for p in paths]
        self.doc_mode, self.options = doc_mode, options or ReadOptions()
        self.files: list[str] = []
        self.n_documents = 0
        self.skipped_records = 0
        self._digest = hashlib.sha256()
        self._declared: dict[str, str | None] = {}
        self._doc_counts: dict[str, int] = {}
        self._layouts: list[FileLayout] = []
        self._layout: LayoutRecorder | None = None  # the file being read
        self._samples: dict[str, list[str]] = {}
        self._sampled_chars: dict[str, int] = {}
        self._once = ReadOnce()

    def sources(self, root: Path | str) -> list[Source]:
        if root == "-":
            return [stdin_source(self.options)]
        if isinstance(root, str):
            return url_sources(root)
        return [local_source(file, root) for file in find_files(root)]

    def total_bytes(self) -> int | None:
        """Size of every corpus file, for progress; None when one is a pipe, compressed or remote."""
        total = 0
        for root in self.paths:
            for source in self.sources(root):
                if source.size is None:
                    return None
                total += source.size
        return total

    def _lines(self, source: Source):
        """(number, line) of the non-empty lines; the file's SHA-256 is complete at the end."""
        for first, lines, _ in self._blocks(source, numbered=True):
            for number, line in enumerate(lines, start=first):
                if line.strip():
                    yield number, line

    def _blocks(self, source: Source, *, numbered: bool = False):
        """(number of the first line, lines, bytes read) per block of about BLOCK_BYTES, cut after a line
        end: one decode and one split per block. Unless `numbered`, blank lines are dropped
        (then the number is not that of the first kept line)."""
        file_digest = hashlib.sha256()
        handle = open_source(source)
        first = 1
        with handle:
            try:
                while block := handle.read(self.BLOCK_BYTES):
                    if not block.endswith(b"\n"):
                        block += handle.readline()
                    file_digest.update(block)
                    try:
                        text = block.decode("utf-8")
                    except UnicodeDecodeError:
                        decode_strict(source.name, block, first_line=first)  # names line and column
                        raise
                    if first == 1:
                        text = text.removeprefix("\ufeff")
                    lines = text.split("\n")
                    if text.endswith("\n"):
                        lines.pop()
                    if "\r" in text:
                        lines = [line.removesuffix("\r") for line in lines]
                    kept = [line for line in lines if line.strip()]
                    if self._layout is not None:
                        self._layout.block(first, lines, kept)
                    yield first, lines if numbered else kept, len(block)
                    first += len(lines) if numbered else block.count(b"\n")
            except (OSError, EOFError) as err:
                raise CorpusError(f"{source.name}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        self._file_sha256 = file_digest.hexdigest()

    def _records(self, source: Source, lang: str):
        """(lang, number, text) of a record file's non-empty records."""
        from .readers import _Bad
        bad = _Bad(self.options)
        file_digest = hashlib.sha256()
        handle = open_source(source)
        with handle:
            try:
                for number, record_lang, text in records(source, handle, self.options, bad):
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

    def _items(self, source: Source, lang: str):
        if split_suffix(PurePath(source.name).name)[1] in RECORD_FORMATS:
            yield from self._records(source, lang)
        elif self.doc_mode == "file":
            lines = list(self._lines(source))
            if lines:
                yield lang, lines[0][0], " ".join(line for _, line in lines)
        else:
            for number, line in self._lines(source):
                yield lang, number, line

    def _grouped(self, source: Source, lang: str, *, group: bool):
        """(lang, line numbers, texts, None): one document at a time, or (`group`) consecutive
        documents of one language up to BLOCK_BYTES."""
        numbers: list[int] = []
        texts: list[str] = []
        size = 0
        for doc_lang, number, text in self._items(source, lang):
            if texts and (not group or doc_lang != lang or size >= self.BLOCK_BYTES):
                yield lang, numbers, texts, None
                numbers, texts, size = [], [], 0
            lang = doc_lang
            numbers.append(number)
            texts.append(text)
            size += len(text)
        if texts:
            yield lang, numbers, texts, None

    def _runs(self, *, blocks: bool):
        """(lang, line numbers or None, texts, file name, bytes read or None) in reading order,
        with the corpus's bookkeeping (hash, scripts, files read once) done per run."""
        for root in self.paths:
            for source in self.sources(root):
                if isinstance(source.path, Path):
                    self._once.path(source.path)
                with warnings.catch_warnings(record=True) as naming:  # said once the file has text
                    warnings.simplefilter("always")
                    lang, script = language_of(source.path, source.root)
                plain = split_suffix(PurePath(source.name).name)[1] not in RECORD_FORMATS
                self._layout = LayoutRecorder(source.name, lang)
                runs = ((lang, None, lines, size) for _, lines, size in self._blocks(source)) \
                    if blocks and plain and self.doc_mode == "line" else self._grouped(source, lang, group=blocks)
                found = False
                for doc_lang, numbers, texts, size in runs:
                    if not texts:
                        continue
                    if not found:
                        found = True
                        if doc_lang == lang or not self.options.lang_field:
                            _warn_again(naming)
                    if doc_lang not in self._declared:
                        key = _key(doc_lang)
                        self._declared[doc_lang] = script if doc_lang == lang else (key[1] if key else None)
                    self._register(doc_lang, texts)
                    yield doc_lang, numbers, texts, source.name, size
                if not found:
                    raise CorpusError(f"{source.name}: empty corpus file (no non-empty lines or records)")
                if source.name != "-":
                    self._once.content(Path(source.name), self._file_sha256)
                self.files.append(source.name)
                self._layouts.append(self._layout.layout())
                self._layout = None

    def documents(self):
        for lang, numbers, texts, name, _ in self._runs(blocks=False):
            for number, text in zip(numbers, texts):
                yield Document(lang, text, name, number)

    def batches(self):
        """The same documents as `documents()`, a Batch at a time (the audit's fast path)."""
        for lang, _, texts, _, size in self._runs(blocks=True):
            yield Batch(lang, texts, size if size is not None else
                        sum(len(text.encode("utf-8", errors="surrogatepass")) for text in texts))

    def _register(self, lang: str, texts: list[str]) -> None:
        self.n_documents += len(texts)
        self._doc_counts[lang] = self._doc_counts.get(lang, 0) + len(texts)
        prefix = f"{lang}\0"
        self._digest.update((prefix + f"\0{prefix}".join(texts) + "\0").encode())  # = each "lang\0text\0"
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
        digest.update(self.doc_mode.encode())
        scripts = {lang: script or detect_script(" ".join(self._samples.get(lang, [])))
                   for lang, script in self._declared.items()}
        return Corpus((), scripts, tuple(self.files), digest.hexdigest(), self.doc_mode, tuple(self._layouts),
                      dict(self._doc_counts))
