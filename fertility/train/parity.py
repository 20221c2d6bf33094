"""Parity on held-out text, honestly: premiums and the Gini with bootstrap intervals, and a dev
set that is never the evaluation set.

On parallel text (line i translating line i in every language, as parallel.py decides) the
premium of a language is tokens(lang) / tokens(reference), and the bootstrap resamples line
indices once per round for all languages together, so each round's Gini is computed on the same
content in every language. Text that is not parallel has no premiums: the caller says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from fertility.errors import UsageError
from fertility.io.corpus import Corpus
from fertility.metrics.balance import PARALLEL, gini
from fertility.metrics.bootstrap import parallel_line_sums, percentile_interval

ROUNDS = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class ParityReport:
    reference: str
    method: str
    premiums: dict[str, Interval]
    gini: Interval
    chars_per_token: dict[str, float]
    rounds: int
    level: float

    @property
    def max_premium(self) -> tuple[str, float]:
        lang = max(self.premiums, key=lambda k: self.premiums[k].value)
        return lang, self.premiums[lang].value

    @property
    def mean_chars_per_token(self) -> float:
        values = list(self.chars_per_token.values())
        return sum(values) / len(values) if values else math.nan

    def to_dict(self) -> dict:
        lang, premium = self.max_premium
        return {"reference": self.reference, "method": self.method, "rounds": self.rounds, "level": self.level,
                "gini": self.gini.to_dict(), "max_premium": {"lang": lang, "value": premium},
                "mean_chars_per_token": self.mean_chars_per_token,
                "premiums": {k: v.to_dict() for k, v in self.premiums.items()},
                "chars_per_token": self.chars_per_token}


def line_tokens(tokenizer, corpus: Corpus) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Tokens and characters of every line, per language, with a `tokenizers.Tokenizer`."""
    texts: dict[str, list[str]] = {}
    for doc in corpus.documents:
        texts.setdefault(doc.lang, []).append(doc.text)
    tokens = {lang: [len(e.ids) for e in tokenizer.encode_batch(lines, add_special_tokens=False)]
              for lang, lines in texts.items()}
    chars = {lang: [len(t) for t in lines] for lang, lines in texts.items()}
    return tokens, chars


def parity_report(tokens: dict[str, list[int]], chars: dict[str, list[int]], *, reference: str,
                  rounds: int = ROUNDS, seed: int = 0, level: float = LEVEL) -> ParityReport:
    """Premiums and the Gini with bootstrap intervals over the lines of parallel text (the
    caller has decided that it is: parallel.py), and each language's chars/token."""
    import numpy as np

    if reference not in tokens:
        raise UsageError(f"reference language {reference} is not in the held-out corpus "
                         f"(languages: {', '.join(sorted(tokens))}); choose one with --reference")
    langs = sorted(tokens)
    tok = {lang: np.asarray(tokens[lang], dtype=np.int64) for lang in langs}
    chr_ = {lang: np.asarray(chars[lang], dtype=np.int64) for lang in langs}
    if len({len(t) for t in tok.values()}) > 1:
        raise UsageError("parity needs parallel text: the held-out languages differ in line count")

    def premiums_of(t: dict) -> dict[str, np.ndarray]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return {lang: t[lang] / t[reference] for lang in langs}

    point = premiums_of({k: np.asarray([v.sum()]) for k, v in tok.items()})
    boot = premiums_of(parallel_line_sums(tok, rounds=rounds, seed=seed))
    ginis = np.asarray([gini([float(boot[lang][r]) for lang in langs]) for r in range(rounds)])

    def interval(value: float, samples) -> Interval:
        return Interval(float(value), *percentile_interval(samples, level))

    premiums = {lang: interval(float(point[lang][0]), boot[lang]) for lang in langs}
    value = gini([premiums[lang].value for lang in langs])
    cpt = {lang: float(chr_[lang].sum() / tok[lang].sum()) if tok[lang].sum() else math.nan for lang in langs}
    return ParityReport(reference, PARALLEL, premiums, interval(value, ginis), cpt, rounds, level)


def _file_hashes(corpus: Corpus) -> dict[str, str]:
    from fertility.hashing import sha256_file  # read a block at a time: a corpus file may be large

    return {sha256_file(f): f for f in corpus.files}


def check_not_evaluation(dev: Corpus, held_out: Corpus, *, dev_option: str = "--target-parity",
                         held_out_option: str = "--held-out") -> None:
    """The dev set that steers training is never the text it is judged on: no shared file, no
    file with the same content, not the same corpus."""
    same_paths = sorted({str(Path(f).resolve()) for f in dev.files} & {str(Path(f).resolve()) for f in held_out.files})
    dev_hashes, held_hashes = _file_hashes(dev), _file_hashes(held_out)
    shared = sorted(set(dev_hashes) & set(held_hashes))
    if same_paths or shared or dev.sha256 == held_out.sha256:
        example = same_paths[0] if same_paths else (
            f"{dev_hashes[shared[0]]} = {held_hashes[shared[0]]}" if shared else "same corpus")
        raise UsageError(f"{dev_option} and {held_out_option} hold the same text ({example}): the dev set "
                         f"that balances training must never be the evaluation set; give another {held_out_option}")


def render_parity(report: ParityReport) -> str:
    """Premiums and the Gini with their intervals, as markdown (readable as plain text too)."""
    pct = f"{report.level:.0%}"
    lines = [(f"Parity on the held-out text ({report.method}, reference {report.reference}; "
             f"{pct} bootstrap intervals, {report.rounds} rounds)"), "",
             f"| lang | premium | {pct} interval | chars/token |", "|---|---:|---:|---:|"]
    for lang, premium in sorted(report.premiums.items(), key=lambda kv: -kv[1].value):
        lines.append(f"| {lang} | {premium.value:.3f} | {premium.low:.3f}-{premium.high:.3f} | "
                     f"{report.chars_per_token[lang]:.3f} |")
    lang, worst = report.max_premium
    lines += ["", (f"Gini {report.gini.value:.4f} ({pct} interval {report.gini.low:.4f}-{report.gini.high:.4f}); "
              f"max premium {worst:.3f} ({lang}); mean chars/token {report.mean_chars_per_token:.3f}"), ""]
    return "\n".join(lines)
