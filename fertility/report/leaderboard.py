"""A leaderboard of many tokenizers from saved audits: ranked by chars/token over the whole
corpus, with each language's chars/token and, over parallel text, its premium and each
tokenizer's Gini over the premiums.

Every number comes from the audits' own results (`AuditResult.to_frame`, the audit JSON's
`balance` computation), so the leaderboard says what each audit says. Audits of different
corpora or counting settings are refused in one line naming the two files and what differs:
their numbers do not rank against each other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fertility.errors import UsageError
from fertility.io.parallel import Parallelism
from fertility.metrics.byte_premium import balance_json
from fertility.metrics.counts import ALL
from fertility.results.model import AuditResult
from fertility.results.signature import Signature

LEADERBOARD_FORMATS = ("table", "markdown", "latex", "csv", "html")
@dataclass(frozen=True)
class Standing:
    """One tokenizer's line: its numbers per language (ALL included for chars/token)."""

    rank: int
    tokenizer: str
    source: str  # the audit file it came from
    signature: str  # its short signature
    chars_per_token: dict[str, float]
    premium: dict[str, float]  # NaN where there is no premium (text not parallel)
    gini: float  # over the premiums; NaN without them
    unknown_share: dict[str, float]  # per language and ALL: text lost (an [UNK] is one cheap token)


@dataclass(frozen=True)
class Leaderboard:
    standings: tuple[Standing, ...]
    scripts: dict[str, str]  # language -> script, in the audits' language order (sorted)
    reference: str
    parallel: Parallelism
    corpus: str  # the shared corpus hash
    notes: tuple[str, ...] = field(default=())

    @property
    def langs(self) -> list[str]:
        return sorted(self.scripts)

    def records(self) -> list[dict[str, Any]]:
        """Tidy rows: one per tokenizer x language (then its ALL row), for CSV and dataframes."""
        rows = []
        for standing in self.standings:
            for lang in [*self.langs, ALL]:
                rows.append({"rank": standing.rank, "tokenizer": standing.tokenizer, "lang": lang,
                             "script": self.scripts.get(lang, ALL), "chars_per_token": standing.chars_per_token[lang],
                             "premium": standing.premium.get(lang, math.nan), "gini": standing.gini,
                             "unknown_share": standing.unknown_share[lang]})
        return rows


def _differences(first: AuditResult, other: AuditResult) -> list[str]:
    """What differs between two audits' settings, as `key (a vs b)`, shortest useful form."""
    a, b = first.signature.counting_settings(), other.signature.counting_settings()
    out = []
    for key in a:
        if a[key] != b[key]:
            if key == "corpus":
                out.append(f"corpus sha256 {str(a[key].get('sha256', ''))[:12]} vs {str(b[key].get('sha256', ''))[:12]}"
                           if a[key].get("sha256") != b[key].get("sha256") else
                           f"corpus {json.dumps(a[key], sort_keys=True)} vs {json.dumps(b[key], sort_keys=True)}")
            else:
                out.append(f"{key} {a[key]!r} vs {b[key]!r}")
    selection_a, selection_b = first.signature.text_selection(), other.signature.text_selection()
    for key in selection_a:
        if selection_a[key] != selection_b[key]:
            out.append(f"{key} {selection_a[key]!r} vs {selection_b[key]!r}")
    if first.reference != other.reference:
        out.append(f"reference {first.reference} vs {other.reference}")
    return out


def load_audits(paths: Sequence[Path]) -> list[tuple[Path, AuditResult]]:
    """Every audit, checked to measure the same corpus with the same settings as the first."""
    if not paths:
        raise UsageError("give at least one audit JSON file")
    seen: set[Path] = set()
    loaded = []
    for path in paths:
        if path.resolve() in seen:
            raise UsageError(f"{path}: given twice")
        seen.add(path.resolve())
        loaded.append((path, AuditResult.load(path)))
    first_path, first = loaded[0]
    for path, result in loaded[1:]:
        differing = _differences(first, result)
        if differing:
            raise UsageError(f"{path} and {first_path} were measured on different corpora or settings "
                             f"({'; '.join(differing)}); a leaderboard ranks tokenizers on the same text")
    return loaded


