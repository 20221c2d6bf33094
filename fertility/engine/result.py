"""What measuring chunks produces: one additive `ChunkResult` per chunk, merged in any order,
and what a run's merged result says beyond the counts (how its fast path went, token length
and id distributions).

Its own module because everything downstream (the local and Dask executors, the audit's
assembly) handles results without measuring anything; `merge` is exact, associative and
commutative, which is what lets workers measure byte ranges independently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from fertility.backends import FastCheck, Tokenizer
from fertility.diagnose.normalization import NormalizationCounts
from fertility.diagnose.pretokens import CutExample, PretokenCounts
from fertility.metrics.counts import Counts
from fertility.metrics.token_stats import TokenStats
from fertility.results.signature import fast_path_chunks

from .chunks import Chunk
from .documents import DocumentRows
from .evidence_pools import offer, trim
from .profiles import CacheStats

Key = tuple[int, str]  # (tokenizer index, language)


def _add_into(out: dict, b: dict) -> None:
    """Add b's values into out, key by key (values are immutable sums: Counts and the like)."""
    for key, value in b.items():
        out[key] = out[key] + value if key in out else value


@dataclass(frozen=True)
class FastPathStats:
    """Chunks whose tokens came from a tokenizer's fast path, chunks the library counted (texts
    the fast path leaves to it, or a difference found by the check), and the earliest difference."""

    fast: int = 0
    library: int = 0
    differences: int = 0
    first_difference: tuple[int, str] | None = None  # (document number, what differed)

    @classmethod
    def of(cls, check: FastCheck, chunk: Chunk) -> FastPathStats:
        if check.difference is None:
            return cls(fast=int(check.used), library=int(not check.used))
        document = chunk.doc_index[check.text] if check.text is not None else chunk.doc_index[0]
        return cls(library=1, differences=1, first_difference=(document, check.difference))

    def __add__(self, other: FastPathStats) -> FastPathStats:
        firsts = [f for f in (self.first_difference, other.first_difference) if f is not None]
        return FastPathStats(self.fast + other.fast, self.library + other.library,
                             self.differences + other.differences, min(firsts) if firsts else None)


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
    tokens: dict[Key, TokenStats] = field(default_factory=dict)  # token lengths and id counts
    cache: CacheStats = field(default_factory=CacheStats)
    documents: DocumentRows | None = None  # per-document values, when asked for (documents.py)
    # per tokenizer index; bookkeeping of how chunks were counted, not a measurement: any split
    # of a corpus has the same results, but not the same number of chunks
    fast_path: dict[int, FastPathStats] = field(default_factory=dict, compare=False)

    def merge(self, other: ChunkResult) -> ChunkResult:
        """A new result holding both; neither is changed, and the new one shares no counter
        with them (it is an empty result that absorbs one, then the other)."""
        return ChunkResult().absorb(self).absorb(other)

    def absorb(self, other: ChunkResult) -> ChunkResult:
        """Add `other` into this result, in place: what the executors do with each chunk's
        result, so that each costs its own size (a new result per chunk would copy the total's
        token id tallies and offender counters every time, a hundred thousand ids per language
        on a large corpus). Nothing of `other` is kept by reference (its counters are copied
        when first seen), so `other` stays as it was."""
        self.n_bytes += other.n_bytes
        _add_into(self.counts, other.counts)
        _add_into(self.pretokens, other.pretokens)
        _add_into(self.normalization, other.normalization)
        _add_into(self.fast_path, other.fast_path)
        for key, counter in other.offenders.items():
            self.offenders.setdefault(key, Counter()).update(counter)
        for key, stats in other.tokens.items():
            held = self.tokens.get(key)
            if held is None:
                self.tokens[key] = TokenStats(stats.lengths, Counter(stats.ids))
            else:
                held.ids.update(stats.ids)
                self.tokens[key] = TokenStats(tuple(a + b for a, b in zip(held.lengths, stats.lengths)), held.ids)
        for mine_pools, theirs_pools in ((self.pretoken_pool, other.pretoken_pool), (self.token_pool, other.token_pool)):
            for key, pool in theirs_pools.items():
                target = dict(mine_pools.get(key, {}))
                for example in pool.values():
                    offer(target, example)
                mine_pools[key] = trim(target)
        self.cache = self.cache + other.cache
        if other.documents is not None:
            self.documents = other.documents if self.documents is None else self.documents.merge(other.documents)
        return self


def fast_path_outcome(names: Sequence[str], loaded: Sequence[Tokenizer], total: ChunkResult) -> dict[str, dict]:
    """Each tokenizer's signature fragment, with how many chunks its fast path counted; one
    warning per tokenizer whose fast path differed from the library (those chunks were counted
    by the library, so the numbers are the library's)."""
    import warnings

    from fertility.errors import FertilityWarning

    infos = {}
    for t, (name, tokenizer) in enumerate(zip(names, loaded)):
        info = tokenizer.info()
        stats = total.fast_path.get(t)
        if stats is not None:
            n = stats.fast + stats.library
            info["fast_path_chunks"] = fast_path_chunks(stats.fast, n, stats.differences)
            if stats.first_difference is not None:
                document, what = stats.first_difference
                warnings.warn(f"{name}: the fast path differed from the library on {stats.differences} of {n} chunks "
                              f"(first at document {document}: {what}); the library counted those chunks",
                              FertilityWarning, stacklevel=3)
        infos[name] = info
    return infos


def distributions(names: Sequence[str], loaded: Sequence[Tokenizer], langs: Sequence[str],
                  total: ChunkResult) -> tuple[dict, dict]:
    """Per (tokenizer, language and ALL): token length histogram and Rényi efficiency; per
    tokenizer: the vocabulary ids never produced on the corpus (when it has ids)."""
    from fertility.metrics.counts import ALL
    from fertility.metrics.token_stats import TokenStats, ordinary_vocabulary, renyi_efficiency, unseen

    rows: dict = {}
    unseen_tokens: dict = {}
    for t, (name, tokenizer) in enumerate(zip(names, loaded)):
        per_lang = {lang: total.tokens[(t, lang)] for lang in langs if (t, lang) in total.tokens}
        every = sum(per_lang.values(), TokenStats())
        ordinary = ordinary_vocabulary(tokenizer) if every.ids else None
        size = len(ordinary) if ordinary is not None else None
        for lang, stats in [*per_lang.items(), (ALL, every)]:
            rows[(name, lang)] = {"token_lengths": list(stats.lengths),
                                  "renyi_efficiency": renyi_efficiency(stats.ids, size)}
        if size:
            unseen_tokens[name] = {"vocab_size": size, "n_unseen": unseen(per_lang.values(), ordinary)}
    return rows, unseen_tokens
