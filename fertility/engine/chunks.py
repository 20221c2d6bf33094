"""Documents into bounded chunks: the unit of work that runs in a worker process.

A chunk holds about `CHUNK_BYTES` of text. A document longer than `PIECE_BYTES` is cut into
pieces at whitespace (never inside a word; where a piece holds no whitespace at all, at a
grapheme cluster boundary), each measured on its own: a token the tokenizer would have made
across a cut counts as two, the only approximation, and it is recorded in the signature. Each piece is also told whether it belongs to the
findings sample: the first `SAMPLE_BYTES` of each language, in reading order, so the sample
does not depend on how the corpus was cut into chunks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import regex

from fertility.io.corpus import Batch, Document

CHUNK_BYTES = 1 << 19
PIECE_BYTES = 1 << 20
SAMPLE_BYTES = 1 << 20
_PREPEND = regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}")


@dataclass(frozen=True)
class Chunk:
    """Texts with, per text: its language, whether it starts a document (not a later piece of
    one), whether it is in the findings sample, and its document's index in the corpus."""

    index: int
    texts: list[str]
    langs: list[str]
    first_piece: list[bool]
    sampled: list[bool]
    doc_index: list[int]

    @property
    def n_bytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.texts)


def _cut_point(text: str, start: int, end: int) -> int:
    """The last index in (start, end] before a space or tab that no cluster rule ties to the
    character before it (a Prepend character is); `start` if there is none."""
    position = end + 1
    while True:
        position = max(text.rfind(" ", start + 1, position), text.rfind("\t", start + 1, position))
        if position <= start:
            return start
        if not _PREPEND.match(text[position - 1]):
            return position


def first_cut(text: str, max_bytes: int = PIECE_BYTES) -> int:
    """Where the first piece of `text` ends: all of it if it fits in `max_bytes` UTF-8 bytes,
    else before the last space or tab within the limit, else (no whitespace to cut at: a
    run of NUL, or Chinese with no spaces) at the last grapheme cluster boundary within the
    limit that no context can move, else at a character boundary. It looks only at the first
    `max_bytes + 1` characters, so text that arrives in parts is cut exactly as when whole."""
    end = max_bytes  # a character is at least one byte
    while len(text[:end].encode("utf-8", errors="surrogatepass")) > max_bytes:
        end = max(1, end * 3 // 4)
    if end >= len(text):
        return len(text)
    cut = _cut_point(text, 0, end)
    if cut == 0:
        from fertility.text.clusters import certain_boundary
        found = certain_boundary(text, max(0, end - BOUNDARY_LOOKBACK), end)
        cut = found if found is not None else end
    return cut


BOUNDARY_LOOKBACK = 1024  # characters searched back for a cluster boundary when a piece has no whitespace


def pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> list[str]:
    """`text` cut into pieces of at most `max_bytes` UTF-8 bytes (see `first_cut`)."""
    return list(iter_pieces(text, max_bytes=max_bytes))


def iter_pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> Iterator[str]:
    """The pieces one at a time, so that a long document is not held twice."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8", errors="surrogatepass")) <= max_bytes:
        yield text
        return
    start, n = 0, len(text)
    while start < n:
        cut = start + first_cut(text[start:start + max_bytes + 1], max_bytes)
        yield text[start:cut]
        start = cut


class PieceCutter:
    """`iter_pieces` over a text that arrives in parts (a line too long to hold, or a whole file
    as one document): the same pieces as cutting the whole text, holding at most about one
    piece and one part; parts are only joined once they make more than a piece."""

    def __init__(self, max_bytes: int = PIECE_BYTES):
        self.max_bytes = max_bytes
        self.parts: list[str] = []
        self.length = 0  # characters in `parts`

    @property
    def pending(self) -> str:
        return "".join(self.parts)

    def feed(self, text: str, *, last: bool) -> list[str]:
        """The pieces complete once `text` is added (`last`: the text ends here)."""
        self.parts.append(text)
        self.length += len(text)
        out = []
        if self.length > self.max_bytes:
            pending = "".join(self.parts)
            while len(pending) > self.max_bytes:  # the next piece's whole window is here
                cut = first_cut(pending, self.max_bytes)
                out.append(pending[:cut])
                pending = pending[cut:]
            self.parts, self.length = [pending], len(pending)
        if last:
            out += iter_pieces("".join(self.parts), max_bytes=self.max_bytes)
            self.parts, self.length = [], 0
        return out


def chunked(items: Iterable[Document | Batch], *, chunk_bytes: int = CHUNK_BYTES,
            piece_bytes: int = PIECE_BYTES, sample_bytes: int = SAMPLE_BYTES) -> Iterator[Chunk]:
    """Documents (or batches of them) into chunks of about `chunk_bytes`, long documents cut
    into pieces; a batch of short documents goes in whole, without a loop per document."""
    sampled_bytes: dict[str, int] = {}
    texts: list[str] = []
    langs: list[str] = []
    first: list[bool] = []
    sampled: list[bool] = []
    doc_index: list[int] = []
    size = 0
    index = 0
    number = 0

    def in_sample(lang: str, batch: list[str]) -> list[bool]:
        """Per text: does it start within the first `sample_bytes` of its language?"""
        before = sampled_bytes.get(lang, 0)
        if before >= sample_bytes:
            return [False] * len(batch)
        flags = []
        for text in batch:
            flags.append(before < sample_bytes)
            before += len(text.encode("utf-8", errors="surrogatepass")) if before < sample_bytes else 0
        sampled_bytes[lang] = before
        return flags

    for item in items:
        batch = item.texts if isinstance(item, Batch) else [item.text]
        continues = isinstance(item, Batch) and item.continues  # batch[0] is a later piece of a document
        if continues:
            number -= 1
        runs: Iterable[tuple[list[str], list[bool], Iterable[int], int | None]]
        if piece_bytes and max(map(len, batch)) * 4 > piece_bytes:  # some may need cutting: lazily
            runs = (([piece], [k == 0 and not (i == 0 and continues)], [number + i], None)
                    for i, text in enumerate(batch) for k, piece in enumerate(iter_pieces(text, max_bytes=piece_bytes)))
        else:
            runs = [(batch, [not continues] + [True] * (len(batch) - 1), range(number, number + len(batch)),
                     item.n_bytes if isinstance(item, Batch) else None)]
        for run_texts, run_first, run_docs, run_bytes in runs:
            texts += run_texts
            langs += [item.lang] * len(run_texts)
            first += run_first
            sampled += in_sample(item.lang, run_texts)
            doc_index += run_docs
            size += run_bytes if run_bytes is not None else \
                sum(len(t.encode("utf-8", errors="surrogatepass")) for t in run_texts)
            if size >= chunk_bytes:
                yield Chunk(index, texts, langs, first, sampled, doc_index)
                index += 1
                texts, langs, first, sampled, doc_index = [], [], [], [], []
                size = 0
        number += len(batch)
    if texts:
        yield Chunk(index, texts, langs, first, sampled, doc_index)
