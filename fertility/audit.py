"""The audit pipeline: corpus -> unit profiles -> counts per tokenizer -> AuditResult."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from .backends import Tokenizer, load_tokenizer
from .corpus import Corpus, read_corpus
from .diagnose import Thresholds
from .diagnose import diagnose as judge
from .errors import UsageError
from .evidence import Evidence, gather
from .integrity import TokenExamples
from .measure import Observer, count, profile_documents
from .results import AuditResult
from .samples import samples_dir
from .signature import build_signature

Progress = Callable[[str, int], Callable[[int], None]]  # (label, total) -> advance(n)


def unique_names(tokenizers: Sequence[Tokenizer], specs: Sequence[str]) -> list[str]:
    """Row labels: each tokenizer's short name, or its full spec where two names collide."""
    names = [t.name for t in tokenizers]
    return [spec if names.count(name) > 1 else name for name, spec in zip(names, specs)]


def audit(tokenizers: Sequence[str | Tokenizer], corpus: Sequence[str | Path] | Corpus | None = None,
          *, doc_mode: str = "line", pattern: str | None = None, normalize: str | None = None,
          progress: Progress | None = None, diagnose: bool = True, reference: str = "eng_Latn",
          mix: dict[str, float] | None = None, thresholds: Thresholds = Thresholds(),
          observers: Callable[[str], Observer] | None = None) -> AuditResult:
    """Measure every tokenizer on the corpus (the bundled samples when none is given).

    With `diagnose`, also gather evidence (pre-tokens, examples, normalization) and judge it
    into findings against `reference` and the optional content `mix`. `observers(name)` may
    return a callback that sees each document's tokens (see measure.count).
    """
    if not tokenizers:
        raise UsageError("no tokenizer given")
    specs = [t if isinstance(t, str) else t.name for t in tokenizers]
    loaded = [load_tokenizer(t, pattern=pattern, normalize=normalize) if isinstance(t, str) else t
              for t in tokenizers]
    if not isinstance(corpus, Corpus):
        paths = [Path(p) for p in corpus] if corpus else [samples_dir()]
        corpus = read_corpus(paths, doc_mode=doc_mode)
    names = unique_names(loaded, specs)
    if len(set(names)) < len(names):
        raise UsageError(f"the same tokenizer is given twice: {', '.join(specs)}")
    profiles = profile_documents(corpus.documents)
    counts = {}
    evidence = Evidence() if diagnose else None
    for name, tokenizer in zip(names, loaded):
        advance = progress(f"tokenizing with {name}", len(corpus.documents)) if progress else None
        offenders: dict[str, Counter] = {}
        examples = TokenExamples(corpus.documents) if diagnose else None
        watchers = [w for w in (observers(name) if observers else None, examples) if w is not None]
        per_lang = count(tokenizer, corpus.documents, profiles=profiles, advance=advance,
                         offenders=offenders if diagnose else None,
                         observe=(lambda *seen: [w(*seen) for w in watchers]) if watchers else None)
        for lang, lang_counts in per_lang.items():
            counts[(name, lang)] = lang_counts
        if evidence is not None:
            gather(name, tokenizer, corpus.documents, per_lang, offenders, examples.worst(), evidence)
    signature = build_signature({name: t.info() for name, t in zip(names, loaded)}, corpus)
    findings = judge(tuple(names), counts, evidence, reference=reference, mix=mix,
                     thresholds=thresholds) if diagnose else []
    return AuditResult(signature=signature, tokenizers=tuple(names), scripts=dict(corpus.scripts),
                       counts=counts, findings=tuple(findings), evidence=evidence)
