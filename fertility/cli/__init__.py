"""Command line: parse options, call the library, render, exit. No arithmetic here."""

from __future__ import annotations

import functools
import inspect
import io
import os
import signal
import sys
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console

# Only light modules here: `fertility --help` must start without numpy, pandas or a tokenizer
# library. Each command imports the library parts it calls.
from fertility.backends import BACKENDS, BASELINES, DEFAULT_TOKENIZERS, spec_path
from fertility.choices import (
    BALANCES,
    DEFAULT_GLOBAL_MERGES,
    DEFAULT_PARITY_ALPHA,
    DEFAULT_PARITY_VARIANT,
    DEFAULT_SUPERWORDS,
    EXTEND_SPLITS,
    FORMATS,
    MAX_TOKEN_CLUSTERS,
    MIN_ATOM_COUNT,
    PARITY_VARIANTS,
    TRAIN_PATTERN_NAMES,
    TRAINERS,
    UNITS,
)
from fertility.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_THRESHOLD_FAILED,
    FertilityError,
    FertilityWarning,
    OutputError,
    Terminated,
    UsageError,
)
from fertility.io.output import (
    Input,
    Output,
    check_append_target,
    check_output_file,
    check_readable,
    output_target,
    refuse_inputs_as_outputs,
    write_output,
)
from fertility.version import __version__

from . import options


class _Failure(click.ClickException):
    """A library error converted once, at the edge: one line on stderr and its exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class

    def show(self, file=None) -> None:
        kind = "check failed" if self.exit_code == EXIT_THRESHOLD_FAILED else "error"
        click.echo(f"fertility: {kind}: {self.message}", err=True)


class FertilityGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", FertilityWarning)
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except FertilityError as err:
            raise _Failure(str(err), err.exit_code) from None
        except KeyboardInterrupt:  # click would say "Aborted!" with exit 1, a failed threshold's code
            raise _Failure("interrupted", EXIT_INTERRUPTED) from None
        except Terminated as err:  # SIGTERM, SIGHUP: unwound (workers stopped), then 128 + N
            raise _Failure(f"terminated ({signal.Signals(err.signum).name})", err.exit_code) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # `fertility audit | head -1`: the reader has all it wanted
            _silence_stdout()
            raise click.exceptions.Exit(EXIT_OK) from None
        except SystemExit as err:
            if isinstance(err.__context__, BrokenPipeError):  # rich's on_broken_pipe exits 1
                _silence_stdout()
                raise click.exceptions.Exit(EXIT_OK) from None
            raise
        except GeneratorExit:
            raise
        except BaseException as err:  # noqa: BLE001 - a bug, ours or a native panic: never exit 1
            traceback.print_exc(file=sys.stderr)
            raise _Failure(f"internal error ({type(err).__name__}: {err}); please report it with "
                           "the traceback above", EXIT_INTERNAL) from None


_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Our warnings are one line on stderr; anyone else's keep Python's format."""
    if issubclass(category, FertilityWarning):
        click.echo(f"fertility: warning: {message}", err=True)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail on a closed pipe
    ("Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (CliRunner): nothing will flush to a closed pipe


def make_console(*, stderr: bool = False) -> Console:
    """A rich Console (rich is imported when something is drawn, not at start-up)."""
    from rich.console import Console
    return Console(stderr=stderr)


def stderr_console() -> Console:
    return make_console(stderr=True)


@contextmanager
def progress_bars(enabled: bool):
    """Yield a `(label, total bytes) -> advance(n bytes)` factory drawing a bar on stderr (only
    on a terminal), with throughput and time left; None otherwise. One bar covers reading,
    profiling, tokenizing and findings, since every chunk goes through all of them."""
    if not enabled or not (terminal := stderr_console()).is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(binary_units=True),
                  TransferSpeedColumn(), TimeRemainingColumn(), TimeElapsedColumn(),
                  console=terminal, transient=True) as bars:
        def start(label: str, total: int | None):
            task = bars.add_task(label, total=total)
            return functools.partial(bars.advance, task)
        yield start


def output_options(command):
    """The same --format/--output/--force flags on every command that prints results."""
    command = click.option("--force", is_flag=True,
                           help="Overwrite --output if it exists.")(command)
    command = click.option("-o", "--output", type=click.Path(path_type=Path),
                           help="Write results to this file instead of stdout (`-`: stdout).")(command)
    command = click.option("-f", "--format", "fmt", type=click.Choice(FORMATS),
                           help="Output format [default: $FERTILITY_FORMAT, else table].")(command)
    return command


