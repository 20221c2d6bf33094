"""Pre-token evidence, measured on one chunk's sampled texts: how a tokenizer's own pre-tokenizer
cuts the text (pieces, cuts inside a grapheme cluster, cuts before a combining mark) and the
words it cuts worst. This is the cause the findings name when a script's chars/token is low: no
merge can cross a pre-token boundary, so a splitter that separates marks from their consonants
caps every word of that script, whatever the vocabulary.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import cache
from itertools import chain, pairwise

import numpy as np
import regex

from fertility.backends import Tokenizer
from fertility.diagnose.pretokens import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLE_PIECES,
    CutExample,
    PretokenCounts,
    analyse,
    word_examples,
)

from .chunks import Chunk
from .evidence_pools import WORDS_PER_DOCUMENT, offer, widen
from .profiles import ChunkProfile
from .result import ChunkResult

_MARK = regex.compile(r"\p{M}")

_PRE_TOKENIZERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prepare(tokenizer: Tokenizer, *, evidence: bool) -> None:
    """Build a tokenizer's pre-tokenizer now, if findings need it (before workers fork)."""
    if evidence:
        _pre_tokenizer(tokenizer)


def _pre_tokenizer(tokenizer: Tokenizer):
    """A tokenizer's pre-tokenizer, built once per process (HF parses its JSON for it)."""
    try:
        if tokenizer not in _PRE_TOKENIZERS:
            _PRE_TOKENIZERS[tokenizer] = tokenizer.pre_tokenizer()
        return _PRE_TOKENIZERS[tokenizer]
    except TypeError:  # not weakly referenceable: build it each time
        return tokenizer.pre_tokenizer()


@cache
def _is_mark(code: int) -> bool:
    return _MARK.match(chr(code)) is not None


def pretokens(result: ChunkResult, t: int, tokenizer: Tokenizer, chunk: Chunk, prof: ChunkProfile,
               sampled: np.ndarray) -> None:
    """Pre-token counts and cut examples of the sampled texts. Where the splitter sees the text
    as it is (no normalizer), its boundaries are checked against the chunk's clusters at once;
    otherwise text by text (pretokens.analyse)."""
    pre = _pre_tokenizer(tokenizer)
    if pre is None:
        return
    n_langs = len(set(chunk.langs))
    langs = list(dict.fromkeys(chunk.langs))
    position = {lang: i for i, lang in enumerate(langs)}
    totals = np.zeros((n_langs, 5), dtype=np.int64)
    lang_index = np.array([position[lang] for lang in chunk.langs], dtype=np.int64)
    inner_parts: list[np.ndarray] = []
    doc_parts: list[np.ndarray] = []
    todo = np.flatnonzero(sampled)
    if pre.lengths is not None and len(todo):  # pieces of the unchanged text: every text at once
        todo = _tiled_boundaries(pre.lengths, chunk.texts, todo, prof, lang_index, totals, inner_parts, doc_parts)
    for i in todo.tolist():
        text = chunk.texts[i]
        seen, spans = pre.split(text)
        if seen != text:
            counts, boundaries, cuts = analyse(seen, spans)
            key = (t, chunk.langs[i])
            result.pretokens[key] = result.pretokens[key] + counts if key in result.pretokens else counts
            if cuts:
                pool = result.pretoken_pool.setdefault(key, {})
                for example in word_examples(seen, boundaries, cuts, limit=WORDS_PER_DOCUMENT):
                    offer(pool, example)
            continue
        flat = np.fromiter(chain.from_iterable(spans), dtype=np.int64, count=2 * len(spans))
        inner_parts.append(np.unique(flat[(flat > 0) & (flat < len(text))]) + prof.char_base[i])
        doc_parts.append(np.full(len(inner_parts[-1]), i, dtype=np.int64))
        totals[lang_index[i], :2] += (len(text), len(spans))
    if inner_parts:
        order = np.argsort(np.concatenate(inner_parts), kind="stable")
        inner, doc_of = np.concatenate(inner_parts)[order], np.concatenate(doc_parts)[order]
        lang_of = lang_index[doc_of]
        is_cut = ~prof.char_cluster_start[inner]
        codes = prof.codes[inner[is_cut]]
        marks = np.array([_is_mark(c) for c in codes.tolist()], dtype=bool)
        totals[:, 2] += np.bincount(lang_of, minlength=n_langs)
        totals[:, 3] += np.bincount(lang_of[is_cut], minlength=n_langs)
        totals[:, 4] += np.bincount(lang_of[is_cut][marks], minlength=n_langs)
        for li, lang in enumerate(langs):
            if totals[li, 0]:
                counts = PretokenCounts(*map(int, totals[li]))
                key = (t, lang)
                result.pretokens[key] = result.pretokens[key] + counts if key in result.pretokens else counts
        _pretoken_examples(result, t, chunk, prof, inner, inner[is_cut], doc_of, set(doc_of.tolist()))


