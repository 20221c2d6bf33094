"""Two tokenizers side by side: ratios, premiums, bootstrap intervals, changed words, findings.

A live comparison tokenizes the same documents with both, so the bootstrap can resample
documents in pairs. Two saved audit JSON files can be compared too, but only when their
counting settings agree (the signature tells) and without intervals (no per-document data).
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fertility.engine.chunks import SAMPLE_BYTES
from fertility.engine.documents import PerDocument, WordTally
from fertility.engine.local import default_jobs
from fertility.io.parallel import Parallelism
from fertility.metrics.balance import premiums
from fertility.metrics.bootstrap import bootstrap_ratios_by_group
from fertility.metrics.counts import ALL, ratio
from fertility.results.model import AuditResult, load_one
from fertility.results.signature import Signature, check_comparable
from fertility.text.units import is_spaced

from .audit import audit_documents
from .errors import UsageError

if TYPE_CHECKING:  # numpy and pandas load when a comparison runs, not with --help
    import numpy as np
    import pandas as pd

RATIOS = ("chars_per_token", "bytes_per_token", "graphemes_per_token", "tokens_per_word")


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    signature_a: Signature
    signature_b: Signature
    frame: pd.DataFrame  # one row per language, then ALL
    changed_words: list[dict] = field(default_factory=list)
    findings_diff: list[dict] = field(default_factory=list)
    intervals: bool = True
    parallel: Parallelism | None = None  # whether the premium columns hold premiums, and why

    @property
    def premiums_note(self) -> str | None:
        """The one line saying why the premium columns are empty, when they are."""
        return None if self.parallel is None or self.parallel.parallel else self.parallel.note()

    def __repr__(self) -> str:
        """One line for a Python prompt: the dataclass's own repr spelled out both signatures, the
        whole frame and every changed word (about 13 KB for the bundled samples)."""
        whole = self.frame[self.frame["lang"] == ALL].to_dict(orient="records")
        n_langs = int((self.frame["lang"] != ALL).sum())
        summary = f"{self.a} vs {self.b} on {_many(n_langs, 'language')}"
        if whole:
            row = whole[0]
            summary += (f", {_many(int(row['n_docs']), 'document')}; chars/token (ALL) "
                        f"{row['chars_per_token_a']:.3g} vs {row['chars_per_token_b']:.3g}, "
                        f"B/A {row['chars_per_token_ratio']:.3g}")
            if self.intervals:
                summary += f" (95% {row['ratio_ci_low']:.3g} to {row['ratio_ci_high']:.3g})"
        differ = f"{_many(len(self.findings_diff), 'finding')} differ" if len(self.findings_diff) != 1 \
            else "1 finding differs"
        return f"<Comparison {summary}; {differ}; .frame for the numbers>"

    def _repr_html_(self) -> str:
        """Jupyter shows the one line above the frame (B/A per language, intervals, premiums)."""
        from html import escape

        return f"<p>{escape(repr(self))}</p>" + self.frame.to_html(index=False, na_rep="n/a")


def _many(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")



def join(result_a: AuditResult, result_b: AuditResult, *, reference: str = "eng_Latn",
         intervals: dict[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """The comparison frame: a join on language of the two audits' frames (ALL rows included,
    so compare's ALL row is audit's ALL row), plus B−A, B/A, intervals and premiums."""
    import pandas as pd

    (name_a,), (name_b,) = result_a.tokenizers, result_b.tokenizers
    frame_a, frame_b = result_a.to_frame(), result_b.to_frame()
    if set(frame_a["lang"]) != set(frame_b["lang"]):
        only = sorted(set(frame_a["lang"]) ^ set(frame_b["lang"]))
        raise UsageError(f"the two audits cover different languages ({', '.join(only)} in one only)")
    joined = frame_a.merge(frame_b, on="lang", how="left", suffixes=("_a", "_b"), validate="one_to_one")
    parallel = shared_parallelism(result_a, result_b)
    prem_a = _premiums(result_a, name_a, reference, parallel)
    prem_b = _premiums(result_b, name_b, reference, parallel)
    rows = []
    for r in joined.to_dict(orient="records"):
        lang = r["lang"]
        row: dict[str, Any] = {"lang": lang, "script": r["script_a"], "n_docs": r["n_docs_a"],
                               "n_chars": r["n_chars_a"], "n_tokens_a": r["n_tokens_a"],
                               "n_tokens_b": r["n_tokens_b"]}
        for name in RATIOS:
            row[f"{name}_a"], row[f"{name}_b"] = r[f"{name}_a"], r[f"{name}_b"]
        row["chars_per_token_diff"] = r["chars_per_token_b"] - r["chars_per_token_a"]
        row["chars_per_token_ratio"] = ratio(r["n_tokens_a"], r["n_tokens_b"])  # (chars/B-token)/(chars/A-token)
        row["ratio_ci_low"], row["ratio_ci_high"] = (intervals or {}).get(lang, (math.nan, math.nan))
        row["premium_a"], row["premium_b"] = prem_a.get(lang, math.nan), prem_b.get(lang, math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def _premiums(result: AuditResult, name: str, reference: str, parallel: Parallelism) -> dict[str, float]:
    counts = result.counts_for(name)
    found = premiums(counts, reference, parallel=parallel) if reference in counts else None
    return found.values if found is not None else {}


def shared_parallelism(result_a: AuditResult, result_b: AuditResult) -> Parallelism:
    """Two audits of one corpus give premiums when both say it is parallel (saved audits may
    disagree: one stated with --parallel, the other not); else the first reason why not."""
    a, b = result_a.parallel, result_b.parallel
    return a if not a.parallel or b.parallel else b


def paired_intervals(docs: dict[str, np.ndarray], tokens_a: np.ndarray, tokens_b: np.ndarray, *,
                     threads: int = 1) -> dict[str, tuple[float, float]]:
    """Per language, and for ALL stratified by language (each language resampled within), on
    two threads when `threads` allows (the intervals do not depend on it)."""
    ordered = sorted(docs)
    each, pooled = bootstrap_ratios_by_group([(tokens_a[docs[lang]], tokens_b[docs[lang]]) for lang in ordered],
                                             threads=threads)
    return {**dict(zip(ordered, each)), ALL: pooled}


def _changed_words(words: WordTally, languages: set[str], *, per_language: int = 3) -> list[dict]:
    """Per language of `languages` (those written with spaces), the words whose token count
    changed most (mean per occurrence), most frequent first among equals. `words`: the distinct
    (language, word) keys and per key [occurrences, tokens under A, tokens under B], tallied by
    the engine's workers."""
    import numpy as np

    keys, counts = words
    changed = np.flatnonzero(counts[:, 1] != counts[:, 2]) if len(keys) else np.zeros(0, np.int64)  # no others shown
    by_language: dict[str, list] = {}
    for i, row in zip(changed.tolist(), counts[changed].tolist()):
        lang, word = keys[i]
        if lang in languages:
            by_language.setdefault(lang, []).append((word, row))
    out: list[dict] = []
    for lang in sorted(by_language):  # the first few of each: no sort of every changed word
        for word, (n, ta, tb) in heapq.nsmallest(per_language, by_language[lang], key=_change_rank):
            out.append({"lang": lang, "word": word, "count": n, "tokens_a": ta / n, "tokens_b": tb / n})
    return out


