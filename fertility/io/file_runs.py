"""One corpus file read as runs of texts: where documents are cut (a line, or the whole file with
--per-file), where a line too long to hold is cut into pieces, and how records are grouped.

A run is (lang, line or record numbers or None, texts, bytes read or None, continues). The corpus
stream (`corpus.py`) turns runs into documents or batches and keeps the corpus-wide books (hash,
scripts, files read once); this module knows only the file in hand, and records what shows
whether the corpus is parallel in the file's LayoutRecorder as it reads.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePath

from fertility.errors import CorpusError
from fertility.text import pieces

from .parallel import LayoutRecorder
from .readers import LAST_SEGMENT, RECORD_FORMATS, WHOLE, ReadOptions, Source, line_blocks, open_source, split_suffix
from .records import BadRecords, records
from .utf8 import check_not_wide, decode_strict


class FileRuns:
    """The runs of one corpus file (`runs()`), read once; afterwards `sha256` is the file's
    hash (over its bytes, or over its records' language and text) and `skipped_records` how
    many bad records the read options let pass."""

    def __init__(self, source: Source, lang: str, *, doc_mode: str, options: ReadOptions, block_bytes: int,
                 layout: LayoutRecorder):
        self.source, self.lang = source, lang
        self.per_file = doc_mode == "file"
        self.options = source.options or options
        self.block_bytes = block_bytes
        self.layout = layout
        self.sha256 = ""
        self.skipped_records = 0

    def runs(self, *, blocks: bool):
        """A text file's non-blank lines, a line at a time or (`blocks`) a block at a time; a
        record file's records, one at a time or (`blocks`) grouped by language."""
        if split_suffix(PurePath(self.source.name).name)[1] not in RECORD_FORMATS:
            return self._text_runs(whole_lines=not blocks)
        return self._record_runs(group=blocks)

    def _blocks(self):
        """(number of the first line, lines, bytes read, kind) per block of about `block_bytes` of
        whole lines (kind WHOLE, blank lines kept: one decode and one split per block), or per
        segment of a line longer than PIECE_BYTES (kind SEGMENT or LAST_SEGMENT, one text: the
        segment, never held whole). The file's SHA-256 is complete at the end."""
        source = self.source
        file_digest = hashlib.sha256()
        handle = open_source(source)
        first, column = 1, 1  # the line being read, and the column a segment of it starts at
        held_cr = ""  # a CR ending a segment: the line's end if a newline follows
        segment_chars = 0  # characters of the long line read so far in segments
        with handle:
            try:
                for data, kind in line_blocks(handle, block_bytes=self.block_bytes, line_bytes=pieces.PIECE_BYTES):
                    file_digest.update(data)
                    if first == 1 and column == 1:  # the file's first bytes
                        check_not_wide(source.name, data[:1 << 16])
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
                            self.layout.long_line(first, segment_chars)  # a long line is one non-empty line
                            first, column, segment_chars = first + 1, 1, 0
                        continue
                    lines = text.split("\n")
                    if text.endswith("\n"):
                        lines.pop()
                    if "\r" in text:
                        lines = [line.removesuffix("\r") for line in lines]
                    self.layout.block(first, lines, [line for line in lines if line.strip()])
                    yield first, lines, len(data), WHOLE
                    first += len(lines)
            except (OSError, EOFError) as err:
                raise CorpusError(f"{source.name}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        self.sha256 = file_digest.hexdigest()

    def _text_runs(self, *, whole_lines: bool):
        """Runs of a text file: blocks of its non-blank lines (with `whole_lines` each line
        numbered, else only the block's bytes read); a line over PIECE_BYTES as pieces, one run each,
        all but the first `continues` (such a line is a document even if it turns out to be only
        whitespace); with --per-file the whole file, its non-blank lines joined by a space, as the
        pieces of one document."""
        lang, per_file = self.lang, self.per_file
        cutter = pieces.PieceCutter(pieces.PIECE_BYTES)
        started = False  # a piece of the current document was handed on
        fed = False  # per file: some text of the document is in (the next line needs a space)
        in_long_line = False
        doc_line = 0
        for first, lines, size, kind in self._blocks():
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
            elif whole_lines and kept:  # one run per block, each line numbered: one bookkeeping call per block
                yield lang, [number for number, _ in kept], [line for _, line in kept], None, False
            elif kept:
                yield lang, None, [line for _, line in kept], size, False
        if per_file:
            for piece in cutter.feed("", last=True):
                yield lang, [doc_line], [piece], len(piece.encode("utf-8")), started
                started = True

    def _records(self):
        """(lang, number, text) of a record file's non-empty records."""
        source = self.source
        bad = BadRecords(self.options)
        file_digest = hashlib.sha256()
        handle = open_source(source)
        with handle:
            try:
                for number, record_lang, text in records(source, handle, self.options, bad):
                    file_digest.update(f"{record_lang}\0{text}\0".encode())
                    if text.strip():
                        self.layout.record(number, text, record_lang or self.lang)
                        yield record_lang or self.lang, number, text
                    else:
                        self.layout.skipped(number)
            except (OSError, EOFError) as err:
                raise CorpusError(f"{source.name}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        self.skipped_records += bad.skipped
        self.sha256 = file_digest.hexdigest()

    def _record_runs(self, *, group: bool):
        """Runs of a record file: one record at a time, or (`group`) consecutive records of one
        language up to `block_bytes`."""
        lang = self.lang
        numbers: list[int] = []
        texts: list[str] = []
        size = 0
        for doc_lang, number, text in self._records():
            if texts and (not group or doc_lang != lang or size >= self.block_bytes):
                yield lang, numbers, texts, None, False
                numbers, texts, size = [], [], 0
            lang = doc_lang
            numbers.append(number)
            texts.append(text)
            size += len(text)
        if texts:
            yield lang, numbers, texts, None, False
