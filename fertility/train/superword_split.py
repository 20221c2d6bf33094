"""The joining split of superwords: MARKS with its words widened to runs of words, and the junctions it opens.

Stage two of superwords.py pre-tokenizes with this split instead of stage one's MARKS
(`bpe.MARKS`). It joins words separated by one space (or, with grapheme units, a comma-like
mark) into one pre-token, never across sentence-final punctuation, other punctuation, digits or
any other whitespace. Every boundary it opens is a junction pair of characters that no stage-one
pre-token contains: that is why stage-one merges cannot fire across it (superwords.py has the
argument), and `holds_junction` finds the tokens that do hold one.
"""

from __future__ import annotations

import regex

from .bpe import MARKS, SENTENCE_PUNCTUATION
from .byte_level import token_bytes

# The sentence punctuation a word keeps (bpe.SENTENCE_PUNCTUATION), split by what it ends:
# a sentence (superwords never cross it) or a clause (they may).
FINAL_PUNCTUATION = ".।॥。።۔။។"
PAUSE_PUNCTUATION = ",，、፣،၊"
_WORD = r" ?[\p{L}\p{M}]+[" + SENTENCE_PUNCTUATION + "]?"  # the word alternative of MARKS
_BYTE_WHITESPACE = frozenset(b"\t\n\v\f\r\x1c\x1d\x1e\x1f ")


def joining_pattern(units: str) -> str:
    """MARKS with its word alternative widened to a run of words joined by single spaces (or,
    with grapheme units, by a comma-like mark with or without a space); everything else, and
    the order of the alternatives, exactly as MARKS, so a joined pre-token is always a run of
    whole MARKS pre-tokens."""
    joint = f"(?:[{PAUSE_PUNCTUATION}] ?| )" if units == "graphemes" else f"[{PAUSE_PUNCTUATION}]? "
    words = r" ?[\p{L}\p{M}]+(?:" + joint + r"[\p{L}\p{M}]+)*[" + SENTENCE_PUNCTUATION + "]?"
    return MARKS.replace(_WORD, words, 1)


_JUNCTION_CHARS = regex.compile(r"\S |[" + PAUSE_PUNCTUATION + r"][\p{L}\p{M}]")


def holds_junction(token: str, units: str) -> bool:
    """Whether a stage-one token could be built across a boundary the joining split opens:
    it holds a non-space followed by a space, or (graphemes) a comma-like mark then a letter.
    No stage-one pre-token holds either, so with grapheme units this is never true; with
    byte units the bytes of a non-ASCII space can precede a space inside a whitespace token."""
    if units == "graphemes":
        return _JUNCTION_CHARS.search(token) is not None
    data = token_bytes(token)
    if data is None:
        return False
    return any(data[i + 1] == 0x20 and data[i] not in _BYTE_WHITESPACE for i in range(len(data) - 1))
