"""Metrics that need no counting pass: byte premium, and the Lorenz curve behind the Gini.

Byte premium (Arnett et al. 2024, "A Bit of a Problem"): UTF-8 bytes a language needs for the
same content as the reference, on parallel text. A token premium is then the product of this
encoding part and a tokenizer part: premium = byte_premium x (bytes/token of the reference /
bytes/token of the language), so a report can say how much of the cost the script's encoding
explains and how much the vocabulary adds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from fertility.io.parallel import Parallelism
from fertility.metrics.counts import Counts, ratio

from .balance import gini, premiums


def byte_premiums(counts: Mapping[str, Counts], reference: str, *, parallel: Parallelism) -> dict[str, float]:
    """bytes(lang) / bytes(reference) per language; NaN for all when the corpus is not
    parallel (then the byte counts are of different contents) or lacks the reference."""
    if reference not in counts or not parallel.parallel:
        return {lang: math.nan for lang in counts}
    ref = counts[reference].n_bytes
    return {lang: ratio(c.n_bytes, ref) for lang, c in counts.items()}


def premium_split(counts: Mapping[str, Counts], reference: str, *, parallel: Parallelism
                  ) -> dict[str, dict[str, float]]:
    """Per language: token premium, byte premium (encoding part) and their quotient (the
    tokenizer part). NaN where the corpus is not parallel or has no reference."""
    found = premiums(dict(counts), reference, parallel=parallel) if reference in counts else None
    if found is None:
        nan = {"premium": math.nan, "byte_premium": math.nan, "tokenizer_premium": math.nan}
        return {lang: dict(nan) for lang in counts}
    token = found.values
    byte = byte_premiums(counts, reference, parallel=parallel)
    return {lang: {"premium": token[lang], "byte_premium": byte[lang],
                   "tokenizer_premium": token[lang] / byte[lang] if byte[lang] else math.nan}
            for lang in counts}


def lorenz(values: Mapping[str, float]) -> list[tuple[float, float]]:
    """Lorenz curve of a cost over languages: (share of languages, share of the total cost),
    cheapest first, from (0, 0) to (1, 1). NaN values are left out."""
    kept = sorted(v for v in values.values() if not math.isnan(v))
    total = sum(kept)
    if not kept or total <= 0:
        return []
    points, running = [(0.0, 0.0)], 0.0
    for index, value in enumerate(kept, 1):
        running += value
        points.append((index / len(kept), running / total))
    return points


def balance_json(counts: Mapping[str, Counts], reference: str, *, parallel: Parallelism) -> dict:
    """The audit JSON's `balance` entry of one tokenizer: the Gini over the languages' premiums
    (as the `gini` finding states it) with the Lorenz curve's points; none over text that is
    not parallel (the signature's `parallel` says why)."""
    result = premiums(dict(counts), reference, parallel=parallel) \
        if reference in counts and len(counts) >= 2 else None
    if result is None:
        return {"reference": reference, "method": None, "gini": None, "lorenz": []}
    points = lorenz(result.values)
    value = gini(list(result.values.values()))  # the finding's Gini, from the same function
    return {"reference": reference, "method": result.method, "gini": None if math.isnan(value) else value,
            "lorenz": [[x, y] for x, y in points]}