def _change_rank(item: tuple[str, list[int]]) -> tuple:
    """Largest change per occurrence first, then the most frequent, then the word."""
    word, (n, ta, tb) = item
    return -abs(tb - ta) / n, -n, word


def _findings_diff(findings_a, findings_b) -> list[dict]:
    keyed_a = {(f["code"], f["lang"]): f for f in findings_a}
    keyed_b = {(f["code"], f["lang"]): f for f in findings_b}
    out = []
    for key in sorted(set(keyed_a) | set(keyed_b), key=lambda k: (k[0], k[1] or "")):
        fa, fb = keyed_a.get(key), keyed_b.get(key)
        if fa and fb and fa["severity"] == fb["severity"]:
            continue
        either = fb if fb is not None else fa
        assert either is not None
        out.append({"code": key[0], "lang": key[1], "a": fa["severity"] if fa else None,
                    "b": fb["severity"] if fb else None, "message": either["message"]})
    return out


def compare_live(spec_a: Any, spec_b: Any, corpus_paths: Sequence[str | Path] | Any | None = None, *,
                 doc_mode: str = "line", reference: str = "eng_Latn", pattern: str | None = None,
                 normalize: str | None = None, progress=None, parallel: bool = False,
                 jobs: int | None = 1, parallel_option: str = "parallel=True") -> Comparison:
    """Two tokenizers (specs or objects, as `audit` takes them) on one corpus (paths, or text in
    memory as `audit` takes it; the bundled samples when None), in one audit (`jobs` worker
    processes) that streams the corpus as `audit` does and also keeps each document's tokens,
    for the paired bootstrap, and the words of the findings sample with their tokens, for the
    changed words (of the languages written with spaces). `parallel_option`: as `audit`'s."""
    result, documents = audit_documents([spec_a, spec_b], corpus_paths, doc_mode=doc_mode, pattern=pattern,
                                        normalize=normalize, reference=reference, progress=progress,
                                        parallel=parallel, jobs=jobs, per_document=PerDocument(words=True),
                                        parallel_option=parallel_option)
    assert documents is not None
    a, b = result.tokenizers
    intervals = paired_intervals(documents.by_language(), documents.tokens[0], documents.tokens[1],
                                 threads=default_jobs() if jobs is None else jobs)
    spaced = {lang for lang, script in result.scripts.items() if is_spaced(script)}
    result_a, result_b = _noting_word_sample(result.one(a), spaced), _noting_word_sample(result.one(b), spaced)
    frame = join(result_a, result_b, reference=reference, intervals=intervals)
    return Comparison(a, b, result_a.signature, result_b.signature, frame, _changed_words(documents.words, spaced),
                      _findings_diff([f.as_dict() for f in result_a.findings],
                                     [f.as_dict() for f in result_b.findings]),
                      parallel=result.parallel)


