"""count(tokenizer, documents) -> additive Counts per language. Pure: no pandas, no printing."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .backends import Tokenizer
from .corpus import Document
from .results import Counts
from .text import TextProfile, profile

BATCH = 512


def profile_documents(documents: Sequence[Document]) -> list[TextProfile]:
    """Unit counts of every document; they do not depend on the tokenizer, so compute them once."""
    return [profile(doc.text) for doc in documents]


def split_words(profile_: TextProfile, starts: np.ndarray, ends: np.ndarray) -> int:
    """How many words overlap two or more tokens (tokens are in text order)."""
    if profile_.n_words == 0 or len(starts) == 0:
        return 0
    # Offsets are in text order; a backend's zero-width piece must not unsort them.
    starts, ends = np.maximum.accumulate(starts), np.maximum.accumulate(ends)
    # tokens overlapping [ws, we): those starting before we, minus those ending at or before ws
    covering = (np.searchsorted(starts, profile_.word_ends, side="left")
                - np.searchsorted(ends, profile_.word_starts, side="right"))
    return int(np.count_nonzero(covering >= 2))


def count(tokenizer: Tokenizer, documents: Sequence[Document], *,
          profiles: Sequence[TextProfile] | None = None,
          advance: Callable[[int], None] | None = None) -> dict[str, Counts]:
    """Counts per language of `documents` under `tokenizer`, in first-seen language order."""
    if profiles is None:
        profiles = profile_documents(documents)
    totals: dict[str, Counts] = {}
    for first in range(0, len(documents), BATCH):
        batch = documents[first:first + BATCH]
        spans = tokenizer.token_spans([doc.text for doc in batch])
        for doc, prof, (starts, ends) in zip(batch, profiles[first:first + BATCH], spans):
            counts = Counts(n_docs=1, n_bytes=prof.n_bytes, n_chars=prof.n_chars,
                            n_graphemes=prof.n_graphemes, n_words=prof.n_words,
                            n_tokens=len(starts), n_split_words=split_words(prof, starts, ends))
            totals[doc.lang] = totals[doc.lang] + counts if doc.lang in totals else counts
        if advance is not None:
            advance(len(batch))
    return totals
