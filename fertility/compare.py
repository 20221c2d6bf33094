"""Two tokenizers side by side: ratios, premiums, bootstrap intervals, changed words, findings.

A live comparison tokenizes the same documents with both, so the bootstrap can resample
documents in pairs. Two saved audit JSON files can be compared too, but only when their
counting settings agree (the signature tells) and without intervals (no per-document data).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .audit import audit
from .balance import premiums
from .corpus import Corpus, read_corpus
from .errors import InputError, UsageError
from .measure import tokens_per_word
from .results import ALL, Counts, ratio, ratios
from .samples import samples_dir
from .signature import counting_settings
from .text import is_spaced

RATIOS = ("chars_per_token", "bytes_per_token", "graphemes_per_token", "tokens_per_word")


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    signature_a: dict
    signature_b: dict
    frame: pd.DataFrame  # one row per language, then ALL
    changed_words: list[dict] = field(default_factory=list)
    findings_diff: list[dict] = field(default_factory=list)
    intervals: bool = True


class _Collector:
    """Per-document token counts, and per word its byte span and token count, of one tokenizer."""

    def __init__(self, n_docs: int):
        empty = np.zeros(0, dtype=np.int64)
        self.doc_tokens = np.zeros(n_docs, dtype=np.int64)
        self.word_tokens: list[np.ndarray] = [empty] * n_docs
        self.word_spans: list[tuple[np.ndarray, np.ndarray]] = [(empty, empty)] * n_docs

    def __call__(self, index, profile, encoded) -> None:
        self.doc_tokens[index] = len(encoded.starts)
        self.word_tokens[index] = tokens_per_word(profile, encoded.starts, encoded.ends)
        self.word_spans[index] = (profile.word_starts, profile.word_ends)


def bootstrap_ratio(tokens_a: np.ndarray, tokens_b: np.ndarray, *, rounds: int = 1000,
                    seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Interval of chars/token(B) / chars/token(A) = tokens(A) / tokens(B), documents resampled
    in pairs (the same documents for A and B in each round)."""
    n = len(tokens_a)
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    ratios = np.empty(rounds)
    chunk = max(1, 2_000_000 // n)
    for first in range(0, rounds, chunk):
        size = min(chunk, rounds - first)
        picks = rng.integers(0, n, size=(size, n))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios[first:first + size] = tokens_a[picks].sum(axis=1) / tokens_b[picks].sum(axis=1)
    low, high = np.nanquantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _table(counts_a: dict[str, Counts], counts_b: dict[str, Counts], scripts: dict[str, str],
           reference: str, docs: dict[str, np.ndarray] | None, collectors) -> pd.DataFrame:
    """Rows per language and ALL; intervals only when per-document `docs` indices are given."""
    prem_a = premiums(counts_a, reference).values if reference in counts_a else {}
    prem_b = premiums(counts_b, reference).values if reference in counts_b else {}
    rows = []
    for lang in [*sorted(counts_a), ALL]:
        if lang == ALL:
            ca = sum(counts_a.values(), Counts())
            cb = sum(counts_b.values(), Counts())
            spaced = False
        else:
            ca, cb = counts_a[lang], counts_b[lang]
            spaced = is_spaced(scripts.get(lang, ""))
        # word ratios only where words are separated by spaces (an empty Counts gives NaN)
        ra, rb = ratios(ca, ca if spaced else Counts()), ratios(cb, cb if spaced else Counts())
        row = {"lang": lang, "script": scripts.get(lang, ALL), "n_docs": ca.n_docs, "n_chars": ca.n_chars,
               "n_tokens_a": ca.n_tokens, "n_tokens_b": cb.n_tokens}
        for name in RATIOS:
            row[f"{name}_a"], row[f"{name}_b"] = ra[name], rb[name]
        row["chars_per_token_diff"] = rb["chars_per_token"] - ra["chars_per_token"]
        row["chars_per_token_ratio"] = ratio(ca.n_tokens, cb.n_tokens)  # (chars/B-token)/(chars/A-token)
        low = high = math.nan
        if docs is not None:
            index = docs[lang] if lang != ALL else np.concatenate(list(docs.values()))
            low, high = bootstrap_ratio(collectors[0].doc_tokens[index], collectors[1].doc_tokens[index])
        row["ratio_ci_low"], row["ratio_ci_high"] = low, high
        row["premium_a"] = prem_a.get(lang, math.nan)
        row["premium_b"] = prem_b.get(lang, math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def _changed_words(corpus: Corpus, collectors, *, per_language: int = 3) -> list[dict]:
    """Per language written with spaces, the words whose token count changed most (mean per
    occurrence), most frequent first among equals."""
    totals: dict[tuple[str, str], list[int]] = {}
    for index, doc in enumerate(corpus.documents):
        if not is_spaced(corpus.scripts[doc.lang]):
            continue
        words_a, words_b = collectors[0].word_tokens[index], collectors[1].word_tokens[index]
        if not len(words_a):
            continue
        data = doc.text.encode("utf-8")
        word_starts, word_ends = collectors[0].word_spans[index]
        words = [data[s:e].decode("utf-8") for s, e in zip(word_starts.tolist(), word_ends.tolist())]
        for word, ta, tb in zip(words, words_a.tolist(), words_b.tolist()):
            entry = totals.setdefault((doc.lang, word), [0, 0, 0])
            entry[0] += 1
            entry[1] += ta
            entry[2] += tb
    ranked = sorted(totals.items(), key=lambda kv: (kv[0][0], -abs(kv[1][2] - kv[1][1]) / kv[1][0], -kv[1][0], kv[0][1]))
    out, shown = [], {}
    for (lang, word), (n, ta, tb) in ranked:
        if ta != tb and shown.get(lang, 0) < per_language:
            shown[lang] = shown.get(lang, 0) + 1
            out.append({"lang": lang, "word": word, "count": n, "tokens_a": ta / n, "tokens_b": tb / n})
    return out


def _findings_diff(findings_a, findings_b) -> list[dict]:
    keyed_a = {(f["code"], f["lang"]): f for f in findings_a}
    keyed_b = {(f["code"], f["lang"]): f for f in findings_b}
    out = []
    for key in sorted(set(keyed_a) | set(keyed_b), key=lambda k: (k[0], k[1] or "")):
        fa, fb = keyed_a.get(key), keyed_b.get(key)
        if fa and fb and fa["severity"] == fb["severity"]:
            continue
        out.append({"code": key[0], "lang": key[1], "a": fa["severity"] if fa else None,
                    "b": fb["severity"] if fb else None, "message": (fb or fa)["message"]})
    return out


def compare_live(spec_a: str, spec_b: str, corpus_paths: Sequence[str | Path] | None = None, *,
                 doc_mode: str = "line", reference: str = "eng_Latn", pattern: str | None = None,
                 progress=None) -> Comparison:
    corpus = read_corpus([Path(p) for p in corpus_paths] if corpus_paths else [samples_dir()], doc_mode=doc_mode)
    collectors: dict[str, _Collector] = {}

    def observer(name: str):
        collectors[name] = _Collector(len(corpus.documents))
        return collectors[name]

    result = audit([spec_a, spec_b], corpus, pattern=pattern, reference=reference, progress=progress,
                   observers=observer)
    a, b = result.tokenizers
    docs: dict[str, list[int]] = {}
    for index, doc in enumerate(corpus.documents):
        docs.setdefault(doc.lang, []).append(index)
    ordered = (collectors[a], collectors[b])
    frame = _table(result.counts_for(a), result.counts_for(b), result.scripts, reference,
                   {lang: np.array(i) for lang, i in docs.items()}, ordered)
    findings = [f.as_dict() for f in result.findings]
    return Comparison(a, b, _one(result.signature, a), _one(result.signature, b), frame,
                      _changed_words(corpus, ordered),
                      _findings_diff([f for f in findings if f["tokenizer"] == a],
                                     [f for f in findings if f["tokenizer"] == b]))


def _one(signature: dict, name: str) -> dict:
    return {**signature, "tokenizers": {name: signature["tokenizers"][name]}}


def is_audit_json(path: Path) -> bool:
    if not path.is_file() or path.suffix != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return False
    return b'"fertility_version"' in head


def load_audit_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tokenizers = list(data["signature"]["tokenizers"])
        if not isinstance(data["rows"], list):
            raise TypeError("'rows' is not a list")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InputError(f"{path}: not a fertility audit JSON ({type(err).__name__}: {err})") from None
    if len(tokenizers) != 1:
        raise InputError(f"{path}: holds {len(tokenizers)} tokenizers ({', '.join(tokenizers)}); "
                         "compare needs one per file")
    if data.get("by", "lang") != "lang":
        raise InputError(f"{path}: rows are per {data['by']}, not per language; "
                         "save the audit without --by script")
    return data


def check_comparable(sig_a: dict, sig_b: dict, *, what: str = "compare") -> None:
    a, b = counting_settings(sig_a), counting_settings(sig_b)
    differing = [key for key in a if a[key] != b[key]]
    if differing:
        detail = "; ".join(f"{key}: {json.dumps(a[key], sort_keys=True)} vs {json.dumps(b[key], sort_keys=True)}"
                           for key in differing)
        raise UsageError(f"refusing to {what}: the counts were made on different corpora or settings ({detail})")


def counts_from_rows(rows: list[dict]) -> tuple[dict[str, Counts], dict[str, str]]:
    fields = Counts.__dataclass_fields__
    counts, scripts = {}, {}
    for row in rows:
        if row["lang"] == ALL or "," in row["lang"]:
            continue
        counts[row["lang"]] = Counts(**{k: int(row.get(k) or 0) for k in fields})
        scripts[row["lang"]] = row["script"]
    return counts, scripts


def compare_saved(path_a: Path, path_b: Path, *, reference: str = "eng_Latn") -> Comparison:
    data_a, data_b = load_audit_json(path_a), load_audit_json(path_b)
    check_comparable(data_a["signature"], data_b["signature"])
    counts_a, scripts = counts_from_rows(data_a["rows"])
    counts_b, _ = counts_from_rows(data_b["rows"])
    if set(counts_a) != set(counts_b):
        raise UsageError(f"{path_a} and {path_b} cover different languages")
    a, b = next(iter(data_a["signature"]["tokenizers"])), next(iter(data_b["signature"]["tokenizers"]))
    if a == b:
        a, b = f"{a} ({path_a.name})", f"{b} ({path_b.name})"
    frame = _table(counts_a, counts_b, scripts, reference, None, None)
    # an audit saved with --no-findings has no "findings": that is not "every finding went away"
    diff = _findings_diff(data_a["findings"], data_b["findings"]) \
        if "findings" in data_a and "findings" in data_b else []
    return Comparison(a, b, data_a["signature"], data_b["signature"], frame, [], diff, intervals=False)
