"""What an HTML report shows, gathered once: the audit (as its JSON gives it back), a comparison, checks.

`fertility audit|compare|check|retrain -f html` and `fertility report AUDIT.json ...` all build
a `Report`, then report_html.page() lays it out; charts_of() turns it into chart specs, so
the page and the `--figures` export draw the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fertility.metrics.balance import budget
from fertility.metrics.byte_premium import balance_json, premium_split
from fertility.metrics.counts import ALL
from fertility.results.model import AuditResult

from . import charts
from .cells import missing


@dataclass(frozen=True)
class Report:
    title: str
    result: AuditResult | None = None
    mix: dict[str, float] | None = None
    comparison: Any = None  # compare.Comparison
    retrain: bool = False  # the comparison is retrain's before (A) and after (B)
    checks: tuple = ()  # gate.Check


def as_saved(result: AuditResult, *, findings: bool | None = None) -> AuditResult:
    """The result exactly as its audit JSON gives it back: a page drawn from this is the page
    `fertility report` draws from the saved file (same JSON in, same page out)."""
    return AuditResult.from_dict(result.to_dict(findings=findings), source="the audit")


def audit_report(result: AuditResult, *, findings: bool | None = None) -> Report:
    """`fertility audit -f html`: the page of the audit's JSON."""
    saved = as_saved(result, findings=findings)
    return Report("fertility audit", saved, saved.mix)


def audit_for_report(tokenizers: Sequence[str], corpus_paths: Sequence[str | Path], *, doc_mode: str = "line",
                     pattern: str | None = None, normalize: str | None = None, progress=None,
                     diagnose: bool = True, reference: str = "eng_Latn", mix: dict[str, float] | None = None,
                     jobs: int | None = 1, cache: bool = True, parallel: bool = False,
                     exact_library: bool = False) -> Report:
    """Audit, then the report of its JSON (the library's way to `audit -f html`)."""
    from fertility.audit import audit
    from fertility.io.memory import CorpusPaths

    result = audit(list(tokenizers), CorpusPaths(corpus_paths), doc_mode=doc_mode, pattern=pattern, normalize=normalize,
                   progress=progress, diagnose=diagnose, reference=reference, mix=mix, jobs=jobs, cache=cache,
                   frames=False, parallel=parallel, exact_library=exact_library)
    return audit_report(result)


def language_rows(result: AuditResult) -> list[dict[str, Any]]:
    """The audit frame's rows (every column it has, so metrics added to the frame later show
    up too) with the premium split: what the table and the charts show."""
    split = {t: premium_split(result.counts_for(t), result.reference, parallel=result.parallel)
             for t in result.tokenizers}
    rows = []
    for row in result.to_frame().to_dict(orient="records"):
        stats = result.token_stats.get((row["tokenizer"], row["lang"]), {})
        rows.append({**row, **split[row["tokenizer"]].get(row["lang"], {}),
                     **({"renyi_efficiency": stats["renyi_efficiency"]} if stats else {})})
    return rows


def pretoken_ceilings(result: AuditResult) -> dict[tuple[str, str], float]:
    """chars per pre-token per (tokenizer, language), for every language measured (an audit
    JSON carries the counts; an older one without them draws no ceiling chart)."""
    return {key: n_chars / n_pretokens if n_pretokens else math.nan
            for key, (n_chars, n_pretokens) in result.pretoken_counts.items()}


def charts_of(report: Report) -> dict[str, dict[str, Any]]:
    """Chart id -> Vega-Lite spec (without the shared config), in page order."""
    out: dict[str, dict[str, Any]] = {}
    result = report.result
    if result is not None:
        rows = [r for r in language_rows(result) if r["lang"] != ALL]
        out["chars-per-token"] = charts.chars_per_token(rows)
        if any(not missing(r.get("premium")) for r in rows):
            out["premium"] = charts.premium(rows, result.reference)
        balance = {t: balance_json(result.counts_for(t), result.reference, parallel=result.parallel)
                   for t in result.tokenizers}
        if any(entry["lorenz"] for entry in balance.values()):
            out["lorenz"] = charts.lorenz(balance)
        budget_rows = _budget_rows(result, report.mix)
        if budget_rows:
            out["budget"] = charts.budget(budget_rows, given=report.mix is not None)
        ceilings = pretoken_ceilings(result)
        ceiling_rows = [{**r, "chars_per_pretoken": ceilings[(r["tokenizer"], r["lang"])]}
                        for r in rows if (r["tokenizer"], r["lang"]) in ceilings]
        if ceiling_rows:
            out["ceiling"] = charts.ceiling(ceiling_rows)
        if result.vocabularies:
            out["vocabulary"] = charts.vocabulary({t: v.as_dict() for t, v in result.vocabularies.items()})
    comparison = report.comparison
    if comparison is not None:
        rows = comparison.frame.to_dict(orient="records")
        if report.retrain:
            out["before-after"] = charts.before_after(rows, comparison.a, comparison.b)
        out["ratios"] = charts.ratios(rows, comparison.a, comparison.b)
        if result is None:
            out["chars-per-token"] = charts.chars_per_token(
                [{"tokenizer": name, "lang": r["lang"], "script": r["script"], "chars_per_token": r[f"chars_per_token_{s}"],
                  "bytes_per_token": r[f"bytes_per_token_{s}"]}
                 for r in rows if r["lang"] != ALL for name, s in ((comparison.a, "a"), (comparison.b, "b"))])
    return out