def _tiled_boundaries(lengths_of: Callable[[str], list[int]], texts: list[str], todo: np.ndarray,
                      prof: ChunkProfile, lang_index: np.ndarray, totals: np.ndarray,
                      inner_parts: list[np.ndarray], doc_parts: list[np.ndarray]) -> np.ndarray:
    """Inner piece boundaries (chunk character offsets) of the texts whose pieces tile them,
    added to the parts and totals; returns the texts left for `split` (pieces with gaps)."""
    per_text = [lengths_of(texts[i]) for i in todo.tolist()]
    n_pieces = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
    lengths = np.fromiter(chain.from_iterable(per_text), dtype=np.int64, count=int(n_pieces.sum()))
    piece_text = np.repeat(np.arange(len(todo)), n_pieces)
    ends = np.cumsum(lengths)
    covered = np.zeros(len(todo), dtype=np.int64)
    np.add.at(covered, piece_text, lengths)
    before = np.cumsum(covered) - covered
    sizes = prof.doc_chars[todo]
    tiles = covered == sizes
    offset = ends - before[piece_text]
    keep = (lengths > 0) & (offset < sizes[piece_text]) & tiles[piece_text]
    inner_parts.append(offset[keep] + prof.char_base[todo][piece_text[keep]])
    doc_parts.append(todo[piece_text[keep]])
    np.add.at(totals[:, 0], lang_index[todo[tiles]], sizes[tiles])
    np.add.at(totals[:, 1], lang_index[todo[tiles]], n_pieces[tiles])
    return todo[~tiles]


def _pretoken_examples(result: ChunkResult, t: int, chunk: Chunk, prof: ChunkProfile, inner: np.ndarray,
                       cut_at: np.ndarray, doc_of: np.ndarray, docs: set[int]) -> None:
    if not len(cut_at):
        return
    candidates = np.flatnonzero(np.isin(prof.word_doc, np.array(sorted(docs))))
    word_first = np.searchsorted(prof.char_starts, prof.word_starts[candidates])  # in characters
    word_last = np.searchsorted(prof.char_starts, prof.word_ends[candidates])
    n_cuts = np.searchsorted(cut_at, word_last, side="left") - np.searchsorted(cut_at, word_first, side="right")
    words = np.flatnonzero(n_cuts > 0)  # indices into the candidates
    if not len(words):
        return
    word_docs = prof.word_doc[candidates[words]]
    group_start = np.flatnonzero(np.concatenate(([True], word_docs[1:] != word_docs[:-1])))
    rank_in_doc = np.arange(len(words)) - np.repeat(group_start, np.diff(np.append(group_start, len(words))))
    words = words[rank_in_doc < WORDS_PER_DOCUMENT]
    lengths = word_last[words] - word_first[words]
    n_pieces = (np.searchsorted(inner, word_last[words], side="left")
                - np.searchsorted(inner, word_first[words], side="right") + 1)
    hidden = (lengths > MAX_EXAMPLE_CHARS) | (n_pieces > MAX_EXAMPLE_PIECES)
    keys = hidden.astype(np.int64) * (1 << 40) - n_cuts[words]
    joined = "".join(chunk.texts)
    lang_of_word = [chunk.langs[d] for d in prof.word_doc[candidates[words]].tolist()]
    for lang in dict.fromkeys(lang_of_word):
        mine = np.flatnonzero(np.array([found == lang for found in lang_of_word]))
        chosen = widen(mine, keys, lambda w: joined[int(word_first[w]):int(word_last[w])], words)
        pool = result.pretoken_pool.setdefault((t, lang), {})
        for w in words[chosen].tolist():
            a, b = int(word_first[w]), int(word_last[w])
            edges = [a, *inner[np.searchsorted(inner, a, side="right"):np.searchsorted(inner, b, side="left")].tolist(), b]
            offer(pool, CutExample(joined[a:b], tuple(joined[x:y] for x, y in pairwise(edges)), int(n_cuts[w])))
