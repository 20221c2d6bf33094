"""The audit engine: chunks of documents -> one pass per tokenizer -> additive chunk results.

Each chunk is profiled once (bytes, characters, clusters, words; see profiles.py) and encoded
once per tokenizer; every count is then a vectorized function of the chunk's concatenated
token spans. Evidence for findings is mergeable: counters, and per (tokenizer, language) the
`MAX_EXAMPLES` best examples (best per word, then best words), so merging the results of any
split of the corpus gives exactly the result of the whole. `run` merges chunk results in
order, in this process or in `jobs` worker processes, which load each tokenizer once.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import unicodedata
import weakref
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain, islice, pairwise
from pathlib import Path

import numpy as np
import regex

from .backends import Encoded, Tokenizer, Tokens, load_tokenizer
from .backends._common import concatenate
from .chunks import CHUNK_BYTES, PIECE_BYTES, Chunk, chunked
from .corpus import Document
from .integrity import piece_text
from .normalization import FORMS, JOINERS, NormalizationCounts, nfc_changes
from .pretokens import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLE_PIECES,
    CutExample,
    PretokenCounts,
    analyse,
    example_rank,
    word_examples,
)
from .profiles import CacheStats, ChunkProfile, ProfileCache, profile_texts
from .results import Counts
from .text import TextProfile

_MARK = regex.compile(r"\p{M}")

MAX_EXAMPLES = 5  # per (tokenizer, language), as findings show them
WORDS_PER_DOCUMENT = 200  # cut words looked at per sampled document
Key = tuple[int, str]  # (tokenizer index, language)
Observer = Callable[[int, TextProfile, Encoded], None]


def example_order(example: CutExample) -> tuple:
    return (example_rank(example), example.pieces)


def _offer(pool: dict[str, CutExample], example: CutExample) -> None:
    held = pool.get(example.word)
    if held is None or example_order(example) < example_order(held):
        pool[example.word] = example


def _trim(pool: dict[str, CutExample]) -> dict[str, CutExample]:
    return {e.word: e for e in sorted(pool.values(), key=example_order)[:MAX_EXAMPLES]}


def _add(a: dict, b: dict) -> dict:
    out = dict(a)
    for key, value in b.items():
        out[key] = out[key] + value if key in out else value
    return out


@dataclass
class ChunkResult:
    """Everything measured on some chunks; `merge` is exact, associative and commutative."""

    n_bytes: int = 0
    counts: dict[Key, Counts] = field(default_factory=dict)
    offenders: dict[Key, Counter] = field(default_factory=dict)
    pretokens: dict[Key, PretokenCounts] = field(default_factory=dict)
    pretoken_pool: dict[Key, dict[str, CutExample]] = field(default_factory=dict)
    token_pool: dict[Key, dict[str, CutExample]] = field(default_factory=dict)
    normalization: dict[Key, NormalizationCounts] = field(default_factory=dict)
    cache: CacheStats = field(default_factory=CacheStats)

    def merge(self, other: ChunkResult) -> ChunkResult:
        pools = []
        for mine, theirs in ((self.pretoken_pool, other.pretoken_pool), (self.token_pool, other.token_pool)):
            merged = {key: dict(pool) for key, pool in mine.items()}
            for key, pool in theirs.items():
                target = merged.setdefault(key, {})
                for example in pool.values():
                    _offer(target, example)
                merged[key] = _trim(target)
            pools.append(merged)
        return ChunkResult(
            n_bytes=self.n_bytes + other.n_bytes, counts=_add(self.counts, other.counts),
            offenders=_add(self.offenders, other.offenders), pretokens=_add(self.pretokens, other.pretokens),
            pretoken_pool=pools[0], token_pool=pools[1],
            normalization=_add(self.normalization, other.normalization), cache=self.cache + other.cache)


def _tokens(tokenizer: Tokenizer, texts: list[str], prof: ChunkProfile) -> Tokens:
    encode_many = getattr(tokenizer, "encode_many", None)
    tokens = encode_many(texts) if encode_many is not None else \
        concatenate(tokenizer.encode(texts), prof.doc_bytes.tolist())
    if tokens.in_chars:
        tokens = tokens._replace(starts=prof.char_starts[tokens.starts], ends=prof.char_starts[tokens.ends],
                                 in_chars=False)
    return tokens


def _token_counts(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    if not texts:
        return []
    counter = getattr(tokenizer, "count_tokens", None)
    return list(counter(texts)) if counter is not None else [len(e.starts) for e in tokenizer.encode(texts)]


_PRE_TOKENIZERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pre_tokenizer(tokenizer: Tokenizer):
    """A tokenizer's pre-tokenizer, built once per process (HF parses its JSON for it)."""
    try:
        if tokenizer not in _PRE_TOKENIZERS:
            _PRE_TOKENIZERS[tokenizer] = tokenizer.pre_tokenizer()
        return _PRE_TOKENIZERS[tokenizer]
    except TypeError:  # not weakly referenceable: build it each time
        return tokenizer.pre_tokenizer()


