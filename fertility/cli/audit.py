"""`audit` and `merge`: measure a corpus (or a shard of it), and join the shards' parts."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import click

from fertility.backends import DEFAULT_TOKENIZERS
from fertility.errors import FertilityWarning, UsageError
from fertility.io.output import Input, Output, output_target, refuse_inputs_as_outputs

from . import options
from .common import (
    PARALLEL_HELP,
    TOKENIZER_HELP,
    cache_input,
    corpus_inputs,
    emit,
    hub_options,
    output_options,
    progress_bars,
    resolve_format,
    tokenizer_inputs,
    warn_of_suffix,
)


@click.command()
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="[NAME=]SPEC", help=TOKENIZER_HELP)
@click.argument("corpus", nargs=-1, type=click.Path())
@click.option("--text-field", default="text", show_default=True, metavar="NAME",
              help="JSON-lines / Parquet / Arrow field holding the text.")
@click.option("--lang-field", metavar="NAME",
              help="Field holding each record's language (default: from the file or folder name).")
@click.option("--skip-bad-records", is_flag=True,
              help="Skip (and count) records without a string text or language field instead of failing.")
@click.option("--lang", "stdin_lang", metavar="LANG", help="Language of standard input (CORPUS `-`).")
@click.option("--shard", type=options.SHARD, metavar="K/N",
              help="Audit only the K-th of N deterministic slices (counts only); `fertility merge` sums the parts.")
@click.option("--sample-docs", type=options.SAMPLE_DOCS, metavar="N",
              help="Audit a hash-based sample of N documents per language (with 95% intervals).")
@click.option("--sample-bytes", type=options.SIZE, metavar="SIZE", help="Sample about SIZE (500k, 10MB) of text per language.")
@click.option("--seed", type=options.SEED, default=0, show_default=True, help="Seed of --sample-docs/--sample-bytes.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: this machine's processes; dask: Dask tasks (a loopback LocalCluster of --jobs "
                   "workers, or --scheduler).")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address (tcp://host:8786) for --engine dask.")
@click.option("--per-file", is_flag=True,
              help="One document per file (lines joined by a single space) instead of per line.")
@click.option("--by", type=click.Choice(["lang", "script"]), default="lang", show_default=True,
              help="One row per language, or per Unicode script (languages summed).")
@click.option("--pattern", metavar="NAME|REGEX",
              help="Split pattern for .tiktoken files of unknown origin (gpt2, cl100k, o200k or a regex).")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default=None,
              help="Unicode normalization before tokenizing (chars and bytes stay the raw text's). "
                   "Default: what the tokenizer's runtime does, when known (Qwen: nfc), else none.")
@click.option("--reference", default="eng_Latn", show_default=True, metavar="LANG",
              help="Language premiums are measured against.")
@click.option("--parallel", is_flag=True, help=PARALLEL_HELP)
@click.option("--mix", metavar="LANG=SHARE,...",
              help="Content shares of your data mix (e.g. ben_Beng=0.7,eng_Latn=0.3; scaled to sum 1) for the "
                   "token budget.")
@click.option("--findings/--no-findings", default=True, show_default=True,
              help="Diagnose: premiums, budget, pre-tokenizer ceiling, grapheme cuts, coverage, normalization.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-j", "--jobs", type=options.JOBS, metavar="N",
              help="Worker processes [default: every core]; results are identical for any N.")
@click.option("--no-cache", is_flag=True,
              help="Do not read or write the unit-profile cache ($FERTILITY_CACHE_DIR, else ~/.cache/fertility).")
@click.option("--exact-library", is_flag=True,
              help="Token ids from the tokenizer's own library only, never from the checked gigatoken fast path.")
@output_options
@hub_options
def audit(tokenizers, corpus, text_field, lang_field, skip_bad_records, stdin_lang, shard, sample_docs, sample_bytes,
          seed, engine, scheduler, per_file, by, pattern, normalize, reference, parallel, mix, findings, quiet, jobs,
          no_cache, exact_library, fmt, output, force):
    """Measure chars/token, bytes/token, fertility and more per language.

    CORPUS is a .txt file or a folder of {lang}.txt files (ben_Beng.txt, bn.txt) or of split
    folders (dev/, devtest/); also .jsonl/.json lines, .parquet and .arrow files, plain or
    compressed (.gz, .zst, .bz2, .xz), fsspec URLs (memory://, s3://...), or `-` (standard
    input, with --lang). Without CORPUS, the bundled parallel samples are audited.

    A CORPUS that is no existing path may name a benchmark on the Hugging Face hub,
    NAME[:ITEM,...][@REVISION], downloaded once into the cache and audited offline after that
    (FineWeb-2: the first row groups of each language, as many as --sample-docs/--sample-bytes
    need, else 1,000 documents). Programming languages are languages too: python_Code, script Code.
    """
    from fertility.audit import audit as run_audit
    from fertility.io.memory import CorpusPaths
    from fertility.io.readers import ReadOptions
    from fertility.metrics.balance import parse_mix
    if scheduler and engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    from fertility.io.sampling import Sample
    if sample_docs and sample_bytes:
        raise UsageError("give --sample-docs or --sample-bytes, not both")
    sample = (Sample(docs=sample_docs, seed=seed) if sample_docs else
              Sample(bytes=sample_bytes, seed=seed) if sample_bytes else None)
    findings = findings and shard is None
    read_options = ReadOptions(text_field=text_field, lang_field=lang_field,
                               skip_bad_records=skip_bad_records, stdin_lang=stdin_lang)
    given_format, fmt = fmt is not None, resolve_format(fmt)
    refuse_inputs_as_outputs([*tokenizer_inputs(tokenizers or DEFAULT_TOKENIZERS), *corpus_inputs(corpus),
                              *cache_input(not no_cache)], [Output("-o", output)])
    output = output_target(output, force=force)
    warn_of_suffix(output, fmt, given=given_format)
    if fmt == "html":
        from fertility.report.html import bundle
        bundle()  # vl-convert-python is there, before the work
    with progress_bars(not quiet) as progress:
        result = run_audit(list(tokenizers) or list(DEFAULT_TOKENIZERS), CorpusPaths(corpus),
                           doc_mode="file" if per_file else "line", pattern=pattern, normalize=normalize,
                           progress=progress, diagnose=findings, reference=reference,
                           mix=parse_mix(mix) if mix else None, jobs=jobs, cache=not no_cache,
                           read_options=read_options, shard=shard, sample=sample, engine=engine,
                           scheduler=scheduler, frames=fmt != "json", parallel=parallel,
                           exact_library=exact_library, parallel_option="--parallel")
    if not findings and result.parallel.parallel and reference not in result.scripts:
        # with findings, the no-reference finding says it; without, the premium columns were
        # empty with no word of why (a misspelled --reference, or a corpus without English)
        warnings.warn(f"--reference {reference} is not in the corpus, so there are no premiums; choose one of "
                      f"{', '.join(sorted(result.scripts))}", FertilityWarning, stacklevel=1)
    emit(fmt, output, force, result=result, findings=findings, by=by)


def _named_corpora_help() -> str:
    from fertility.io.catalog import catalog_help
    return "\b\nNamed corpora:\n" + "\n".join(f"  {line}" for line in catalog_help().splitlines())


audit.help = f"{inspect.cleandoc(audit.help or '')}\n\n{_named_corpora_help()}"


@click.command()
@click.argument("parts", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--partial", is_flag=True, help="Merge even if some shards are missing (the signature says which).")
@output_options
def merge(parts, partial, fmt, output, force):
    """Sum `audit --shard K/N -f json` parts into the whole audit, exactly.

    Refuses parts made with other tokenizers or settings, and a shard given twice; names the
    missing shards. Findings are not available after a merge (parts carry counts only).
    """
    from fertility.results.model import AuditResult
    from fertility.results.shards import merge as merge_parts
    given_format, fmt = fmt is not None, resolve_format(fmt)
    refuse_inputs_as_outputs([Input("PARTS", path) for path in parts], [Output("-o", output)])
    output = output_target(output, force=force)
    warn_of_suffix(output, fmt, given=given_format)
    loaded = [AuditResult.load(path) for path in parts]
    result, missing = merge_parts(loaded, [str(p) for p in parts], partial=partial)
    if missing:
        warnings.warn(f"merged without shards {missing}", FertilityWarning, stacklevel=1)
    click.echo("fertility: note: findings are not available after a merge; run a whole audit for them", err=True)
    emit(fmt, output, force, result=result, findings=False)
