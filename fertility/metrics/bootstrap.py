"""Bootstrap intervals, the one home for resampling: documents drawn with replacement, sums
re-taken, and the central `level` share of the rounds kept.

Two designs, for two questions. Tokenizer against tokenizer (`compare`): the same documents
for both in each round, within each language, so the language mix stays as measured. Language
against language (premiums and the Gini on parallel text): the same line indices for every
language in each round, because line i of each language says the same thing. Each keeps its
own order of draws, so a seed gives the same interval it always gave.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def percentile_interval(samples: np.ndarray, level: float) -> tuple[float, float]:
    """The central `level` share of the bootstrap rounds (NaN rounds left out)."""
    import numpy as np

    low, high = np.nanquantile(samples, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def bootstrap_ratio(tokens_a: np.ndarray, tokens_b: np.ndarray, *, rounds: int = 1000,
                    seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Interval of chars/token(B) / chars/token(A) = tokens(A) / tokens(B), documents resampled
    in pairs (the same documents for A and B in each round)."""
    return bootstrap_ratio_stratified([(tokens_a, tokens_b)], rounds=rounds, seed=seed, level=level)


def bootstrap_ratio_stratified(groups: Sequence[tuple[np.ndarray, np.ndarray]], *, rounds: int = 1000,
                               seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """The same interval over several languages: each round resamples every language's
    documents within that language (as many as it has), in pairs, and sums the tokens, so the
    language mix stays as measured. Draws: language by language, round by round."""
    sums = _paired_round_sums(groups, rounds=rounds, seed=seed)
    return _pooled_interval(sums, level) if sums else (math.nan, math.nan)


def bootstrap_ratios_by_group(groups: Sequence[tuple[np.ndarray, np.ndarray]], *, rounds: int = 1000,
                              seed: int = 0, level: float = 0.95,
                              threads: int = 2) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """`bootstrap_ratio` of each group and `bootstrap_ratio_stratified` of all, the same
    intervals as those calls give, in about half their time.

    The pooled draws run language by language from one generator, and its first language
    draws exactly what that language alone draws with the same seed: those rounds are summed
    once and serve both. With `threads` of 2 or more, the other languages' own draws run
    meanwhile on one more thread (numpy draws, gathers and sums without holding the GIL); more
    would not help, as the pooled draws, as long as all the others together, cannot be split."""
    from concurrent.futures import Future, ThreadPoolExecutor

    def alone(i: int) -> tuple[float, float]:
        return bootstrap_ratio(*groups[i], rounds=rounds, seed=seed, level=level)

    first = next((i for i, (a, _) in enumerate(groups) if len(a)), None)
    rest = [i for i in range(len(groups)) if i != first]
    if threads >= 2:
        with ThreadPoolExecutor(1) as pool:  # this thread draws the pooled rounds meanwhile
            others: dict[int, Future] = {i: pool.submit(alone, i) for i in rest}
            pooled = _paired_round_sums(groups, rounds=rounds, seed=seed)
            each = {i: future.result() for i, future in others.items()}
    else:
        pooled = _paired_round_sums(groups, rounds=rounds, seed=seed)
        each = {i: alone(i) for i in rest}
    if first is None:
        return [each[i] for i in range(len(groups))], (math.nan, math.nan)
    each[first] = _pooled_interval(pooled[:1], level)
    return [each[i] for i in range(len(groups))], _pooled_interval(pooled, level)


def _paired_round_sums(groups: Sequence[tuple[np.ndarray, np.ndarray]], *, rounds: int,
                       seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per non-empty group, its token sums under A and under B in each round, the groups drawn
    one after the other from one generator (the order of draws every interval here keeps)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for tokens_a, tokens_b in ((_narrow(a), _narrow(b)) for a, b in groups if len(a)):
        n = len(tokens_a)
        sum_a, sum_b = np.zeros(rounds, dtype=_exact(tokens_a)), np.zeros(rounds, dtype=_exact(tokens_b))
        chunk = max(1, 2_000_000 // n)
        for first in range(0, rounds, chunk):
            size = min(chunk, rounds - first)
            picks = rng.integers(0, n, size=(size, n))
            sum_a[first:first + size] = tokens_a[picks].sum(axis=1, dtype=_exact(tokens_a))
            sum_b[first:first + size] = tokens_b[picks].sum(axis=1, dtype=_exact(tokens_b))
        out.append((sum_a, sum_b))
    return out


def _pooled_interval(sums: Sequence[tuple[np.ndarray, np.ndarray]], level: float) -> tuple[float, float]:
    """The interval of the ratio of the groups' summed rounds (added in float64, group by group
    from zero, as the rounds were always pooled)."""
    import numpy as np

    rounds = len(sums[0][0])
    total_a, total_b = np.zeros(rounds), np.zeros(rounds)
    for sum_a, sum_b in sums:
        total_a += sum_a
        total_b += sum_b
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = total_a / total_b
    return percentile_interval(ratios, level)


def _narrow(values) -> np.ndarray:
    """Counts as int32 where they fit: the gathers move half the memory (sums stay int64, exact)."""
    import numpy as np

    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.size and 0 <= values.min() and values.max() < 2**31:
        return values.astype(np.int32)
    return values


def _exact(values: np.ndarray):
    """The sum's type: int64 for counts (exact whatever their width), float64 otherwise."""
    import numpy as np

    return np.int64 if values.dtype.kind in "iu" else np.float64


def parallel_line_sums(tokens: dict[str, np.ndarray], *, rounds: int, seed: int) -> dict[str, np.ndarray]:
    """Per language, its token sum in each round over the same resampled line indices (one
    draw of `rounds` x lines for all languages: the lines are parallel)."""
    import numpy as np

    n = len(next(iter(tokens.values())))
    picks = np.random.default_rng(seed).integers(0, n, size=(rounds, n))
    return {lang: values[picks].sum(axis=1) for lang, values in tokens.items()}