class _Sums:
    """Per-language sums over a chunk's texts (exact: int64 throughout)."""

    def __init__(self, lang_of_doc: np.ndarray, n_langs: int):
        self.lang_of_doc, self.n_langs = lang_of_doc, n_langs

    def docs(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n_langs, dtype=np.int64)
        np.add.at(out, self.lang_of_doc, values.astype(np.int64))
        return out

    def items(self, doc_of_item: np.ndarray) -> np.ndarray:
        return np.bincount(self.lang_of_doc[doc_of_item], minlength=self.n_langs).astype(np.int64)


def measure_chunk(chunk: Chunk, tokenizers: Sequence[Tokenizer], *, evidence: bool,
                  cache: ProfileCache | None = None, observe: Sequence[Observer | None] | None = None) -> ChunkResult:
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
    normalized = _normalized(texts, sampled) if evidence else {}
    for t, tokenizer in enumerate(tokenizers):
        tokens = _tokens(tokenizer, texts, prof)
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
        starts_sorted, ends_sorted = np.maximum.accumulate(starts), np.maximum.accumulate(ends)
        per_word = (np.searchsorted(starts_sorted, prof.word_ends, side="left")
                    - np.searchsorted(ends_sorted, prof.word_starts, side="right"))
        cuts_per_lang = sums.items(doc_of_token[:-1][cut])
        split_per_lang = sums.items(prof.word_doc[per_word >= 2])
        unknown = sums.items(doc_of_token[tokens.unknown]) if tokens.unknown is not None else None
        byte = sums.items(doc_of_token[tokens.byte_fallback]) if tokens.byte_fallback is not None else None
        n_tokens, n_boundaries = sums.docs(tokens.counts), sums.docs(boundaries)
        for i, lang in enumerate(langs):
            result.counts[(t, lang)] = Counts(
                n_docs=int(units["n_docs"][i]), n_bytes=int(units["n_bytes"][i]), n_chars=int(units["n_chars"][i]),
                n_graphemes=int(units["n_graphemes"][i]), n_words=int(units["n_words"][i]),
                n_tokens=int(n_tokens[i]), n_split_words=int(split_per_lang[i]),
                n_unknown_tokens=int(unknown[i]) if unknown is not None else 0,
                n_byte_tokens=int(byte[i]) if byte is not None else 0,
                n_boundaries=int(n_boundaries[i]), n_cut_boundaries=int(cuts_per_lang[i]))
        if observe is not None and observe[t] is not None:
            _observe(observe[t], chunk, prof, tokens)  # type: ignore[arg-type]
        if not evidence:
            continue
        _offenders(result, t, langs, lang_of_doc, prof, tokens)
        _token_examples(result, t, chunk, prof, tokens, cut, ends_sorted, starts_sorted, sampled, data)
        _pretokens(result, t, tokenizer, chunk, prof, sampled)
        _normalization(result, t, tokenizer, chunk, prof, tokens.counts, sampled, normalized)
    for pools in (result.pretoken_pool, result.token_pool):
        for key in pools:
            pools[key] = _trim(pools[key])
    return result


