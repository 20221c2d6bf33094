"""Evidence for the diagnosis, measured beside the counts: pre-tokens, examples, normalization.

What the rules read besides counts (engine/evidence.py measures it and assembles it): the
tokenizer's own pre-tokenizer, sample words, the characters behind unknown tokens, re-encoding under NFC/NFKC.
Pre-tokens, normalization and token examples are measured on a sample (the first
chunks.SAMPLE_BYTES of each language, in reading order); offenders on every document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .normalization import NormalizationCounts
from .pretokens import CutExample, PretokenCounts

Key = tuple[str, str]  # (tokenizer, language)


@dataclass(frozen=True)
class Evidence:
    pre_tokenizers: dict[str, str | None] = field(default_factory=dict)  # tokenizer -> name
    pretokens: dict[Key, PretokenCounts] = field(default_factory=dict)
    pretoken_examples: dict[Key, list[CutExample]] = field(default_factory=dict)
    token_examples: dict[Key, list[CutExample]] = field(default_factory=dict)
    offenders: dict[Key, list[tuple[str, int]]] = field(default_factory=dict)
    normalization: dict[Key, NormalizationCounts] = field(default_factory=dict)
