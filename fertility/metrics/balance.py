"""Balance across languages: premium against a reference, fairness Gini, and the token budget.

Premium (Petrov et al. 2023) is tokens(lang) / tokens(reference) on parallel text: how many
times more tokens the same content costs. It exists only over parallel text, as the corpus's one
`Parallelism` decision says (parallel.py): elsewhere there is no premium, only per-language
ratios, and the decision says why. The budget compares each language's share of the content
with its share of the tokens: a mix set in tokens quietly gives expensive languages less text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fertility.errors import UsageError
from fertility.io.numbers import real
from fertility.io.parallel import Parallelism
from fertility.metrics.counts import Counts, ratio

PARALLEL = "parallel token ratio"


@dataclass(frozen=True)
class Premiums:
    reference: str
    method: str
    values: dict[str, float]  # language -> premium (1.0 for the reference)


def premiums(counts: dict[str, Counts], reference: str, *, parallel: Parallelism) -> Premiums | None:
    """Token premiums against `reference`, or None when the text is not parallel."""
    if reference not in counts:
        raise UsageError(f"reference language {reference} is not in the corpus "
                         f"(languages: {', '.join(sorted(counts))}); choose one with --reference")
    if not parallel.parallel:
        return None
    ref = counts[reference]
    return Premiums(reference, PARALLEL, {lang: ratio(c.n_tokens, ref.n_tokens) for lang, c in counts.items()})


def gini(values: list[float]) -> float:
    """Gini coefficient: 0 when every language costs the same, towards 1 when one costs all."""
    values = [v for v in values if not math.isnan(v)]
    if not values or sum(values) == 0:
        return math.nan
    n, mean = len(values), sum(values) / len(values)
    return sum(abs(a - b) for a in values for b in values) / (2 * n * n * mean)


def parse_pairs(text: str, *, option: str) -> dict[str, float]:
    """`ben_Beng=0.7,eng_Latn=0.3` -> {lang: positive number}; anything else is a usage error."""
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        lang, sep, raw = part.partition("=")
        try:
            value = real(raw, option=option, low=0.0, low_open=True)
        except UsageError:  # said below, with the part at fault
            value = -1.0
        if not sep or not lang.strip() or not value > 0:
            raise UsageError(f"{option} {text!r}: expected LANG=NUMBER pairs with positive numbers, "
                             f"e.g. ben_Beng=0.7,eng_Latn=0.3 (bad part: {part!r})")
        if lang.strip() in values:
            raise UsageError(f"{option} {text!r}: {lang.strip()} is given twice")
        values[lang.strip()] = value
    if not values:
        raise UsageError(f"{option} {text!r}: no LANG=NUMBER pairs")
    return values


def parse_mix(text: str) -> dict[str, float]:
    """`ben_Beng=0.7,eng_Latn=0.3` -> shares normalised to sum 1."""
    shares = parse_pairs(text, option="--mix")
    check_mix(shares, given=f"--mix {text!r}")
    total = sum(shares.values())
    return {lang: share / total for lang, share in shares.items()}


def check_mix(mix: Any, *, given: str) -> None:
    """A mix shares the text between languages: one language alone is all of it, and its budget
    says nothing (the command ran as if no mix were given). `given`: how the caller wrote it
    (`--mix '...'` on the command line, `mix={...}` in Python)."""
    if not isinstance(mix, Mapping) or not all(isinstance(lang, str) for lang in mix):
        raise UsageError(f"{given}: expected a mapping of language to share, e.g. {{'ben_Beng': 0.7, 'eng_Latn': 0.3}}")
    bad = [lang for lang, share in mix.items()
           if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < math.inf]
    if bad:
        raise UsageError(f"{given}: shares must be positive numbers ({', '.join(bad)} is not)")
    if len(mix) < 2:
        raise UsageError(f"{given}: a mix needs two or more languages (one language is all of the text, "
                         "so there is no balance to show)")


@dataclass(frozen=True)
class BudgetRow:
    lang: str
    content_share: float  # share of the characters (of the mix, or of the corpus as given)
    token_share: float  # share of the tokens that content costs
    text_share_by_tokens: float  # share of the text if the same shares are set in tokens


def budget(counts: dict[str, Counts], mix: dict[str, float] | None = None) -> list[BudgetRow]:
    """Content share vs token share per language, for the corpus as given or a user's mix
    (its shares are normalised to sum 1)."""
    if mix is not None:
        missing = sorted(set(mix) - set(counts))
        if missing:
            raise UsageError(f"--mix names languages not in the corpus: {', '.join(missing)}")
        total_mix = sum(mix.values())
        content = {lang: share / total_mix for lang, share in mix.items()}
    else:
        total_chars = sum(c.n_chars for c in counts.values())
        content = {lang: ratio(c.n_chars, total_chars) for lang, c in counts.items()}
    tokens_per_char = {lang: ratio(counts[lang].n_tokens, counts[lang].n_chars) for lang in content}
    cost = {lang: content[lang] * tokens_per_char[lang] for lang in content}
    text = {lang: content[lang] / tokens_per_char[lang] for lang in content}
    total_cost, total_text = sum(cost.values()), sum(text.values())
    return [BudgetRow(lang, content[lang], ratio(cost[lang], total_cost), ratio(text[lang], total_text))
            for lang in content]


def reordered(a: BudgetRow, b: BudgetRow, *, margin: float = 0.10) -> bool:
    """Tokens put a and b in the opposite order of their content shares.

    Pairs whose content shares are within `margin` (relative) of each other do not count:
    on parallel text every language has about the same share and any premium would reorder.
    """
    if abs(a.content_share - b.content_share) <= margin * max(a.content_share, b.content_share):
        return False
    return (a.content_share - b.content_share) * (a.token_share - b.token_share) < 0


def inversions(rows: list[BudgetRow], *, threshold: float = 0.10) -> list[BudgetRow]:
    """Languages whose token share reorders the mix or moves from the content share by > threshold."""
    flagged = []
    for row in rows:
        moved = abs(row.token_share - row.content_share) > threshold or \
            abs(row.text_share_by_tokens - row.content_share) > threshold
        if moved or any(reordered(row, other) for other in rows if other is not row):
            flagged.append(row)
    return flagged