def _observe(observer: Observer, chunk: Chunk, prof: ChunkProfile, tokens: Tokens) -> None:
    """Per document, its profile and tokens in its own offsets (compare's bootstrap needs them)."""
    edges = np.zeros(len(chunk.texts) + 1, dtype=np.int64)
    np.cumsum(tokens.counts, out=edges[1:])
    word_edges = np.searchsorted(prof.word_doc, np.arange(len(chunk.texts) + 1))
    for i in range(len(chunk.texts)):
        base, end = int(prof.byte_base[i]), int(prof.byte_base[i + 1])
        a, b = edges[i], edges[i + 1]
        wa, wb = word_edges[i], word_edges[i + 1]
        profile = TextProfile(
            n_bytes=end - base, n_chars=int(prof.doc_chars[i]), n_graphemes=int(prof.doc_graphemes[i]),
            word_starts=prof.word_starts[wa:wb] - base, word_ends=prof.word_ends[wa:wb] - base,
            grapheme_starts=np.flatnonzero(prof.is_cluster_start[base:end + 1]),
            char_starts=prof.char_starts[prof.char_base[i]:prof.char_base[i + 1] + 1] - base)
        observer(chunk.doc_index[i], profile, Encoded(
            tokens.starts[a:b] - base, tokens.ends[a:b] - base,
            tokens.unknown[a:b] if tokens.unknown is not None else None,
            tokens.byte_fallback[a:b] if tokens.byte_fallback is not None else None))


