"""Evidence for findings, measured on one chunk: offenders, cut examples, pre-tokens, normalization.

Everything here is mergeable: counters, additive counts, and per (tokenizer, language) a pool
of the `MAX_EXAMPLES` best examples (the best occurrence of each word, then the best words;
`offer` and `trim`), so any split of a corpus merges to the result of the whole. Only the
sampled texts (chunks.SAMPLE_BYTES per language) are looked at, except for offenders.
"""

from __future__ import annotations

import unicodedata
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from itertools import chain, pairwise
from typing import TYPE_CHECKING

import numpy as np
import regex

from fertility.backends import Tokenizer, Tokens
from fertility.diagnose.evidence import Evidence
from fertility.diagnose.integrity import piece_text
from fertility.diagnose.normalization import FORMS, JOINERS, NormalizationCounts, nfc_changes
from fertility.diagnose.pretokens import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLE_PIECES,
    CutExample,
    PretokenCounts,
    analyse,
    example_rank,
    word_examples,
)

from .chunks import Chunk
from .profiles import ChunkProfile

if TYPE_CHECKING:
    from .measure import ChunkResult

_MARK = regex.compile(r"\p{M}")

MAX_EXAMPLES = 5  # per (tokenizer, language), as findings show them
WORDS_PER_DOCUMENT = 200  # cut words looked at per sampled document


def example_order(example: CutExample) -> tuple:
    return (example_rank(example), example.pieces)


def offer(pool: dict[str, CutExample], example: CutExample) -> None:
    held = pool.get(example.word)
    if held is None or example_order(example) < example_order(held):
        pool[example.word] = example


def trim(pool: dict[str, CutExample]) -> dict[str, CutExample]:
    return {e.word: e for e in sorted(pool.values(), key=example_order)[:MAX_EXAMPLES]}


