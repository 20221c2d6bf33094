"""Normalization sensitivity: how counts move under NFC and NFKC, and why.

Measured on the findings sample (chunk_evidence.py: the first chunks.SAMPLE_BYTES of each language).

fertility never normalizes before counting; this tells a user what it would change. Bengali
precomposed nukta letters (ড় ঢ় য়, U+09DC/09DD/09DF) are composition exclusions: NFC
*decomposes* them, so the text gets longer. ZWJ/ZWNJ are counted because they are invisible
yet cost tokens.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from fertility.metrics.counts import Additive

FORMS = ("NFC", "NFKC")
JOINERS = frozenset({"\u200c", "\u200d"})


@dataclass(frozen=True)
class NormalizationCounts(Additive):
    n_chars: int = 0
    n_chars_nfc: int = 0
    n_chars_nfkc: int = 0
    n_tokens: int = 0
    n_tokens_nfc: int = 0
    n_tokens_nfkc: int = 0
    n_docs_changed_nfc: int = 0
    n_decomposable: int = 0  # characters NFC rewrites (e.g. ড় -> ড + ়)
    n_joiners: int = 0  # ZWJ and ZWNJ


@lru_cache(maxsize=65536)
def nfc_changes(char: str) -> bool:
    return unicodedata.normalize("NFC", char) != char
