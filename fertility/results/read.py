"""Reading an audit JSON back: every key, type and sum checked.

A file a user saved may have been edited by hand or cut short; each problem becomes one short
`Invalid` message (AuditResult.from_dict adds the file name), never a KeyError or a traceback.
Ratios are derived, so a stored ratio that does not follow from its row's counts is refused,
and an ALL row must be the exact sum of the language rows.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from fertility.metrics.counts import ALL, COUNT_COLUMNS, NEW_COUNT_COLUMNS, RATIO_COLUMNS, Counts, all_row, group_row
from fertility.text.units import is_spaced

from .contract import WHAT, NewerSchema, kind_of, version_of
from .findings import Finding
from .signature import Signature

if TYPE_CHECKING:
    from .model import AuditResult


class Invalid(ValueError):
    """What is wrong with the data, said in a few words (the caller names the file)."""


_FINDING_KEYS = {"code": str, "severity": str, "tokenizer": str, "message": str, "fix": str}


def _need(container: dict, key: str, kind: type | tuple[type, ...], where: str):
    if key not in container:
        raise Invalid(f"{where}: missing key {key!r}")
    value = container[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,))):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise Invalid(f"{where}: {key} is {json.dumps(value, ensure_ascii=False)[:40]}, not {names}")
    return value


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def read(cls: type[AuditResult], data: Any) -> AuditResult:
    """An AuditResult from what `AuditResult.to_dict(by=\"lang\")` wrote, every key checked."""
    if not isinstance(data, dict):
        raise Invalid(f"the top level is {type(data).__name__}, not an object")
    kind = kind_of(data)
    if kind not in (None, "audit"):
        raise Invalid(f"this is {WHAT[kind]}, not an audit")
    try:  # before any other key: a newer file may hold keys whose meaning is unknown here
        version_of("audit", data)
    except NewerSchema:
        raise
    except ValueError as err:
        raise Invalid(str(err)) from None
    signature = Signature.from_dict(_need(data, "signature", dict, "top level"))
    by = data.get("by", "lang")
    if by != "lang":
        raise Invalid(f"rows are per {by}, not per language; save the audit without --by {by}")
    rows = _need(data, "rows", list, "top level")
    names = tuple(signature.tokenizers)
    if not names:
        raise Invalid("signature.tokenizers is empty")
    counts: dict[tuple[str, str], Counts] = {}
    scripts: dict[str, str] = {}
    all_rows: dict[str, dict] = {}
    # counts added after the first release: absent (or null) in older files, then held as 0
    missing = {key for key in NEW_COUNT_COLUMNS
               if any(isinstance(row, dict) and row.get(key) is None for row in rows)}
    token_stats: dict[tuple[str, str], dict] = {}
    for number, row in enumerate(rows, 1):
        where = f"row {number}"
        if not isinstance(row, dict):
            raise Invalid(f"{where} is {type(row).__name__}, not an object")
        tokenizer = _need(row, "tokenizer", str, where)
        lang = _need(row, "lang", str, where)
        where = f"row {number} ({tokenizer} {lang})"
        if tokenizer not in signature.tokenizers:
            raise Invalid(f"{where}: tokenizer {tokenizer!r} is not in the signature "
                           f"({', '.join(names)})")
        script = _need(row, "script", str, where)
        values = {}
        for key in COUNT_COLUMNS:
            if key in missing:
                values[key] = 0
                continue
            value = _need(row, key, int, where)
            if value < 0:
                raise Invalid(f"{where}: {key} is negative ({value})")
            values[key] = value
        for key in RATIO_COLUMNS:
            if key in row and row[key] is not None:
                _need(row, key, (int, float), where)
        row_counts = Counts(**values)
        stats = _token_stats(row, where)
        if stats is not None:
            token_stats[(tokenizer, lang)] = stats
        if lang == ALL:
            if tokenizer in all_rows:
                raise Invalid(f"{where}: a second ALL row")
            all_rows[tokenizer] = {"row": row, "counts": row_counts, "where": where}
            continue
        if "," in lang:
            raise Invalid(f"{where}: rows are per script, not per language; save the audit without --by script")
        if (tokenizer, lang) in counts:
            raise Invalid(f"{where}: the same tokenizer and language twice")
        if scripts.setdefault(lang, script) != script:
            raise Invalid(f"{where}: script {script!r}, but {scripts[lang]!r} in another row")
        counts[(tokenizer, lang)] = row_counts
        _check_ratios(row, _unknown(group_row(tokenizer, lang, script, [row_counts], [is_spaced(script)]),
                                    missing), where)
    for name in names:
        per_lang = {lang: c for (t, lang), c in counts.items() if t == name}
        if not per_lang:
            raise Invalid(f"no rows for tokenizer {name!r} of the signature")
        if name not in all_rows:
            raise Invalid(f"no ALL row for tokenizer {name!r} (a truncated file?)")
        expected = all_row(name, per_lang, scripts)
        found = all_rows[name]
        if found["counts"] != Counts(**{k: expected[k] for k in COUNT_COLUMNS}):
            raise Invalid(f"{found['where']}: counts are not the sum of the language rows "
                           "(rows missing or edited?)")
        _check_ratios(found["row"], _unknown(expected, missing), found["where"])
        lengths = [token_stats[(name, lang)]["token_lengths"] for lang in per_lang if (name, lang) in token_stats]
        if (name, ALL) in token_stats and len(lengths) == len(per_lang) and \
                [sum(column) for column in zip(*lengths)] != token_stats[(name, ALL)]["token_lengths"]:
            raise Invalid(f"{found['where']}: token_lengths are not the sum of the language rows")
    findings = ()
    if "findings" in data:
        findings = _findings(_need(data, "findings", list, "top level"), names)
    reference = data.get("reference", "eng_Latn")
    if not isinstance(reference, str):
        raise Invalid("reference is not a string")
    from fertility.io.parallel import Parallelism
    try:  # whether premiums exist: one decision, read by every command from here
        Parallelism.from_dict(signature.extra.get("parallel"))
    except ValueError as err:
        raise Invalid(str(err)) from None
    return cls(signature=signature, tokenizers=names, scripts=dict(sorted(scripts.items())),
               counts=counts, findings=findings, diagnosed="findings" in data, reference=reference,
               vocabularies=_vocabularies(data.get("vocabulary", {}), names), missing=frozenset(missing),
               token_stats=token_stats, unseen_tokens=_unseen(data.get("tokens_never_produced", {}), names),
               pretokens=_pretokens(data.get("pretokens", {}), names, scripts), mix=_mix(data.get("mix"), scripts))


def _pretokens(data: Any, names: tuple[str, ...], scripts: dict[str, str]) -> dict:
    """tokenizer -> language -> {n_chars, n_pretokens}: counts, so non-negative integers."""
    if not isinstance(data, dict):
        raise Invalid("pretokens is not an object")
    out = {}
    for name, per_lang in data.items():
        if name not in names:
            raise Invalid(f"pretokens: tokenizer {name!r} is not in the signature ({', '.join(names)})")
        if not isinstance(per_lang, dict):
            raise Invalid(f"pretokens.{name} is not an object")
        for lang, entry in per_lang.items():
            where = f"pretokens.{name}.{lang}"
            if lang not in scripts:
                raise Invalid(f"{where}: no row for language {lang!r}")
            if not isinstance(entry, dict):
                raise Invalid(f"{where} is not an object")
            values = [_need(entry, key, int, where) for key in ("n_chars", "n_pretokens")]
            if min(values) < 0:
                raise Invalid(f"{where}: a count is negative")
            out[(name, lang)] = (values[0], values[1])
    return out


def _mix(data: Any, scripts: dict[str, str]) -> dict | None:
    """The --mix content shares: languages of the rows, non-negative numbers."""
    if data is None:
        return None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             and math.isfinite(v) and v >= 0 for v in data.values()):
        raise Invalid("mix is not an object of non-negative shares")
    unknown = sorted(set(data) - set(scripts))
    if unknown:
        raise Invalid(f"mix: no rows for {', '.join(unknown)}")
    return {lang: float(share) for lang, share in data.items()}


def _token_stats(row: dict, where: str) -> dict | None:
    """The optional token_lengths and renyi_efficiency of a row (newer keys: an older audit has none)."""
    from fertility.metrics.token_stats import LENGTH_BUCKETS

    if "token_lengths" not in row:
        return None
    lengths = row["token_lengths"]
    if not isinstance(lengths, list) or len(lengths) != LENGTH_BUCKETS or \
            not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in lengths):
        raise Invalid(f"{where}: token_lengths is not a list of {LENGTH_BUCKETS} counts")
    renyi = row.get("renyi_efficiency")
    if renyi is not None and (isinstance(renyi, bool) or not isinstance(renyi, (int, float))):
        raise Invalid(f"{where}: renyi_efficiency is not a number or null")
    return {"token_lengths": lengths, "renyi_efficiency": math.nan if renyi is None else float(renyi)}


def _unseen(data: Any, names: tuple[str, ...]) -> dict:
    if not isinstance(data, dict):
        raise Invalid("tokens_never_produced is not an object")
    for name, entry in data.items():
        if name not in names:
            raise Invalid(f"tokens_never_produced: tokenizer {name!r} is not in the signature")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), int) for k in ("vocab_size", "n_unseen")):
            raise Invalid(f"tokens_never_produced of {name}: not vocab_size and n_unseen counts")
    return dict(data)


def _unknown(row: dict, missing: set[str]) -> dict:
    """The row's ratios with those of missing counts unknown (NaN)."""
    return row | {NEW_COUNT_COLUMNS[key]: math.nan for key in missing}