def _token_counts(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    if not texts:
        return []
    counter = getattr(tokenizer, "count_tokens", None)
    return list(counter(texts)) if counter is not None else [len(e.starts) for e in tokenizer.encode(texts)]


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


def offenders(result: ChunkResult, t: int, langs: list[str], lang_of_doc: np.ndarray,
               prof: ChunkProfile, tokens: Tokens) -> None:
    """Characters covered by unknown or byte-fallback tokens, per language."""
    masks = [m for m in (tokens.unknown, tokens.byte_fallback) if m is not None]
    if not masks:
        return
    flagged = np.logical_or.reduce(masks)
    if not flagged.any():
        return
    first = np.searchsorted(prof.char_starts, tokens.starts[flagged], side="right") - 1
    last = np.maximum(np.searchsorted(prof.char_starts, tokens.ends[flagged], side="left"), first + 1)
    size = len(prof.codes) + 1  # bincount: np.add.at is unbuffered, many times slower
    depth = np.bincount(first, minlength=size) - np.bincount(np.minimum(last, len(prof.codes)), minlength=size)
    chars = np.flatnonzero(np.cumsum(depth)[:-1] > 0)
    char_lang = lang_of_doc[np.searchsorted(prof.char_base, chars, side="right") - 1]
    keys, amounts = np.unique(char_lang * 0x110000 + prof.codes[chars].astype(np.int64), return_counts=True)
    for key, amount in zip(keys.tolist(), amounts.tolist()):
        char = chr(key % 0x110000)
        if char.isspace():  # a byte token such as " \xe0\xa6" also covers the space before
            continue
        counter = result.offenders.setdefault((t, langs[key // 0x110000]), Counter())
        counter[char] += amount


def _contenders(keys: np.ndarray) -> np.ndarray:
    """Indices (into `keys`) of the candidates that can reach the best MAX_EXAMPLES distinct
    words, ranking by `keys` first (lower is better) and the word second: whole key levels,
    from the best, until they hold MAX_EXAMPLES candidates (distinctness is settled later)."""
    if len(keys) <= MAX_EXAMPLES:
        return np.arange(len(keys))
    levels, sizes = np.unique(keys, return_counts=True)
    enough = np.searchsorted(np.cumsum(sizes), MAX_EXAMPLES)
    return np.flatnonzero(keys <= levels[min(int(enough), len(levels) - 1)])


def _widen(mine: np.ndarray, keys: np.ndarray, span, words: np.ndarray) -> np.ndarray:
    """Of the candidates `mine`, those whole key levels, from the best, that hold at least
    MAX_EXAMPLES distinct words (by their spans' text), so the best distinct words are among them."""
    chosen = mine[_contenders(keys[mine])]
    levels = np.unique(keys[mine])
    while len(chosen) < len(mine):
        if len({span(w) for w in words[chosen].tolist()}) >= MAX_EXAMPLES:
            break
        level = np.searchsorted(levels, keys[chosen].max()) + 1
        chosen = mine[keys[mine] <= levels[min(level, len(levels) - 1)]]
    return chosen


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
        chosen = _widen(mine, keys, lambda w: data[int(prof.word_starts[w]):int(prof.word_ends[w])], words)
        for w in words[chosen].tolist():
            ws, we = int(prof.word_starts[w]), int(prof.word_ends[w])
            pieces = tuple(piece_text(data, max(s, ws), min(e, we)) for s, e in
                           zip(tokens.starts[first[w]:last[w]].tolist(), tokens.ends[first[w]:last[w]].tolist()))
            offer(pool, CutExample(data[ws:we].decode("utf-8"), pieces, int(n_cuts[w])))


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
        chosen = _widen(mine, keys, lambda w: joined[int(word_first[w]):int(word_last[w])], words)
        pool = result.pretoken_pool.setdefault((t, lang), {})
        for w in words[chosen].tolist():
            a, b = int(word_first[w]), int(word_last[w])
            edges = [a, *inner[np.searchsorted(inner, a, side="right"):np.searchsorted(inner, b, side="left")].tolist(), b]
            offer(pool, CutExample(joined[a:b], tuple(joined[x:y] for x, y in pairwise(edges)), int(n_cuts[w])))


def normalized(texts: list[str], sampled: np.ndarray) -> dict[str, dict[int, str]]:
    """Per form, the sampled texts it changes, normalized (shared by every tokenizer)."""
    out: dict[str, dict[int, str]] = {}
    for form in FORMS:
        changed = {}
        for i in np.flatnonzero(sampled).tolist():
            if unicodedata.is_normalized(form, texts[i]):  # type: ignore[arg-type]  # a quick check, mostly
                continue
            text = unicodedata.normalize(form, texts[i])  # type: ignore[arg-type]
            if text != texts[i]:
                changed[i] = text
        out[form] = changed
    return out


def normalization(result: ChunkResult, t: int, tokenizer: Tokenizer, chunk: Chunk, prof: ChunkProfile,
                   doc_tokens: np.ndarray, sampled: np.ndarray, normalized: dict[str, dict[int, str]]) -> None:
    """How chars and tokens of the sampled texts move under NFC and NFKC."""
    chosen = np.flatnonzero(sampled)
    if not len(chosen):
        return
    totals: dict[str, Counter] = {}
    for i in chosen.tolist():
        entry = totals.setdefault(chunk.langs[i], Counter())
        entry["n_chars"] += int(prof.doc_chars[i])
        entry["n_tokens"] += int(doc_tokens[i])
    char_doc = np.repeat(np.arange(len(chunk.texts)), prof.doc_chars)
    in_sample = sampled[char_doc]
    langs = list(dict.fromkeys(chunk.langs))
    position = {lang: i for i, lang in enumerate(langs)}
    lang_of_doc = np.array([position[lang] for lang in chunk.langs], dtype=np.int64)
    codes = prof.codes[in_sample].astype(np.int64)
    interesting = (codes > 0xFF)
    keys, amounts = np.unique(lang_of_doc[char_doc[in_sample][interesting]] * 0x110000 + codes[interesting],
                              return_counts=True)
    for key, amount in zip(keys.tolist(), amounts.tolist()):
        char = chr(key % 0x110000)
        entry = totals[langs[key // 0x110000]]
        if nfc_changes(char):
            entry["n_decomposable"] += amount
        if char in JOINERS:
            entry["n_joiners"] += amount
    known: dict[int, tuple[str, int]] = {}  # a text NFKC leaves as NFC did is not encoded twice
    for form in FORMS:
        changed = normalized[form]
        indices = list(changed)
        fresh = [i for i in indices if i not in known or known[i][0] != changed[i]]
        counted = dict(zip(fresh, _token_counts(tokenizer, [changed[i] for i in fresh])))
        new_tokens = [counted[i] if i in counted else known[i][1] for i in indices]
        known.update((i, (changed[i], n)) for i, n in zip(indices, new_tokens))
        for i, tokens in zip(indices, new_tokens):
            entry = totals[chunk.langs[i]]
            suffix = form.lower()
            entry[f"d_chars_{suffix}"] += len(changed[i]) - len(chunk.texts[i])
            entry[f"d_tokens_{suffix}"] += tokens - int(doc_tokens[i])
            if form == "NFC":
                entry["n_docs_changed_nfc"] += 1
    for lang, entry in totals.items():
        counts = NormalizationCounts(
            n_chars=entry["n_chars"], n_chars_nfc=entry["n_chars"] + entry["d_chars_nfc"],
            n_chars_nfkc=entry["n_chars"] + entry["d_chars_nfkc"], n_tokens=entry["n_tokens"],
            n_tokens_nfc=entry["n_tokens"] + entry["d_tokens_nfc"],
            n_tokens_nfkc=entry["n_tokens"] + entry["d_tokens_nfkc"],
            n_docs_changed_nfc=entry["n_docs_changed_nfc"], n_decomposable=entry["n_decomposable"],
            n_joiners=entry["n_joiners"])
        key = (t, lang)
        result.normalization[key] = result.normalization[key] + counts if key in result.normalization else counts


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