def _offenders(result: ChunkResult, t: int, langs: list[str], lang_of_doc: np.ndarray,
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
    depth = np.zeros(len(prof.codes) + 1, dtype=np.int64)
    np.add.at(depth, first, 1)
    np.add.at(depth, np.minimum(last, len(prof.codes)), -1)
    chars = np.flatnonzero(np.cumsum(depth)[:-1] > 0)
    char_lang = lang_of_doc[np.searchsorted(prof.char_base, chars, side="right") - 1]
    keys, amounts = np.unique(char_lang * 0x110000 + prof.codes[chars].astype(np.int64), return_counts=True)
    for key, amount in zip(keys.tolist(), amounts.tolist()):
        char = chr(key % 0x110000)
        if char.isspace():  # a byte token such as " \xe0\xa6" also covers the space before
            continue
        counter = result.offenders.setdefault((t, langs[key // 0x110000]), Counter())
        counter[char] += amount


def _contenders(keys: np.ndarray, words: list[str] | None = None) -> np.ndarray:
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


def _token_examples(result: ChunkResult, t: int, chunk: Chunk, prof: ChunkProfile, tokens: Tokens,
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
    first = np.searchsorted(ends_sorted, prof.word_starts, side="right")
    last = np.searchsorted(starts_sorted, prof.word_ends, side="left")
    # example_rank: words shown whole first, then most cuts (then the word: _offer and _trim)
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
            _offer(pool, CutExample(data[ws:we].decode("utf-8"), pieces, int(n_cuts[w])))


@cache
def _is_mark(code: int) -> bool:
    return _MARK.match(chr(code)) is not None


def _pretokens(result: ChunkResult, t: int, tokenizer: Tokenizer, chunk: Chunk, prof: ChunkProfile,
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
    bounds: list[np.ndarray] = []
    plain_docs: list[int] = []
    for i in np.flatnonzero(sampled).tolist():
        text = chunk.texts[i]
        seen, spans = pre.split(text)
        if seen != text:
            counts, boundaries, cuts = analyse(seen, spans)
            key = (t, chunk.langs[i])
            result.pretokens[key] = result.pretokens[key] + counts if key in result.pretokens else counts
            if cuts:
                pool = result.pretoken_pool.setdefault(key, {})
                for example in word_examples(seen, boundaries, cuts, limit=WORDS_PER_DOCUMENT):
                    _offer(pool, example)
            continue
        flat = np.array(spans, dtype=np.int64).reshape(-1)
        inner = np.unique(flat[(flat > 0) & (flat < len(text))]) + prof.char_base[i]
        bounds.append(inner)
        plain_docs.append(i)
        totals[position[chunk.langs[i]], :2] += (len(text), len(spans))
    if plain_docs:
        inner = np.concatenate(bounds)
        doc_of = np.repeat(np.array(plain_docs), [len(b) for b in bounds])
        lang_of = np.array([position[chunk.langs[d]] for d in plain_docs])[np.repeat(np.arange(len(plain_docs)),
                                                                                      [len(b) for b in bounds])]
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
        _pretoken_examples(result, t, chunk, prof, inner, inner[is_cut], doc_of, set(plain_docs))


def _pretoken_examples(result: ChunkResult, t: int, chunk: Chunk, prof: ChunkProfile, inner: np.ndarray,
                       cut_at: np.ndarray, doc_of: np.ndarray, docs: set[int]) -> None:
    if not len(cut_at):
        return
    word_first = np.searchsorted(prof.char_starts, prof.word_starts)  # in characters
    word_last = np.searchsorted(prof.char_starts, prof.word_ends)
    n_cuts = np.searchsorted(cut_at, word_last, side="left") - np.searchsorted(cut_at, word_first, side="right")
    in_docs = np.isin(prof.word_doc, np.array(sorted(docs)))
    words = np.flatnonzero((n_cuts > 0) & in_docs)
    if not len(words):
        return
    word_docs = prof.word_doc[words]
    group_start = np.flatnonzero(np.concatenate(([True], word_docs[1:] != word_docs[:-1])))
    rank_in_doc = np.arange(len(words)) - np.repeat(group_start, np.diff(np.append(group_start, len(words))))
    words = words[rank_in_doc < WORDS_PER_DOCUMENT]
    lengths = word_last[words] - word_first[words]
    n_pieces = (np.searchsorted(inner, word_last[words], side="left")
                - np.searchsorted(inner, word_first[words], side="right") + 1)
    hidden = (lengths > MAX_EXAMPLE_CHARS) | (n_pieces > MAX_EXAMPLE_PIECES)
    keys = hidden.astype(np.int64) * (1 << 40) - n_cuts[words]
    joined = None
    for lang in dict.fromkeys(chunk.langs[d] for d in prof.word_doc[words].tolist()):
        mine = np.flatnonzero(np.array([chunk.langs[d] == lang for d in prof.word_doc[words].tolist()]))
        chosen = _widen(mine, keys, lambda w: (int(word_first[w]), int(word_last[w])), words)
        pool = result.pretoken_pool.setdefault((t, lang), {})
        joined = joined if joined is not None else "".join(chunk.texts)
        for w in words[chosen].tolist():
            a, b = int(word_first[w]), int(word_last[w])
            edges = [a, *inner[np.searchsorted(inner, a, side="right"):np.searchsorted(inner, b, side="left")].tolist(), b]
            _offer(pool, CutExample(joined[a:b], tuple(joined[x:y] for x, y in pairwise(edges)), int(n_cuts[w])))


def _normalized(texts: list[str], sampled: np.ndarray) -> dict[str, dict[int, str]]:
    """Per form, the sampled texts it changes, normalized (shared by every tokenizer)."""
    out: dict[str, dict[int, str]] = {}
    for form in FORMS:
        changed = {}
        for i in np.flatnonzero(sampled).tolist():
            text = unicodedata.normalize(form, texts[i])  # type: ignore[arg-type]
            if text != texts[i]:
                changed[i] = text
        out[form] = changed
    return out


def _normalization(result: ChunkResult, t: int, tokenizer: Tokenizer, chunk: Chunk, prof: ChunkProfile,
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
    for form in FORMS:
        changed = normalized[form]
        indices = list(changed)
        new_tokens = _token_counts(tokenizer, [changed[i] for i in indices])
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


# --- running chunks, here or in worker processes ------------------------------------------------

_WORKER: dict = {}


# fork where the platform has it (the tokenizers loaded here are inherited), else spawn
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


def _worker_start(specs: list[str], pattern: str | None, evidence: bool, cache_folder: str | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle, once
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the workers are the parallelism
    if _WORKER.get("tokenizers") is None:  # not inherited by fork: load by spec, once
        _WORKER["tokenizers"] = [load_tokenizer(spec, pattern=pattern) for spec in specs]
    _WORKER["evidence"], _WORKER["cache_folder"] = evidence, cache_folder


def _worker_chunk(chunk: Chunk) -> ChunkResult:
    folder = _WORKER["cache_folder"]
    cache = ProfileCache(Path(folder) if folder else None)
    result = measure_chunk(chunk, _WORKER["tokenizers"], evidence=_WORKER["evidence"], cache=cache)
    result.cache = cache.stats
    return result


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run(tokenizers: Sequence[Tokenizer], documents: Iterable[Document], *, evidence: bool,
        cache: ProfileCache | None = None, jobs: int = 1, specs: Sequence[str | None] | None = None,
        pattern: str | None = None, advance: Callable[[int], None] | None = None,
        observe: Sequence[Observer | None] | None = None, chunk_bytes: int = CHUNK_BYTES) -> ChunkResult:
    """Measure `documents` with every tokenizer, chunk by chunk, and merge the results in order;
    `cache.stats` counts the profile cache's hits and misses, whichever process had them.

    With `jobs` > 1 chunks run in worker processes: forked from this one where the platform
    allows (tokenizers already loaded), else spawned and loading each tokenizer by its spec.
    Observers need every document's tokens here, so they imply one process and whole
    documents (no pieces).
    """
    cache = cache if cache is not None else ProfileCache(None)
    chunks = chunked(documents, chunk_bytes=chunk_bytes, piece_bytes=0 if observe else PIECE_BYTES)
    head = list(islice(chunks, 2))
    chunks = chain(head, chunks)
    total = ChunkResult()
    can_fork = START_METHOD == "fork"
    if jobs > 1 and len(head) > 1 and not observe and (can_fork or (specs is not None and all(specs))):
        context = multiprocessing.get_context(START_METHOD)
        _WORKER["tokenizers"] = list(tokenizers) if can_fork else None
        try:
            total = _run_parallel(context, chunks, jobs, [s or "" for s in (specs or [])] if not can_fork else [],
                                  pattern, evidence, cache, advance)
        finally:
            _WORKER.clear()
        cache.stats = cache.stats + total.cache  # the workers' hits and misses
        return total
    for chunk in chunks:  # one chunk, one process: nothing to gain from workers
        result = measure_chunk(chunk, tokenizers, evidence=evidence, cache=cache, observe=observe)
        total = total.merge(result)
        if advance is not None:
            advance(result.n_bytes)
    return total


def _run_parallel(context, chunks: Iterable[Chunk], jobs: int, specs: list[str], pattern: str | None,
                  evidence: bool, cache: ProfileCache, advance) -> ChunkResult:
    from concurrent.futures import ProcessPoolExecutor

    folder = str(cache.folder) if cache.folder is not None else None
    total = ChunkResult()
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_start,
                               initargs=(specs, pattern, evidence, folder))
    try:
        pending: deque = deque()
        for chunk in chunks:  # at most two chunks per worker in flight: memory stays flat
            pending.append(pool.submit(_worker_chunk, chunk))
            while len(pending) >= 2 * jobs:
                total = _take(total, pending.popleft().result(), advance)
        while pending:
            total = _take(total, pending.popleft().result(), advance)
    except BaseException:  # an error in a chunk, a bad line read here, Ctrl-C: stop the rest
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return total


def _take(total: ChunkResult, result: ChunkResult, advance) -> ChunkResult:
    if advance is not None:
        advance(result.n_bytes)
    return total.merge(result)
