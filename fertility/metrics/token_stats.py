"""Token distributions from the counting pass: how long tokens are, which ids occur.

Per (tokenizer, language) an additive `TokenStats`: a histogram of the bytes of text each token
covers (0..15, then 16 and more) and the frequency of each token id. Merged by addition, so
chunks, files and worker processes give exactly the whole corpus's. From the id frequencies:

- Rényi efficiency (Zouhar et al. 2023, "Tokenization and the Noiseless Channel", alpha = 2.5):
  H_alpha(p) / log V with H_alpha(p) = 1/(1 - alpha) * log(sum_i p_i^alpha), p the unigram
  distribution of token ids on the corpus and V the size of the ordinary vocabulary. Information
  only.
- Tokens never produced: ids of the ordinary vocabulary that no token of the corpus has.

The ordinary vocabulary is one rule for every backend (backends/vocabularies.ORDINARY_KINDS): the ids a text can
produce as fertility counts (special tokens neither added nor parsed), so special and control
tokens and unused ids are left out, the unknown token kept.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

LENGTH_BUCKETS = 17  # bytes 0..15, then one bucket for 16 and more
RENYI_ALPHA = 2.5


@dataclass(frozen=True)
class TokenStats:
    lengths: tuple[int, ...] = (0,) * LENGTH_BUCKETS
    ids: Counter = field(default_factory=Counter)  # token id -> how often; empty without ids

    def __add__(self, other: TokenStats) -> TokenStats:
        return TokenStats(tuple(a + b for a, b in zip(self.lengths, other.lengths)), self.ids + other.ids)


def per_language(lang_of_token: np.ndarray, n_langs: int, starts: np.ndarray, ends: np.ndarray,
                 ids: np.ndarray | None) -> list[TokenStats]:
    """The TokenStats of each language of a chunk, from its tokens' byte spans and ids."""
    size = np.clip(ends - starts, 0, LENGTH_BUCKETS - 1)
    hist = np.bincount(lang_of_token * LENGTH_BUCKETS + size,
                       minlength=n_langs * LENGTH_BUCKETS).reshape(n_langs, LENGTH_BUCKETS)
    out = []
    for i in range(n_langs):
        found: Counter = Counter()
        if ids is not None:
            mine = ids[lang_of_token == i] if n_langs > 1 else ids
            if len(mine) and mine.min() >= 0:  # a count per possible id: linear, no sort
                per_id = np.bincount(mine)
                values = np.flatnonzero(per_id)
                found = Counter(dict(zip(values.tolist(), per_id[values].tolist())))
            else:
                values, counts = np.unique(mine, return_counts=True)
                found = Counter(dict(zip(values.tolist(), counts.tolist())))
        out.append(TokenStats(tuple(int(v) for v in hist[i]), found))
    return out


def renyi_efficiency(ids: Counter, vocab_size: int | None, alpha: float = RENYI_ALPHA) -> float:
    """H_alpha(p) / log V of the id distribution; NaN without ids or a vocabulary of 2+."""
    total = sum(ids.values())
    if not total or not vocab_size or vocab_size < 2:
        return math.nan
    # fsum is exactly rounded, so the figure does not depend on the order ids were first seen
    # (which follows how the corpus was cut into chunks)
    power = math.fsum((count / total) ** alpha for count in ids.values())
    return (math.log(power) / (1 - alpha)) / math.log(vocab_size)


def unseen(stats: Iterable[TokenStats], ordinary: np.ndarray | None) -> int | None:
    """How many ids of the ordinary vocabulary no token of the corpus has (None without one)."""
    if ordinary is None or not len(ordinary):
        return None
    seen: set[int] = set()
    for item in stats:
        seen.update(item.ids)
    found = np.fromiter(seen, dtype=np.int64, count=len(seen))
    return int(len(ordinary) - np.count_nonzero(np.isin(ordinary, found)))


def ordinary_vocabulary(tokenizer) -> np.ndarray | None:
    """The ids of the tokenizer's ordinary vocabulary (see above); None without a vocabulary."""
    vocabulary = tokenizer.vocabulary()
    found = vocabulary.ordinary_ids() if vocabulary is not None else None
    return found if found is not None and len(found) else None
