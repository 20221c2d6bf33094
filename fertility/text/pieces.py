"""Long documents cut into pieces: at whitespace, never inside a word; where a piece holds no
whitespace at all (a run of NUL, Chinese with no spaces), at a grapheme cluster boundary.

Lives with the text units because both the readers (a line too long to hold is read in
pieces) and the engine (a piece is measured on its own) cut the same way. A token the
tokenizer would have made across a cut counts as two: the only approximation, recorded in
the signature.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

PIECE_BYTES = 1 << 20
_PREPEND = regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}")


def _cut_point(text: str, start: int, end: int) -> int:
    """The last index in (start, end] before a space or tab that no cluster rule ties to the
    character before it (a Prepend character is); `start` if there is none."""
    position = end + 1
    while True:
        position = max(text.rfind(" ", start + 1, position), text.rfind("\t", start + 1, position))
        if position <= start:
            return start
        if not _PREPEND.match(text[position - 1]):
            return position


def first_cut(text: str, max_bytes: int = PIECE_BYTES) -> int:
    """Where the first piece of `text` ends: all of it if it fits in `max_bytes` UTF-8 bytes,
    else before the last space or tab within the limit, else (no whitespace to cut at: a
    run of NUL, or Chinese with no spaces) at the last grapheme cluster boundary within the
    limit that no context can move, else at a character boundary. It looks only at the first
    `max_bytes + 1` characters, so text that arrives in parts is cut exactly as when whole."""
    end = max_bytes  # a character is at least one byte
    while len(text[:end].encode("utf-8", errors="surrogatepass")) > max_bytes:
        end = max(1, end * 3 // 4)
    if end >= len(text):
        return len(text)
    cut = _cut_point(text, 0, end)
    if cut == 0:
        from .clusters import certain_boundary

        found = certain_boundary(text, max(0, end - BOUNDARY_LOOKBACK), end)
        cut = found if found is not None else end
    return cut


BOUNDARY_LOOKBACK = 1024  # characters searched back for a cluster boundary when a piece has no whitespace


def pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> list[str]:
    """`text` cut into pieces of at most `max_bytes` UTF-8 bytes (see `first_cut`)."""
    return list(iter_pieces(text, max_bytes=max_bytes))


def iter_pieces(text: str, *, max_bytes: int = PIECE_BYTES) -> Iterator[str]:
    """The pieces one at a time, so that a long document is not held twice."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8", errors="surrogatepass")) <= max_bytes:
        yield text
        return
    start, n = 0, len(text)
    while start < n:
        cut = start + first_cut(text[start:start + max_bytes + 1], max_bytes)
        yield text[start:cut]
        start = cut


class PieceCutter:
    """`iter_pieces` over a text that arrives in parts (a line too long to hold, or a whole file
    as one document): the same pieces as cutting the whole text, holding at most about one
    piece and one part; parts are only joined once they make more than a piece."""

    def __init__(self, max_bytes: int = PIECE_BYTES):
        self.max_bytes = max_bytes
        self.parts: list[str] = []
        self.length = 0  # characters in `parts`

    @property
    def pending(self) -> str:
        return "".join(self.parts)

    def feed(self, text: str, *, last: bool) -> list[str]:
        """The pieces complete once `text` is added (`last`: the text ends here)."""
        self.parts.append(text)
        self.length += len(text)
        out = []
        if self.length > self.max_bytes:
            pending = "".join(self.parts)
            while len(pending) > self.max_bytes:  # the next piece's whole window is here
                cut = first_cut(pending, self.max_bytes)
                out.append(pending[:cut])
                pending = pending[cut:]
            self.parts, self.length = [pending], len(pending)
        if last:
            out += iter_pieces("".join(self.parts), max_bytes=self.max_bytes)
            self.parts, self.length = [], 0
        return out