def hub_options(command):
    """--offline on every command that may fetch tokenizers or corpora from the hub; its progress
    bars follow -q (and appear on a terminal only)."""
    @functools.wraps(command)
    def run(*args, offline: bool, **kwargs):
        from fertility.backends.hub import hub_settings

        quiet = kwargs.get("quiet")
        with hub_settings(offline=offline, progress=None if quiet is None else not quiet):
            return command(*args, **kwargs)
    return click.option("--offline", is_flag=True,
                        help="Never ask the Hugging Face hub: hub tokenizers and named corpora from the "
                             "local cache only (as HF_HUB_OFFLINE=1).")(run)


def resolve_format(fmt: str | None) -> str:
    """--format, else $FERTILITY_FORMAT (checked, since click does not see it), else table."""
    if fmt:
        return fmt
    value = os.environ.get("FERTILITY_FORMAT") or "table"
    if value not in FORMATS:
        raise OutputError(f"FERTILITY_FORMAT={value!r} is not a format; "
                          f"choose one of {', '.join(FORMATS)}")
    return value


def tokenizer_inputs(specs, option: str = "-t") -> list[Input]:
    return [Input(option, spec_path(spec)) for spec in specs if spec]


def corpus_inputs(paths, option: str = "CORPUS") -> list[Input]:
    """The corpus paths, or the bundled samples a command reads when none is given."""
    if not paths:
        from fertility.io.samples import samples_dir
        return [Input(f"{option} (the bundled samples, read by default)", samples_dir())]
    return [Input(option, path) for path in paths]


def cache_input(enabled: bool = True) -> list[Input]:
    """The unit-profile cache: an output must not replace one of its entries."""
    if not enabled:
        return []
    from fertility.engine.profiles import cache_dir
    return [Input("the profile cache ($FERTILITY_CACHE_DIR)", cache_dir(), whole=False)]


@click.group(cls=FertilityGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fertility")
def cli():
    """Audit tokenizers across languages: how much text each language gets per token."""


PARALLEL_HELP = ("State that line i is the same content in every language (premiums need it; "
                 "aligned files such as FLORES-200 and NTREX prove it themselves).")


TOKENIZER_HELP = (f"Tokenizer spec, repeatable: a path (recognised by content), "
                  f"SCHEME:REF with scheme {', '.join(BACKENDS)}, a hub id ORG/NAME[@REVISION] (its "
                  "tokenizer files, downloaded once into the Hugging Face cache), or a model name tiktoken "
                  f"knows (gpt-4o, gpt-4); baselines: {', '.join(BASELINES)}. "
                  f"NAME=SPEC names it in every table, chart and JSON (an existing path is never split). "
                  f"Default: {', '.join(DEFAULT_TOKENIZERS)}.")


@cli.command()
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
              help="Content shares of your data mix (e.g. ben_Beng=0.7,eng_Latn=0.3) for the token budget.")
@click.option("--findings/--no-findings", default=True, show_default=True,
              help="Diagnose: premiums, budget, pre-tokenizer ceiling, grapheme cuts, coverage, normalization.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-j", "--jobs", type=options.JOBS, metavar="N",
              help="Worker processes [default: every core]; results are identical for any N.")
@click.option("--no-cache", is_flag=True,
              help="Do not read or write the unit-profile cache ($FERTILITY_CACHE_DIR, else ~/.cache/fertility).")
@output_options
@hub_options
def audit(tokenizers, corpus, text_field, lang_field, skip_bad_records, stdin_lang, shard, sample_docs, sample_bytes,
          seed, engine, scheduler, per_file, by, pattern, normalize, reference, parallel, mix, findings, quiet, jobs,
          no_cache, fmt, output, force):
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
    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([*tokenizer_inputs(tokenizers or DEFAULT_TOKENIZERS), *corpus_inputs(corpus),
                              *cache_input(not no_cache)], [Output("-o", output)])
    output = output_target(output, force=force)
    if fmt == "html":
        from fertility.report.html import bundle
        bundle()  # vl-convert-python is there, before the work
    with progress_bars(not quiet) as progress:
        result = run_audit(list(tokenizers) or list(DEFAULT_TOKENIZERS), list(corpus),
                           doc_mode="file" if per_file else "line", pattern=pattern, normalize=normalize,
                           progress=progress, diagnose=findings, reference=reference,
                           mix=parse_mix(mix) if mix else None, jobs=jobs, cache=not no_cache,
                           read_options=read_options, shard=shard, sample=sample, engine=engine,
                           scheduler=scheduler, frames=fmt != "json", parallel=parallel)
    emit(fmt, output, force, result=result, findings=findings, by=by)


