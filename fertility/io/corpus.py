"""Reading corpora into documents: files, folders of `{lang}.txt`, FLORES-style split trees.

A corpus is read strictly as UTF-8 (a wrong byte changes the very counts we measure, so we
fail with file and line instead of replacing it). Two ways to cut documents:
`line` (one document per non-empty line, the default) and `file` (one document per file,
its non-empty lines joined by a single space, as Petrov et al. 2023 counted FLORES).

This module holds what a corpus is (Document, Batch, Corpus) and the stream that reads one, with
the books kept across its files (hash, scripts, languages, files read once). What a corpus
argument stands for is `corpus_paths.py`; how one file is cut into documents, `file_runs.py`;
which names are languages, `languages.py`; strict decoding, `utf8.py`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fertility.errors import CorpusError
from fertility.limits import MAX_DOCUMENT_BYTES, human
from fertility.text.units import detect_script

from .corpus_paths import check_corpus_paths, corpus_root, corpus_sources
from .file_runs import FileRuns
from .languages import check_language_name, language_key, language_of
from .parallel import FileLayout, LayoutRecorder
from .readers import ReadOnce, ReadOptions

if TYPE_CHECKING:
    from .sampling import Sample

DOC_MODES = ("line", "file")


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


def check_doc_mode(doc_mode: str) -> None:
    """Checked for text in memory too: there each text is one document whatever the mode, so a
    mistyped mode passed silently (and failed only when the same call was given files)."""
    if doc_mode not in DOC_MODES:
        raise CorpusError(f"unknown document mode {doc_mode!r}; choose one of {', '.join(DOC_MODES)}")


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

    def __init__(self, paths: list[Path | str], *, doc_mode: str = "line", options: ReadOptions | None = None,
                 sample: Sample | None = None):
        """`sample`: how much a named corpus read by row groups (FineWeb-2) must fetch."""
        check_doc_mode(doc_mode)
        self.paths = [corpus_root(p, sample) for p in paths]
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

    def named_corpora(self) -> list[dict]:
        """What the named corpora among the paths are (dataset, commit, license), for the signature."""
        return [root.describe() for root in self.paths if not isinstance(root, (Path, str))]

    def total_bytes(self) -> int | None:
        """Size of every corpus file, for progress; None when one is a pipe, compressed or remote."""
        total = 0
        for root in self.paths:
            for source in corpus_sources(root, self.options):
                if source.size is None:
                    return None
                total += source.size
        return total

    def _runs(self, *, blocks: bool):
        """(lang, line numbers or None, texts, file name, bytes read or None, continues) in
        reading order, with the corpus's bookkeeping (hash, scripts, files read once) done per run."""
        for root in self.paths:
            for source in corpus_sources(root, self.options):
                if isinstance(source.path, Path):
                    self._once.path(source.path)
                with warnings.catch_warnings(record=True) as naming:  # said once the file has text
                    warnings.simplefilter("always")
                    lang, script = language_of(source.path, source.root)
                layout = LayoutRecorder(source.name, lang)
                file = FileRuns(source, lang, doc_mode=self.doc_mode, options=self.options,
                                block_bytes=self.BLOCK_BYTES, layout=layout)
                found = False
                for doc_lang, numbers, texts, size, continues in file.runs(blocks=blocks):
                    if not texts:
                        continue
                    if doc_lang not in self._declared:
                        check_language_name(doc_lang, source.name if numbers is None or doc_lang == lang
                                            else f"{source.name}: record {numbers[0]}")
                        key = language_key(doc_lang)
                        self._declared[doc_lang] = script if doc_lang == lang else (key[1] if key else None)
                    if not found:
                        found = True
                        if doc_lang == lang or not self.options.lang_field:
                            _warn_again(naming)
                    self._register(doc_lang, texts, continues)
                    yield doc_lang, numbers, texts, source.name, size, continues
                self.skipped_records += file.skipped_records
                if not found:
                    raise CorpusError(f"{source.name}: empty corpus file (no non-empty lines or records)")
                if source.name != "-":
                    self._once.content(Path(source.name), file.sha256)
                self.files.append(source.name)
                self._layouts.append(layout.layout())

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