def labels(loaded: Sequence[tuple[Path, AuditResult]]) -> list[tuple[str, Path, AuditResult, str]]:
    """(label, file, audit, tokenizer name in it) for every tokenizer of every audit; a name two
    files share is told apart by its file name."""
    entries = [(name, path, result) for path, result in loaded for name in result.tokenizers]
    names = [name for name, _, _ in entries]
    out = []
    for name, path, result in entries:
        label = name if names.count(name) == 1 else f"{name} ({path.name})"
        out.append((label, path, result, name))
    twice = sorted({label for label, *_ in out if [e[0] for e in out].count(label) > 1})
    if twice:
        raise UsageError(f"two tokenizers would both be named {twice[0]!r} (the same name in the same file name); "
                         "rename one of the files")
    return out


def shared_parallelism(results: Sequence[AuditResult]) -> Parallelism:
    """Premiums when every audit says its corpus is parallel; else the first reason why not."""
    return next((r.parallel for r in results if not r.parallel.parallel), results[0].parallel)


def build(paths: Sequence[Path]) -> Leaderboard:
    loaded = load_audits(paths)
    results = [result for _, result in loaded]
    parallel = shared_parallelism(results)
    first = results[0]
    lines = []
    for label, path, result, name in labels(loaded):
        frame = {row["lang"]: row for row in result.to_frame().to_dict(orient="records")}
        if set(frame) - {ALL} != set(first.scripts):
            raise UsageError(f"{path}: covers other languages than {loaded[0][0]}")
        premiums = {lang: row["premium"] for lang, row in frame.items() if lang != ALL} if parallel.parallel else {}
        gini = balance_json(result.counts_for(name), result.reference, parallel=parallel)["gini"] \
            if parallel.parallel else None
        lines.append(Standing(0, label, str(path), result.signature.one(name).short(),
                              {lang: row["chars_per_token"] for lang, row in frame.items()}, premiums,
                              math.nan if gini is None else gini, {lang: row["unknown_share"] for lang, row in frame.items()}))
    ranked = sorted(lines, key=lambda s: (-_sortable(s.chars_per_token[ALL]), s.tokenizer))
    standings = tuple(replace(s, rank=i) for i, s in enumerate(ranked, start=1))
    corpus = str(first.signature.corpus.get("sha256", ""))
    notes = [(f"ranked by chars/token over all languages (higher: more text per token); corpus sha256 {corpus[:12]}, "
              f"{len(first.scripts)} languages"),
             "unk %: share of tokens that are the unknown token (text lost: it makes chars/token look better)"]
    notes.append(f"premium: tokens for the same content against {first.reference} (1 = as cheap); Gini over the "
                 "premiums (0 = every language pays the same)" if parallel.parallel else parallel.note())
    return Leaderboard(standings, dict(sorted(first.scripts.items())), first.reference, parallel, corpus,
                       tuple(notes))


def _sortable(value: float) -> float:
    return -math.inf if value is None or math.isnan(value) else value


def combined(paths: Sequence[Path]) -> AuditResult:
    """N audits of one corpus as one audit of all their tokenizers (what `fertility report`
    draws for more than two): counts, findings, vocabularies and token statistics relabelled."""
    loaded = load_audits(paths)
    entries = labels(loaded)
    results = [result for _, result in loaded]
    first = results[0]
    counts, findings, vocabularies, token_stats, unseen, pretokens = {}, [], {}, {}, {}, {}
    tokenizers_info = {}
    for label, _, result, name in entries:
        counts.update({(label, lang): c for (t, lang), c in result.counts.items() if t == name})
        findings += [replace(f, tokenizer=label) for f in result.findings if f.tokenizer == name]
        if name in result.vocabularies:
            vocabularies[label] = result.vocabularies[name]
        token_stats.update({(label, lang): v for (t, lang), v in result.token_stats.items() if t == name})
        if name in result.unseen_tokens:
            unseen[label] = result.unseen_tokens[name]
        pretokens.update({(label, lang): v for (t, lang), v in result.pretoken_counts.items() if t == name})
        tokenizers_info[label] = result.signature.tokenizers[name]
    signature = Signature.from_dict({**first.signature.to_dict(), "tokenizers": tokenizers_info,
                                     "parallel": shared_parallelism(results).to_dict()})
    return AuditResult(signature=signature, tokenizers=tuple(label for label, *_ in entries),
                       scripts=dict(first.scripts), counts=counts, findings=tuple(findings),
                       diagnosed=all(r.has_findings for r in results), reference=first.reference,
                       vocabularies=vocabularies, token_stats=token_stats, unseen_tokens=unseen,
                       pretokens=pretokens)


__all__ = ["LEADERBOARD_FORMATS", "Leaderboard", "Standing", "build", "combined", "load_audits"]
