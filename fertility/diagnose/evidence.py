"""Evidence for the diagnosis, measured beside the counts: pre-tokens, examples, normalization.

Kept apart from measure.py because it needs more than counts: the tokenizer's own
pre-tokenizer, sample words, the characters behind unknown tokens, re-encoding under NFC/NFKC.
Pre-tokens, normalization and token examples are measured on a sample (the first
chunks.SAMPLE_BYTES of each language, in reading order); offenders on every document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fertility.backends import Tokenizer
from fertility.engine.evidence import example_order
from fertility.engine.measure import ChunkResult

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


def assemble(names: Sequence[str], tokenizers: Sequence[Tokenizer], langs: Sequence[str],
             total: ChunkResult) -> Evidence:
    """The evidence of a whole run, from its merged chunk results, in tokenizer and language
    order; examples best first, offenders most frequent first (ties by character)."""
    into = Evidence()
    for t, (name, tokenizer) in enumerate(zip(names, tokenizers)):
        pre = tokenizer.pre_tokenizer()
        into.pre_tokenizers[name] = pre.name if pre is not None else None
        for lang in langs:
            key = (t, lang)
            if pre is not None and key in total.pretokens:
                into.pretokens[(name, lang)] = total.pretokens[key]
            if total.pretoken_pool.get(key):
                into.pretoken_examples[(name, lang)] = sorted(total.pretoken_pool[key].values(), key=example_order)
            if total.token_pool.get(key):
                into.token_examples[(name, lang)] = sorted(total.token_pool[key].values(), key=example_order)
            if total.offenders.get(key):
                ranked = sorted(total.offenders[key].items(), key=lambda item: (-item[1], item[0]))
                into.offenders[(name, lang)] = ranked[:5]
            if key in total.normalization:
                into.normalization[(name, lang)] = total.normalization[key]
    return into
