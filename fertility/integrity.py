"""Grapheme integrity at the token level: which words the tokens cut inside a cluster.

A token boundary inside an extended grapheme cluster splits what a reader sees as one
letter (a consonant from its vowel sign, a conjunct, an emoji sequence). Counting them is in
measure.py; here we pick the worst words to show and spell out a text's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

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
            cut_at = encoded.ends[:-1][cuts]
            for ws, we in zip(prof.word_starts.tolist(), prof.word_ends.tolist()):
                n_cuts = int(((cut_at > ws) & (cut_at < we)).sum())
                if n_cuts == 0:
                    continue
                word = data[ws:we].decode("utf-8")
                inside = (encoded.ends > ws) & (encoded.starts < we)
                pieces = tuple(piece_text(data, max(s, ws), min(e, we))
                               for s, e in zip(encoded.starts[inside].tolist(), encoded.ends[inside].tolist()))
                pool.setdefault(word, CutExample(word, pieces, n_cuts))
        if pool:
            out[lang] = sorted(pool.values(), key=example_rank)[:limit]
    return out
