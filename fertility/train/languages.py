"""Training text by language: how much of each language a trainer sees, and which dev lines are whose.

Balancing languages is the point of `fertility retrain`, so the sampling rules (`--weights`,
`--temperature`, `--balance`) live apart from the trainers that consume their result, and so
does matching a training language (`ben`, a folder) to its dev file (`ben_Beng`, FLORES).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from fertility.choices import BALANCES
from fertility.errors import UsageError
from fertility.io.corpus import Corpus, Document
from fertility.io.numbers import MAX_TEMPERATURE, MAX_WEIGHT, MIN_TEMPERATURE, real


def by_language(documents: Iterable[Document]) -> dict[str, list[str]]:
    """Each language's texts, in corpus order."""
    out: dict[str, list[str]] = {}
    for doc in documents:
        out.setdefault(doc.lang, []).append(doc.text)
    return out


def language_chars(documents: Sequence[Document]) -> dict[str, int]:
    chars: dict[str, int] = {}
    for doc in documents:
        chars[doc.lang] = chars.get(doc.lang, 0) + len(doc.text)
    return chars


def sample_documents(documents: Sequence[Document], weights: dict[str, float] | None,
                     *, seed: int) -> list[Document]:
    """Each language's documents repeated `weight` times (fractions sampled with `seed`)."""
    if not weights:
        return list(documents)
    unknown = sorted(set(weights) - {d.lang for d in documents})
    if unknown:
        raise UsageError(f"--weights names languages not in the training corpus: {', '.join(unknown)}")
    rng = random.Random(seed)
    out: list[Document] = []
    for doc in documents:
        weight = weights.get(doc.lang, 1.0)
        copies = int(weight) + (rng.random() < weight - int(weight))
        out.extend([doc] * copies)
    return out


def equal_weights(char_counts: dict[str, int]) -> dict[str, float]:
    """Multipliers that give every language as many characters as the largest one has."""
    largest = max(char_counts.values())
    return {lang: largest / n for lang, n in char_counts.items()}


def temperature_weights(char_counts: dict[str, int], temperature: float) -> dict[str, float]:
    """Multipliers that turn natural shares p into p^(1/T) shares; the largest language keeps 1."""
    real(temperature, option="--temperature", low=MIN_TEMPERATURE, high=MAX_TEMPERATURE)
    total = sum(char_counts.values())
    shares = {lang: n / total for lang, n in char_counts.items()}
    target = {lang: p ** (1 / temperature) for lang, p in shares.items()}
    norm = sum(target.values())
    multipliers = {lang: (target[lang] / norm) / shares[lang] for lang in shares}
    base = multipliers[max(shares, key=shares.__getitem__)]
    return {lang: m / base for lang, m in multipliers.items()}


def check_balance_options(*, weights: dict[str, float] | None, temperature: float | None) -> None:
    """Sampling weights and temperature in their ranges, before any corpus is read (a weight
    repeats each document that many times; a tiny temperature divides by zero)."""
    for lang, weight in (weights or {}).items():
        real(weight, option=f"--weights {lang}", low=0.0, low_open=True, high=MAX_WEIGHT)
    if temperature is not None:
        real(temperature, option="--temperature", low=MIN_TEMPERATURE, high=MAX_TEMPERATURE)


def resolve_weights(corpus: Corpus, *, weights: dict[str, float] | None, temperature: float | None,
                    balance: str) -> dict[str, float]:
    """Explicit weights win, then temperature sampling, then the balance rule."""
    chars = language_chars(corpus.documents)
    if weights and temperature is not None:
        raise UsageError("give --weights or --temperature, not both")
    if weights:
        unknown = sorted(set(weights) - set(chars))
        if unknown:
            raise UsageError(f"--weights names languages not in the training corpus: "
                             f"{', '.join(unknown)} (corpus languages: {', '.join(sorted(chars))})")
        return {lang: weights.get(lang, 1.0) for lang in chars}
    if temperature is not None:
        return temperature_weights(chars, temperature)
    if balance not in BALANCES:
        raise UsageError(f"--balance {balance!r}: choose one of {', '.join(BALANCES)}")
    return equal_weights(chars) if balance == "equal" else {lang: 1.0 for lang in chars}


def same_language(train_lang: str, dev_lang: str) -> bool:
    """`ben` (a training folder) is `ben_Beng` (a FLORES file)."""
    return train_lang.split("_")[0] == dev_lang.split("_")[0]


def dev_texts(corpus: Corpus, dev: Corpus, option: str) -> tuple[dict[str, list[str]], list[str]]:
    """Each training language's dev lines (`ben` takes `ben_Beng`), and the dev languages unused."""
    by_lang = by_language(dev.documents)
    out, used = {}, set()
    for lang in sorted({d.lang for d in corpus.documents}):
        match = [d for d in by_lang if same_language(lang, d)]
        if not match:
            raise UsageError(f"{option}: the dev set has no text for {lang} (dev languages: "
                             f"{', '.join(sorted(by_lang))}); give a parallel dev file for every training language")
        out[lang] = by_lang[match[0]]
        used.add(match[0])
    return out, sorted(set(by_lang) - used)
