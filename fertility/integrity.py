"""Grapheme integrity at the token level: which words the tokens cut inside a cluster.

A token boundary inside an extended grapheme cluster splits what a reader sees as one
letter (a consonant from its vowel sign, a conjunct, an emoji sequence). Counting them is in
measure.py; here we pick the worst words to show and spell out a text's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .backends import Encoded
from .corpus import Document
from .measure import cut_boundaries
from .pretokens import CutExample, example_rank
from .text import TextProfile


def piece_text(data: bytes, start: int, end: int) -> str:
    """A token's text; a character it holds only some bytes of is shown in brackets, `[ক]`."""
    first = start
    while first > 0 and (data[first] & 0xC0) == 0x80:  # back to the character's lead byte
        first -= 1
    out = []
    position = first
    while position < max(end, start + 1) and position < len(data):
        width = 1 + (data[position] >= 0xC0) + (data[position] >= 0xE0) + (data[position] >= 0xF0)
        char = data[position:position + width].decode("utf-8", errors="replace")
        whole = position >= start and position + width <= end
        out.append(char if whole else f"[{char}]")
        position += width
    return "".join(out)


def token_pieces(text: str, encoded: Encoded) -> list[str]:
    data = text.encode("utf-8")
    return [piece_text(data, s, e) for s, e in zip(encoded.starts.tolist(), encoded.ends.tolist())]


class TokenExamples:
    """Observer for measure.count: while the corpus is tokenized once, keep per language the
    words of its first `max_docs` documents whose tokens cut most clusters."""

    def __init__(self, documents: Sequence[Document], *, limit: int = 5, max_docs: int = 200):
        self.documents, self.limit, self.max_docs = documents, limit, max_docs
        self.seen: dict[str, int] = {}
        self.pools: dict[str, dict[str, CutExample]] = {}

    def __call__(self, index: int, prof: TextProfile, encoded: Encoded) -> None:
        doc = self.documents[index]
        if self.seen.get(doc.lang, 0) >= self.max_docs:
            return
        self.seen[doc.lang] = self.seen.get(doc.lang, 0) + 1
        cuts = cut_boundaries(prof, encoded)
        if not cuts.any():
            return
        pool = self.pools.setdefault(doc.lang, {})
        data = doc.text.encode("utf-8")
        starts = np.maximum.accumulate(encoded.starts)
        ends = np.maximum.accumulate(encoded.ends)
        cut_at = np.sort(ends[:-1][cuts])
        # per word, by bisection: cuts strictly inside it, and the tokens overlapping it
        n_cuts = (np.searchsorted(cut_at, prof.word_ends, side="left")
                  - np.searchsorted(cut_at, prof.word_starts, side="right"))
        first = np.searchsorted(ends, prof.word_starts, side="right")
        last = np.searchsorted(starts, prof.word_ends, side="left")
        for w in np.flatnonzero(n_cuts)[:200].tolist():
            ws, we = int(prof.word_starts[w]), int(prof.word_ends[w])
            word = data[ws:we].decode("utf-8")
            pieces = tuple(piece_text(data, max(int(s), ws), min(int(e), we))
                           for s, e in zip(encoded.starts[first[w]:last[w]], encoded.ends[first[w]:last[w]]))
            pool.setdefault(word, CutExample(word, pieces, int(n_cuts[w])))

    def worst(self) -> dict[str, list[CutExample]]:
        return {lang: sorted(pool.values(), key=example_rank)[:self.limit]
                for lang, pool in self.pools.items() if pool}
