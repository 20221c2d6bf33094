"""The audit engine: a chunk of documents -> one pass per tokenizer -> an additive ChunkResult.

Each chunk is profiled once (bytes, characters, clusters, words; see profiles.py) and encoded
once per tokenizer; every count is then a vectorized function of the chunk's concatenated
token spans, and the evidence for findings comes from py. Merging the results
of any split of a corpus gives exactly the result of the whole (workers.py runs chunks in
other processes and merges them in order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fertility.backends import FastCheck, Tokenizer, Tokens
from fertility.backends.spans import exact_piece_spans
from fertility.metrics.counts import Counts
from fertility.metrics.token_stats import per_language

from .chunks import Chunk
from .documents import DocumentRows, PerDocument, chunk_words
from .evidence import offenders, token_examples
from .evidence_normalization import normalization, normalized_texts
from .evidence_pools import trim
from .evidence_pretokens import pretokens
from .profiles import ChunkProfile, ProfileCache, profile_texts
from .result import ChunkResult, FastPathStats


def _tokens(tokenizer: Tokenizer, texts: list[str], prof: ChunkProfile) -> tuple[Tokens, FastCheck | None]:
    """The chunk's tokens in byte spans, and how a fast path's self-check went (None: the
    tokenizer has no fast path, or it is off)."""
    tokens, check = tokenizer.encode_checked(texts)
    if tokens.in_chars:
        starts, ends = exact_piece_spans(prof.char_starts[tokens.starts], prof.char_starts[tokens.ends],
                                         tokens.piece_bytes)
        tokens = tokens._replace(starts=starts, ends=ends, in_chars=False, piece_bytes=None)
    return tokens, check


class _Sums:
    """Per-language sums over a chunk's texts (exact: int64 throughout)."""

    def __init__(self, lang_of_doc: np.ndarray, n_langs: int):
        self.lang_of_doc, self.n_langs = lang_of_doc, n_langs

    def docs(self, values: np.ndarray) -> np.ndarray:
        if self.n_langs == 1:
            return np.asarray([values.sum(dtype=np.int64)], dtype=np.int64)
        out = np.zeros(self.n_langs, dtype=np.int64)
        np.add.at(out, self.lang_of_doc, values.astype(np.int64))
        return out

    def items(self, doc_of_item: np.ndarray) -> np.ndarray:
        return np.bincount(self.lang_of_doc[doc_of_item], minlength=self.n_langs).astype(np.int64)

    def words(self, doc_of_word: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sums of a per-word count (weights in float64: exact for any chunk's counts)."""
        return np.rint(np.bincount(self.lang_of_doc[doc_of_word], weights=values,
                                   minlength=self.n_langs)).astype(np.int64)


def inside_word(word_starts: np.ndarray, word_ends: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per token: does it start strictly inside a whitespace word (a continuation token)?
    Words are sorted and disjoint; a token starting at a word's first byte or in the
    whitespace before it starts the word. Read from a mark per byte (inside a word, past its
    first byte), which costs the chunk's bytes once; looking each token up among the words
    cost a binary search per token, a third of the counting."""
    if len(word_starts) == 0 or len(starts) == 0:
        return np.zeros(len(starts), dtype=bool)
    size = int(max(word_ends[-1], starts.max())) + 2
    depth = np.bincount(word_starts + 1, minlength=size) - np.bincount(word_ends, minlength=size)
    return np.cumsum(depth)[starts] > 0


def measure_chunk(chunk: Chunk, tokenizers: Sequence[Tokenizer], *, evidence: bool,
                  cache: ProfileCache | None = None, per_document: PerDocument | None = None) -> ChunkResult:
    texts = chunk.texts
    prof = profile_texts(texts, cache)
    langs = list(dict.fromkeys(chunk.langs))
    position = {lang: i for i, lang in enumerate(langs)}
    lang_of_doc = np.array([position[lang] for lang in chunk.langs], dtype=np.int64)
    first = np.array(chunk.first_piece, dtype=bool)
    sampled = np.array(chunk.sampled, dtype=bool) & evidence
    sums = _Sums(lang_of_doc, len(langs))
    units = {"n_docs": sums.docs(first), "n_bytes": sums.docs(prof.doc_bytes),
             "n_chars": sums.docs(prof.doc_chars), "n_graphemes": sums.docs(prof.doc_graphemes),
             "n_words": sums.docs(prof.doc_words)}
    result = ChunkResult(n_bytes=int(prof.byte_base[-1]))
    data = "".join(texts).encode("utf-8", errors="surrogatepass") if evidence else b""
    normalized = normalized_texts(texts, sampled) if evidence else {}
    doc_tokens: list[np.ndarray] = []  # per tokenizer: tokens per text, when kept per document
    word_tokens: list[np.ndarray] = []  # per tokenizer: tokens per word, when words are tallied
    for t, tokenizer in enumerate(tokenizers):
        tokens, check = _tokens(tokenizer, texts, prof)
        if check is not None:
            result.fast_path[t] = FastPathStats.of(check, chunk)
        starts, ends = tokens.starts, tokens.ends
        doc_of_token = np.repeat(np.arange(len(texts)), tokens.counts)
        boundaries = np.maximum(tokens.counts - 1, 0) + (~first & (tokens.counts > 0))
        cut = np.zeros(max(len(starts) - 1, 0), dtype=bool)
        if len(starts) >= 2:
            left_end, right_start = ends[:-1], starts[1:]
            same = doc_of_token[:-1] == doc_of_token[1:]
            cut = same & ((left_end > right_start) | ~prof.is_cluster_start[left_end]
                          | ~prof.is_cluster_start[right_start])
            if tokens.byte_fallback is not None:  # a zero-width byte piece is not a character's last byte
                cut |= same & tokens.byte_fallback[:-1] & (starts[:-1] == ends[:-1])
        # tokens overlapping each word: offsets in text order, even with zero-width pieces
        starts_sorted, ends_sorted = (starts, ends) if tokens.tiled else \
            (np.maximum.accumulate(starts), np.maximum.accumulate(ends))
        per_word = (np.searchsorted(starts_sorted, prof.word_ends, side="left")
                    - np.searchsorted(ends_sorted, prof.word_starts, side="right"))
        cuts_per_lang = sums.items(doc_of_token[:-1][cut])
        split_per_lang = sums.items(prof.word_doc[per_word >= 2])
        single_per_lang = sums.items(prof.word_doc[per_word == 1])
        if tokens.tiled:  # one token covers each word's first byte: every other one overlapping it continues it
            continuation_per_lang = sums.words(prof.word_doc, np.maximum(per_word - 1, 0))
        else:
            continuation_per_lang = sums.items(doc_of_token[inside_word(prof.word_starts, prof.word_ends, starts)])
        unknown = sums.items(doc_of_token[tokens.unknown]) if tokens.unknown is not None else None
        byte = sums.items(doc_of_token[tokens.byte_fallback]) if tokens.byte_fallback is not None else None
        n_tokens, n_boundaries = sums.docs(tokens.counts), sums.docs(boundaries)
        stats = per_language(lang_of_doc[doc_of_token], len(langs), starts, ends, tokens.ids)
        for i, lang in enumerate(langs):
            result.counts[(t, lang)] = Counts(
                n_docs=int(units["n_docs"][i]), n_bytes=int(units["n_bytes"][i]), n_chars=int(units["n_chars"][i]),
                n_graphemes=int(units["n_graphemes"][i]), n_words=int(units["n_words"][i]),
                n_tokens=int(n_tokens[i]), n_split_words=int(split_per_lang[i]),
                n_unknown_tokens=int(unknown[i]) if unknown is not None else 0,
                n_byte_tokens=int(byte[i]) if byte is not None else 0,
                n_boundaries=int(n_boundaries[i]), n_cut_boundaries=int(cuts_per_lang[i]),
                n_single_token_words=int(single_per_lang[i]),
                n_continuation_tokens=int(continuation_per_lang[i]))
            result.tokens[(t, lang)] = stats[i]
        if per_document is not None:
            doc_tokens.append(tokens.counts)
            if per_document.words:
                word_tokens.append(per_word)
        if not evidence:
            continue
        offenders(result, t, langs, lang_of_doc, prof, tokens)
        token_examples(result, t, chunk, prof, tokens, cut, ends_sorted, starts_sorted, sampled, data)
        pretokens(result, t, tokenizer, chunk, prof, sampled)
        normalization(result, t, tokenizer, chunk, prof, tokens.counts, sampled, normalized)
    for pools in (result.pretoken_pool, result.token_pool):
        for key in pools:
            pools[key] = trim(pools[key])
    if per_document is not None:
        result.documents = _documents(chunk, prof, langs, lang_of_doc, per_document, doc_tokens, word_tokens, data)
    return result


def _documents(chunk: Chunk, prof: ChunkProfile, langs: list[str], lang_of_doc: np.ndarray,
               per_document: PerDocument, doc_tokens: list[np.ndarray], word_tokens: list[np.ndarray],
               data: bytes) -> DocumentRows:
    """The chunk's per-document rows (see documents.py) and the word tallies of its sampled texts;
    `data`: the chunk's UTF-8 text, when the evidence passes already made it (else b"")."""
    words = None
    if per_document.words:
        kept = np.asarray(chunk.sampled, dtype=bool)[prof.word_doc] if len(prof.word_doc) else \
            np.zeros(0, dtype=bool)
        if kept.any() and not data:  # the words are byte spans into it
            data = "".join(chunk.texts).encode("utf-8", errors="surrogatepass")
        words = chunk_words(data, prof.word_starts[kept], prof.word_ends[kept], lang_of_doc[prof.word_doc[kept]],
                            langs, range(len(langs)), [tokens[kept] for tokens in word_tokens])
    return DocumentRows.of_chunk(chunk.doc_index, chunk.langs, prof.doc_bytes, prof.doc_chars, doc_tokens, words)
