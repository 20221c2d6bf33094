"""Documents into bounded chunks: the unit of work that runs in a worker process.

A chunk holds about `CHUNK_BYTES` of text. A document longer than `PIECE_BYTES` is cut into
pieces at whitespace (never inside a word or a grapheme cluster), each measured on its own:
a token the tokenizer would have made across a cut counts as two, the only approximation,
and it is recorded in the signature. Each piece is also told whether it belongs to the
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


def _next_cut_point(text: str, position: int) -> int:
    """The first index at or after `position` where `_cut_point` could cut; the end if none."""
    while True:
        found = [p for p in (text.find(" ", position), text.find("\t", position)) if p >= 0]
        if not found:
            return len(text)
        position = min(found)
        if position > 0 and not _PREPEND.match(text[position - 1]):
            return position
        position += 1


def pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> list[str]:
    """`text` cut before whitespace into pieces of at most `max_bytes` UTF-8 bytes; a stretch
    with no whitespace to cut at is left longer rather than cut inside a word."""
    return list(iter_pieces(text, max_bytes=max_bytes))


def iter_pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> Iterator[str]:
    """The pieces one at a time, so that a long document is not held twice."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8")) <= max_bytes:
        yield text
        return
    start, n = 0, len(text)
    while start < n:
        end = min(start + max_bytes, n)  # a character is at least one byte
        while len(text[start:end].encode("utf-8")) > max_bytes:
            end = start + max(1, (end - start) * 3 // 4)
        if end == n:
            yield text[start:]
            return
        cut = _cut_point(text, start, end)
        if cut == start:  # no whitespace within the limit: the next one after it
            cut = _next_cut_point(text, end)
        yield text[start:cut]
        start = cut


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
        runs: Iterable[tuple[list[str], list[bool], Iterable[int], int | None]]
        if piece_bytes and max(map(len, batch)) * 4 > piece_bytes:  # some may need cutting: lazily
            runs = (([piece], [k == 0], [number + i], None) for i, text in enumerate(batch)
                    for k, piece in enumerate(iter_pieces(text, max_bytes=piece_bytes)))
        else:
            runs = [(batch, [True] * len(batch), range(number, number + len(batch)),
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
