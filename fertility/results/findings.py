"""A finding: what the diagnosis saw, in a shape a saved audit can hold and give back.

Kept with the results rather than with the rules that make findings, because reading a saved
audit rebuilds findings without judging anything again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    tokenizer: str
    lang: str | None
    measured: dict
    message: str
    fix: str
    examples: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict:
        return asdict(self) | {"examples": list(self.examples)}
