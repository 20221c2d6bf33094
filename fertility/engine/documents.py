"""Values kept per document, for what needs documents rather than sums: a sampled audit's
intervals, compare's paired bootstrap and its changed words.

The worker that measures a chunk also keeps, per text of the chunk, its document's index,
language, bytes, characters and each tokenizer's tokens (and, when asked, each whitespace
word's token counts in the findings sample, summed per word), and sends them back in its ChunkResult. The
parent joins the chunks' rows in chunk order, which is reading order, so the rows are the same
for any number of worker processes. A document cut into pieces gives one row per piece;
`DocumentRows.finish` sums the pieces of each document (every value is a count, so the sum
is exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

WordKey = tuple[str, str]  # (language, word)
WordTally = tuple[list[WordKey], np.ndarray]  # distinct words, and per word [occurrences, tokens per tokenizer]

_COMPACT_EVERY = 64  # word tallies of this many chunks are summed into one: memory stays bounded


@dataclass(frozen=True)
class PerDocument:
    """What to keep per document: always counts per document; with `words`, also each word's
    token counts, tallied per distinct word, over the findings sample only (the first
    SAMPLE_BYTES of each language, chunks.py) in every language: compare's changed words are
    examples, like the other evidence, and a tally of every distinct word of a large corpus
    would grow with it (the caller keeps the languages it wants once their scripts are known)."""

    words: bool = False


@dataclass(frozen=True)
class Documents:
    """Per document, in reading order: its index among the documents read, language, bytes,
    characters and tokens per tokenizer (`tokens[t]`); `words` the distinct (language, word)
    keys and per key [occurrences, tokens under tokenizer 0, tokenizer 1, ...]."""

    index: np.ndarray
    lang: list[str]
    n_bytes: np.ndarray
    n_chars: np.ndarray
    tokens: np.ndarray  # shape (tokenizers, documents)
    words: WordTally  # distinct (language, word) keys, and per key [occurrences, tokens under each tokenizer]

    def word_counts(self) -> dict[WordKey, list[int]]:
        """The word tally as a mapping (a list per word costs memory: callers that rank keep the arrays)."""
        keys, counts = self.words
        return dict(zip(keys, counts.tolist()))

    def by_language(self) -> dict[str, np.ndarray]:
        """Language -> positions of its documents (in reading order), languages sorted."""
        positions: dict[str, list[int]] = {}
        for position, lang in enumerate(self.lang):
            positions.setdefault(lang, []).append(position)
        return {lang: np.asarray(positions[lang], dtype=np.int64) for lang in sorted(positions)}


def _combine(parts: Sequence[WordTally], width: int) -> WordTally:
    """Several tallies as one: the counts of a word seen in several are summed."""
    index: dict[WordKey, int] = {}
    rows = np.fromiter((index.setdefault(key, len(index)) for keys, _ in parts for key in keys), dtype=np.int64,
                       count=sum(len(keys) for keys, _ in parts))
    out = np.zeros((len(index), width), dtype=np.int64)
    if len(rows):
        np.add.at(out, rows, np.concatenate([counts for _, counts in parts]))
    return list(index), out


@dataclass
class DocumentRows:
    """Rows of one or more chunks, joined in order. Parts are kept as they came and joined once
    (`finish`), so merging n chunks costs n, not n squared."""

    parts: list[tuple[np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    word_parts: list[WordTally] = field(default_factory=list)

    @classmethod
    def of_chunk(cls, doc_index: Sequence[int], langs: Sequence[str], n_bytes: np.ndarray, n_chars: np.ndarray,
                 tokens: Sequence[np.ndarray], words: WordTally | None) -> DocumentRows:
        n = len(doc_index)
        stacked = np.vstack([np.asarray(t, dtype=np.int64) for t in tokens]) if tokens else np.zeros((0, n), np.int64)
        return cls([(np.asarray(doc_index, dtype=np.int64), list(langs), np.asarray(n_bytes, dtype=np.int64),
                     np.asarray(n_chars, dtype=np.int64), stacked)], [words] if words is not None else [])

    def merge(self, other: DocumentRows) -> DocumentRows:
        word_parts = self.word_parts + other.word_parts
        if len(word_parts) > _COMPACT_EVERY:
            word_parts = [_combine(word_parts, word_parts[0][1].shape[1])]
        return DocumentRows(self.parts + other.parts, word_parts)

    def finish(self, n_tokenizers: int) -> Documents:
        """One row per document: the pieces of a document (consecutive rows with one index) summed."""
        if not self.parts:
            empty = np.zeros(0, dtype=np.int64)
            return Documents(empty, [], empty, empty, np.zeros((n_tokenizers, 0), np.int64),
                             ([], np.zeros((0, 1 + n_tokenizers), np.int64)))
        index = np.concatenate([p[0] for p in self.parts])
        langs = [lang for p in self.parts for lang in p[1]]
        n_bytes = np.concatenate([p[2] for p in self.parts])
        n_chars = np.concatenate([p[3] for p in self.parts])
        tokens = np.concatenate([p[4] for p in self.parts], axis=1)
        first = np.flatnonzero(np.r_[True, index[1:] != index[:-1]]) if len(index) else np.zeros(0, np.int64)
        if len(first) != len(index):
            index, langs = index[first], [langs[i] for i in first.tolist()]
            n_bytes, n_chars = np.add.reduceat(n_bytes, first), np.add.reduceat(n_chars, first)
            tokens = np.add.reduceat(tokens, first, axis=1)
        words = _combine(self.word_parts, self.word_parts[0][1].shape[1]) if self.word_parts else \
            ([], np.zeros((0, 1 + n_tokenizers), np.int64))
        return Documents(index, langs, n_bytes, n_chars, tokens, words)


def chunk_words(data: bytes, word_starts: np.ndarray, word_ends: np.ndarray, word_lang: np.ndarray,
                langs: Sequence[str], tallied: Sequence[int], per_tokenizer: Sequence[np.ndarray]) -> WordTally:
    """Tally of a chunk's words in the `tallied` languages (indices into `langs`; `word_lang`
    gives each word's): per distinct (language, word), its occurrences and the tokens over them
    under each tokenizer. `data` is the chunk's UTF-8 text; the word spans are byte offsets
    into it. Words are grouped by their bytes and summed with bincount (exact: integers far
    below 2**53), then only the distinct ones are decoded."""
    keys: list[WordKey] = []
    blocks = []
    for code in tallied:
        mine = np.flatnonzero(word_lang == code)
        if not len(mine):
            continue
        pieces = [data[s:e] for s, e in zip(word_starts[mine].tolist(), word_ends[mine].tolist())]
        ids: dict[bytes, int] = {}
        rows = np.array([ids.setdefault(piece, len(ids)) for piece in pieces], dtype=np.int64)
        block = np.empty((len(ids), 1 + len(per_tokenizer)), dtype=np.int64)
        block[:, 0] = np.bincount(rows, minlength=len(ids))
        for t, tokens in enumerate(per_tokenizer):
            block[:, t + 1] = np.bincount(rows, weights=tokens[mine], minlength=len(ids)).astype(np.int64)
        keys += [(langs[code], piece.decode("utf-8", errors="surrogatepass")) for piece in ids]
        blocks.append(block)
    counts = np.concatenate(blocks) if blocks else np.zeros((0, 1 + len(per_tokenizer)), dtype=np.int64)
    return keys, counts


__all__ = ["DocumentRows", "Documents", "PerDocument", "chunk_words"]
