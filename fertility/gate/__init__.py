"""The CI gate (`fertility check`): thresholds from `[tool.fertility]` (pyproject.toml) or
fertility.toml (config.py), checked against a fresh audit, and optionally against a baseline
audit JSON; the verdict and its formats are in verdict.py.
"""

from __future__ import annotations

import math
from pathlib import Path

from fertility.audit import audit
from fertility.errors import UsageError
from fertility.io.memory import CorpusPaths
from fertility.io.parallel import Parallelism
from fertility.metrics.balance import premiums
from fertility.metrics.counts import Counts, ratio, ratios
from fertility.results.model import AuditResult, load_one
from fertility.results.signature import Signature, check_comparable

from .config import GateConfig
from .verdict import Check, GateReport


def _limit_for(limits: dict[str, float], lang: str) -> float | None:
    return limits.get(lang, limits.get("*"))


def run(config: GateConfig, *, jobs: int | None = 1) -> GateReport:
    """Audit (in `jobs` worker processes; None: every core), check every threshold (and the
    baseline), refuse a gate with nothing to check."""
    if config.baseline:  # a broken baseline is found before the audit, not after it
        load_one(Path(config.baseline))
    if "max_premium" in (config.limits or {}) and not config.parallel:  # so is a premium without parallel text
        premium_needs_parallel(config, corpus_parallelism(config))
    audited: list[AuditResult] = []
    checks, signature = run_gate(config, keep=audited, jobs=jobs)
    if not checks:
        raise UsageError(f"{config.source}: no thresholds configured (min_chars_per_token, max_premium, ...)")
    return GateReport(tuple(checks), signature, config.source, result=audited[0] if audited else None)


def run_gate(config: GateConfig, *, keep: list | None = None, jobs: int | None = 1) -> tuple[list[Check], Signature]:
    """Audit the tokenizer and check every threshold; returns the checks and the audit signature
    (and appends the audit to `keep`, when given)."""
    result = audit([config.tokenizer], CorpusPaths(config.corpus) or None, doc_mode="file" if config.per_file else "line",
                   pattern=config.pattern, normalize=config.normalize, diagnose=False,
                   reference=config.reference, parallel=config.parallel, jobs=jobs,
                   parallel_option="--parallel")
    if keep is not None:
        keep.append(result)
    name = result.tokenizers[0]
    counts = result.counts_for(name)
    limits = config.limits or {}
    for key, per_lang in limits.items():
        unknown = sorted(set(per_lang) - set(counts) - {"*"})
        if unknown:
            raise UsageError(f"{config.where(key)}: {key} names languages not in the corpus: {', '.join(unknown)} "
                             f"(the corpus has {', '.join(sorted(counts))})")
    checks: list[Check] = []
    measured_as = {"min_chars_per_token": "chars_per_token", "max_grapheme_cut_share": "grapheme_cut_share",
                   "max_unknown_share": "unknown_share"}  # threshold -> ratio of results.ratios
    prem: dict[str, float] = {}
    if "max_premium" in limits:
        found = premiums(counts, config.reference, parallel=premium_needs_parallel(config, result.parallel))
        prem = found.values if found is not None else {}
    for key, per_lang in limits.items():
        for lang in counts:
            limit = _limit_for(per_lang, lang)
            if limit is None or (key == "max_premium" and lang == config.reference):
                continue
            value = prem[lang] if key == "max_premium" else ratios(counts[lang], counts[lang])[measured_as[key]]
            ok = value >= limit if key.startswith("min_") else value <= limit
            checks.append(Check(key, lang, limit, value, bool(ok) and not math.isnan(value)))
    if config.baseline:
        checks += _regressions(config, counts, result.signature)
    return checks, result.signature


def corpus_parallelism(config: GateConfig) -> Parallelism:
    """Whether the gate's corpus proves itself parallel: read (not tokenized) before the audit."""
    from fertility.io.corpus import CorpusStream
    from fertility.io.parallel import decide
    from fertility.io.samples import samples_dir

    stream = CorpusStream([Path(p) for p in config.corpus] or [samples_dir()],
                          doc_mode="file" if config.per_file else "line")
    for _ in stream.batches():
        pass
    summary = stream.corpus()
    return decide(summary.layouts, summary.n_docs, reference=config.reference)


def premium_needs_parallel(config: GateConfig, parallel: Parallelism) -> Parallelism:
    """A premium threshold over text that is not parallel is a configuration error, never a
    silent pass: there is no premium to check."""
    if not parallel.parallel:
        raise UsageError(f"{config.source}: max_premium needs parallel text (line i the same content in every "
                         f"language), and this corpus is not: {parallel.why}. Check line-aligned translations "
                         "(FLORES-200, NTREX), or set parallel = true (--parallel) if the corpus is aligned")
    return parallel


def _regressions(config: GateConfig, counts: dict[str, Counts], signature: Signature) -> list[Check]:
    assert config.baseline is not None
    baseline = load_one(Path(config.baseline))
    check_comparable(baseline.signature, signature, what="check against the baseline")
    before = baseline.counts_for(baseline.tokenizers[0])
    tolerance = config.max_regression if config.max_regression is not None else 0.0
    out = []
    for lang in sorted(set(before) & set(counts)):
        old = ratio(before[lang].n_chars, before[lang].n_tokens)
        new = ratio(counts[lang].n_chars, counts[lang].n_tokens)
        loss = (old - new) / old if old else math.nan
        out.append(Check("max_regression", lang, tolerance, loss, loss <= tolerance))  # NaN fails
    return out


