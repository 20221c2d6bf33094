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

from fertility.io.corpus import Batch, Document
from fertility.text.pieces import PIECE_BYTES, iter_pieces

CHUNK_BYTES = 1 << 19
SAMPLE_BYTES = 1 << 20


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

    def take() -> Chunk:
        """The chunk gathered so far; the next one starts empty."""
        nonlocal texts, langs, first, sampled, doc_index, size, index
        chunk = Chunk(index, texts, langs, first, sampled, doc_index)
        index += 1
        texts, langs, first, sampled, doc_index = [], [], [], [], []
        size = 0
        return chunk

    for item in items:
        if isinstance(item, Document) and len(item.text) * 4 <= piece_bytes:  # whole, as one run would take it
            n_bytes = len(item.text.encode("utf-8", errors="surrogatepass"))
            before = sampled_bytes.get(item.lang, 0)
            if before < sample_bytes:
                sampled_bytes[item.lang] = before + n_bytes
            texts.append(item.text)
            langs.append(item.lang)
            first.append(True)
            sampled.append(before < sample_bytes)
            doc_index.append(number)
            number += 1
            size += n_bytes
            if size >= chunk_bytes:
                yield take()
            continue
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
                yield take()
        number += len(batch)
    if texts:
        yield take()


def engine_settings(*, diagnose: bool) -> dict[str, str]:
    """What the engine approximates or samples, for the signature."""
    settings = {"long_documents": f"cut at whitespace into pieces of at most {PIECE_BYTES} bytes (where a piece "
                                  "has no whitespace, at a grapheme cluster boundary); a token (or a word) "
                                  "across a cut counts as two"}
    if diagnose:
        settings["findings_sample"] = (f"first {SAMPLE_BYTES} bytes of each language in reading order "
                                       "(pre-tokens, normalization, token examples); offenders: all text")
    return settings
