"""Normalization sensitivity: how counts move under NFC and NFKC, and why.

fertility never normalizes before counting; this tells a user what it would change. Bengali
precomposed nukta letters (ড় ঢ় য়, U+09DC/09DD/09DF) are composition exclusions: NFC
*decomposes* them, so the text gets longer. ZWJ/ZWNJ are counted because they are invisible
yet cost tokens.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .backends import Tokenizer
from .corpus import Document
from .results import Additive

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
def _nfc_changes(char: str) -> bool:
    return unicodedata.normalize("NFC", char) != char


def _token_count(tokenizer: Tokenizer, texts: list[str]) -> int:
    return sum(len(encoded.starts) for encoded in tokenizer.encode(texts)) if texts else 0


def normalization_counts(tokenizer: Tokenizer, documents: Sequence[Document],
                         tokens_as_read: dict[str, int]) -> dict[str, NormalizationCounts]:
    """Per language; only documents that a form changes are encoded again."""
    out: dict[str, NormalizationCounts] = {}
    by_lang: dict[str, list[Document]] = {}
    for doc in documents:
        by_lang.setdefault(doc.lang, []).append(doc)
    for lang, docs in by_lang.items():
        chars = sum(len(d.text) for d in docs)
        decomposable = sum(1 for d in docs for c in d.text if c > "\u00ff" and _nfc_changes(c))
        joiners = sum(1 for d in docs for c in d.text if c in JOINERS)
        per_form = {}
        changed_nfc = 0
        for form in FORMS:
            originals, normalized = [], []
            for doc in docs:
                text = unicodedata.normalize(form, doc.text)
                if text != doc.text:
                    originals.append(doc.text)
                    normalized.append(text)
            if form == "NFC":
                changed_nfc = len(originals)
            chars_form = chars + sum(len(n) - len(o) for o, n in zip(originals, normalized))
            tokens_form = tokens_as_read[lang] - _token_count(tokenizer, originals) \
                + _token_count(tokenizer, normalized)
            per_form[form] = (chars_form, tokens_form)
        out[lang] = NormalizationCounts(
            n_chars=chars, n_chars_nfc=per_form["NFC"][0], n_chars_nfkc=per_form["NFKC"][0],
            n_tokens=tokens_as_read[lang], n_tokens_nfc=per_form["NFC"][1],
            n_tokens_nfkc=per_form["NFKC"][1], n_docs_changed_nfc=changed_nfc,
            n_decomposable=decomposable, n_joiners=joiners)
    return out
