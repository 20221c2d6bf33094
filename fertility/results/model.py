"""AuditResult: the counts of one run with their signature, as rows, frames and findings.

Ratios come from metrics.counts (the one division), so the ALL row is an exact micro-average.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fertility.errors import InputError
from fertility.io.parallel import Parallelism, recorded
from fertility.metrics.counts import (
    COLUMNS,
    NEW_COUNT_COLUMNS,
    Counts,
    all_row,
    group_row,
)
from fertility.text.units import is_spaced

from .signature import Signature, SignatureError

if TYPE_CHECKING:
    import pandas as pd

PREMIUM_COLUMNS = ["premium", "byte_premium", "tokenizer_premium"]  # to_frame(by="lang") only
INTERVAL_RATIOS = ("chars_per_token", "bytes_per_token")  # a sampled audit's 95% half-widths


@dataclass(frozen=True)
class AuditResult:
    """Counts per (tokenizer, language) and the signature of the settings that produced them.

    The one result type: `to_dict` writes the audit JSON, `from_dict`/`load` read it back
    (checked, so a hand-edited file is an InputError naming the problem, never a traceback).
    """

    signature: Signature
    tokenizers: tuple[str, ...]
    scripts: dict[str, str]  # language -> ISO 15924 script
    counts: dict[tuple[str, str], Counts]
    findings: tuple = field(default=())  # diagnose.Finding, most severe first
    evidence: object = None  # evidence.Evidence behind the findings, when diagnosed
    diagnosed: bool | None = None  # None: diagnosed when there is evidence
    reference: str = "eng_Latn"  # the language premiums (token and byte) are measured against
    vocabularies: dict = field(default_factory=dict)  # tokenizer -> vocab.VocabAllocation, when measured
    # counts an older audit JSON did not have (held as 0): their ratios are NaN, written as null
    missing: frozenset[str] = frozenset()
    # (tokenizer, language or ALL) -> {"token_lengths": [17 ints], "renyi_efficiency": float}
    token_stats: dict = field(default_factory=dict)
    unseen_tokens: dict = field(default_factory=dict)  # tokenizer -> {"vocab_size", "n_unseen"}
    intervals: dict = field(default_factory=dict)  # tokenizer -> lang -> 95% half-widths, when sampled
    # (tokenizer, language) -> (n_chars, n_pretokens) of the tokenizer's own pre-tokenization, when
    # diagnosed: the pre-tokenizer ceiling of every language, read back from the JSON
    pretokens: dict = field(default_factory=dict)
    mix: dict | None = None  # the content shares given with --mix (the budget chart and finding use them)

    def __post_init__(self) -> None:
        if not isinstance(self.signature, Signature):  # a plain dict, as a caller may build one
            object.__setattr__(self, "signature", Signature.from_dict(self.signature))

    @property
    def pretoken_counts(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(n_chars, n_pretokens) per (tokenizer, language): the evidence's when live, else what
        the JSON carried, so that a live page and a page rebuilt from its JSON draw the same."""
        live = getattr(self.evidence, "pretokens", None) or {}
        if live:
            return {key: (pre.n_chars, pre.n_pretokens) for key, pre in live.items()}
        return dict(self.pretokens)

    @property
    def parallel(self) -> Parallelism:
        """Whether premiums exist for these counts, as the signature records it (parallel.py)."""
        return recorded(self.signature.extra)

    @property
    def has_findings(self) -> bool:
        """Whether findings were looked for (an empty tuple then means none were found)."""
        return self.diagnosed if self.diagnosed is not None else self.evidence is not None

    def counts_for(self, tokenizer: str) -> dict[str, Counts]:
        return {lang: self.counts[(tokenizer, lang)] for lang in self.scripts
                if (tokenizer, lang) in self.counts}

    def one(self, tokenizer: str) -> AuditResult:
        """The result of one of its tokenizers, as if audited alone."""
        return AuditResult(signature=self.signature.one(tokenizer), tokenizers=(tokenizer,),
                           scripts=dict(self.scripts),
                           counts={k: v for k, v in self.counts.items() if k[0] == tokenizer},
                           findings=tuple(f for f in self.findings if f.tokenizer == tokenizer),
                           diagnosed=self.has_findings, reference=self.reference,
                           vocabularies={k: v for k, v in self.vocabularies.items() if k == tokenizer},
                           missing=self.missing,
                           token_stats={k: v for k, v in self.token_stats.items() if k[0] == tokenizer},
                           unseen_tokens={k: v for k, v in self.unseen_tokens.items() if k == tokenizer})

    def to_frame(self, *, by: str = "lang") -> pd.DataFrame:
        """One row per (tokenizer, language) or (tokenizer, script), then an ALL row each: tidy,
        for a notebook. Per language it also carries the premium split (premium, byte_premium,
        tokenizer_premium: NaN where the corpus is not parallel, and on ALL rows) and, for a
        sampled audit, the half-widths of the 95% intervals (`*_ci95`)."""
        import pandas as pd

        rows, columns = self.records(by=by), list(COLUMNS)
        if by == "lang":
            from fertility.metrics.byte_premium import premium_split

            split = {t: premium_split(self.counts_for(t), self.reference, parallel=self.parallel)
                     for t in self.tokenizers}
            rows = [row | {column: split[row["tokenizer"]].get(row["lang"], {}).get(column, math.nan)
                           for column in PREMIUM_COLUMNS} for row in rows]
            columns += PREMIUM_COLUMNS
            if self.intervals:
                for row in rows:
                    found = self.intervals.get(row["tokenizer"], {}).get(row["lang"], {})
                    for name in INTERVAL_RATIOS:
                        half = found.get(name)
                        row[f"{name}_ci95"] = math.nan if half is None else half
                columns += [f"{name}_ci95" for name in INTERVAL_RATIOS]
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        """One line for a Python prompt: the dataclass's own repr spelled out every count, example
        and vocabulary entry (about 50 KB for the bundled samples). Jupyter shows the table."""
        n_docs = sum(c.n_docs for (t, _), c in self.counts.items() if t == self.tokenizers[0]) if self.tokenizers else 0
        def many(n: int, what: str) -> str:
            return f"{n:,} {what}" + ("" if n == 1 else "s")

        diagnosed = many(len(self.findings), "finding") if self.has_findings else "not diagnosed"
        return (f"<AuditResult {', '.join(self.tokenizers)} on {many(len(self.scripts), 'language')}, "
                f"{many(n_docs, 'document')}; {diagnosed}; {self.signature.short()}; .to_frame() for the numbers>")

    def _repr_html_(self) -> str:
        """Jupyter shows an audit as a compact table (report/notebook.py)."""
        from fertility.report.notebook import html_table

        return html_table(self)

    def chart(self, kind: str = "chars_per_token"):
        """An Altair chart of one of the report's charts (`chars_per_token`, `premium`, `lorenz`,
        ...); needs the `notebook` extra (report/notebook.py)."""
        from fertility.report.notebook import chart

        return chart(self, kind)

    def records(self, *, by: str = "lang") -> list[dict[str, Any]]:
        """The rows of `to_frame` as plain dicts, column by column (the JSON needs no pandas)."""
        if by not in ("lang", "script"):
            raise ValueError(f"by must be 'lang' or 'script', not {by!r}")
        rows = []
        for tokenizer in self.tokenizers:
            per_lang = self.counts_for(tokenizer)
            groups: dict[str, list[str]] = {}
            for lang in sorted(per_lang):
                key = lang if by == "lang" else self.scripts[lang]
                groups.setdefault(key, []).append(lang)
            for key, langs in sorted(groups.items()):
                rows.append(self._row(tokenizer, langs, per_lang,
                                      script=self.scripts[langs[0]] if by == "lang" else key))
            rows.append(all_row(tokenizer, per_lang, self.scripts))
        for row in rows:  # not measured (an older audit JSON): unknown, not zero
            for count in self.missing:
                row[count] = None
                row[NEW_COUNT_COLUMNS[count]] = math.nan
        return [{column: row.get(column) for column in COLUMNS} for row in rows]

    def _row(self, tokenizer: str, langs: list[str], per_lang: dict[str, Counts], *,
             script: str) -> dict:
        return group_row(tokenizer, ",".join(langs), script, [per_lang[lang] for lang in langs],
                         [is_spaced(self.scripts[lang]) for lang in langs])

    def to_dict(self, *, by: str = "lang", findings: bool | None = None) -> dict[str, Any]:
        """The audit JSON (`fertility audit -f json`): findings only when they were looked for
        (`findings`: whether to write them; None: when the result was diagnosed)."""
        from fertility.metrics.byte_premium import balance_json, premium_split
        from fertility.version import __version__

        from .contract import SCHEMA_VERSIONS

        split = {t: premium_split(self.counts_for(t), self.reference, parallel=self.parallel) for t in self.tokenizers}
        rows = [{k: json_value(v) for k, v in
                 (row | (split[row["tokenizer"]].get(row["lang"], {}) if by == "lang" else {})
                  | (self.token_stats.get((row["tokenizer"], row["lang"]), {}) if by == "lang" else {})).items()}
                for row in self.records(by=by)]
        payload: dict[str, Any] = {"schema_version": SCHEMA_VERSIONS["audit"], "fertility_version": __version__,
                                   "signature": self.signature.to_dict(), "signature_short": self.signature.short(), "by": by, "rows": rows}
        if self.has_findings if findings is None else findings:
            payload["findings"] = [json_value(f.as_dict()) for f in self.findings]
        # newer keys, after the keys older readers know
        payload["reference"] = self.reference
        payload["balance"] = {t: json_value(balance_json(self.counts_for(t), self.reference, parallel=self.parallel))
                              for t in self.tokenizers}
        if self.vocabularies:
            payload["vocabulary"] = {t: v.as_dict() for t, v in self.vocabularies.items()}
        if self.unseen_tokens:
            payload["tokens_never_produced"] = dict(self.unseen_tokens)
        if self.intervals:  # sampled audits: half-widths of 95% intervals over documents
            payload["intervals"] = json_value(self.intervals)
        if by == "lang" and self.pretoken_counts:  # what the pre-tokenizer ceiling chart draws
            pretokens: dict[str, dict[str, dict[str, int]]] = {}
            for (name, lang), (n_chars, n_pretokens) in sorted(self.pretoken_counts.items()):
                pretokens.setdefault(name, {})[lang] = {"n_chars": n_chars, "n_pretokens": n_pretokens}
            payload["pretokens"] = pretokens
        if self.mix:
            payload["mix"] = dict(self.mix)
        return payload

    def to_json(self, *, by: str = "lang", findings: bool | None = None) -> str:
        """`to_dict` as the text `fertility audit -f json` writes (and `load` reads)."""
        from . import contract

        return contract.dump("audit", self.to_dict(by=by, findings=findings))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "audit JSON") -> AuditResult:
        """Read what `to_dict(by="lang")` wrote; any problem is an InputError naming `source`."""
        from .contract import NewerSchema
        from .read import Invalid, read

        try:
            return read(cls, data)
        except NewerSchema as err:
            raise InputError(f"{source}: {err}") from None
        except (Invalid, SignatureError) as err:
            raise InputError(f"{source}: not a fertility audit JSON: {err}") from None

    @classmethod
    def load(cls, path: Path) -> AuditResult:
        """Read an audit JSON; one larger than MAX_AUDIT_JSON_BYTES, or not a regular file, is
        refused unread (parsed JSON takes several times its size in memory)."""
        from fertility.limits import MAX_AUDIT_JSON_BYTES, human

        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                raise InputError(f"{path}: not a fertility audit JSON: not a regular file (a pipe, device or folder)")
            if info.st_size > MAX_AUDIT_JSON_BYTES:
                raise InputError(f"{path}: not a fertility audit JSON: {info.st_size:,} bytes, over the "
                                 f"{human(MAX_AUDIT_JSON_BYTES)} any audit takes")
            with open(path, "rb") as handle:
                raw = handle.read(MAX_AUDIT_JSON_BYTES + 1)
            if len(raw) > MAX_AUDIT_JSON_BYTES:
                raise InputError(f"{path}: not a fertility audit JSON: it grew while being read")
            text = raw.decode("utf-8")
        except OSError as err:
            raise InputError(f"{path}: not a fertility audit JSON: cannot read it ({err.strerror})") from None
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: not a fertility audit JSON: not UTF-8 ({err.reason} at byte {err.start})") from None
        try:
            data = json.loads(text)
        except ValueError as err:
            raise InputError(f"{path}: not a fertility audit JSON: not JSON ({err})") from None
        except RecursionError:
            raise InputError(f"{path}: not a fertility audit JSON: JSON nested too deeply to read") from None
        return cls.from_dict(data, source=str(path))


def json_value(value):
    """JSON-safe: NaN -> null, numpy scalars -> Python numbers, recursively."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return json_value(value.item())
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return value


def load_one(path: Path) -> AuditResult:
    """A saved audit of one tokenizer, per language: one side of a comparison, or a baseline."""
    result = AuditResult.load(path)
    if len(result.tokenizers) != 1:
        raise InputError(f"{path}: holds {len(result.tokenizers)} tokenizers ({', '.join(result.tokenizers)}); "
                         "compare needs one per file")
    return result
