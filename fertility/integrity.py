"""Grapheme integrity at the token level: which words the tokens cut inside a cluster.

A token boundary inside an extended grapheme cluster splits what a reader sees as one
letter (a consonant from its vowel sign, a conjunct, an emoji sequence). Counting them is in
measure.py; here we pick the worst words to show and spell out a text's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .backends import Encoded, Tokenizer
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


def worst_words(tokenizer: Tokenizer, documents: Sequence[Document], profiles: Sequence[TextProfile],
                *, limit: int = 5, max_docs: int = 200) -> dict[str, list[CutExample]]:
    """Per language, the words of its first `max_docs` documents whose tokens cut most clusters."""
    chosen: dict[str, list[int]] = {}
    for index, doc in enumerate(documents):
        if len(chosen.setdefault(doc.lang, [])) < max_docs:
            chosen[doc.lang].append(index)
    out: dict[str, list[CutExample]] = {}
    for lang, indices in chosen.items():
        pool: dict[str, CutExample] = {}
        texts = [documents[i].text for i in indices]
        for text, index, encoded in zip(texts, indices, tokenizer.encode(texts)):
            cuts = cut_boundaries(profiles[index], encoded)
            if not cuts.any():
                continue
            data = text.encode("utf-8")
            prof = profiles[index]
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
        if pool:
            out[lang] = sorted(pool.values(), key=example_rank)[:limit]
    return out
