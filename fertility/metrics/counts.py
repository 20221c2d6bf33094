"""Counts and the one place where they are divided into ratios.

Counts are additive integers; every ratio is derived here from summed numerators and summed
denominators, so the ALL row is an exact micro-average and a zero denominator gives NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from fertility.text.units import is_spaced

ALL = "ALL"


class Additive:
    """Mixin for frozen dataclasses of integer counts: they add field by field."""

    def __add__(self, other):
        return type(self)(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class Counts(Additive):
    n_docs: int = 0
    n_bytes: int = 0
    n_chars: int = 0
    n_graphemes: int = 0
    n_words: int = 0
    n_tokens: int = 0
    n_split_words: int = 0  # words overlapping two or more tokens
    n_unknown_tokens: int = 0  # the unknown token: text the tokenizer lost
    n_byte_tokens: int = 0  # byte fallback: tokens that are raw bytes, not whole characters
    n_boundaries: int = 0  # boundaries between consecutive tokens
    n_cut_boundaries: int = 0  # of those, inside an extended grapheme cluster
    # newer counts: an older audit JSON lacks them (see AuditResult.missing)
    n_single_token_words: int = 0  # whitespace words overlapping exactly one token
    n_continuation_tokens: int = 0  # tokens starting strictly inside a whitespace word


COUNT_COLUMNS = [f.name for f in fields(Counts)]
RATIO_COLUMNS = ["chars_per_token", "bytes_per_token", "graphemes_per_token",
                 "tokens_per_word", "split_word_share", "unknown_share", "byte_token_share",
                 "grapheme_cut_share", "single_token_word_share", "continuation_token_share"]
COLUMNS = ["tokenizer", "lang", "script", *COUNT_COLUMNS, *RATIO_COLUMNS]
# counts an older audit JSON may lack, and the ratios that then cannot be derived
NEW_COUNT_COLUMNS = {"n_single_token_words": "single_token_word_share",
                     "n_continuation_tokens": "continuation_token_share"}


def ratio(numerator: float, denominator: float) -> float:
    """The one division: a zero denominator gives NaN, never 0."""
    return numerator / denominator if denominator else math.nan


def ratios(total: Counts, spaced: Counts) -> dict[str, float]:
    """Ratios of a row; word ratios come from the languages written with spaces only."""
    return {
        "chars_per_token": ratio(total.n_chars, total.n_tokens),
        "bytes_per_token": ratio(total.n_bytes, total.n_tokens),
        "graphemes_per_token": ratio(total.n_graphemes, total.n_tokens),
        "tokens_per_word": ratio(spaced.n_tokens, spaced.n_words),
        "split_word_share": ratio(spaced.n_split_words, spaced.n_words),
        "unknown_share": ratio(total.n_unknown_tokens, total.n_tokens),
        "byte_token_share": ratio(total.n_byte_tokens, total.n_tokens),
        "grapheme_cut_share": ratio(total.n_cut_boundaries, total.n_boundaries),
        # STRR: share of words that are one token; continuation: tokens not starting a word
        "single_token_word_share": ratio(spaced.n_single_token_words, spaced.n_words),
        "continuation_token_share": ratio(spaced.n_continuation_tokens, spaced.n_tokens),
    }


def total_of(items) -> Counts:
    total = Counts()
    for item in items:
        total = total + item
    return total


def group_row(tokenizer: str, lang: str, script: str, counts: list[Counts], spaced: list[bool]) -> dict:
    """A row summing some languages: every ratio from summed numerators and denominators, word
    ratios over the languages written with spaces only. The one aggregation of every command."""
    total = total_of(counts)
    words = total_of(c for c, s in zip(counts, spaced) if s)
    return {"tokenizer": tokenizer, "lang": lang, "script": script, **total.as_dict(), **ratios(total, words)}


def all_row(tokenizer: str, per_lang: dict[str, Counts], scripts: dict[str, str]) -> dict:
    """The ALL row of one tokenizer, for `audit`, `compare` and `check` alike."""
    langs = sorted(per_lang)
    return group_row(tokenizer, ALL, ALL, [per_lang[lang] for lang in langs],
                     [is_spaced(scripts[lang]) for lang in langs])
