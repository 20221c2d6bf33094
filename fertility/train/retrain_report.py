"""After `fertility retrain` or `extend`: what was written, and the new tokenizer audited on
held-out text beside --compare-with (retrain) or its base (extend)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fertility.audit import audit
from fertility.results.model import AuditResult

from .retrain import Retrained


@dataclass(frozen=True)
class RetrainReport:
    retrained: Retrained
    tokenizer_file: Path
    after: AuditResult  # the held-out audit, with findings

    def summary(self) -> str:
        return summary(self.retrained)


def summary(retrained: Retrained) -> str:
    """One line for stderr: what was written, and the sampling weights used."""
    record = retrained.record
    trainer = record.get("arguments", {}).get("trainer")
    return (f"wrote {retrained.output / 'tokenizer.json'} (vocab {record['vocab_size']:,}, "
            + (f"{trainer} trainer, " if trainer else "")
            + f"{record['training_seconds']:.1f} s) and {retrained.output / 'training.json'}; weights: "
            + ", ".join(f"{k}={v:.2f}" for k, v in retrained.weights.items()))


def report(retrained: Retrained, *, compare_with: str | None = None, held_out: Sequence[Path] = (),
           reference: str = "eng_Latn") -> RetrainReport:
    """Audit the new tokenizer (after --compare-with, when given) on held-out text."""
    tokenizer_file = retrained.output / "tokenizer.json"
    specs = ([compare_with] if compare_with else []) + [str(tokenizer_file)]
    after = audit(specs, list(held_out) or None, reference=reference)
    return RetrainReport(retrained, tokenizer_file, after)


def extend_summary(record: dict, output: Path, *, asked: int) -> list[str]:
    """Lines for stderr after `extend`: what was written, a shortfall, and the held-out (and
    split-alone) lines whose ids changed, per language."""
    first = record["base"]["ids"]
    lines = [(f"wrote {output / 'tokenizer.json'} ({record['added_tokens']:,} tokens added as ids "
             f"{first:,}-{first + record['added_tokens'] - 1:,}, {record['added_merges']:,} merges appended; "
             f"every base id decodes as before) and {output / 'training.json'}")]
    if record["added_tokens"] < asked:
        lines.append(f"warning: the corpus gave only {record['added_tokens']:,} new tokens seen at "
                     f"least twice (asked for {asked:,})")
    for key, label in (("split_alone_changed_lines", "the mark-aware split alone changes the ids of"),
                       ("held_out_changed_lines", "held-out lines whose ids changed:")):
        changed = record[key]
        if changed:
            lines.append(f"{label} " + ", ".join(f"{lang} {c['changed']}/{c['lines']}" for lang, c in changed.items()))
    return lines


def audit_extended(base: Path, output: Path, held_out: Sequence[Path] = (), *,
                   reference: str = "eng_Latn") -> AuditResult:
    """The base and the extended tokenizer audited side by side on held-out text, with findings."""
    return audit([str(base), str(output / "tokenizer.json")], list(held_out), reference=reference)
