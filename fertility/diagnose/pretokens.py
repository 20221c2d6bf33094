"""The pre-tokenizer ceiling: characters per pre-token, and the cuts it makes inside graphemes.

No merge can cross a pre-token boundary, so chars per pre-token bounds chars per token for any
vocabulary size. A split regex such as GPT-2's (` ?\\p{L}+`) cuts Bengali vowel signs, virama
and nukta (`\\p{M}`) away from their consonants; that is the cause we name.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import regex

from fertility.metrics.counts import Additive
from fertility.text.units import cluster_bounds

_MARK = regex.compile(r"\p{M}")
_WORD = regex.compile(r"\S+")


@dataclass(frozen=True)
class PretokenCounts(Additive):
    """Additive counts of one language's pre-tokenization."""

    n_chars: int = 0  # characters as the splitter saw them (after any normalizer)
    n_pretokens: int = 0
    n_boundaries: int = 0  # distinct inner positions where one piece ends or the next starts
    n_cut_boundaries: int = 0  # boundaries inside an extended grapheme cluster
    n_mark_cuts: int = 0  # boundaries right before a combining mark (\p{M})


@dataclass(frozen=True)
class CutExample:
    word: str
    pieces: tuple[str, ...]
    n_cuts: int


MAX_EXAMPLE_CHARS = 24  # a whole Chinese sentence is one "word": too long to show
MAX_EXAMPLE_PIECES = 14  # findings shorten an example of more pieces with …


def too_long(n_chars: int, n_pieces: int) -> bool:
    return n_chars > MAX_EXAMPLE_CHARS or n_pieces > MAX_EXAMPLE_PIECES


def example_rank(example: CutExample) -> tuple:
    """Most cuts first among words short enough to read whole; then alphabetical for stable output."""
    return (too_long(len(example.word), len(example.pieces)), -example.n_cuts, example.word)


def grapheme_starts(text: str) -> set[int]:
    return set(cluster_bounds(text).tolist())


def inner_boundaries(spans: Sequence[tuple[int, int]], length: int) -> list[int]:
    """Positions strictly inside the text where a piece starts or ends, in order."""
    positions = {p for span in spans for p in span if 0 < p < length}
    return sorted(positions)


def analyse(text: str, spans: Sequence[tuple[int, int]]) -> tuple[PretokenCounts, list[int], list[int]]:
    """Counts for one text, its sorted inner boundaries, and those that cut a grapheme cluster."""
    starts = grapheme_starts(text)
    boundaries = inner_boundaries(spans, len(text))
    cuts = [p for p in boundaries if p not in starts]
    marks = sum(1 for p in cuts if _MARK.match(text, p))
    return PretokenCounts(len(text), len(spans), len(boundaries), len(cuts), marks), boundaries, cuts


def word_examples(text: str, boundaries: list[int], cuts: list[int], *,
                  limit: int = 200) -> list[CutExample]:
    """The whitespace words that contain cuts (at most `limit`), each with its pieces.

    `boundaries` and `cuts` are sorted; bisection keeps this linear in the words of a text,
    which matters when a whole file is one document.
    """
    out = []
    for word in _WORD.finditer(text):
        start, end = word.span()
        first_cut = bisect.bisect_right(cuts, start)
        n_cuts = bisect.bisect_left(cuts, end) - first_cut
        if n_cuts == 0:
            continue
        inner = boundaries[bisect.bisect_right(boundaries, start):bisect.bisect_left(boundaries, end)]
        edges = [start, *inner, end]
        out.append(CutExample(word.group(), tuple(text[a:b] for a, b in pairwise(edges)), n_cuts))
        if len(out) >= limit:
            break
    return out
