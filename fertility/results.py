"""Counts, AuditResult and to_frame(): the only place where counts are divided into ratios.

Counts are additive integers; every ratio is derived here from summed numerators and summed
denominators, so the ALL row is an exact micro-average and a zero denominator gives NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import pandas as pd

from .text import is_spaced

ALL = "ALL"


class Additive:
    """Mixin for frozen dataclasses of integer counts: they add field by field."""

    def __add__(self, other):
        return type(self)(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


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


COUNT_COLUMNS = [f.name for f in fields(Counts)]
RATIO_COLUMNS = ["chars_per_token", "bytes_per_token", "graphemes_per_token",
                 "tokens_per_word", "split_word_share", "unknown_share", "byte_token_share",
                 "grapheme_cut_share"]


def ratio(numerator: int, denominator: int) -> float:
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
    }


def _sum(items) -> Counts:
    total = Counts()
    for item in items:
        total = total + item
    return total


@dataclass(frozen=True)
class AuditResult:
    """Counts per (tokenizer, language) and the signature of the settings that produced them."""

    signature: dict
    tokenizers: tuple[str, ...]
    scripts: dict[str, str]  # language -> ISO 15924 script
    counts: dict[tuple[str, str], Counts]
    findings: tuple = field(default=())  # diagnose.Finding, most severe first
    evidence: object = None  # evidence.Evidence behind the findings, when diagnosed

    def counts_for(self, tokenizer: str) -> dict[str, Counts]:
        return {lang: self.counts[(tokenizer, lang)] for lang in self.scripts
                if (tokenizer, lang) in self.counts}

    def to_frame(self, *, by: str = "lang") -> pd.DataFrame:
        """One row per (tokenizer, language) or (tokenizer, script), then an ALL row each."""
        if by not in ("lang", "script"):
            raise ValueError(f"by must be 'lang' or 'script', not {by!r}")
        rows = []
        for tokenizer in self.tokenizers:
            per_lang = self.counts_for(tokenizer)
            groups: dict[str, list[str]] = {}
            for lang in sorted(per_lang):
                key = lang if by == "lang" else self.scripts[lang]
                groups.setdefault(key, []).append(lang)
            for key, langs in sorted(groups.items()):
                rows.append(self._row(tokenizer, langs, per_lang,
                                      script=self.scripts[langs[0]] if by == "lang" else key))
            rows.append(self._row(tokenizer, sorted(per_lang), per_lang, script=ALL, all_row=True))
        columns = ["tokenizer", "lang", "script", *COUNT_COLUMNS, *RATIO_COLUMNS]
        return pd.DataFrame(rows, columns=columns)

    def _row(self, tokenizer: str, langs: list[str], per_lang: dict[str, Counts], *,
             script: str, all_row: bool = False) -> dict:
        total = _sum(per_lang[lang] for lang in langs)
        spaced = _sum(per_lang[lang] for lang in langs if is_spaced(self.scripts[lang]))
        return {"tokenizer": tokenizer, "lang": ALL if all_row else ",".join(langs),
                "script": script, **total.as_dict(), **ratios(total, spaced)}
