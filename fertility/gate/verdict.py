"""A check's verdict: one `Check` per threshold and language, and the `GateReport` that
`fertility check` prints, writes (JSON, Markdown for a CI summary, JUnit XML) and exits with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.etree import ElementTree

from fertility.results.contract import SCHEMA_VERSIONS
from fertility.results.model import AuditResult
from fertility.results.signature import Signature

VERDICT_SCHEMA_VERSION = SCHEMA_VERSIONS["check"]  # `check -f json`: see fertility/results/contract.py



@dataclass(frozen=True)
class Check:
    threshold: str
    lang: str
    limit: float
    measured: float
    passed: bool

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "FAIL"


@dataclass(frozen=True)
class GateReport:
    """Everything `fertility check` shows, writes and exits with."""

    checks: tuple[Check, ...]
    signature: Signature
    source: str = "options"
    result: AuditResult | None = None  # the audit behind the checks (for `check -f html`)
    failed: tuple[Check, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "failed", tuple(c for c in self.checks if not c.passed))

    @property
    def passed(self) -> bool:
        return not self.failed

    def verdict(self) -> str:
        """One line for stderr when a threshold failed."""
        return (f"{len(self.failed)} of {len(self.checks)} thresholds failed: "
                + ", ".join(f"{c.threshold} {c.lang}" for c in self.failed[:5])
                + (" ..." if len(self.failed) > 5 else ""))

    def to_dict(self) -> dict:
        """The verdict as `check -f json` writes it, for CI scripts: its shape is versioned and
        shipped (`fertility schema check`, fertility/results/schemas/check.json).
        A measured value that cannot be computed (NaN) is null, and fails."""
        from fertility.results.model import json_value
        from fertility.version import __version__

        return {"schema_version": VERDICT_SCHEMA_VERSION, "fertility_version": __version__,
                "passed": self.passed, "source": self.source,
                "n_checks": len(self.checks), "n_failed": len(self.failed),
                "checks": [{"threshold": c.threshold, "lang": c.lang, "limit": c.limit,
                            "measured": json_value(c.measured), "passed": c.passed} for c in self.checks],
                "signature": self.signature.to_dict(), "signature_short": self.signature.short()}

    def to_json(self) -> str:
        from fertility.results import contract

        return contract.dump("check", self.to_dict())

    def markdown(self) -> str:
        return summary_markdown(list(self.checks), self.signature)

    def junit(self) -> str:
        return junit_xml(list(self.checks), tokenizer=next(iter(self.signature.tokenizers), ""))


def _markdown_cell(text: str) -> str:
    """A language name in a markdown cell, by report.cells.markdown_cell's rule (the gate sits
    below report): a `|` (a file named `a|b.txt`) would shift the row's numbers one column."""
    return text.replace("|", "\\|")


def summary_markdown(checks: list[Check], signature: Signature) -> str:
    failed = [c for c in checks if not c.passed]
    head = f"### fertility check: {'passed' if not failed else f'{len(failed)} of {len(checks)} failed'}"
    lines = [head, "", "| threshold | lang | limit | measured | verdict |", "|---|---|---:|---:|---|"]
    lines += [f"| {c.threshold} | {_markdown_cell(c.lang)} | {c.limit:.4g} | {c.measured:.4g} | {c.verdict} |" for c in checks]
    return "\n".join(lines) + "\n"


def junit_xml(checks: list[Check], *, tokenizer: str = "") -> str:
    """One test case per check, named by its language and the tokenizer's display name."""
    suite = ElementTree.Element("testsuite", name=f"fertility check: {tokenizer}" if tokenizer else "fertility check",
                                tests=str(len(checks)), failures=str(sum(not c.passed for c in checks)))
    for check in checks:
        case = ElementTree.SubElement(suite, "testcase", classname=f"fertility.{check.threshold}",
                                      name=f"{check.lang} ({tokenizer})" if tokenizer else check.lang)
        if not check.passed:
            failure = ElementTree.SubElement(case, "failure", message=f"{check.threshold} {check.lang}: "
                                             f"measured {check.measured:.4g}, limit {check.limit:.4g}")
            failure.text = failure.get("message")
    return ElementTree.tostring(suite, encoding="unicode") + "\n"
