"""The CI gate: thresholds from `[tool.fertility]` (pyproject.toml) or fertility.toml, checked
against a fresh audit, and optionally against a baseline audit JSON.

A typo in a key is a configuration error (exit 2), never a silent pass.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from fertility.io.memory import CorpusPaths
from fertility.io.numbers import describe_range, real
from fertility.io.parallel import Parallelism
from fertility.metrics.balance import premiums
from fertility.metrics.counts import Counts, ratio, ratios
from fertility.results.contract import SCHEMA_VERSIONS
from fertility.results.model import AuditResult, load_one
from fertility.results.signature import Signature, check_comparable

from .audit import audit
from .errors import UsageError

PER_LANGUAGE = ("min_chars_per_token", "max_premium", "max_grapheme_cut_share", "max_unknown_share")
SETTINGS = ("tokenizer", "corpus", "per_file", "reference", "pattern", "normalize", "baseline", "max_regression",
            "parallel")
KEYS = (*SETTINGS, *PER_LANGUAGE)
VERDICT_SCHEMA_VERSION = SCHEMA_VERSIONS["check"]  # `check -f json`: see fertility/results/contract.py


@dataclass(frozen=True)
class GateConfig:
    tokenizer: str
    corpus: list[str]
    per_file: bool = False
    reference: str = "eng_Latn"
    pattern: str | None = None
    normalize: str | None = None  # nfc, nfkc, none; default: what the tokenizer's runtime does
    baseline: str | None = None
    max_regression: float | None = None
    limits: dict[str, dict[str, float]] | None = None  # threshold -> {lang or "*": limit}
    source: str = "options"
    parallel: bool = False  # the user states that line i is the same content in every language


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


# Where each threshold means something: (low, high, low_open, high_open, what it is). NaN and
# infinities are refused for all of them (NaN passes every comparison a check makes).
THRESHOLD_RANGES: dict[str, tuple[float, float, bool, bool, str]] = {
    "min_chars_per_token": (0.0, math.inf, False, False, "characters per token"),
    "max_premium": (0.0, math.inf, True, False, "tokens against the reference's"),
    "max_grapheme_cut_share": (0.0, 1.0, False, False, "a share of token boundaries"),
    "max_unknown_share": (0.0, 1.0, False, False, "a share of tokens"),
    "max_regression": (0.0, 1.0, False, True, "a relative loss of chars/token, e.g. 0.02 for 2%"),
}


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, KEYS, n=1)
    return (f" (did you mean {close[0]!r}?)" if close else "") + f"; known keys: {', '.join(KEYS)}"


def threshold(value: object, *, key: str, where: str) -> float:
    """A threshold's value, finite and in its range (`where` names it in the message)."""
    low, high, low_open, high_open, what = THRESHOLD_RANGES[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):  # TOML's "2" is a slip, not 2
        raise UsageError(f"{where} must be a number, not {value!r}")
    try:
        return real(value, option=where, low=low, high=high, low_open=low_open, high_open=high_open)
    except UsageError:
        raise UsageError(f"{where} must be a finite number{describe_range(low, high, low_open, high_open)} "
                         f"({what}), not {value!r}") from None


