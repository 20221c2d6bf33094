"""count(tokenizer, documents) -> additive Counts per language. Pure: no pandas, no printing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from .backends import Encoded, Tokenizer
from .corpus import Document
from .results import Counts
from .text import TextProfile, profile

BATCH = 512
Observer = Callable[[int, TextProfile, Encoded], None]


def profile_documents(documents: Sequence[Document]) -> list[TextProfile]:
    """Unit counts of every document; they do not depend on the tokenizer, so compute them once."""
    return [profile(doc.text) for doc in documents]


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
    span), when either side is off a cluster start, or between byte-fallback pieces of which
    one has zero width (SentencePiece gives all but the last piece of a character no width).
    """
    starts, ends = encoded.starts, encoded.ends
    if len(starts) < 2:
        return np.zeros(0, dtype=bool)
    left_end, right_start = ends[:-1], starts[1:]
    cut = (left_end > right_start) | ~_on(profile_.grapheme_starts, left_end) \
        | ~_on(profile_.grapheme_starts, right_start)
    if encoded.byte_fallback is not None:
        zero = starts == ends
        cut |= encoded.byte_fallback[:-1] & encoded.byte_fallback[1:] & (zero[:-1] | zero[1:])
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


def count(tokenizer: Tokenizer, documents: Sequence[Document], *,
          profiles: Sequence[TextProfile] | None = None,
          advance: Callable[[int], None] | None = None,
          offenders: dict[str, Counter] | None = None,
          observe: Observer | None = None) -> dict[str, Counts]:
    """Counts per language of `documents` under `tokenizer`, in first-seen language order.

    Pass `offenders` to collect, per language, the characters behind unknown and byte tokens;
    `observe(index, profile, encoded)` sees every document's tokens (compare uses it).
    """
    if profiles is None:
        profiles = profile_documents(documents)
    totals: dict[str, Counts] = {}
    for first in range(0, len(documents), BATCH):
        batch = documents[first:first + BATCH]
        encoded_batch = tokenizer.encode([doc.text for doc in batch])
        for offset, (doc, prof, encoded) in enumerate(zip(batch, profiles[first:first + BATCH], encoded_batch)):
            if observe is not None:
                observe(first + offset, prof, encoded)
            cuts = cut_boundaries(prof, encoded)
            counts = Counts(
                n_docs=1, n_bytes=prof.n_bytes, n_chars=prof.n_chars, n_graphemes=prof.n_graphemes,
                n_words=prof.n_words, n_tokens=len(encoded.starts),
                n_split_words=split_words(prof, encoded.starts, encoded.ends),
                n_unknown_tokens=int(encoded.unknown.sum()) if encoded.unknown is not None else 0,
                n_byte_tokens=int(encoded.byte_fallback.sum()) if encoded.byte_fallback is not None else 0,
                n_boundaries=len(cuts), n_cut_boundaries=int(cuts.sum()))
            totals[doc.lang] = totals[doc.lang] + counts if doc.lang in totals else counts
            if offenders is not None:
                offenders.setdefault(doc.lang, Counter()).update(flagged_chars(doc.text, prof, encoded))
        if advance is not None:
            advance(len(batch))
    return totals
