"""Evidence for the diagnosis, measured beside the counts: pre-tokens, examples, normalization.

Kept apart from measure.py because it needs more than counts: the tokenizer's own
pre-tokenizer, sample words, the characters behind unknown tokens, re-encoding under NFC/NFKC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .backends import Tokenizer
from .corpus import Document
from .normalization import NormalizationCounts, normalization_counts
from .pretokens import CutExample, PretokenCounts, count_pretokens
from .results import Counts

Key = tuple[str, str]  # (tokenizer, language)


@dataclass(frozen=True)
class Evidence:
    pre_tokenizers: dict[str, str | None] = field(default_factory=dict)  # tokenizer -> name
    pretokens: dict[Key, PretokenCounts] = field(default_factory=dict)
    pretoken_examples: dict[Key, list[CutExample]] = field(default_factory=dict)
    token_examples: dict[Key, list[CutExample]] = field(default_factory=dict)
    offenders: dict[Key, list[tuple[str, int]]] = field(default_factory=dict)
    normalization: dict[Key, NormalizationCounts] = field(default_factory=dict)


def gather(name: str, tokenizer: Tokenizer, documents: Sequence[Document],
           counts: dict[str, Counts], offenders: dict[str, Counter],
           token_examples: dict[str, list[CutExample]], into: Evidence) -> None:
    """Add one tokenizer's evidence to `into` (its dicts are filled in place); `offenders` and
    `token_examples` were collected while measure.count tokenized the corpus."""
    pre = tokenizer.pre_tokenizer()
    into.pre_tokenizers[name] = pre.name if pre is not None else None
    if pre is not None:
        totals, examples = count_pretokens(pre, documents)
        for lang, value in totals.items():
            into.pretokens[(name, lang)] = value
        for lang, value in examples.items():
            into.pretoken_examples[(name, lang)] = value
    for lang, value in token_examples.items():
        into.token_examples[(name, lang)] = value
    for lang, counter in offenders.items():
        if counter:
            into.offenders[(name, lang)] = counter.most_common(5)
    tokens = {lang: c.n_tokens for lang, c in counts.items()}
    for lang, value in normalization_counts(tokenizer, documents, tokens).items():
        into.normalization[(name, lang)] = value