def load_config(path: Path) -> tuple[dict, str]:
    """The raw table: `[tool.fertility]` of a pyproject.toml, or all of a fertility.toml."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"{path}: cannot read ({err.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: invalid TOML ({err})") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("fertility") if isinstance(tool, dict) else None
        if not isinstance(tool, dict):
            raise UsageError(f"{path}: 'tool' must be a table, not {type(tool).__name__} ({tool!r:.40})")
        if table is None:
            raise UsageError(f"{path}: no [tool.fertility] table")
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [tool.fertility] must be a table of settings, not "
                             f"{type(table).__name__} ({table!r:.40})")
        return table, f"{path} [tool.fertility]"
    return data, str(path)


def find_config(folder: Path) -> Path | None:
    for name in ("fertility.toml", "pyproject.toml"):
        candidate = folder / name
        if candidate.is_file() and (name == "fertility.toml" or b"[tool.fertility" in candidate.read_bytes()):
            return candidate
    return None


PATH_KEYS = ("tokenizer", "corpus", "baseline")


def resolve_paths(table: dict, base: Path) -> dict:
    """Paths written in a config file are relative to that file's folder (command-line values
    are not passed through here: they are relative to where the command runs)."""
    def resolve(value):
        if isinstance(value, str) and not Path(value).is_absolute() and (base / value).exists():
            return str(base / value)
        return value
    out = dict(table)
    for key in PATH_KEYS:
        if key in out:
            out[key] = [resolve(v) for v in out[key]] if isinstance(out[key], list) else resolve(out[key])
    return out


def _typed(table: dict, key: str, kind: type, source: str, what: str):
    value = table.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))):
        raise UsageError(f"{source}: {key} must be {what}, not {value!r}")
    return value


def gather_config(config_path: Path | None, overrides: dict, *, cwd: Path) -> tuple[dict, str, Path | None]:
    """The settings of a check: the config file given, else the one found from `cwd`
    (fertility.toml, pyproject.toml's [tool.fertility]), its paths resolved against its
    folder, then the options given (None: not given) over it. Returns (table, where the
    settings came from, the config file or None)."""
    path = config_path or find_config(cwd)
    table: dict = {}
    source = "options"
    if path is not None:
        table, source = load_config(path)
        table = resolve_paths(table, path.parent)
    return {**table, **{k: v for k, v in overrides.items() if v is not None}}, source, path


def listed_corpora(table: dict) -> list[str]:
    """The corpus paths a settings table names (one string or a list), before it is validated."""
    corpus = table.get("corpus")
    listed = [corpus] if isinstance(corpus, str) else corpus if isinstance(corpus, list) else []
    return [c for c in listed if isinstance(c, str)]


def parse_config(table: dict, *, source: str) -> GateConfig:
    """Validate keys and types: a typo or a wrong type is a configuration error."""
    for key in table:
        if key not in KEYS:
            raise UsageError(f"{source}: unknown key {key!r}{_suggest(key)}")
    limits: dict[str, dict[str, float]] = {}
    for key in PER_LANGUAGE:
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, dict):
            if not value:
                raise UsageError(f"{source}: {key} is an empty table; give LANG = limit (\"*\" for every language)")
            limits[key] = {lang: threshold(limit, key=key, where=f"{source}: {key}.{lang}")
                           for lang, limit in value.items()}
        else:
            limits[key] = {"*": threshold(value, key=key, where=f"{source}: {key}.*")}
    tokenizer = _typed(table, "tokenizer", str, source, "a tokenizer spec (a string)")
    if not tokenizer:
        raise UsageError(f"{source}: missing key 'tokenizer' (a tokenizer spec)")
    corpus = table.get("corpus", [])
    corpus = [corpus] if isinstance(corpus, str) else corpus
    if not isinstance(corpus, list) or not all(isinstance(c, str) for c in corpus):
        raise UsageError(f"{source}: corpus must be a path or a list of paths")
    regression = table.get("max_regression")
    if regression is not None:
        regression = threshold(regression, key="max_regression", where=f"{source}: max_regression")
    baseline = _typed(table, "baseline", str, source, "a path to an audit JSON (a string)")
    if regression is not None and baseline is None:
        raise UsageError(f"{source}: max_regression needs a baseline audit JSON (key 'baseline')")
    return GateConfig(tokenizer=tokenizer, corpus=corpus,
                      per_file=_typed(table, "per_file", bool, source, "true or false") or False,
                      reference=_typed(table, "reference", str, source, "a language key (a string)") or "eng_Latn",
                      pattern=_typed(table, "pattern", str, source, "a pattern name or regex (a string)"),
                      normalize=_typed(table, "normalize", str, source, "nfc, nfkc or none (a string)"),
                      baseline=baseline, max_regression=float(regression) if regression is not None else None,
                      limits=limits, source=source,
                      parallel=_typed(table, "parallel", bool, source, "true or false") or False)


def _limit_for(limits: dict[str, float], lang: str) -> float | None:
    return limits.get(lang, limits.get("*"))


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

        from .version import __version__

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
                   reference=config.reference, parallel=config.parallel, jobs=jobs)
    if keep is not None:
        keep.append(result)
    name = result.tokenizers[0]
    counts = result.counts_for(name)
    limits = config.limits or {}
    for key, per_lang in limits.items():
        unknown = sorted(set(per_lang) - set(counts) - {"*"})
        if unknown:
            raise UsageError(f"{config.source}: {key} names languages not in the corpus: {', '.join(unknown)}")
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


def summary_markdown(checks: list[Check], signature: Signature) -> str:
    failed = [c for c in checks if not c.passed]
    head = f"### fertility check: {'passed' if not failed else f'{len(failed)} of {len(checks)} failed'}"
    lines = [head, "", "| threshold | lang | limit | measured | verdict |", "|---|---|---:|---:|---|"]
    lines += [f"| {c.threshold} | {c.lang} | {c.limit:.4g} | {c.measured:.4g} | {c.verdict} |" for c in checks]
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