def _budget_rows(result: AuditResult, mix: dict[str, float] | None) -> list[dict[str, Any]]:
    """As the inverted-balance finding: for a given mix, or a corpus that is not parallel."""
    rows = []
    for name in result.tokenizers:
        counts = result.counts_for(name)
        if len(counts) < 2 or not (mix or not result.parallel.parallel):
            continue
        for row in budget(counts, mix):
            rows.append({"tokenizer": name, "lang": row.lang, "script": result.scripts[row.lang],
                         "content_share": row.content_share, "token_share": row.token_share})
    return rows


def retrain_report(after: AuditResult) -> Report:
    """retrain's held-out audit; with --compare-with, its before (A) and after (B)."""
    comparison = None
    if len(after.tokenizers) == 2:
        from fertility.compare import Comparison, join

        a, b = after.tokenizers
        result_a, result_b = after.one(a), after.one(b)
        comparison = Comparison(a, b, result_a.signature, result_b.signature,
                                join(result_a, result_b, reference=after.reference), intervals=False,
                                parallel=after.parallel)
    return Report("fertility retrain: the new tokenizer on held-out text", after, comparison=comparison,
                  retrain=True)


def comparison_report(comparison) -> Report:
    return Report(f"fertility compare: {comparison.b} against {comparison.a}", comparison=comparison)


def gate_report(gate) -> Report:
    """The checks, then the page of the audit's JSON (as `fertility report` would draw it)."""
    saved = as_saved(gate.result)
    return Report("fertility check", saved, saved.mix, checks=tuple(gate.checks))


def saved_report(paths: Sequence[Path], *, mix: dict[str, float] | None = None) -> Report:
    """`fertility report A.json [B.json ...]`: one saved audit, two compared (as `compare`
    does with saved audits: the same corpus and counting settings, no intervals), or more drawn
    as one audit of all their tokenizers (the same corpus and settings: leaderboard.py)."""
    from fertility.errors import UsageError

    if not paths:
        raise UsageError("give at least one audit JSON file")
    if len(paths) > 2:
        from .leaderboard import combined as combined_audits

        return Report(f"fertility report: {len(paths)} audits", combined_audits(paths), mix=mix)
    if len(paths) == 1:
        result = AuditResult.load(paths[0])
        return Report(f"fertility report: {paths[0].name}", result, mix=mix or result.mix)
    from fertility.compare import compare_saved
    from fertility.results.model import load_one

    result_a, result_b = load_one(paths[0]), load_one(paths[1])
    comparison = compare_saved(paths[0], paths[1], reference=result_a.reference)
    return Report(f"fertility report: {paths[1].name} against {paths[0].name}",
                  combined(result_a, result_b, comparison.a, comparison.b), mix=mix, comparison=comparison)


def combined(result_a: AuditResult, result_b: AuditResult, a: str, b: str) -> AuditResult:
    """Two one-tokenizer audits of the same corpus as one audit of two tokenizers (`a`, `b`:
    their names in the comparison, which tell them apart when both files name the same one)."""
    from dataclasses import replace

    (old_a,), (old_b,) = result_a.tokenizers, result_b.tokenizers
    counts = {**{(a, lang): c for (_, lang), c in result_a.counts.items()},
              **{(b, lang): c for (_, lang), c in result_b.counts.items()}}
    findings = tuple(replace(f, tokenizer=a) for f in result_a.findings) + \
        tuple(replace(f, tokenizer=b) for f in result_b.findings)
    vocabularies = {**({a: result_a.vocabularies[old_a]} if old_a in result_a.vocabularies else {}),
                    **({b: result_b.vocabularies[old_b]} if old_b in result_b.vocabularies else {})}
    from fertility.compare import shared_parallelism

    signature = replace(result_a.signature, tokenizers={a: result_a.signature.tokenizers[old_a],
                                                        b: result_b.signature.tokenizers[old_b]},
                        extra={**result_a.signature.extra,
                               "parallel": shared_parallelism(result_a, result_b).to_dict()})
    def relabelled(by_key: dict, old: str, new: str) -> dict:
        return {(new, lang): value for (name, lang), value in by_key.items() if name == old}

    # everything per tokenizer that the page draws: the ceiling chart (pre-tokens), the
    # Renyi efficiency column (token statistics), the tokens never produced
    return AuditResult(signature=signature, tokenizers=(a, b), scripts=dict(result_a.scripts), counts=counts,
                       findings=findings, diagnosed=result_a.has_findings and result_b.has_findings,
                       reference=result_a.reference, vocabularies=vocabularies,
                       token_stats={**relabelled(result_a.token_stats, old_a, a),
                                    **relabelled(result_b.token_stats, old_b, b)},
                       unseen_tokens={**({a: result_a.unseen_tokens[old_a]} if old_a in result_a.unseen_tokens else {}),
                                      **({b: result_b.unseen_tokens[old_b]} if old_b in result_b.unseen_tokens else {})},
                       pretokens={**relabelled(result_a.pretoken_counts, old_a, a),
                                  **relabelled(result_b.pretoken_counts, old_b, b)})