def _named_corpora_help() -> str:
    from fertility.io.catalog import catalog_help
    return "\b\nNamed corpora:\n" + "\n".join(f"  {line}" for line in catalog_help().splitlines())


audit.help = f"{inspect.cleandoc(audit.help or '')}\n\n{_named_corpora_help()}"


@cli.command()
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
    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([Input("PARTS", path) for path in parts], [Output("-o", output)])
    output = output_target(output, force=force)
    loaded = [AuditResult.load(path) for path in parts]
    result, missing = merge_parts(loaded, [str(p) for p in parts], partial=partial)
    if missing:
        warnings.warn(f"merged without shards {missing}", FertilityWarning, stacklevel=1)
    click.echo("fertility: note: findings are not available after a merge; run a whole audit for them", err=True)
    emit(fmt, output, force, result=result, findings=False)


@cli.command()
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="[NAME=]SPEC", help=TOKENIZER_HELP)
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(path_type=Path, dir_okay=False),
              help="Read the text from a UTF-8 file instead.")
@click.option("--pattern", metavar="NAME|REGEX", help="Split pattern for unknown .tiktoken files.")
@hub_options
def show(tokenizers, text, file, pattern):
    """Draw a text's token boundaries; `¦` marks a boundary inside a grapheme cluster.

    Example: fertility show -t tiktoken:cl100k_base "বাংলা ভাষা"
    """
    from fertility.backends import load_tokenizer
    from fertility.io.corpus import read_text_file
    from fertility.report.show import render_shown
    from fertility.report.show import show as show_tokens

    if (text is None) == (file is None):
        raise UsageError("give TEXT or --file FILE (exactly one)")
    if file is not None:
        text = read_text_file(file)
    console = make_console()
    from fertility.audit import split_name

    for given in tokenizers or DEFAULT_TOKENIZERS:
        name, spec = split_name(given)
        tokenizer = load_tokenizer(spec, pattern=pattern)
        console.print(render_shown(name or tokenizer.name, show_tokens(tokenizer, text), color=not console.no_color))


@cli.command("tokenizers")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: formats and available tokenizers.")
def list_tokenizers(as_json):
    """List the formats fertility reads and every named tokenizer that loads offline here
    (tiktoken cache, installed packages, Hugging Face hub cache), with backend and vocab size."""
    import dataclasses
    import json

    from fertility.backends.discovery import FORMATS, available

    found = available()
    if as_json:
        click.echo(json.dumps({"formats": dict(FORMATS), "available": [dataclasses.asdict(a) for a in found]},
                              ensure_ascii=False, indent=2))
        return
    click.echo("Formats (-t PATH is recognised by content; or SCHEME:REF):")
    for scheme, what in FORMATS:
        click.echo(f"  {scheme:<22} {what}")
    click.echo("\nAvailable offline on this machine:" if found else "\nNo named tokenizer available offline.")
    rows = [("SPEC", "BACKEND", "VOCAB", "FROM")] + [(a.spec, a.backend, a.vocab_size, a.where) for a in found]
    widths = [max(len(row[i]) for row in rows) for i in range(3)] if found else []
    for row in rows if found else []:
        click.echo("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3])


@cli.command()
@click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--vocab-size", type=options.VOCAB_SIZE, required=True, help="Vocabulary size.")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder for tokenizer.json and training.json (new or empty, or holding only those two "
                   "files and --force).")
@click.option("--units", type=click.Choice(UNITS),
              help="bytes: byte-level BPE; graphemes: merges never cut a grapheme cluster "
                   "[default: graphemes with --trainer parity, else bytes].")
@click.option("--pattern", "train_pattern", default="marks", show_default=True, metavar="NAME|REGEX",
              help=f"Pre-tokenizer split: {', '.join(TRAIN_PATTERN_NAMES)} or a regex.")
@click.option("--baseline-pattern", type=click.Choice(["gpt2"]),
              help="Train the naive tokenizer on purpose (the GPT-2 split), for demonstrations.")