def _vocabularies(data: Any, names: tuple[str, ...]) -> dict:
    """The optional `vocabulary` section."""
    from fertility.backends.vocab import VocabAllocation

    if not isinstance(data, dict):
        raise Invalid("vocabulary is not an object")
    out = {}
    for name, entry in data.items():
        if name not in names:
            raise Invalid(f"vocabulary: tokenizer {name!r} is not in the signature")
        try:
            out[name] = VocabAllocation.from_dict(entry)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise Invalid(f"vocabulary of {name}: {type(err).__name__} {err}") from None
    return out


def _check_ratios(row: dict, expected: dict, where: str) -> None:
    """A ratio that does not follow from its row's counts was edited by hand: refuse it."""
    for key in RATIO_COLUMNS:
        if key not in row:
            continue
        stored = math.nan if row[key] is None else float(row[key])
        if not _close(stored, expected[key]):
            raise Invalid(f"{where}: {key} is {row[key]}, but its counts give {expected[key]:.6g}")


def _findings(items: list, names: tuple[str, ...]) -> tuple:
    out = []
    for number, item in enumerate(items, 1):
        where = f"finding {number}"
        if not isinstance(item, dict):
            raise Invalid(f"{where} is {type(item).__name__}, not an object")
        values = {key: _need(item, key, kind, where) for key, kind in _FINDING_KEYS.items()}
        if values["tokenizer"] not in names:
            raise Invalid(f"{where}: tokenizer {values['tokenizer']!r} is not in the signature")
        lang = item.get("lang")
        if lang is not None and not isinstance(lang, str):
            raise Invalid(f"{where}: lang is not a string or null")
        measured = item.get("measured", {})
        if not isinstance(measured, dict):
            raise Invalid(f"{where}: measured is not an object")
        examples = item.get("examples", [])
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            raise Invalid(f"{where}: examples is not a list of strings")
        out.append(Finding(lang=lang, measured=measured, examples=tuple(examples), **values))
    return tuple(out)
