"""Grapheme integrity at the token level: which words the tokens cut inside a cluster.

A token boundary inside an extended grapheme cluster splits what a reader sees as one
letter (a consonant from its vowel sign, a conjunct, an emoji sequence). Counting them is in
engine.py, and chunk_evidence.py picks the worst words to show; here we spell out a text's tokens.
"""

from __future__ import annotations

from fertility.backends import Encoded


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