@click.option("--weights", metavar="LANG=W,...", help="Sampling multipliers per language, e.g. ben=2,eng=1.")
@click.option("--temperature", type=options.TEMPERATURE, help="Temperature sampling: shares p become p^(1/T).")
@click.option("--balance", type=click.Choice(BALANCES), default="equal", show_default=True,
              help="Without --weights/--temperature: equal characters per language, or as given.")
@click.option("--target-parity", type=click.Path(path_type=Path), metavar="PARALLEL_DEV",
              help="Retrain with weights moved until premiums on this parallel dev set approach 1.0.")
@click.option("--trainer", type=click.Choice(TRAINERS),
              help="bpe: BpeTrainer (with --target-parity: reweighted and retrained); parity: tokenizers' "
                   "ParityBpeTrainer, each merge to the language worst compressed on the dev set, or on "
                   "byte-premium targets without one [default: parity with --target-parity, else bpe].")
@click.option("--parity-variant", type=click.Choice(PARITY_VARIANTS), default=DEFAULT_PARITY_VARIANT,
              show_default=True, help="ParityBpeTrainer variant.")
@click.option("--global-merges", type=options.SHARE, default=DEFAULT_GLOBAL_MERGES, show_default=True,
              metavar="SHARE", help="Share of the merges learned as plain BPE before parity mode.")
@click.option("--parity-alpha", type=options.POSITIVE, default=DEFAULT_PARITY_ALPHA,
              show_default=True, help="Window variant: the ParityBpeTrainer's alpha.")
@click.option("--min-atom-count", type=options.COUNT, default=MIN_ATOM_COUNT, show_default=True,
              help="Parity with grapheme units: a cluster seen fewer times in the distinct training lines is "
                   "spelled in bytes, not an atom (0 or 1: every cluster is one).")
@click.option("--max-token-clusters", type=options.COUNT, default=MAX_TOKEN_CLUSTERS, show_default=True,
              help="Parity with grapheme units: no token longer than this many clusters (0: no cap).")
@click.option("--superwords", type=click.FloatRange(0, 1, min_open=True, max_open=True), is_flag=False,
              flag_value=DEFAULT_SUPERWORDS, metavar="[FRACTION]",
              help="Two stages: stage one as without it, then this share of the vocabulary learned across the "
                   "spaces between words (never across sentence ends or lines), with the same trainer "
                   f"[alone: {DEFAULT_SUPERWORDS}].")
@click.option("--reference", default="eng_Latn", show_default=True, help="Reference language for premiums.")
@click.option("--seed", type=options.SEED, default=0, show_default=True, help="Seed for fractional sampling weights.")
@click.option("--per-file", is_flag=True, help="One training document per file instead of per line.")
@click.option("--compare-with", metavar="[NAME=]SPEC", help="Audit this tokenizer beside the new one.")
@click.option("--held-out", type=click.Path(path_type=Path), multiple=True,
              help="Corpus for the before/after audit (default: the bundled parallel samples).")
