"""count(tokenizer, documents) -> additive Counts per language. Pure: no pandas, no printing.

The counting itself is in engine.py (vectorized over chunks); here the per-text forms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

from fertility.backends import Encoded, Tokenizer
from fertility.io.corpus import Document
from fertility.metrics.counts import Counts
from fertility.text.units import TextProfile

from .local import run

__all__ = ["count", "cut_boundaries", "flagged_chars", "split_words", "tokens_per_word"]

def _on(points: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Which positions are among the sorted `points`."""
    index = np.minimum(np.searchsorted(points, positions), len(points) - 1)
    return points[index] == positions


def tokens_per_word(profile_: TextProfile, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each whitespace word, how many tokens overlap it (tokens are in text order)."""
    if profile_.n_words == 0 or len(starts) == 0:
        return np.zeros(profile_.n_words, dtype=np.int64)
    # Offsets are in text order; a backend's zero-width piece must not unsort them.
    starts, ends = np.maximum.accumulate(starts), np.maximum.accumulate(ends)
    # tokens overlapping [ws, we): those starting before we, minus those ending at or before ws
    return (np.searchsorted(starts, profile_.word_ends, side="left")
            - np.searchsorted(ends, profile_.word_starts, side="right"))


def split_words(profile_: TextProfile, starts: np.ndarray, ends: np.ndarray) -> int:
    """How many words overlap two or more tokens."""
    return int(np.count_nonzero(tokens_per_word(profile_, starts, ends) >= 2))


def cut_boundaries(profile_: TextProfile, encoded: Encoded) -> np.ndarray:
    """Per boundary between consecutive tokens: does it fall inside a grapheme cluster?

    A boundary cuts when the two tokens overlap (two byte tokens sharing one character's
    span), when either side is off a cluster start, or after a zero-width byte-fallback piece
    (not a character's last byte). The engine (engine.measure_chunk) computes the same for a
    whole chunk at once; this per-text form serves `show` and tests.
    """
    starts, ends = encoded.starts, encoded.ends
    if len(starts) < 2:
        return np.zeros(0, dtype=bool)
    left_end, right_start = ends[:-1], starts[1:]
    cut = (left_end > right_start) | ~_on(profile_.grapheme_starts, left_end) \
        | ~_on(profile_.grapheme_starts, right_start)
    if encoded.byte_fallback is not None:
        zero = starts == ends
        cut |= encoded.byte_fallback[:-1] & zero[:-1]
    return cut


def flagged_chars(text: str, profile_: TextProfile, encoded: Encoded) -> Counter:
    """Characters covered by unknown or byte-fallback tokens: the top offenders."""
    masks = [m for m in (encoded.unknown, encoded.byte_fallback) if m is not None]
    if not masks or not any(m.any() for m in masks):
        return Counter()
    flagged = np.logical_or.reduce(masks)
    first = np.searchsorted(profile_.char_starts, encoded.starts[flagged], side="right") - 1
    last = np.searchsorted(profile_.char_starts, encoded.ends[flagged], side="left")
    chars: set[int] = set()
    for a, b in zip(first.tolist(), last.tolist()):
        chars.update(range(a, max(b, a + 1)))
    # a byte token such as " \xe0\xa6" also covers the space before the character it cuts
    return Counter(text[i] for i in chars if i < len(text) and not text[i].isspace())


def count(tokenizer: Tokenizer, documents: Iterable[Document], *,
          advance: Callable[[int], None] | None = None) -> dict[str, Counts]:
    """Counts per language of `documents` under `tokenizer`, in first-seen language order;
    `advance(n_bytes)` after each chunk."""
    total = run([tokenizer], documents, evidence=False, advance=advance)
    out: dict[str, Counts] = {}
    for (_, lang), counts in total.counts.items():
        out[lang] = counts
    return out
