"""Example pools: per (tokenizer, language), the MAX_EXAMPLES best cut words a finding shows.

A pool keeps the best occurrence of each word (`offer`) and then the best words (`trim`), in an
order that does not depend on how the corpus was split, so chunk results merge exactly. The
evidence passes rank candidates with numpy first and spell out only those that can still make
the pool (`widen`), because spelling every cut word costs more than measuring it.
"""

from __future__ import annotations

import numpy as np

from fertility.diagnose.pretokens import CutExample, example_rank

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


def _contenders(keys: np.ndarray) -> np.ndarray:
    """Indices (into `keys`) of the candidates that can reach the best MAX_EXAMPLES distinct
    words, ranking by `keys` first (lower is better) and the word second: whole key levels,
    from the best, until they hold MAX_EXAMPLES candidates (distinctness is settled later)."""
    if len(keys) <= MAX_EXAMPLES:
        return np.arange(len(keys))
    levels, sizes = np.unique(keys, return_counts=True)
    enough = np.searchsorted(np.cumsum(sizes), MAX_EXAMPLES)
    return np.flatnonzero(keys <= levels[min(int(enough), len(levels) - 1)])


def widen(mine: np.ndarray, keys: np.ndarray, span, words: np.ndarray) -> np.ndarray:
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