@click.option("--force", is_flag=True, help="Replace tokenizer.json and training.json in the output folder.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), help="Format of the audit after training.")
def retrain(corpus, vocab_size, out_dir, units, train_pattern, baseline_pattern, weights, temperature,
            balance, target_parity, trainer, parity_variant, global_merges, parity_alpha, min_atom_count,
            max_token_clusters, superwords, reference, seed, per_file, compare_with, held_out, force, quiet, fmt):
    """Train a grapheme-aware BPE (a standard tokenizer.json) that fixes the language balance.

    CORPUS: files or folders; a file's language is its name (ben_Beng.txt) or the nearest
    folder named like a language (mono/ben/news/x.txt is ben). After training, the new
    tokenizer (and --compare-with) is audited on held-out text, with findings.
    """
    from fertility.backends import load_tokenizer
    from fertility.io.corpus import find_files
    from fertility.metrics.balance import parse_pairs
    from fertility.train.bpe import ParitySettings
    from fertility.train.retrain import OUR_FILES
    from fertility.train.retrain import check_output as check_retrain_output
    from fertility.train.retrain import retrain as run_retrain
    from fertility.train.retrain_report import report as retrain_report
    from fertility.train.retrain_report import summary as retrain_summary
    from fertility.train.superwords import SuperwordSettings

    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([*corpus_inputs(corpus), Input("--target-parity", target_parity),
                              *corpus_inputs(held_out, "--held-out"), *tokenizer_inputs([compare_with], "--compare-with"),
                              *cache_input()], [Output("-o", out_dir, OUR_FILES)])
    check_retrain_output(out_dir, force=force)  # every path and option before hours of training
    check_readable(held_out, option="--held-out")
    for path in held_out:
        find_files(path)  # a folder holding no .txt files fails now, not after training
    if compare_with:
        from fertility.audit import split_name

        load_tokenizer(split_name(compare_with)[1])
    console = stderr_console()
    result = run_retrain(list(corpus), output=out_dir, vocab_size=vocab_size, units=units,
                         pattern=baseline_pattern or train_pattern,
                         weights=parse_pairs(weights, option="--weights") if weights else None,
                         temperature=temperature, balance=balance, target_parity=target_parity,
                         reference=reference, seed=seed, per_file=per_file, force=force,
                         trainer=trainer, held_out=list(held_out) or None,
                         parity=ParitySettings(variant=parity_variant, global_merges=global_merges,
                                               alpha=parity_alpha, min_atom_count=min_atom_count,
                                               max_token_clusters=max_token_clusters or None),
                         superwords=None if superwords is None else SuperwordSettings(superwords),
                         show_progress=not quiet and console.is_terminal)
    console.print(retrain_summary(result), markup=False)
    report = retrain_report(result, compare_with=compare_with, held_out=list(held_out), reference=reference)
    if fmt == "html":
        from fertility.report.contents import retrain_report as before_after
        from fertility.report.html import page
        write_or_echo(page(before_after(report.after)), None, False)
        return
    emit(fmt, None, False, result=report.after, findings=True)
    if result.held_out_parity is not None and fmt in ("table", "markdown"):
        from fertility.train.parity import render_parity
        click.echo(render_parity(result.held_out_parity))
    if result.superwords is not None and fmt in ("table", "markdown"):
        from fertility.train.superwords import render_superwords
        click.echo(render_superwords(result.superwords))


@cli.command()
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--add", "add", type=options.TOKENS_TO_ADD, required=True, metavar="N", help="How many tokens to add.")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder for tokenizer.json and training.json (new or empty, or holding only those two "
                   "files and --force).")
@click.option("--split", type=click.Choice(EXTEND_SPLITS), default="keep", show_default=True,
              help="keep: the base pre-tokenizer as it is; marks: combining marks stay with their letters "
                   "(reports which held-out lines that alone changes).")
@click.option("--held-out", type=click.Path(path_type=Path), multiple=True,
              help="Corpus for the before/after audit and the changed-lines report "
                   "(default: the bundled parallel samples).")
