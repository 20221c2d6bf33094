"""The audit pipeline: corpus stream -> chunks -> counts and evidence per tokenizer -> AuditResult."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from fertility.caches import cache_dir
from fertility.diagnose.rules import Thresholds
from fertility.diagnose.rules import diagnose as judge
from fertility.engine.chunks import CHUNK_BYTES, engine_settings
from fertility.engine.documents import DocumentRows, Documents, PerDocument
from fertility.engine.evidence import assemble
from fertility.engine.local import default_jobs, run
from fertility.engine.profiles import ProfileCache
from fertility.engine.result import distributions, fast_path_outcome
from fertility.io.corpus import Corpus, CorpusStream, check_doc_mode
from fertility.io.numbers import MAX_JOBS, whole
from fertility.io.parallel import Parallelism, decide
from fertility.io.readers import ReadOptions
from fertility.io.samples import samples_dir
from fertility.io.sampling import Sample, intervals
from fertility.metrics.balance import check_mix
from fertility.results.model import AuditResult
from fertility.results.shards import check_shard, shard_settings
from fertility.results.signature import build_signature

from .backends import Tokenizer
from .backends.labels import as_tokenizer, named, unique_names
from .errors import UsageError, described

Progress = Callable[[str, "int | None"], Callable[[int], None]]  # (label, total bytes) -> advance(n)


def read_settings(options: ReadOptions | None, stream: CorpusStream | None) -> dict[str, str]:
    """How records were read, for the signature (nothing when every default held)."""
    import warnings

    from .errors import FertilityWarning
    settings = {}
    if options and (options.text_field, options.lang_field) != ("text", None):
        settings["records"] = f"text_field:{options.text_field}|lang_field:{options.lang_field or 'file name'}"
    if stream is not None and stream.skipped_records:
        settings["skipped_records"] = str(stream.skipped_records)
        warnings.warn(f"skipped {stream.skipped_records} bad records (--skip-bad-records)", FertilityWarning,
                      stacklevel=3)
    return settings


def named_corpora_settings(stream: CorpusStream | None) -> dict[str, list]:
    """Which named corpora (flores, fineweb2:..., code:...) were read: dataset, commit, license."""
    named = stream.named_corpora() if stream is not None else []
    return {"named_corpora": named} if named else {}


def audit(tokenizers: Sequence[str | Tokenizer | Any] | Mapping[str, str | Tokenizer | Any] | str | Any,
          corpus: Sequence[str | Path] | Corpus | Mapping[str, Sequence[str]] | Any | None = None,
          *, doc_mode: str = "line", pattern: str | None = None, normalize: str | None = None,
          progress: Progress | None = None, diagnose: bool = True, reference: str = "eng_Latn",
          mix: dict[str, float] | None = None, thresholds: Thresholds | None = None,
          jobs: int | None = 1,
          cache: bool | ProfileCache = True, chunk_bytes: int = CHUNK_BYTES,
          read_options: ReadOptions | None = None, shard: tuple[int, int] | None = None,
          sample: Sample | None = None, engine: str = "local", scheduler: str | None = None,
          frames: bool = True, parallel: bool = False, exact_library: bool = False,
          parallel_option: str = "parallel=True") -> AuditResult:
    """Measure every tokenizer on the corpus (the bundled samples when none is given).

    `tokenizers`: specs (`NAME=SPEC` gives a display name), loaded tokenizers, tokenizer objects
    of the libraries (`tokenizers.Tokenizer`, `tiktoken.Encoding`, `SentencePieceProcessor`, a
    transformers tokenizer), one of these alone, or a mapping of display names to any of them;
    the names label every row, chart and signature entry.

    `corpus`: paths (files, folders, URLs, named corpora), or text in memory: a list of texts,
    a `{lang: [texts]}` mapping, a pandas DataFrame with `lang` and `text` columns (io/memory.py).

    With `diagnose`, also gather evidence (pre-tokens, examples, normalization) and judge it
    into findings against `reference` and the optional content `mix`. `jobs` worker processes (None: every core); `cache` the unit-profile cache
    (True: the user's cache folder, False: none, or a ProfileCache whose `stats` then tell).
    `frames`: whether the caller will want DataFrames (pandas is then imported while workers
    count; JSON needs none). `parallel`: the user states that line i is the same content in
    every language; otherwise the corpus's files must prove it (parallel.py) for premiums.
    `parallel_option`: how the reasons for no premiums tell the reader to state it (the command
    line says `--parallel`).
    `exact_library`: token ids from the wrapped library only, never from the checked fast path
    (for tokenizers given as specs; a loaded tokenizer is used as it was loaded).
    """
    return audit_documents(
        tokenizers, corpus, doc_mode=doc_mode, pattern=pattern, normalize=normalize, progress=progress,
        diagnose=diagnose, reference=reference, mix=mix, thresholds=thresholds, jobs=jobs, cache=cache,
        chunk_bytes=chunk_bytes, read_options=read_options, shard=shard, sample=sample, engine=engine,
        scheduler=scheduler, frames=frames, parallel=parallel, exact_library=exact_library,
        parallel_option=parallel_option)[0]


def audit_documents(tokenizers: Sequence[str | Tokenizer] | Mapping[str, str | Tokenizer],
                    corpus: Sequence[str | Path] | Corpus | Mapping[str, Sequence[str]] | Any | None = None, *,
                    doc_mode: str = "line",
                    pattern: str | None = None, normalize: str | None = None, progress: Progress | None = None,
                    diagnose: bool = True, reference: str = "eng_Latn", mix: dict[str, float] | None = None,
                    thresholds: Thresholds | None = None, jobs: int | None = 1,
                    cache: bool | ProfileCache = True, chunk_bytes: int = CHUNK_BYTES,
                    read_options: ReadOptions | None = None, shard: tuple[int, int] | None = None,
                    sample: Sample | None = None, engine: str = "local", scheduler: str | None = None,
                    frames: bool = True, parallel: bool = False, per_document: PerDocument | None = None,
                    exact_library: bool = False,
                    parallel_option: str = "parallel=True") -> tuple[AuditResult, Documents | None]:
    """`audit`, and with `per_document` (or a sample, whose intervals need them) the values of
    each document (documents.py): measured in the worker processes with the counts, so any
    `jobs` gives the same rows."""
    if tokenizers is None or isinstance(tokenizers, (str, Sequence, Mapping)) and not tokenizers:
        raise UsageError("no tokenizer given")  # len() of anything else (a SentencePieceProcessor) is no test
    if shard is not None:  # a part carries counts only: findings need the whole (see shards.py)
        check_shard(shard)
        diagnose = False
    if jobs is not None:
        whole(jobs, option="--jobs", low=1, high=MAX_JOBS)
    if mix is not None:
        check_mix(mix, given=f"mix={mix!r}")
    given_specs, given = named(tokenizers)
    loaded = [as_tokenizer(t, pattern=pattern, normalize=normalize, exact_library=exact_library) for t in given_specs]
    specs = [t if isinstance(t, str) else f"{loaded_one.name} ({described(t)})"
             for t, loaded_one in zip(given_specs, loaded)]
    names = unique_names(loaded, specs, given)
    check_doc_mode(doc_mode)
    from fertility.io.memory import in_memory
    held = in_memory(corpus)
    corpus_input = {}
    if held is not None:
        corpus, kind = held
        corpus_input = {"corpus_input": f"in memory: {kind}"}
    if isinstance(corpus, Corpus):
        stream = None
        documents = corpus.documents
        total_bytes: int | None = sum(len(d.text.encode("utf-8")) for d in documents)
    else:
        paths: list[Path | str] = ([corpus] if isinstance(corpus, (str, Path)) else list(corpus)) if corpus \
            else [samples_dir()]
        stream = CorpusStream(paths, doc_mode=doc_mode, options=read_options, sample=sample)
        total_bytes = stream.total_bytes()
        documents = stream.batches() if sample is None and shard is None else stream.documents()
    if not isinstance(cache, ProfileCache):
        cache = ProfileCache(cache_dir() if cache else None)
    label = f"auditing with {', '.join(names)}" + (" (+ findings)" if diagnose else "")
    advance = progress(label, total_bytes) if progress else None

    def parallelism() -> Parallelism:  # once the corpus is read
        summary = stream.corpus() if stream is not None else cast(Corpus, corpus)
        return decide(summary.layouts, summary.n_docs, reference=reference, parallel=parallel,
                      option=parallel_option)

    if sample is not None:  # the sample first, then the shard's slice of it
        from fertility.io.sampling import sample as sampled
        documents = sampled(documents, sample, aligned=lambda: parallelism().parallel)  # type: ignore[assignment]
    if shard is not None:
        from fertility.results.shards import select
        documents = select(documents, shard)  # type: ignore[assignment]
    if sample is not None and per_document is None:  # per-document counts for the intervals
        per_document = PerDocument()
    early = _Meanwhile(dict(zip(names, loaded)), vocabularies=diagnose, frames=frames)
    if engine == "dask":
        from fertility.engine import dask as dask_engine
        total = dask_engine.run(loaded, documents, evidence=diagnose, jobs=default_jobs() if jobs is None else jobs,
                                scheduler=scheduler, advance=advance, chunk_bytes=chunk_bytes,
                                per_document=per_document)
    else:
        _say_in_process(given_specs, jobs)
        total = run(loaded, documents, evidence=diagnose, cache=cache,
                    jobs=default_jobs() if jobs is None else jobs,
                    specs=[t if isinstance(t, str) else None for t in given_specs],
                    load_options={"pattern": pattern, "normalize": normalize, "exact_library": exact_library},
                    advance=advance, per_document=per_document, chunk_bytes=chunk_bytes, meanwhile=early.run)
        cache.warn()
    summary = stream.corpus() if stream is not None else cast(Corpus, corpus)
    langs = list(summary.scripts)
    counts = {(name, lang): total.counts[(t, lang)] for t, name in enumerate(names) for lang in langs
              if (t, lang) in total.counts}
    evidence = assemble(names, loaded, langs, total) if diagnose else None
    decided = parallelism()
    signature = build_signature(fast_path_outcome(names, loaded, total), summary,
                                n_documents=stream.n_documents if stream is not None else None,
                                **engine_settings(diagnose=diagnose), **read_settings(read_options, stream),
                                **shard_settings(shard),
                                **named_corpora_settings(stream), **corpus_input,
                                **({"sample": sample.describe()} if sample else {}),
                                parallel=decided.to_dict())
    findings = judge(tuple(names), counts, evidence, reference=reference, mix=mix, parallel=decided,
                     thresholds=thresholds or Thresholds()) if diagnose else []
    token_stats, unseen_tokens = distributions(names, loaded, langs, total)
    rows = None
    if per_document is not None:
        rows = (total.documents or DocumentRows()).finish(len(names))
    result = AuditResult(signature=signature, tokenizers=tuple(names), scripts=dict(summary.scripts),
                       counts=counts, findings=tuple(findings), evidence=evidence, reference=reference,
                       vocabularies=early.vocabularies() if diagnose else {},
                       token_stats=token_stats, unseen_tokens=unseen_tokens,
                       intervals=intervals(rows, names) if sample is not None and rows is not None else {},
                       mix=mix)
    return result, rows


def _say_in_process(given: Sequence[object], jobs: int | None) -> None:
    """Where workers are spawned (not forked), a tokenizer object cannot reach them (they load by
    spec): the chunks are then counted in this process, which the user is told once."""
    from fertility.engine.local import START_METHOD

    if START_METHOD != "fork" and (jobs is None or jobs > 1) and not all(isinstance(t, str) for t in given):
        import warnings

        from .errors import FertilityWarning
        warnings.warn("tokenizer objects cannot be sent to spawned worker processes: counting in this process "
                      "(give specs or files to use --jobs)", FertilityWarning, stacklevel=3)


class _Meanwhile:
    """What the parent can do while worker processes count: import what the output needs and
    list the vocabularies by script (no counting pass needed). Whatever was not done
    (one process, or an error, which then happens again here and is reported) is done later."""

    def __init__(self, tokenizers: dict[str, Tokenizer], *, vocabularies: bool, frames: bool):
        self.tokenizers, self.wanted, self.frames = tokenizers, vocabularies, frames
        self.found: dict | None = None

    def run(self) -> None:
        try:
            if self.frames:
                import pandas  # noqa: F401
            if self.wanted:
                self.found = self._allocations()
        except Exception:  # noqa: BLE001 - done again, and reported, in vocabularies()
            self.found = None

    def _allocations(self) -> dict:
        from fertility.backends.vocab import allocations
        return allocations(self.tokenizers)

    def vocabularies(self) -> dict:
        return self.found if self.found is not None else self._allocations()


__all__ = ["Progress", "audit", "audit_documents"]
