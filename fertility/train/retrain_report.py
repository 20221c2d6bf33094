"""After `fertility retrain`: the new tokenizer (and --compare-with) audited on held-out text."""

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