@click.option("--reference", default="eng_Latn", show_default=True, help="Reference language for premiums.")
@click.option("--force", is_flag=True, help="Replace tokenizer.json and training.json in the output folder.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), help="Format of the before/after audit.")
def extend(base, corpus, add, out_dir, split, held_out, reference, force, quiet, fmt):
    """Add N tokens for the corpus's languages to a byte-level BPE tokenizer.json.

    Every existing id and merge stays: new tokens get ids after the last one and new merges
    rank after the old, and each new token holds bytes only the corpus's scripts use, so text
    in other scripts encodes to the same ids. BASE is audited beside the result on held-out text.
    """
    from fertility.audit import audit as run_audit
    from fertility.io.corpus import find_files
    from fertility.train.extend import extend as run_extend
    from fertility.train.retrain import OUR_FILES
    from fertility.train.retrain import check_output as check_retrain_output

    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([Input("BASE", base), *corpus_inputs(corpus), *corpus_inputs(held_out, "--held-out"),
                              *cache_input()], [Output("-o", out_dir, OUR_FILES)])
    check_retrain_output(out_dir, force=force)  # every path and option before the work
    check_readable([base, *corpus], option="extend")
    check_readable(held_out, option="--held-out")
    for path in held_out:
        find_files(path)
    console = stderr_console()
    result = run_extend(base, list(corpus), add=add, output=out_dir, split=split,
                        check_corpus=list(held_out) or None, force=force,
                        show_progress=not quiet and console.is_terminal)
    record = result.record
    console.print(f"wrote {out_dir / 'tokenizer.json'} ({record['added_tokens']:,} tokens added as ids "
                  f"{record['base']['ids']:,}-{record['base']['ids'] + record['added_tokens'] - 1:,}, "
                  f"{record['added_merges']:,} merges appended; every base id decodes as before) and "
                  f"{out_dir / 'training.json'}", markup=False)
    if record["added_tokens"] < add:
        console.print(f"warning: the corpus gave only {record['added_tokens']:,} new tokens seen at "
                      f"least twice (asked for {add:,})", markup=False)
    for key, label in (("split_alone_changed_lines", "the mark-aware split alone changes the ids of"),
                       ("held_out_changed_lines", "held-out lines whose ids changed:")):
        changed = record[key]
        if changed:
            console.print(f"{label} " + ", ".join(f"{lang} {c['changed']}/{c['lines']}"
                                                  for lang, c in changed.items()), markup=False)
    after = run_audit([str(base), str(out_dir / "tokenizer.json")], list(held_out), reference=reference)
    emit(fmt, None, False, result=after, findings=True)


@cli.command()
@click.argument("a")
@click.argument("b")
@click.argument("corpus", nargs=-1, type=click.Path(path_type=Path))
@click.option("--per-file", is_flag=True, help="One document per file instead of per line.")
@click.option("--reference", default="eng_Latn", show_default=True, help="Reference language for premiums.")
@click.option("--parallel", is_flag=True, help=PARALLEL_HELP)
@click.option("--pattern", metavar="NAME|REGEX", help="Split pattern for unknown .tiktoken files.")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default=None,
              help="Unicode normalization before tokenizing (chars and bytes stay the raw text's). "
                   "Default: what the tokenizer's runtime does, when known (Qwen: nfc), else none.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@output_options
@hub_options
def compare(a, b, corpus, per_file, reference, parallel, pattern, normalize, quiet, fmt, output, force):
    """Two tokenizers side by side on the same corpora (default: the bundled samples).

    A and B are tokenizer specs, or two saved `fertility audit -f json` files (compared
    without re-running, if their corpus and counting settings agree).
    """
    from fertility.compare import run as run_compare
    from fertility.report import compare_tables as render_compare

    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([*tokenizer_inputs([a], "A"), *tokenizer_inputs([b], "B"), *corpus_inputs(corpus),
                              *cache_input()], [Output("-o", output)])
    output = output_target(output, force=force)
    with progress_bars(not quiet) as progress:
        comparison = run_compare(a, b, list(corpus), per_file=per_file, reference=reference, pattern=pattern,
                                 normalize=normalize, progress=progress, parallel=parallel)
    if fmt == "table" and output is None and (console := make_console()).is_terminal:
        render_compare.print_comparison(console, comparison, width=console.width)
        return
    text = {"json": render_compare.to_json, "csv": render_compare.to_csv, "markdown": render_compare.to_markdown,
            "table": render_compare.to_text, "html": _compare_html}[fmt](comparison)
    write_or_echo(text, output, force)


def _compare_html(comparison) -> str:
    from fertility.report.contents import comparison_report
    from fertility.report.html import page
    return page(comparison_report(comparison))


def _limits(text: str | None, option: str) -> dict[str, float] | None:
    """`0.05` (every language) or `ben_Beng=3.5,eng_Latn=4` -> {lang or "*": limit}."""
    if text is None:
        return None
    from fertility.io.numbers import real
    from fertility.metrics.balance import parse_pairs

    if "=" in text:
        return parse_pairs(text, option=option)
    return {"*": real(text, option=option)}  # finite; its range is the gate's to check


@cli.command()
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
              help="fertility.toml or pyproject.toml ([tool.fertility]); default: found in the current folder.")
@click.option("-t", "--tokenizer", metavar="[NAME=]SPEC", help="Tokenizer to check (overrides the config).")
@click.argument("corpus", nargs=-1, type=click.Path(path_type=Path))
@click.option("--min-chars-per-token", metavar="V|LANG=V,...", help="Minimum chars/token.")
@click.option("--max-premium", metavar="V|LANG=V,...", help="Maximum premium against --reference.")
@click.option("--max-grapheme-cut-share", metavar="V|LANG=V,...", help="Maximum share of token boundaries inside graphemes.")
@click.option("--max-unknown-share", metavar="V|LANG=V,...", help="Maximum share of unknown tokens.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), help="Audit JSON to compare against.")
@click.option("--max-regression", type=options.NUMBER, help="Largest relative chars/token loss per language vs --baseline.")
@click.option("--reference", help="Reference language for premiums (default eng_Latn).")
@click.option("--parallel", is_flag=True, default=None, help=PARALLEL_HELP + " Key: parallel = true.")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default=None,
              help="Unicode normalization before tokenizing (chars and bytes stay the raw text's). "
                   "Default: what the tokenizer's runtime does, when known (Qwen: nfc), else none.")
