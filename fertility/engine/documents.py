"""Values kept per document, for what needs documents rather than sums: a sampled audit's
intervals, compare's paired bootstrap and changed words, the premiums' intervals.

The worker that measures a chunk also keeps, per text of the chunk, its document's index,
language, bytes, characters and each tokenizer's tokens (and, for the languages asked, each
whitespace word's token counts summed per word), and sends them back in its ChunkResult. The
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

_COMPACT_EVERY = 64  # word tallies of this many chunks are summed into one: memory stays bounded


@dataclass(frozen=True)
class PerDocument:
    """What to keep per document: always counts per document; `words_of` the languages whose
    words' token counts are also tallied per word (compare's changed words)."""

    words_of: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Documents:
    """Per document, in reading order: its index among the documents read, language, bytes,
    characters and tokens per tokenizer (`tokens[t]`); `words` (language, word) ->
    [occurrences, tokens under tokenizer 0, tokenizer 1, ...]."""

    index: np.ndarray
    lang: list[str]
    n_bytes: np.ndarray
    n_chars: np.ndarray
    tokens: np.ndarray  # shape (tokenizers, documents)
    words: dict[WordKey, list[int]]

    def by_language(self) -> dict[str, np.ndarray]:
        """Language -> positions of its documents (in reading order), languages sorted."""
        positions: dict[str, list[int]] = {}
        for position, lang in enumerate(self.lang):
            positions.setdefault(lang, []).append(position)
        return {lang: np.asarray(positions[lang], dtype=np.int64) for lang in sorted(positions)}


def _add_words(into: dict[WordKey, list[int]], other: dict[WordKey, list[int]]) -> None:
    for key, values in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = list(values)
        else:
            for i, value in enumerate(values):
                mine[i] += value


@dataclass
class DocumentRows:
    """Rows of one or more chunks, joined in order. Parts are kept as they came and joined once
    (`finish`), so merging n chunks costs n, not n squared."""

    parts: list[tuple[np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    word_parts: list[dict[WordKey, list[int]]] = field(default_factory=list)

    @classmethod
    def of_chunk(cls, doc_index: Sequence[int], langs: Sequence[str], n_bytes: np.ndarray, n_chars: np.ndarray,
                 tokens: Sequence[np.ndarray], words: dict[WordKey, list[int]]) -> DocumentRows:
        n = len(doc_index)
        stacked = np.vstack([np.asarray(t, dtype=np.int64) for t in tokens]) if tokens else np.zeros((0, n), np.int64)
        return cls([(np.asarray(doc_index, dtype=np.int64), list(langs), np.asarray(n_bytes, dtype=np.int64),
                     np.asarray(n_chars, dtype=np.int64), stacked)], [words] if words else [])

    def merge(self, other: DocumentRows) -> DocumentRows:
        word_parts = self.word_parts + other.word_parts
        if len(word_parts) > _COMPACT_EVERY:
            combined: dict[WordKey, list[int]] = {}
            for part in word_parts:
                _add_words(combined, part)
            word_parts = [combined]
        return DocumentRows(self.parts + other.parts, word_parts)

    def finish(self, n_tokenizers: int) -> Documents:
        """One row per document: the pieces of a document (consecutive rows with one index) summed."""
        if not self.parts:
            empty = np.zeros(0, dtype=np.int64)
            return Documents(empty, [], empty, empty, np.zeros((n_tokenizers, 0), np.int64), {})
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
        words: dict[WordKey, list[int]] = {}
        for part in self.word_parts:
            _add_words(words, part)
        return Documents(index, langs, n_bytes, n_chars, tokens, words)


def chunk_words(data: bytes, word_starts: np.ndarray, word_ends: np.ndarray, keep: np.ndarray,
                word_langs: Sequence[str], per_tokenizer: Sequence[np.ndarray]) -> dict[WordKey, list[int]]:
    """Tally of the kept words of a chunk: (language, word) -> [occurrences, tokens per tokenizer].
    `data` is the chunk's UTF-8 text and the word spans are byte offsets into it."""
    tally: dict[WordKey, list[int]] = {}
    chosen = np.flatnonzero(keep)
    if not len(chosen):
        return tally
    starts, ends = word_starts[chosen].tolist(), word_ends[chosen].tolist()
    counts = [t[chosen].tolist() for t in per_tokenizer]
    for k, (start, end) in enumerate(zip(starts, ends)):
        key = (word_langs[k], data[start:end].decode("utf-8", errors="surrogatepass"))
        entry = tally.get(key)
        if entry is None:
            tally[key] = [1, *(c[k] for c in counts)]
        else:
            entry[0] += 1
            for i, c in enumerate(counts):
                entry[i + 1] += c[k]
    return tally


__all__ = ["DocumentRows", "Documents", "PerDocument", "chunk_words"]