def _noting_word_sample(result: AuditResult, spaced: set[str]) -> AuditResult:
    """The audit, its signature saying where the changed words come from when that is not all
    the text (a spaced language with more than the findings sample; otherwise the signature is
    the audit's own)."""
    name, = result.tokenizers
    if not any(result.counts[(name, lang)].n_bytes > SAMPLE_BYTES for lang in spaced if (name, lang) in result.counts):
        return result
    extra = {**result.signature.extra,
             "changed_words": f"words of the documents that start in the first {SAMPLE_BYTES} bytes of each "
                              "language in reading order (the findings sample); a language here has more text"}
    return dataclasses.replace(result, signature=dataclasses.replace(result.signature, extra=extra))


def is_audit_json(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return False
    return b'"fertility_version"' in head


def looks_like_audit(path: Path) -> bool:
    """A .json file that is not a tokenizer.json: read it as an audit, so that a broken or
    hand-edited audit gets its own message instead of "not one of each"."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    from .limits import MAX_AUDIT_JSON_BYTES

    try:
        if path.stat().st_size > MAX_AUDIT_JSON_BYTES:  # too large for an audit: a tokenizer.json, if anything
            return False
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return True
    return not (isinstance(data, dict) and "model" in data)


def compare_saved(path_a: Path, path_b: Path, *, reference: str = "eng_Latn") -> Comparison:
    result_a, result_b = load_one(path_a), load_one(path_b)
    check_comparable(result_a.signature, result_b.signature)
    a, b = result_a.tokenizers[0], result_b.tokenizers[0]
    if a == b:
        a, b = f"{a} ({path_a.name})", f"{b} ({path_b.name})"
    if set(result_a.scripts) != set(result_b.scripts):
        raise UsageError(f"{path_a} and {path_b} cover different languages")
    frame = join(result_a, result_b, reference=reference)
    # an audit saved with --no-findings has no "findings": that is not "every finding went away"
    diff = _findings_diff([f.as_dict() for f in result_a.findings], [f.as_dict() for f in result_b.findings]) \
        if result_a.has_findings and result_b.has_findings else []
    return Comparison(a, b, result_a.signature, result_b.signature, frame, [], diff, intervals=False,
                      parallel=shared_parallelism(result_a, result_b))


def run(a: str, b: str, corpus: Sequence[str | Path] = (), *, per_file: bool = False, pattern: str | None = None,
        reference: str = "eng_Latn", normalize: str | None = None, progress=None,
        parallel: bool = False, jobs: int | None = 1) -> Comparison:
    """`fertility compare`: two tokenizer specs (tokenized now, with intervals, in `jobs` worker
    processes; None: every core) or two saved audit JSON files (compared as saved); options
    that would be ignored are refused."""
    saved = [is_audit_json(Path(x)) for x in (a, b)]
    if any(saved) and not all(saved):  # the other one may be a hand-edited or broken audit JSON
        saved = [s or looks_like_audit(Path(x)) for s, x in zip(saved, (a, b))]
    if not any(saved):
        return compare_live(a, b, list(corpus), doc_mode="file" if per_file else "line", reference=reference,
                            pattern=pattern, normalize=normalize, progress=progress, parallel=parallel,
                            jobs=jobs, parallel_option="--parallel")
    if not all(saved):
        raise UsageError("give two tokenizer specs or two saved audit JSON files, not one of each")
    if corpus:
        raise UsageError("saved audits carry their own corpus: give no CORPUS with two audit JSON files")
    ignored = [name for name, given in (("--per-file", per_file), ("--pattern", pattern),
                                        ("--normalize", normalize), ("--parallel", parallel)) if given]
    if ignored:
        raise UsageError(f"{' and '.join(ignored)} only {'applies' if len(ignored) == 1 else 'apply'} when "
                         "tokenizing: saved audits carry their own settings (see their signatures)")
    return compare_saved(Path(a), Path(b), reference=reference)