@click.option("--junit", type=click.Path(path_type=Path), help="Write JUnit XML: one test per threshold.")
@click.option("--summary", type=click.Path(path_type=Path),
              help="Append a markdown summary here (default: $GITHUB_STEP_SUMMARY when set).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "html"]), default="table",
              show_default=True, help="json: the verdict (schema_version 1: each threshold's limit, measured "
                                      "value and pass/fail, and the signature); html: the checks with the "
                                      "audit's charts, as one self-contained page.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the table, JSON or page here (`-`: stdout).")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
@hub_options
@click.option("-q", "--quiet", is_flag=True,
              help="Print nothing on a pass or a failed threshold: the exit code tells (files asked for are written).")
def check(config_path, tokenizer, corpus, min_chars_per_token, max_premium, max_grapheme_cut_share,
          max_unknown_share, baseline, max_regression, reference, parallel, normalize, junit, summary, fmt, output,
          force, quiet):
    """CI gate: exit 0 when every threshold holds, 1 when one fails, 2 for a config error.

    Thresholds come from [tool.fertility] in pyproject.toml or a fertility.toml (keys:
    tokenizer, corpus, per_file, reference, parallel, pattern, normalize, baseline, max_regression,
    min_chars_per_token, max_premium, max_grapheme_cut_share, max_unknown_share; per-language
    limits as tables, "*" for every language); options override the file. max_premium needs
    parallel text: aligned files, or parallel = true.
    """
    from fertility.gate import find_config, load_config, parse_config, resolve_paths
    from fertility.gate import run as run_gate
    from fertility.report import tables as render

    target = summary or (Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None)
    path = config_path or find_config(Path.cwd())
    table, source = {}, "options"
    if path is not None:
        table, source = load_config(path)
        table = resolve_paths(table, path.parent)
    overrides = {"tokenizer": tokenizer, "corpus": [str(c) for c in corpus] or None,
                 "min_chars_per_token": _limits(min_chars_per_token, "--min-chars-per-token"),
                 "max_premium": _limits(max_premium, "--max-premium"),
                 "max_grapheme_cut_share": _limits(max_grapheme_cut_share, "--max-grapheme-cut-share"),
                 "max_unknown_share": _limits(max_unknown_share, "--max-unknown-share"),
                 "baseline": str(baseline) if baseline else None, "max_regression": max_regression,
                 "reference": reference, "normalize": normalize, "parallel": parallel}
    table = {**table, **{k: v for k, v in overrides.items() if v is not None}}
    checked = table.get("corpus")
    checked = [checked] if isinstance(checked, str) else checked if isinstance(checked, list) else []
    refuse_inputs_as_outputs(
        [Input("--config", path), *tokenizer_inputs([t for t in [table.get("tokenizer")] if isinstance(t, str)]),
         *corpus_inputs([c for c in checked if isinstance(c, str)]),
         *([Input("baseline", table["baseline"])] if isinstance(table.get("baseline"), str) else []),
         *cache_input()],
        [Output("-o", output), Output("--junit", junit), Output("--summary", target)])
    check_append_target(target, option="--summary")  # both reports' places, before the audit
    check_output_file(junit, force=True, option="--junit")
    output = output_target(output, force=force)
    if fmt == "html":
        from fertility.report.html import bundle
        bundle()  # vl-convert-python is there, before the audit
    if path is None and not tokenizer:
        raise UsageError("nothing to check: no fertility.toml or [tool.fertility] here and no -t SPEC")
    config = parse_config(table, source=source)
    report = run_gate(config)
    if fmt == "html":
        from fertility.report.contents import gate_report
        from fertility.report.html import page
        text = page(gate_report(report))
    elif fmt == "json":
        text = report.to_json()
    else:
        text = render.gate_text(report.checks) if output is not None else None
    if output is not None:
        write_output(output, text or "", force=force)
        if not quiet:
            click.echo(f"wrote {output}", err=True)
    elif quiet:
        pass
    elif text is not None:
        click.echo(text, nl=False)
    else:
        render.print_gate(make_console(), report.checks)
    if target is not None:
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(report.markdown())
        except OSError as err:
            raise OutputError(f"{target}: cannot write the summary ({err.strerror})") from None
    if junit is not None:
        write_output(junit, report.junit(), force=True)
    if not report.passed:
        if quiet:
            raise click.exceptions.Exit(EXIT_THRESHOLD_FAILED)
        raise _Failure(report.verdict(), EXIT_THRESHOLD_FAILED)


