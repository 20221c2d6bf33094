"""Evidence for findings, measured on one chunk: which characters fall to unknown or byte tokens
(offenders), and which words the tokens cut inside a grapheme cluster (token examples); then
`assemble` turns the merged pools of a whole run into the `Evidence` the diagnosis reads.

Pre-token and normalization evidence have their own modules (evidence_pretokens.py,
evidence_normalization.py); the example pools they all fill are in evidence_pools.py. Everything
is mergeable (counters, additive counts, pools of the best examples), so any split of a corpus
merges to the result of the whole. Only the sampled texts (chunks.SAMPLE_BYTES per language)
are looked at, except for offenders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from fertility.backends import Tokenizer, Tokens
from fertility.diagnose.evidence import Evidence
from fertility.diagnose.integrity import piece_text
from fertility.diagnose.pretokens import MAX_EXAMPLE_CHARS, MAX_EXAMPLE_PIECES, CutExample

from .chunks import Chunk
from .evidence_pools import WORDS_PER_DOCUMENT, example_order, offer, widen
from .profiles import ChunkProfile
from .result import ChunkResult


def offenders(result: ChunkResult, t: int, langs: list[str], lang_of_doc: np.ndarray,
              prof: ChunkProfile, tokens: Tokens) -> None:
    """Characters covered by unknown or byte-fallback tokens, per language. Every text is
    looked at (a character the tokenizer loses may first appear late), so this runs on every
    byte: token offsets become characters through a byte -> character table (not a binary
    search per token), and a language's characters are counted by code point (a sort only for
    characters above U+FFFF)."""
    masks = [m for m in (tokens.unknown, tokens.byte_fallback) if m is not None]
    if not masks:
        return
    flagged = np.logical_or.reduce(masks)
    if not flagged.any():
        return
    n = len(prof.codes)
    char_of_byte = prof.char_of_byte
    starts, ends = tokens.starts[flagged], tokens.ends[flagged]
    first = char_of_byte[starts]  # the character holding the token's first byte
    last = np.maximum(char_of_byte[ends] + (prof.char_starts[char_of_byte[ends]] != ends), first + 1)
    depth = np.bincount(first, minlength=n + 1) - np.bincount(np.minimum(last, n), minlength=n + 1)
    chars = np.flatnonzero(np.cumsum(depth)[:-1] > 0)
    codes = prof.codes[chars]
    if len(langs) == 1:
        groups = [(0, codes)]
    else:
        char_lang = lang_of_doc[np.searchsorted(prof.char_base, chars, side="right") - 1]
        groups = [(i, codes[char_lang == i]) for i in range(len(langs))]
    for i, mine in groups:
        if not len(mine):
            continue
        if int(mine.max()) < 0x10000:
            per_code = np.bincount(mine)
            values = np.flatnonzero(per_code)
            amounts = per_code[values]
        else:
            values, amounts = np.unique(mine, return_counts=True)
        for code, amount in zip(values.tolist(), amounts.tolist()):
            char = chr(code)
            if char.isspace():  # a byte token such as " \xe0\xa6" also covers the space before
                continue
            counter = result.offenders.setdefault((t, langs[i]), Counter())
            counter[char] += amount


def token_examples(result: ChunkResult, t: int, chunk: Chunk, prof: ChunkProfile, tokens: Tokens,
                    cut: np.ndarray, ends_sorted: np.ndarray, starts_sorted: np.ndarray,
                    sampled: np.ndarray, data: bytes) -> None:
    """Words of sampled documents whose tokens cut a cluster (the first WORDS_PER_DOCUMENT of
    each document), with their pieces; only those that may rank among the best are spelled."""
    if not cut.any():
        return
    cut_at = np.sort(ends_sorted[:-1][cut])
    n_cuts = (np.searchsorted(cut_at, prof.word_ends, side="left")
              - np.searchsorted(cut_at, prof.word_starts, side="right"))
    words = np.flatnonzero((n_cuts > 0) & sampled[prof.word_doc])
    if not len(words):
        return
    docs = prof.word_doc[words]
    group_start = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    rank_in_doc = np.arange(len(words)) - np.repeat(group_start, np.diff(np.append(group_start, len(words))))
    words = words[rank_in_doc < WORDS_PER_DOCUMENT]
    n_chars = (np.searchsorted(prof.char_starts, prof.word_ends[words])
               - np.searchsorted(prof.char_starts, prof.word_starts[words]))
    first = np.zeros(len(prof.word_starts), dtype=np.int64)
    last = np.zeros(len(prof.word_starts), dtype=np.int64)
    first[words] = np.searchsorted(ends_sorted, prof.word_starts[words], side="right")
    last[words] = np.searchsorted(starts_sorted, prof.word_ends[words], side="left")
    # example_rank: words shown whole first, then most cuts (then the word: offer and trim)
    hidden = (n_chars > MAX_EXAMPLE_CHARS) | (last[words] - first[words] > MAX_EXAMPLE_PIECES)
    keys = hidden.astype(np.int64) * (1 << 40) - n_cuts[words]
    lang_of_word = np.array([chunk.langs[d] for d in prof.word_doc[words].tolist()])
    for lang in dict.fromkeys(lang_of_word.tolist()):
        mine = np.flatnonzero(lang_of_word == lang)
        pool = result.token_pool.setdefault((t, lang), {})
        chosen = widen(mine, keys, lambda w: data[int(prof.word_starts[w]):int(prof.word_ends[w])], words)
        for w in words[chosen].tolist():
            ws, we = int(prof.word_starts[w]), int(prof.word_ends[w])
            pieces = tuple(piece_text(data, max(s, ws), min(e, we)) for s, e in
                           zip(tokens.starts[first[w]:last[w]].tolist(), tokens.ends[first[w]:last[w]].tolist()))
            offer(pool, CutExample(data[ws:we].decode("utf-8"), pieces, int(n_cuts[w])))


def assemble(names: Sequence[str], tokenizers: Sequence[Tokenizer], langs: Sequence[str],
             total: ChunkResult) -> Evidence:
    """The evidence of a whole run, from its merged chunk results, in tokenizer and language
    order; examples best first, offenders most frequent first (ties by character)."""
    into = Evidence()
    for t, (name, tokenizer) in enumerate(zip(names, tokenizers)):
        pre = tokenizer.pre_tokenizer()
        into.pre_tokenizers[name] = pre.name if pre is not None else None
        for lang in langs:
            key = (t, lang)
            if pre is not None and key in total.pretokens:
                into.pretokens[(name, lang)] = total.pretokens[key]
            if total.pretoken_pool.get(key):
                into.pretoken_examples[(name, lang)] = sorted(total.pretoken_pool[key].values(), key=example_order)
            if total.token_pool.get(key):
                into.token_examples[(name, lang)] = sorted(total.token_pool[key].values(), key=example_order)
            if total.offenders.get(key):
                ranked = sorted(total.offenders[key].items(), key=lambda item: (-item[1], item[0]))
                into.offenders[(name, lang)] = ranked[:5]
            if key in total.normalization:
                into.normalization[(name, lang)] = total.normalization[key]
    return into