@cli.command()
@click.argument("audits", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the page here (`-`: stdout).")
@click.option("--force", is_flag=True, help="Overwrite --output (and the figures in --figures) if they exist.")
@click.option("--mix", metavar="LANG=SHARE,...", help="Content shares of your data mix, for the budget chart.")
@click.option("--figures", type=click.Path(path_type=Path), metavar="DIR",
              help="Also write each chart as SVG and PNG into this folder, for papers.")
def report(audits, output, force, mix, figures):
    """One self-contained HTML page from saved audits (`fertility audit -f json`).

    Two audits of the same corpus (one tokenizer each) are also compared, as `fertility
    compare A.json B.json` does. The page needs no network: scripts and data are inline.
    """
    from fertility.metrics.balance import parse_mix
    from fertility.report.contents import saved_report
    from fertility.report.html import bundle, check_figures, figure_files, page
    from fertility.report.html import figures as write_figures

    audit_inputs = [Input("AUDITS", path) for path in audits]
    refuse_inputs_as_outputs(audit_inputs, [Output("-o", output)])
    output = output_target(output, force=force)
    bundle()
    built = saved_report(list(audits), mix=parse_mix(mix) if mix else None)
    if figures is not None:  # the figures' names are known once the report is built; nothing is written yet
        refuse_inputs_as_outputs(audit_inputs, [Output("-o", output), Output("--figures", figures,
                                                                            tuple(figure_files(built)))])
        check_figures(figures, figure_files(built), force=force)
    write_or_echo(page(built), output, force)
    if figures is not None:
        written = write_figures(built, figures, force=force)
        click.echo(f"wrote {len(written)} figures to {figures}", err=True)


def write_or_echo(text: str, output: Path | None, force: bool) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text, force=force)
        click.echo(f"wrote {output}", err=True)


def emit(fmt: str, output: Path | None, force: bool, *, result, findings: bool = True, by: str = "lang") -> None:
    """Render an AuditResult to stdout or write it atomically to --output. The table format
    fits a terminal by dropping whole columns; off a terminal it is the full table."""
    shown = list(result.findings) if findings else None
    if fmt == "json":  # the result written out: no table renderer (nor rich) to load
        write_or_echo(result.to_json(by=by, findings=findings), output, force)
        return
    from fertility.report import tables as render

    if fmt == "table" and output is None and (console := make_console()).is_terminal:
        render.print_table(console, result.to_frame(by=by), result.signature, findings=shown, width=console.width)
        if getattr(result, "intervals", None) and by == "lang":
            from fertility.io.sampling import footer
            console.print(footer(result), end="", highlight=False)
        return
    text = {
        "html": lambda: _audit_html(result, findings),
        "csv": lambda: render.to_csv(result.to_frame(by=by)),
        "markdown": lambda: render.to_markdown(result.to_frame(by=by), result.signature, findings=shown),
        "table": lambda: render.to_text_table(result.to_frame(by=by), result.signature, findings=shown),
    }[fmt]()
    if fmt in ("table", "markdown") and getattr(result, "intervals", None) and by == "lang":
        from fertility.io.sampling import footer
        text += footer(result)
    write_or_echo(text, output, force)


def _audit_html(result, findings: bool) -> str:
    """The page of the audit's JSON: `fertility report` on the saved JSON draws the same page."""
    from fertility.report.contents import audit_report
    from fertility.report.html import page
    return page(audit_report(result, findings=findings))


def _terminate(signum: int, frame) -> None:
    raise Terminated(signum)


def unwind_on_termination() -> None:
    """SIGTERM and SIGHUP unwind the command as Ctrl-C does (worker processes stopped, partial
    files removed) instead of killing it where it stands; a signal the caller set to be ignored
    (`nohup` ignores SIGHUP) stays ignored."""
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _terminate)


def main() -> None:
    from fertility.engine.malloc import keep_freed_memory

    keep_freed_memory()  # the command's own process: chunk arrays reuse freed memory
    unwind_on_termination()
    try:
        cli(prog_name="fertility")
    except SystemExit as done:
        code = done.code
    else:
        code = EXIT_OK
    try:
        sys.stdout.flush()  # a pipe closed after our last write fails here, not in a command
    except BrokenPipeError:
        _silence_stdout()
    sys.exit(code)
